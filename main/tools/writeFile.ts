import { z } from 'zod';
import { executeFileChange } from './fileChange.js';
import type { ToolModule } from './types.js';

const parameters = z.strictObject({
  path: z.string().min(1).describe('File to create or replace, relative to the workspace root.'),
  content: z.string().describe('The complete new content of the file.'),
});

/** write_file arguments after validation. */
export type WriteFileArgs = z.infer<typeof parameters>;

/**
 * Creates or replaces a workspace file through the sandbox's confined writer; the outcome records
 * the pre-image hash (null for a new file), the post-image hash and a unified diff. Protected
 * paths are not written without approval.
 */
export const writeFileTool: ToolModule<typeof parameters> = {
  name: 'write_file',
  description:
    "Create a file, or replace a file's whole content, in the workspace. Parent folders are created. " +
    'For a change to part of an existing file prefer edit_file.',
  parameters,
  mode: 'write',
  kind: 'edit',
  execute: executeFileChange,
};
