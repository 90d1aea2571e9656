import fs from 'node:fs';
import path from 'node:path';
import type { z } from 'zod';

/*
 * A person's decisions kept in the home as one event per line, never rewritten (`mcp-approvals.jsonl`,
 * `tool-rules.jsonl`): what is in effect is a pure fold of the events, done by each file's own module.
 */

/**
 * Appends one event, stamped with the time and validated by `schema` (a single `O_APPEND` write of one line,
 * so concurrent writers never interleave); returns it as written.
 */
export function appendJsonlEvent<S extends z.ZodType>(
  home: string,
  file: string,
  schema: S,
  event: object,
): z.infer<S> {
  const full = schema.parse({ ...event, at: new Date().toISOString() });
  fs.mkdirSync(home, { recursive: true });
  fs.appendFileSync(path.join(home, file), `${JSON.stringify(full)}\n`, { mode: 0o600 });
  return full;
}

/** Every event of the file, oldest first; a line that is not a valid event (torn, hand-edited) is skipped. */
export function readJsonlEvents<S extends z.ZodType>(home: string, file: string, schema: S): z.infer<S>[] {
  let text: string;
  try {
    text = fs.readFileSync(path.join(home, file), 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
  const events: z.infer<S>[] = [];
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    try {
      const parsed = schema.safeParse(JSON.parse(line));
      if (parsed.success) events.push(parsed.data);
    } catch {
      // Not JSON: such a line grants nothing.
    }
  }
  return events;
}
