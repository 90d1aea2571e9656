import fs from 'node:fs';
import path from 'node:path';
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { EventOf } from '../../main/common/events.js';
import { recordDecision } from '../../main/core/approvals/decide.js';
import { exportSession, importSession } from '../../main/core/harness/transfer.js';
import { SessionLog } from '../../main/core/log/sessionLog.js';
import { projectPayload } from '../../main/core/projection/projectPayload.js';
import { keepToolGrant, listToolRules } from '../../main/core/mcp/toolRules.js';
import { createTurnHost } from '../../main/core/harness/turnHost.js';
import { runTurn } from '../../main/core/turn/engine.js';
import { attachPayloadImages } from '../../main/core/turn/images.js';
import { loadSessionState } from '../../main/core/turn/loadState.js';
import { readArtifactImage } from '../../main/core/harness/artifactPages.js';
import { detectSandbox } from '../../main/sandbox/box.js';
import { createScriptedSession, useSessionFixture } from '../support/sessionFixture.js';
import { writeMcpSettings } from '../support/turnHost.js';

// A session file is a record, not a grant: an MCP tool allowed "in this project" in another home (scope tool,
// its tool_rules_applied) allows nothing where the file is imported; and an image handle a file names cannot
// make Keel read, serve or send a file outside the session's artifacts.
const SERVER = path.resolve('test/fixtures/mcp/server.mjs');
const NOTE = 'mcp__fixture__write_note';

let bwrap = false;
const logs: SessionLog[] = [];

beforeAll(async () => {
  bwrap = (await detectSandbox()).kind === 'bwrap';
});
const fixture = useSessionFixture('keel-attack-mcp-scope-', {
  cleanup: () => {
    for (const log of logs.splice(0)) log.close();
  },
});

function withFixtureServer(home: string): void {
  writeMcpSettings(home, { fixture: { command: process.execPath, args: [SERVER] } });
}

async function turn(log: SessionLog, prompt?: string) {
  const host = await createTurnHost(log, { env: { PATH: process.env.PATH } });
  try {
    return await runTurn(host, prompt === undefined ? {} : { prompt });
  } finally {
    await host.dispose?.();
  }
}

const exported = (home: string, id: string) => {
  let text = '';
  exportSession(home, id, (chunk) => (text += chunk));
  return text;
};

describe.runIf(process.platform === 'linux')('imported MCP grants (bubblewrap)', () => {
  beforeEach((context) => {
    if (!bwrap) context.skip();
  });

  it('a tool allowed in the project elsewhere still asks in the importing home', async () => {
    withFixtureServer(fixture.home);
    const log = createScriptedSession(fixture, { policy: 'ask', toolMode: 'write' });
    logs.push(log);
    const call = {
      kind: 'reply' as const,
      text: '',
      toolCalls: [{ id: 'n1', name: NOTE, arguments: { text: 'a' } }],
    };
    fixture.server.enqueue(call, { kind: 'reply', text: 'one' });
    expect((await turn(log, 'note')).status).toBe('awaiting_approval');
    const granted = recordDecision(log, { decision: 'grant', scope: 'tool' });
    if (!granted.ok) throw new Error(granted.message);
    keepToolGrant(fixture.home, log, granted.recorded, granted.request, 'test');
    expect(await turn(log)).toEqual({ status: 'completed', text: 'one' });
    // A second turn in the exporting home records the rule it ran under.
    fixture.server.enqueue(
      { ...call, toolCalls: [{ id: 'n2', name: NOTE, arguments: { text: 'b' } }] },
      { kind: 'reply', text: 'two' },
    );
    expect(await turn(log, 'again')).toEqual({ status: 'completed', text: 'two' });
    const text = exported(fixture.home, log.id);
    expect(text).toContain('"kind":"tool_rules_applied"');

    const victimHome = path.join(fixture.dir, 'victim-home');
    withFixtureServer(victimHome);
    const { id } = importSession(victimHome, text, { project: fs.realpathSync(fixture.project) });
    const imported = SessionLog.open(victimHome, id, { write: true });
    logs.push(imported);
    const state = loadSessionState(imported);
    expect(state.grants.size).toBe(0);
    expect(state.toolRules).toBeUndefined();
    expect(listToolRules(victimHome, fixture.project)).toEqual([]);
    // Re-pinned to the scripted endpoint here (an imported endpoint is not trusted), then the call asks.
    imported.append({
      kind: 'model_changed',
      provider: 'openai-compatible',
      model: 'scripted-model',
      baseUrl: fixture.server.openaiBaseUrl,
      contextWindow: 32_000,
    });
    fixture.server.enqueue({ ...call, toolCalls: [{ id: 'n3', name: NOTE, arguments: { text: 'c' } }] });
    expect((await turn(imported, 'note here')).status).toBe('awaiting_approval');
    const asked = imported
      .read()
      .filter((e): e is EventOf<'approval_request'> => e.kind === 'approval_request')
      .at(-1);
    expect(asked).toMatchObject({ tool: NOTE, toolCallId: 'n3' });
  });
});

describe('image handles from a file', () => {
  it('never reads, serves or sends a file outside the session artifacts', () => {
    const log = createScriptedSession(fixture, { policy: 'ask', toolMode: 'write' });
    logs.push(log);
    const secret = path.join(fixture.home, 'settings.json');
    fs.writeFileSync(secret, Buffer.from('89504e470d0a1a0a0000', 'hex')); // PNG magic: passes a type sniff
    log.append({ kind: 'user_message', content: 'x' });
    log.append({
      kind: 'assistant_message',
      content: '',
      toolCalls: [{ id: 'i1', name: 'mcp__x__y', arguments: '{}' }],
    });
    const handles = ['../../../settings.json', secret, 'sub/../../../../settings.json'];
    log.append({
      kind: 'tool_result',
      toolCallId: 'i1',
      tool: 'mcp__x__y',
      content: 'an image',
      images: handles.map((handle) => ({ handle, mimeType: 'image/png' as const, bytes: 10 })),
    });
    const { id } = importSession(path.join(fixture.dir, 'other-home'), exported(fixture.home, log.id));
    const imported = SessionLog.open(path.join(fixture.dir, 'other-home'), id, { write: false });
    logs.push(imported);
    const payload = projectPayload(imported.read(), { system: 'You are Keel.' });
    expect(attachPayloadImages(payload, imported.artifactsDir)).toBe(0);
    expect(attachPayloadImages(projectPayload(log.read(), { system: 'x' }), log.artifactsDir)).toBe(0);
    for (const handle of handles) {
      expect(() => readArtifactImage(log.artifactsDir, handle)).toThrow(/no image/);
    }
  });
});
