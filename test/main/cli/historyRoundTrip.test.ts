import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { SessionEvent } from '../../../main/common/events.js';
import { keelId } from '../../../main/core/harness/historyImport.js';
import { useCliFixture } from '../../support/cliFixture.js';
import {
  claudeFolder,
  claudeV10,
  codexLegacy,
  PNG,
  signedThinking,
  uuid,
} from '../../support/historyFixtures.js';
import { keel } from '../../support/keelProcess.js';
import { thinkingEnabled } from '../../support/providerThinking.js';
import { eventsOf } from '../../support/sessionFixture.js';

// Issue 35's proof: import → continue a turn against the scripted provider server (which rejects what the
// provider rejects: a changed thinking block, reasoning that does not verify, a call without its result) → export.

const cli = useCliFixture('keel-history-roundtrip-');

type Json = Record<string, unknown>;

function exportLines(file: string): Json[] {
  return fs
    .readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as Json);
}

describe('an imported session continues with its own provider', () => {
  it('Claude Code: the request is valid and replays the signed thinking unchanged; the export round-trips', async () => {
    const config = path.join(cli.dir, 'claude');
    const env = { CLAUDE_CONFIG_DIR: config, ANTHROPIC_API_KEY: 'sk-ant-test' };
    claudeV10(path.join(config, 'projects', claudeFolder(cli.project), `${uuid(9002)}.jsonl`), cli.project);
    const imported = await keel(cli.home, ['import', '--from', 'claude-code', '--project', cli.project], env);
    expect(imported.code, imported.stderr).toBe(0);
    expect(imported.stdout).toContain('imported 1 sessions from Claude Code (1 new, 0 with a new part)');
    const id = keelId('claude-code', uuid(9002));
    const pinned = eventsOf(cli.home, id)[0] as Extract<SessionEvent, { kind: 'session_created' }>;
    // The endpoint is chosen here (the scripted server), the model stays the one the session used.
    const repin = await keel(
      cli.home,
      ['model', id, `anthropic:${pinned.model}`, '--base-url', cli.server.anthropicBaseUrl],
      env,
    );
    expect(repin.code, repin.stderr).toBe(0);
    cli.server.enqueue({ kind: 'reply', text: 'Continuing where Claude Code stopped.' });
    const run = await keel(cli.home, ['run', '--session', id, 'what did you change?'], env);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain('Continuing where Claude Code stopped.');
    const [request] = cli.server.requests;
    expect(request?.rejected).toBeUndefined();
    // Thinking is on for the model, so the server checks every replayed block's signature.
    expect(thinkingEnabled(request?.body as Json)).toBe(true);
    const messages = (request?.body as { messages: { role: string; content: unknown }[] }).messages;
    const thinking = signedThinking('msg_v10_1', 'The user wants the test fixed. Read it first.');
    expect(JSON.stringify(messages)).toContain(JSON.stringify(thinking.signature));
    const assistantWithThinking = messages.find(
      (m) => Array.isArray(m.content) && (m.content as Json[]).some((block) => block['type'] === 'thinking'),
    );
    expect((assistantWithThinking?.content as Json[])[0]).toEqual({
      type: 'thinking',
      thinking: thinking.thinking,
      signature: thinking.signature,
    });
    // The prompt's image is sent again, from the artifact its message names, as an image block before the text.
    const prompt = messages.find(
      (m) => Array.isArray(m.content) && (m.content as Json[]).some((block) => block['type'] === 'image'),
    );
    expect((prompt?.content as Json[])[0]).toEqual({
      type: 'image',
      source: { type: 'base64', media_type: 'image/png', data: PNG.toString('base64') },
    });
    // The abandoned branch (the interrupted `npm test`) is set aside: not in the request.
    expect(JSON.stringify(messages)).not.toContain('toolu_v10_bash');

    const file = path.join(cli.dir, 'export.jsonl');
    const exported = await keel(cli.home, ['export', id, '-o', file]);
    expect(exported.code, exported.stderr).toBe(0);
    const lines = exportLines(file);
    expect(lines[0]).toMatchObject({ kind: 'session_created', at: '2025-06-01T10:01:00.000Z' });
    expect(JSON.stringify(lines)).toContain(thinking.signature);
    const again = await keel(path.join(cli.dir, 'home2'), ['import', file, '--project', cli.project]);
    expect(again.code, again.stderr).toBe(0);
  }, 180_000);

  it('Codex: encrypted reasoning is replayed byte-exact over the Responses API and the server verifies it', async () => {
    const codexHome = path.join(cli.dir, 'codex');
    const env = { CODEX_HOME: codexHome, OPENAI_API_KEY: 'sk-openai-test' };
    const sessionId = '11111111-2222-4333-8444-555555555555';
    codexLegacy(
      path.join(codexHome, 'sessions', '2025', '07', '01', `rollout-2025-07-01T10-00-00-${sessionId}.jsonl`),
    );
    // A rollout this old names no folder: the folder is the one chosen here, for the files named.
    const imported = await keel(
      cli.home,
      ['import', '--from', 'codex', path.join(codexHome, 'sessions'), '--project', cli.project],
      env,
    );
    expect(imported.code, imported.stderr).toBe(0);
    const id = keelId('codex', sessionId);
    const pinned = eventsOf(cli.home, id)[0] as Extract<SessionEvent, { kind: 'session_created' }>;
    expect(pinned).toMatchObject({ provider: 'openai', projectFolder: cli.project });
    const repin = await keel(
      cli.home,
      ['model', id, `openai:${pinned.model}`, '--base-url', cli.server.openaiBaseUrl],
      env,
    );
    expect(repin.code, repin.stderr).toBe(0);
    cli.server.enqueue({ kind: 'reply', text: 'Still two files.' });
    const run = await keel(cli.home, ['run', '--session', id, 'and now?'], env);
    expect(run.code, run.stderr).toBe(0);
    const [request] = cli.server.requests;
    expect(request?.format).toBe('responses');
    expect(request?.rejected).toBeUndefined();
    const input = (request?.body as { input: Json[] }).input;
    const reasoning = input.find((item) => item['type'] === 'reasoning');
    const source = fs
      .readFileSync(
        path.join(
          codexHome,
          'sessions',
          '2025',
          '07',
          '01',
          `rollout-2025-07-01T10-00-00-${sessionId}.jsonl`,
        ),
        'utf8',
      )
      .split('\n')[3] as string;
    expect(reasoning?.['encrypted_content']).toBe((JSON.parse(source) as Json)['encrypted_content']);
    expect(
      input.some((item) => item['type'] === 'function_call' && item['call_id'] === 'call_legacy_1'),
    ).toBe(true);
    const file = path.join(cli.dir, 'export.jsonl');
    expect((await keel(cli.home, ['export', id, '-o', file])).code).toBe(0);
    expect(
      exportLines(file).some(
        (line) => line['kind'] === 'assistant_message' && line['content'] === 'Still two files.',
      ),
    ).toBe(true);
  }, 180_000);
});
