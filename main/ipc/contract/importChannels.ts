import { z } from 'zod';
import { folder } from './schemas.js';

/*
 * Issue 35: Settings → Import history. The same core function as `keel import --from` (harness/historyImport.ts):
 * `imports.scan` is its dry run (what is found per project), `imports.run` imports one project (the folder the
 * user picked from the list: the only way an imported session gets a folder it can run in).
 */

const Tool = z.enum(['claude-code', 'codex']);

const ProjectFound = z.object({
  project: z.string(),
  sessions: z.number().int().nonnegative(),
  messages: z.number().int().nonnegative(),
  new: z.number().int().nonnegative(),
  grown: z.number().int().nonnegative(),
  unchanged: z.number().int().nonnegative(),
  /** Already here as read-only records (imported without this folder): Import makes them runnable. */
  records: z.number().int().nonnegative(),
});

const Report = z.object({
  tool: Tool,
  root: z.string(),
  found: z.number().int().nonnegative(),
  projects: z.array(ProjectFound),
  imported: z.array(
    z.object({
      sessionId: z.string(),
      project: z.string().optional(),
      status: z.enum(['new', 'grown']),
      messages: z.number().int().nonnegative(),
    }),
  ),
  /** Why files were skipped, each reason with how many files it held back. */
  skipped: z.array(z.object({ reason: z.string(), count: z.number().int().positive() })),
  /** Lines that could not be read (`file:line: why`), the first few, and how many in all. */
  problems: z.array(z.string()),
  problemCount: z.number().int().nonnegative(),
});

export const importChannels = {
  'imports.scan': {
    doc: "Finds another tool's sessions (Claude Code or Codex, at its default location) and says per project how many there are and what is new; writes nothing.",
    input: z.object({ tool: Tool }),
    output: Report,
  },
  'imports.run': {
    doc: "Imports that tool's sessions of one project (the folder shown by imports.scan, which exists here): new sessions, and the new part of grown ones; imports.progress reports as it goes.",
    input: z.object({ tool: Tool, project: folder }),
    output: Report,
  },
};

/** Progress of an imports.run: files read of all found. */
export const importProgress = z.object({ tool: Tool, done: z.number().int(), total: z.number().int() });
