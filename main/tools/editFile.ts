import { z } from 'zod';
import { executeFileChange } from './fileChange.js';
import type { ToolModule } from './types.js';

const parameters = z.strictObject({
  path: z.string().min(1).describe('File to edit, relative to the workspace root.'),
  old_string: z
    .string()
    .min(1, 'must not be empty; to create a file use write_file')
    .describe('Exact text to replace, including whitespace. Must occur once unless replace_all is true.'),
  new_string: z.string().describe('Text to put in its place (may be empty to delete).'),
  replace_all: z.boolean().optional().describe('Replace every occurrence of old_string. Default false.'),
});

/** edit_file arguments after validation. */
export type EditFileArgs = z.infer<typeof parameters>;

/**
 * Replaces an exact, unique string in a workspace text file (or every occurrence with replace_all);
 * fails clearly when old_string is missing or ambiguous. Records hashes and a diff like write_file.
 */
export const editFileTool: ToolModule<typeof parameters> = {
  name: 'edit_file',
  description:
    'Replace exact text in a workspace file. old_string must match the file exactly (copy it from read_file ' +
    'output without the line-number prefix) and occur once, unless replace_all is true.',
  parameters,
  mode: 'write',
  kind: 'edit',
  execute: executeFileChange,
};
