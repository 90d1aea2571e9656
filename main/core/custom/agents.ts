import { z } from 'zod';
import { readFields } from './frontMatter.js';
import { keelToolNames, splitToolList } from './toolNames.js';
import {
  catalogueOf,
  originOf,
  problemAt,
  type CustomFile,
  type CustomOrigin,
  type Parsed,
} from './types.js';

/** A custom agent (`.claude/agents/*.md`, `.agents/agents/*.md`, `.keel/agents/*.md`) spawn_subagent offers by name. */
export type CustomAgent = CustomOrigin & {
  name: string;
  description: string;
  /** Keel tools of its `tools:` (absent: the parent's tools, as Claude Code's agents inherit them). */
  tools?: string[];
  unknownTools?: string[];
  /** `model:` as written; absent or `inherit`: the parent's. */
  model?: string;
  /** Its system prompt (the body), added to the child's. */
  prompt: string;
};

const AGENT_NAME = /^[a-z0-9][a-z0-9_-]{0,63}$/;

const AgentFields = z.object({
  name: z.string().regex(AGENT_NAME, 'lowercase letters, digits, - and _, at most 64'),
  description: z.string().trim().min(1, 'an agent needs a description'),
  tools: z.union([z.string(), z.array(z.string())]).optional(),
  model: z.string().trim().min(1).optional(),
});

export function parseAgent(file: CustomFile): Parsed<CustomAgent> {
  const fields = readFields(file, AgentFields);
  if (!fields.ok) return fields;
  const { name, description, model } = fields.data;
  const written = splitToolList(fields.data.tools);
  const mapped = written ? keelToolNames(written) : undefined;
  if (fields.body.trim() === '')
    return problemAt(file, 1, 'an agent needs a system prompt: the text after the front matter');
  return {
    ok: true,
    value: {
      ...originOf(file),
      name,
      description: description.replace(/\s+/g, ' ').trim(),
      ...(mapped ? { tools: mapped.tools } : {}),
      ...(mapped && mapped.unknown.length > 0 ? { unknownTools: mapped.unknown } : {}),
      ...(model && model !== 'inherit' ? { model } : {}),
      prompt: fields.body.trim(),
    },
  };
}

export const agentCatalogue = (files: readonly CustomFile[]) => catalogueOf(files, parseAgent);
