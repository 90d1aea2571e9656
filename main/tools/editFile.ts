import { applyEditOnce, executeFileChange, previewFileChange } from './fileChange.js';
import { editFileParameters } from './fileChangeSchemas.js';
import type { ToolModule } from './types.js';

/**
 * Replaces an exact, unique string in a workspace text file (or every occurrence with replace_all);
 * fails clearly when old_string is missing or ambiguous. Records hashes and a diff like write_file.
 */
export const editFileTool: ToolModule<typeof editFileParameters> = {
  name: 'edit_file',
  description:
    'Replace exact text in a workspace file. old_string must match the file exactly (copy it from read_file ' +
    'output without the line-number prefix) and occur once, unless replace_all is true.',
  parameters: editFileParameters,
  mode: 'write',
  kind: 'edit',
  execute: executeFileChange,
  preview: previewFileChange,
  resume: { rule: 'recorded_images', applyOnce: applyEditOnce },
};
