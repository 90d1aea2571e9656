import { z } from 'zod';

// The argument schemas of the two file-changing tools, in a module of their own: the tool modules and
// fileChange.ts both depend on them, and so never on each other.

/** write_file's arguments: the whole new content of one file. */
export const writeFileParameters = z.strictObject({
  path: z
    .string()
    .min(1)
    .describe(
      'File to create or replace: relative to the project root, or absolute (/session/... for the session files).',
    ),
  content: z.string().describe('The complete new content of the file.'),
});

/** edit_file's arguments: an exact text to replace in one file. */
export const editFileParameters = z.strictObject({
  path: z
    .string()
    .min(1)
    .describe(
      'File to edit: relative to the project root, or absolute (/session/... for the session files).',
    ),
  old_string: z
    .string()
    .min(1, 'must not be empty; to create a file use write_file')
    .describe('Exact text to replace, including whitespace. Must occur once unless replace_all is true.'),
  new_string: z.string().describe('Text to put in its place (may be empty to delete).'),
  replace_all: z.boolean().optional().describe('Replace every occurrence of old_string. Default false.'),
});

/** write_file arguments after validation. */
export type WriteFileArgs = z.infer<typeof writeFileParameters>;

/** edit_file arguments after validation. */
export type EditFileArgs = z.infer<typeof editFileParameters>;
