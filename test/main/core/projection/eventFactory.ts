import { SessionEvent } from '../../../../main/common/events.js';
import type { EventOf, NewEvent, ToolCall } from '../../../../main/common/events.js';

/** A fixed time: projections must not depend on it, and fixtures stay byte-stable. */
export const AT = '2025-01-01T00:00:00.000Z';

/** Builds a log with dense seqs starting at 1; every event is checked by the real zod schema. */
export class LogBuilder {
  readonly events: SessionEvent[] = [];

  /** Seq the next appended event will get. */
  get nextSeq(): number {
    return this.events.length === 0 ? 1 : (this.events.at(-1)?.seq ?? 0) + 1;
  }

  add(event: NewEvent): SessionEvent {
    const full = SessionEvent.parse({ ...event, seq: this.nextSeq, at: AT });
    this.events.push(full);
    return full;
  }

  user(content: string): EventOf<'user_message'> {
    return this.add({ kind: 'user_message', content }) as EventOf<'user_message'>;
  }

  assistant(content: string, toolCalls: ToolCall[] = []): EventOf<'assistant_message'> {
    return this.add({ kind: 'assistant_message', content, toolCalls }) as EventOf<'assistant_message'>;
  }

  result(toolCallId: string, content: string): EventOf<'tool_result'> {
    return this.add({ kind: 'tool_result', toolCallId, content }) as EventOf<'tool_result'>;
  }

  interrupted(content: string, toolCalls: ToolCall[] = [], reason?: string): EventOf<'interrupted'> {
    const extra = reason === undefined ? {} : { reason };
    return this.add({ kind: 'interrupted', content, toolCalls, ...extra }) as EventOf<'interrupted'>;
  }

  /** An instructions_loaded event listing these files (path → content, hashed as the content's length). */
  instructions(files: Record<string, string>): EventOf<'instructions_loaded'> {
    const list = Object.entries(files).map(([path, content]) => ({
      path,
      sha256: `h${content.length}`,
      size: content.length,
      content,
    }));
    return this.add({ kind: 'instructions_loaded', files: list }) as EventOf<'instructions_loaded'>;
  }

  /** A custom_listed event: none (0), one skill (1), or two skills and a custom agent (2). */
  custom(which: number): EventOf<'custom_listed'> {
    const origin = (shown: string) => ({
      scope: 'project' as const,
      layout: 'agents' as const,
      shown,
      sha256: `h-${shown}`,
    });
    const release = {
      ...origin('.agents/skills/release/SKILL.md'),
      name: 'release',
      description: 'Cut a release',
    };
    const style = { ...origin('.agents/skills/style/SKILL.md'), name: 'style', description: 'House style' };
    const agent = {
      ...origin('.agents/agents/tester.md'),
      name: 'tester',
      description: 'Runs tests',
      tools: ['grep'],
    };
    const skills = which === 0 ? [] : which === 1 ? [release] : [release, style];
    return this.add({
      kind: 'custom_listed',
      skills,
      agents: which === 2 ? [agent] : [],
    }) as EventOf<'custom_listed'>;
  }

  compaction(through: number, summary: string, pinned = ''): EventOf<'compaction'> {
    return this.add({ kind: 'compaction', through, summary, pinned }) as EventOf<'compaction'>;
  }
}

/** A tool call with arguments derived from its id, so fixtures differ visibly. */
export function call(id: string, name = 'grep'): ToolCall {
  return { id, name, arguments: JSON.stringify({ id }) };
}
