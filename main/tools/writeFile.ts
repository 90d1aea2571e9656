import { applyEditOnce, executeFileChange, previewFileChange } from './fileChange.js';
import { writeFileParameters } from './fileChangeSchemas.js';
import type { ToolModule } from './types.js';

/**
 * Creates or replaces a workspace file through the sandbox's confined writer; the outcome records
 * the pre-image hash (null for a new file), the post-image hash and a unified diff. Protected
 * paths are not written without approval.
 */
export const writeFileTool: ToolModule<typeof writeFileParameters> = {
  name: 'write_file',
  description:
    "Create a file, or replace a file's whole content, in the workspace. Parent folders are created. " +
    'For a change to part of an existing file prefer edit_file.',
  parameters: writeFileParameters,
  mode: 'write',
  kind: 'edit',
  execute: executeFileChange,
  preview: previewFileChange,
  resume: { rule: 'recorded_images', applyOnce: applyEditOnce },
};
