import fs from 'node:fs';
import path from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import type { EventOf } from '../../../main/common/events.js';
import { allowedScopes, recordDecision } from '../../../main/core/approvals/decide.js';
import { listGrants } from '../../../main/core/approvals/grants.js';
import type { SessionLog } from '../../../main/core/log/sessionLog.js';
import {
  forgetToolGrant,
  keepToolGrant,
  listToolRules,
  revokeToolRule,
} from '../../../main/core/mcp/toolRules.js';
import { runTurn } from '../../../main/core/turn/engine.js';
import { loadSessionState } from '../../../main/core/turn/loadState.js';
import { useTurnHostFixture, writeMcpSettings } from '../../support/turnHost.js';

// Grants with scope `tool`: the real fixture MCP server in the real box, the real turn engine, the scripted
// provider, and the same decide + keep functions `keel approve` and approvals.decide call.
const SERVER = path.resolve('test/fixtures/mcp/server.mjs');
const NOTE = 'mcp__fixture__write_note';
const CRASH = 'mcp__fixture__crash';

const fixture = useTurnHostFixture('keel-mcp-scope-', {
  prepare: ({ home }) => writeMcpSettings(home, { fixture: { command: process.execPath, args: [SERVER] } }),
});

const session = (): SessionLog => fixture.createSession({ policy: 'ask', toolMode: 'write' });

/** One turn (or its continuation when `prompt` is absent) on a fresh host, as a resumed process has it. */
async function turn(log: SessionLog, prompt?: string) {
  const host = await fixture.keelHost(log, { env: { PATH: process.env.PATH } });
  const outcome = await runTurn(host, prompt === undefined ? {} : { prompt });
  await host.dispose?.();
  return outcome;
}

const calling = (id: string, name: string) => ({
  kind: 'reply' as const,
  text: '',
  toolCalls: [{ id, name, arguments: name === NOTE ? { text: id } : {} }],
});
const requests = (log: SessionLog) =>
  log.read().filter((e): e is EventOf<'approval_request'> => e.kind === 'approval_request');
const resultOf = (log: SessionLog, id: string) =>
  log.read().find((e): e is EventOf<'tool_result'> => e.kind === 'tool_result' && e.toolCallId === id);
const rulesApplied = (log: SessionLog) =>
  log.read().filter((e): e is EventOf<'tool_rules_applied'> => e.kind === 'tool_rules_applied');

/** Answers the one pending request as the CLI and the app do: the decision, then the rule for `tool`. */
function answer(log: SessionLog, decision: Parameters<typeof recordDecision>[1]) {
  const result = recordDecision(log, decision);
  if (!result.ok) throw new Error(result.message);
  keepToolGrant(fixture.home, log, result.recorded, result.request, 'test');
  return result;
}

