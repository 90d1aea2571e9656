import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { SessionEvent } from '../../../../main/common/events.js';
import type { RecordedRequest, ScriptStep } from '../../../support/providerServer.js';

/** Every event of a session, read from its log (the shared helper). */
export { eventsOf } from '../../../support/sessionFixture.js';

/** A chat-completions request body as the scripted server records it. */
export type Body = {
  messages: { role: string; content: string | null; tool_call_id?: string }[];
  tools?: { function: { name: string } }[];
};

/** Whose request it is: a child's system prompt carries the subagent note. */
export function isChildRequest(request: RecordedRequest): boolean {
  const body = request.body as Body;
  return body.messages.some(
    (message) => message.role === 'system' && (message.content ?? '').includes('You are a subagent'),
  );
}

/** Model requests already answered in this conversation: the assistant messages the body carries. */
export function stepOf(request: RecordedRequest): number {
  return (request.body as Body).messages.filter((message) => message.role === 'assistant').length;
}

/** A respond function that scripts the parent and the child separately, by how far each conversation is. */
export function scriptBoth(script: {
  parent: (step: number, request: RecordedRequest) => ScriptStep;
  child: (step: number, request: RecordedRequest) => ScriptStep;
}): (request: RecordedRequest) => ScriptStep {
  return (request) =>
    isChildRequest(request)
      ? script.child(stepOf(request), request)
      : script.parent(stepOf(request), request);
}

/** Tool names the request offered the model. */
export function toolNamesOf(request: RecordedRequest): string[] {
  return ((request.body as Body).tools ?? []).map((tool) => tool.function.name);
}

/**
 * Writes a tree of `dirs` folders with `filesPerDir` files of `linesPerFile` lines that each match `marker`:
 * dirs * filesPerDir * linesPerFile matching lines in all.
 */
export function writeLargeTree(
  root: string,
  marker: string,
  shape: { dirs: number; filesPerDir: number; linesPerFile: number },
): void {
  for (let d = 0; d < shape.dirs; d++) {
    const dir = path.join(root, 'src', `pkg${d}`);
    mkdirSync(dir, { recursive: true });
    for (let f = 0; f < shape.filesPerDir; f++) {
      const lines = Array.from(
        { length: shape.linesPerFile },
        (_, i) => `export const value${i} = ${i}; // ${marker} pkg${d} file${f} line${i} needs a look`,
      );
      writeFileSync(path.join(dir, `file${f}.ts`), `${lines.join('\n')}\n`);
    }
  }
}

/** The events of one kind, in seq order. */
export function ofKind<K extends SessionEvent['kind']>(
  events: readonly SessionEvent[],
  kind: K,
): Extract<SessionEvent, { kind: K }>[] {
  return events.filter((event): event is Extract<SessionEvent, { kind: K }> => event.kind === kind);
}
