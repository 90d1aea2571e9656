import type { EventOf, InstructionFile } from '../../common/events.js';

/** First line of the message that carries the project's instruction files. */
export const INSTRUCTIONS_HEADING = '# Project instructions';

const INSTRUCTIONS_PREAMBLE = [
  INSTRUCTIONS_HEADING,
  '',
  'These are the instruction files of the project you work on (AGENTS.md; CLAUDE.md where a folder has no AGENTS.md), ' +
    'with paths relative to the project root. Follow them. A file applies to its folder and everything below it; ' +
    'where two disagree, the one deeper in the tree wins. What the user asks in this conversation wins over all of them.',
].join('\n');

/**
 * The message text of an `instructions_loaded` event, or undefined when it lists no file. Byte-stable for the
 * same event: it heads the cached prefix right after the system prompt. A file the size cap cut ends with a
 * note saying so; one that did not fit at all is named with a note.
 */
export function formatInstructions(event: EventOf<'instructions_loaded'>): string | undefined {
  if (event.files.length === 0) return undefined;
  return [INSTRUCTIONS_PREAMBLE, ...event.files.map(formatFile)].join('\n\n');
}

function formatFile(file: InstructionFile): string {
  const slash = file.path.lastIndexOf('/');
  const scope = slash < 0 ? '' : ` (applies to ${file.path.slice(0, slash + 1)})`;
  const heading = `## ${file.path}${scope}`;
  if (!file.truncated) return `${heading}\n\n${file.content}`;
  if (file.content === '') {
    return `${heading}\n\n[not included: the project instructions reached their size cap; read ${file.path} for its ${file.size} bytes]`;
  }
  return `${heading}\n\n${file.content}\n[cut here: ${file.path} is ${file.size} bytes and the project instructions reached their size cap; read the file for the rest]`;
}