describe.runIf(process.platform === 'linux')('an MCP tool granted with scope tool (bubblewrap)', () => {
  beforeEach((context) => {
    if (fixture.sandbox.kind !== 'bwrap') context.skip();
  });

  it('runs that tool without asking from then on, in this session and in later ones of the project; another tool still asks; revoking the rule asks again', async () => {
    const log = session();
    fixture.server.enqueue(calling('n1', NOTE), { kind: 'reply', text: 'first' });
    expect((await turn(log, 'note')).status).toBe('awaiting_approval');
    const [request] = requests(log);
    expect(request?.tool).toBe(NOTE);
    expect(allowedScopes(request as EventOf<'approval_request'>)).toEqual(['once', 'session', 'tool']);
    const granted = answer(log, { decision: 'grant', scope: 'tool' });
    expect(listToolRules(fixture.home, fixture.project)).toEqual([
      expect.objectContaining({ tool: NOTE, project: fs.realpathSync(fixture.project), sessionId: log.id }),
    ]);

    // Resumed by a new host (state folded from the log): the call runs, and the grant is still in effect.
    expect(await turn(log)).toEqual({ status: 'completed', text: 'first' });
    expect(resultOf(log, 'n1')?.content).toBe('could not write: EROFS');
    expect([...loadSessionState(log).grants.values()]).toEqual([
      expect.objectContaining({ seq: granted.recorded.seq, tool: NOTE, scope: 'tool' }),
    ]);

    // The next call of the same tool runs without asking; another MCP write tool asks, and is denied.
    fixture.server.enqueue(calling('n2', NOTE), calling('x1', CRASH), { kind: 'reply', text: 'second' });
    expect((await turn(log, 'again')).status).toBe('awaiting_approval');
    expect(resultOf(log, 'n2')?.content).toBe('could not write: EROFS');
    expect(requests(log).map((r) => r.tool)).toEqual([NOTE, CRASH]);
    answer(log, { decision: 'deny', reason: 'not that one' });
    expect(await turn(log)).toEqual({ status: 'completed', text: 'second' });
    expect(resultOf(log, 'x1')?.isError).toBe(true);
    expect(resultOf(log, 'x1')?.content).toContain('not that one');
    expect(listToolRules(fixture.home, fixture.project).map((rule) => rule.tool)).toEqual([NOTE]);

    // A new session of the same project: the rule is recorded in its log and the tool runs without asking.
    const later = session();
    fixture.server.enqueue(calling('n3', NOTE), { kind: 'reply', text: 'later' });
    expect(await turn(later, 'note')).toEqual({ status: 'completed', text: 'later' });
    expect(requests(later)).toEqual([]);
    expect(resultOf(later, 'n3')?.content).toBe('could not write: EROFS');
    expect(rulesApplied(later).map((e) => e.tools)).toEqual([[NOTE]]);

    // Revoked in the project: both sessions ask again from their next turn, each log saying so.
    expect(revokeToolRule(fixture.home, fixture.project, NOTE, 'test')).toBe(true);
    fixture.server.enqueue(calling('n4', NOTE), calling('n5', NOTE));
    expect((await turn(later, 'note')).status).toBe('awaiting_approval');
    expect((await turn(log, 'note')).status).toBe('awaiting_approval');
    expect(requests(later).map((r) => r.toolCallId)).toEqual(['n4']);
    expect(requests(log).map((r) => r.toolCallId)).toEqual(['n1', 'x1', 'n5']);
    expect(rulesApplied(later).map((e) => e.tools)).toEqual([[NOTE], []]);
    expect(listGrants(log.read()).find((g) => g.scope === 'tool')?.revoked?.reason).toBe(
      'its project rule was revoked',
    );
  });

  it("revoking the tool grant in its session revokes the project's rule too", async () => {
    const log = session();
    fixture.server.enqueue(calling('n1', NOTE), { kind: 'reply', text: 'ok' });
    await turn(log, 'note');
    const granted = answer(log, { decision: 'grant', scope: 'tool' });
    const grant = listGrants(log.read()).find((g) => g.seq === granted.recorded.seq);
    expect(grant?.allows).toContain('later sessions of this project');
    forgetToolGrant(fixture.home, log, { tool: NOTE, scope: 'tool' }, 'test');
    expect(listToolRules(fixture.home, fixture.project)).toEqual([]);
  });
});

describe('the scope tool', () => {
  it('is refused for a built-in tool and for a call whose outcome is unknown', () => {
    const log = session();
    log.append({ kind: 'user_message', content: 'x' });
    log.append({
      kind: 'assistant_message',
      content: '',
      toolCalls: [{ id: 'r1', name: 'run_command', arguments: '{"command":"ls"}' }],
    });
    log.append({ kind: 'approval_request', toolCallId: 'r1', tool: 'run_command', arguments: '{}' });
    const refused = recordDecision(log, { decision: 'grant', scope: 'tool' });
    expect(refused).toMatchObject({ ok: false, code: 'invalid_input' });
    expect(refused.ok ? '' : refused.message).toContain('the scope "tool" is for MCP tools');
    const unknown = { tool: NOTE, unknownOutcome: true } as EventOf<'approval_request'>;
    expect(allowedScopes(unknown)).toEqual(['once']);
  });
});
