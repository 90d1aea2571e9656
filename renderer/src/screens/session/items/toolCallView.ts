import { createTwoFilesPatch } from 'diff';

/*
 * How a tool call's arguments read to people (pure, unit-tested): a command as the line typed at a prompt, a
 * read as its path and line range, an edit as the diff it asks for, a new file as its path and text, anything
 * else as its fields with text shown as text (never JSON with `\n` escapes).
 */

export type CallView =
  | { kind: 'command'; command: string; cwd?: string | undefined }
  | { kind: 'read'; path: string; range?: string | undefined }
  | { kind: 'edit'; path: string; patch: string; replaceAll: boolean }
  | { kind: 'write'; path: string; content: string }
  | { kind: 'patch'; text: string }
  | { kind: 'fields'; fields: { name: string; value: string; block: boolean }[] }
  | { kind: 'raw'; text: string };

type Args = Record<string, unknown>;

const text = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);
const whole = (value: unknown): number | undefined =>
  typeof value === 'number' && Number.isInteger(value) ? value : undefined;

/** The lines a read asks for, as people say it: "lines 10–59", "from line 10", or nothing for the whole file. */
export function readRange(offset: number | undefined, limit: number | undefined): string | undefined {
  if (offset === undefined && limit === undefined) return undefined;
  const first = offset ?? 1;
  if (limit === undefined) return `from line ${first}`;
  return limit === 1 ? `line ${first}` : `lines ${first}–${first + limit - 1}`;
}

/** A unified diff of one edit's old and new text (without the file headers: the card names the file). */
export function editPatch(path: string, before: string, after: string): string {
  const patch = createTwoFilesPatch(path, path, withNewline(before), withNewline(after), '', '', {
    context: 3,
  });
  // The first four lines are the `Index`/`===`/`---`/`+++` headers.
  return patch.split('\n').slice(4).join('\n').trimEnd();
}

const withNewline = (value: string) => (value.endsWith('\n') ? value : `${value}\n`);

/** The view of one call's arguments (the logged JSON text). */
export function callView(tool: string, argumentsText: string): CallView {
  let args: Args;
  try {
    const parsed: unknown = JSON.parse(argumentsText);
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
      return { kind: 'raw', text: argumentsText };
    args = parsed as Args;
  } catch {
    return { kind: 'raw', text: argumentsText };
  }
  const path = text(args['path']);
  if (tool === 'run_command' && text(args['command']) !== undefined)
    return { kind: 'command', command: text(args['command']) ?? '', cwd: text(args['cwd']) };
  if (tool === 'read_file' && path !== undefined)
    return { kind: 'read', path, range: readRange(whole(args['offset']), whole(args['limit'])) };
  if (tool === 'edit_file' && path !== undefined) {
    const before = text(args['old_string']);
    const after = text(args['new_string']);
    if (before !== undefined && after !== undefined)
      return {
        kind: 'edit',
        path,
        patch: editPatch(path, before, after),
        replaceAll: args['replace_all'] === true,
      };
  }
  if (tool === 'write_file' && path !== undefined && text(args['content']) !== undefined)
    return { kind: 'write', path, content: text(args['content']) ?? '' };
  if (tool === 'apply_patch' && text(args['input']) !== undefined)
    return { kind: 'patch', text: text(args['input']) ?? '' };
  return {
    kind: 'fields',
    fields: Object.entries(args).map(([name, value]) => {
      const shown = typeof value === 'string' ? value : JSON.stringify(value, null, 2);
      return { name, value: shown, block: shown.includes('\n') || shown.length > 80 };
    }),
  };
}

/** A duration as people read it: "420 ms", "3.2 s", "2 min 5 s". */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(ms < 10_000 ? 1 : 0)} s`;
  const minutes = Math.floor(ms / 60_000);
  const seconds = Math.round((ms % 60_000) / 1000);
  return seconds === 0 ? `${minutes} min` : `${minutes} min ${seconds} s`;
}

/** A unified diff from its first hunk on: the file headers (`Index`, `===`, `---`, `+++`) repeat the card's path. */
export function hunksOf(patch: string): string {
  const lines = patch.split('\n');
  const first = lines.findIndex((line) => line.startsWith('@@'));
  return first <= 0 ? patch : lines.slice(first).join('\n');
}

/** The runner's mark where a long output's middle was left out, in each wording logs hold (#37 changed it). */
const LEFT_OUT =
  /^\[\.\.\. (\d+) bytes (?:omitted; full output in artifact|left out here; the whole output is in) \S+\]$/;
/** The notes that tell the model where the whole output is or how to read on: people have the terminal for it. */
const WHOLE_OUTPUT_NOTE =
  /^\[(?:full output: .+|the output above is cut to its head and tail \(.+|next read: command_output .+)\]$/;
/** A background command's start or early end, as the model is told it (with its tools and paths). */
const BACKGROUND_LEAD = /^\[(?:started in the background as (\S+);|(\S+) already ended;) .+\]$/;

/**
 * A command's result as people read it (issue #37): the model's notes on where the whole output is (a path in
 * the session's record, `/artifacts/ev11-…`) and how its tools read on say instead what a person can do: open
 * the run in the terminal, or find a background command in the terminal dock.
 * Pure; the log's text is unchanged.
 */
export function outputForPeople(content: string): string {
  return content
    .split('\n')
    .flatMap((line) => {
      if (WHOLE_OUTPUT_NOTE.test(line)) return [];
      const lead = BACKGROUND_LEAD.exec(line);
      if (lead)
        return [
          lead[1] !== undefined
            ? `[started in the background as ${lead[1]}: the terminal dock shows it live and can stop it]`
            : `[${lead[2] ?? ''} had already ended when the call returned]`,
        ];
      const left = LEFT_OUT.exec(line);
      return left
        ? [
            `[… ${Number(left[1]).toLocaleString('en')} bytes not shown here: Open in terminal shows the whole output]`,
          ]
        : [line];
    })
    .join('\n');
}
