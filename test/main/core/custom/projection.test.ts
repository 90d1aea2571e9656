import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SessionLog } from '../../../../main/core/log/sessionLog.js';
import { CUSTOM_HEADING } from '../../../../main/core/projection/custom.js';
import { ProjectionFold, projectPayload } from '../../../../main/core/projection/projectPayload.js';
import { call, LogBuilder } from '../projection/eventFactory.js';

const system = 'You are Keel.';
const json = (value: unknown) => JSON.stringify(value);

describe('the skills and agents block in the projection', () => {
  it('sits after the instructions, moves only when the listing changes, and never carries a body', () => {
    const log = new LogBuilder();
    log.user('review src/');
    log.instructions({ 'AGENTS.md': 'Run the tests.' });
    log.custom(1);
    log.assistant('', [call('c1', 'load_skill')]);
    const before = projectPayload(log.events, { system }).messages;
    expect(before.map((m) => m.role)).toEqual(['system', 'system', 'system', 'user', 'assistant', 'tool']);
    expect(before[2]?.content).toBe(
      `${CUSTOM_HEADING}\n\n## Skills\n\n` +
        'Skills are folders of instructions for particular tasks, set up by the user or the project. When a task ' +
        "matches a skill's description, call load_skill with its name before you start and follow what it says; " +
        'load_skill with a path reads one of the files it names. Load only the skills the task needs.\n\n' +
        '- release: Cut a release (.agents/skills/release/SKILL.md)',
    );

    // Appending keeps every message byte for byte (the cancelled slot is the one documented exception).
    log.result('c1', 'Skill "release" loaded');
    log.assistant('done');
    const after = projectPayload(log.events, { system }).messages;
    expect(json(after.slice(0, 5))).toBe(json(before.slice(0, 5)));

    // The same listing again changes nothing; another changes that message alone.
    log.custom(1);
    expect(json(projectPayload(log.events, { system }).messages)).toBe(json(after));
    log.custom(2);
    const changed = projectPayload(log.events, { system }).messages;
    expect(changed.length).toBe(after.length);
    changed.forEach((message, i) => {
      if (i !== 2) expect(json(message)).toBe(json(after[i]));
    });
    expect(changed[2]?.content).toContain('## Custom agents');
    expect(changed[2]?.content).toContain('- tester: Runs tests [tools: grep]');
    // A listing of nothing sends no block at all.
    log.custom(0);
    expect(projectPayload(log.events, { system }).messages.map((m) => m.content)).not.toContain(
      expect.stringContaining(CUSTOM_HEADING),
    );
  });

  it('is the same from a fold, from a snapshot of it (resume) and after a compaction', () => {
    const log = new LogBuilder();
    log.user('goal');
    log.custom(2);
    log.assistant('a1');
    log.user('next');
    const fold = ProjectionFold.fromEvents(log.events);
    const restored = ProjectionFold.fromState(JSON.parse(JSON.stringify(fold.toState())));
    const expected = json(projectPayload(log.events, { system }).messages);
    expect(json(fold.payload({ system }).messages)).toBe(expected);
    expect(json(restored.payload({ system }).messages)).toBe(expected);
    // A compaction replaces the conversation, never the listing.
    log.compaction(4, 'summary');
    const compacted = projectPayload(log.events, { system }).messages;
    expect(compacted[1]?.content.startsWith(CUSTOM_HEADING)).toBe(true);
    expect(compacted[2]?.content).toBe('Session so far: summary');
  });
});

describe('through a real log, closed and opened again', () => {
  let home: string;
  beforeEach(() => {
    home = fs.mkdtempSync(path.join(os.tmpdir(), 'keel-custom-projection-'));
  });
  afterEach(() => fs.rmSync(home, { recursive: true, force: true }));

  it('projects the same bytes after a reopen as the one-pass projection of its events', () => {
    const log = SessionLog.create(home, {
      projectFolder: home,
      provider: 'openai-compatible',
      model: 'm',
      contextWindow: 32_000,
      toolMode: 'read-only',
      policy: 'read-only',
    });
    const builder = new LogBuilder();
    builder.custom(2);
    const listing = builder.events[0];
    if (listing?.kind !== 'custom_listed') throw new Error('no listing');
    const { seq: _seq, at: _at, ...event } = listing;
    log.append([
      { kind: 'user_message', content: 'hi' },
      event,
      { kind: 'assistant_message', content: 'ok', toolCalls: [] },
    ]);
    const live = json(log.projection().payload({ system }).messages);
    const id = log.id;
    log.close();
    const reopened = SessionLog.open(home, id);
    try {
      expect(json(reopened.projection().payload({ system }).messages)).toBe(live);
      expect(json(projectPayload(reopened.read(), { system }).messages)).toBe(live);
      expect(live).toContain(CUSTOM_HEADING);
    } finally {
      reopened.close();
    }
  });
});
