import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { SessionLog } from '../../../main/core/log/sessionLog.js';
import { holdSessionLease } from '../../support/cli.js';
import { useCliFixture } from '../../support/cliFixture.js';
import { keel, startKeel } from '../../support/keelProcess.js';
import type { ScriptStep } from '../../support/providerServer.js';
import {
  checkoutPath,
  eventsOf,
  kinds,
  newSessionArgs,
  onlySessionId,
  rejected,
} from '../../support/sessionFixture.js';

const cli = useCliFixture('keel-turns-', {
  prepare: ({ project }) => {
    fs.mkdirSync(path.join(project, 'src'), { recursive: true });
    fs.writeFileSync(path.join(project, 'src', 'server.go'), 'package main\n\nfunc main() {}\n');
  },
});

const newSession = (policy: string, prompt: string, extra: string[] = []) =>
  newSessionArgs(cli, { policy, prompt, extra });

// Sessions work on a checkout (the default, --commit auto): the checkout is the model's root, so its paths
// and commands are project-relative, as real models send them; the folder gets the changes when a turn stops.
const appendLine = (file: string): ScriptStep => ({
  kind: 'reply',
  // Commands run in the project's checkout by default.
  toolCalls: [{ name: 'run_command', arguments: { command: `echo ran >> ${file}` } }],
});
const linesOf = (file: string) =>
  fs.existsSync(file) ? fs.readFileSync(file, 'utf8').split('\n').filter(Boolean) : [];
/** The file's lines in the project folder itself. */
const lines = (file: string) => linesOf(path.join(cli.project, file));
/** The file's lines in the session's checkout, where a command's side effect lands first. */
const checkoutLines = (id: string, file: string) => linesOf(checkoutPath(cli.home, id, file));

describe('keel run: a turn through the CLI', () => {
  it('streams a multi-step turn with a tool call to stdout and tool activity to stderr', async () => {
    cli.server.enqueue(
      {
        kind: 'reply',
        text: 'Reading. ',
        toolCalls: [{ name: 'read_file', arguments: { path: 'src/server.go' } }],
      },
      { kind: 'reply', text: 'It only declares main.' },
    );
    const run = await keel(cli.home, newSession('ask', 'what does server.go do?'));
    expect(run.code).toBe(0);
    expect(run.stdout).toBe('Reading. \nIt only declares main.\n');
    expect(run.stderr).toMatch(/→ read_file \{"path":"src\/server.go"\}/);
    expect(run.stderr).toMatch(/← read_file ok/);
    expect(rejected(cli.server)).toEqual([]);
  });

  it('runs each policy as specified: read-only, ask, auto-edit, full-auto', async () => {
    const edit: ScriptStep = {
      kind: 'reply',
      toolCalls: [{ name: 'write_file', arguments: { path: 'out.txt', content: 'x\n' } }],
    };
    // read-only: the write tool does not exist; the model is told so and the turn completes.
    cli.server.enqueue(edit, { kind: 'reply', text: 'cannot' });
    expect((await keel(cli.home, newSession('read-only', 'write it'))).code).toBe(0);
    expect(fs.existsSync(path.join(cli.project, 'out.txt'))).toBe(false);
    // ask: the edit waits for approval (exit 3).
    cli.server.enqueue(edit);
    expect((await keel(cli.home, newSession('ask', 'write it'))).code).toBe(3);
    expect(fs.existsSync(path.join(cli.project, 'out.txt'))).toBe(false);
    // auto-edit: the edit runs, a command asks (the edit reaches the folder when the turn pauses).
    cli.server.enqueue(edit, appendLine('auto.txt'));
    expect((await keel(cli.home, newSession('auto-edit', 'write it'))).code).toBe(3);
    expect(fs.readFileSync(path.join(cli.project, 'out.txt'), 'utf8')).toBe('x\n');
    expect(lines('auto.txt')).toEqual([]);
    // full-auto: the command runs inside the box.
    cli.server.enqueue(appendLine('full.txt'), { kind: 'reply', text: 'ran' });
    expect((await keel(cli.home, newSession('full-auto', 'run it'))).code).toBe(0);
    expect(lines('full.txt')).toEqual(['ran']);
  });

  it('survives restarts between the request, the decision and the resume', async () => {
    cli.server.enqueue(appendLine('log.txt'));
    const first = await keel(cli.home, newSession('ask', 'run it'));
    expect(first.code).toBe(3);
    expect(first.stderr).toMatch(/approval needed \(request 4\): run_command/);
    const id = onlySessionId(cli.home);
    expect((await keel(cli.home, ['resume', id])).code).toBe(3);
    expect((await keel(cli.home, ['deny', id, '--reason', 'not now'])).code).toBe(0);
    cli.server.enqueue({ kind: 'reply', text: 'ok, skipped' });
    const resumed = await keel(cli.home, ['resume', id]);
    expect(resumed.code).toBe(0);
    expect(lines('log.txt')).toEqual([]);
    const tool = (
      cli.server.requests.at(-1)?.body as { messages: { role: string; content: string }[] }
    ).messages.find((m) => m.role === 'tool');
    expect(tool?.content).toContain('denied by the user: not now');
    expect((await keel(cli.home, ['approve', id, '--scope', 'once'])).stderr).toMatch(/no pending approval/);
  });

  it('refuses provider flags on --session and keeps the pinned model across a default change', async () => {
    cli.server.enqueue({ kind: 'reply', text: 'one' });
    await keel(cli.home, newSession('ask', 'hi'));
    const id = onlySessionId(cli.home);
    fs.writeFileSync(
      path.join(cli.home, 'settings.json'),
      JSON.stringify({ defaults: { provider: 'anthropic', model: 'claude-sonnet-4-5' } }),
    );
    const flagged = await keel(cli.home, ['run', '--session', id, '--model', 'other', 'again']);
    expect(flagged.code).toBe(2);
    expect(flagged.stderr).toMatch(/drop --model/);
    cli.server.enqueue({ kind: 'reply', text: 'two' });
    expect((await keel(cli.home, ['run', '--session', id, 'again'])).code).toBe(0);
    expect(cli.server.requests.map((r) => (r.body as { model: string }).model)).toEqual([
      'scripted-model',
      'scripted-model',
    ]);
    expect(
      (
        await keel(cli.home, [
          'model',
          id,
          'openai-compatible:bigger',
          '--base-url',
          cli.server.openaiBaseUrl,
          '--context-window',
          '64000',
        ])
      ).code,
    ).toBe(0);
    cli.server.enqueue({ kind: 'reply', text: 'three' });
    await keel(cli.home, ['run', '--session', id, 'once more']);
    expect((cli.server.requests.at(-1)?.body as { model: string }).model).toBe('bigger');
    expect(kinds(eventsOf(cli.home, id))).toContain('model_changed');
  });

  it('stops on Ctrl-C mid-stream with exit 130, and the resumed request is accepted', async () => {
    cli.server.enqueue({
      kind: 'reply',
      text: Array.from({ length: 60 }, (_, i) => `w${i}`).join(' '),
      delayMs: 30,
    });
    const running = startKeel(cli.home, newSession('ask', 'talk'));
    await running.waitFor(/w3 /);
    running.child.kill('SIGINT');
    const ended = await running.done;
    expect(ended.code).toBe(130);
    const id = onlySessionId(cli.home);
    const interrupted = eventsOf(cli.home, id).at(-1);
    expect(interrupted?.kind).toBe('interrupted');
    expect(interrupted?.kind === 'interrupted' && interrupted.content).toMatch(/^w0 w1 w2 w3/);
    cli.server.enqueue({ kind: 'reply', text: 'continuing' });
    expect((await keel(cli.home, ['resume', id])).code).toBe(0);
    expect(rejected(cli.server)).toEqual([]);
  });

  it('stops a turn running in another process with keel stop', async () => {
    cli.server.enqueue({
      kind: 'reply',
      text: Array.from({ length: 200 }, (_, i) => `w${i}`).join(' '),
      delayMs: 20,
    });
    const running = startKeel(cli.home, newSession('ask', 'talk'));
    await running.waitFor(/w2 /);
    const id = onlySessionId(cli.home);
    const stop = await keel(cli.home, ['stop', id]);
    expect(stop.stderr).toMatch(/asked session .* to stop/);
    expect((await running.done).code).toBe(130);
    expect(eventsOf(cli.home, id).at(-1)?.kind).toBe('interrupted');
  });

  it('fails in one line when the pinned provider has no key, and the session is left idle with nothing appended', async () => {
    const run = await keel(
      cli.home,
      [
        'run',
        '--project',
        cli.project,
        '--provider',
        'anthropic',
        '--model',
        'claude-test-model',
        '--context-window',
        '200000',
        'hi',
      ],
      { ANTHROPIC_API_KEY: '' },
    );
    expect(run.code).toBe(1);
    const id = onlySessionId(cli.home);
    expect(run.stderr.trimEnd().split('\n')).toEqual([
      `keel: session ${id}`,
      expect.stringMatching(
        /^keel: this session is pinned to anthropic:claude-test-model, which cannot be used here: Anthropic needs an API key/,
      ),
    ]);
    expect(kinds(eventsOf(cli.home, id))).toEqual(['session_created']);
    const listed = JSON.parse((await keel(cli.home, ['sessions', '--json'])).stdout) as { status: string }[];
    expect(listed.map((session) => session.status)).toEqual(['idle']);
  });

  it('refuses a turn in one line while another process holds the session, naming its pid', async () => {
    cli.server.enqueue({ kind: 'reply', text: 'one' });
    expect((await keel(cli.home, newSession('ask', 'hi'))).code).toBe(0);
    const id = onlySessionId(cli.home);
    const holder = await holdSessionLease(cli.home, id);
    try {
      const busy = await keel(cli.home, ['run', '--session', id, 'again']);
      expect(busy.code).toBe(1);
      expect(busy.stderr).toBe(
        `keel: session ${id} is in use by another Keel process (pid ${holder.pid}); wait for it to finish or stop it, then retry\n`,
      );
    } finally {
      await holder.release();
    }
    expect(kinds(eventsOf(cli.home, id))).toEqual(['session_created', 'user_message', 'assistant_message']);
  });

  it('shows the trace with stages and tokens', async () => {
    cli.server.enqueue({ kind: 'reply', text: 'hi', usage: { inputTokens: 1000, outputTokens: 100 } });
    await keel(cli.home, newSession('ask', 'hello'));
    const trace = await keel(cli.home, ['trace', onlySessionId(cli.home), '--json']);
    const parsed = JSON.parse(trace.stdout) as {
      entries: { stage: string }[];
      totals: { inputTokens: number };
    };
    expect(parsed.entries.map((e) => e.stage)).toEqual(
      expect.arrayContaining(['projection', 'time_to_first_token', 'stream', 'usage']),
    );
    expect(parsed.totals.inputTokens).toBe(1000);
  });
});

// Under the default mode a command's side effect lands in the session's checkout first and reaches the
// project folder when a turn stops (ends or pauses for approval); a crash commits nothing. "Ran once" is
// checked in both places: the checkout right after the crash, the folder after the resumed turn.
describe('crash campaign: KEEL_CRASH_AT at every point, then resume', () => {
  async function crashed(args: string[], point: string) {
    const run = await keel(cli.home, args, { KEEL_CRASH_AT: point });
    expect(run.signal).toBe('SIGKILL');
  }

  it('after_stream_before_append: the model is asked again, the command runs once', async () => {
    cli.server.enqueue(appendLine('once.txt'));
    await crashed(newSession('full-auto', 'go'), 'after_stream_before_append');
    const id = onlySessionId(cli.home);
    expect(kinds(eventsOf(cli.home, id))).toEqual(['session_created', 'user_message']);
    cli.server.enqueue(appendLine('once.txt'), { kind: 'reply', text: 'done' });
    expect((await keel(cli.home, ['resume', id])).code).toBe(0);
    expect(lines('once.txt')).toEqual(['ran']);
    expect(rejected(cli.server)).toEqual([]);
  });

  it('after_tool_started: a command that never ran is not re-run blindly; approved once, it runs once', async () => {
    cli.server.enqueue(appendLine('once.txt'));
    await crashed(newSession('full-auto', 'go'), 'after_tool_started');
    const id = onlySessionId(cli.home);
    expect(checkoutLines(id, 'once.txt')).toEqual([]);
    // The answered request's trace survived the kill: it was committed with its assistant message.
    const log = SessionLog.open(cli.home, id);
    expect(log.readTrace().map((t) => t.stage)).toEqual(
      expect.arrayContaining(['projection', 'time_to_first_token', 'stream', 'usage']),
    );
    log.close();
    const resumed = await keel(cli.home, ['resume', id]);
    expect(resumed.code).toBe(3);
    expect(resumed.stderr).toMatch(/outcome unknown/);
    expect(lines('once.txt')).toEqual([]);
    cli.server.enqueue({ kind: 'reply', text: 'done' });
    expect((await keel(cli.home, ['approve', id, '--scope', 'once', '--resume'])).code).toBe(0);
    expect(checkoutLines(id, 'once.txt')).toEqual(['ran']);
    expect(lines('once.txt')).toEqual(['ran']);
    expect(rejected(cli.server)).toEqual([]);
  });

  it('after_tool_executed_before_result: a command that ran is not repeated when denied', async () => {
    cli.server.enqueue(appendLine('once.txt'));
    await crashed(newSession('full-auto', 'go'), 'after_tool_executed_before_result');
    const id = onlySessionId(cli.home);
    expect(checkoutLines(id, 'once.txt')).toEqual(['ran']);
    expect(lines('once.txt')).toEqual([]);
    expect((await keel(cli.home, ['resume', id])).code).toBe(3);
    // The resumed turn paused for the question: what the command did reached the folder, once.
    expect(lines('once.txt')).toEqual(['ran']);
    cli.server.enqueue({ kind: 'reply', text: 'understood' });
    expect((await keel(cli.home, ['deny', id, '--reason', 'it already ran', '--resume'])).code).toBe(0);
    expect(checkoutLines(id, 'once.txt')).toEqual(['ran']);
    expect(lines('once.txt')).toEqual(['ran']);
    expect(rejected(cli.server)).toEqual([]);
  });

  it('after_tool_executed_before_result: an edit that landed is recognised by its image and not applied twice', async () => {
    cli.server.enqueue({
      kind: 'reply',
      toolCalls: [
        {
          name: 'edit_file',
          arguments: {
            path: 'src/server.go',
            old_string: 'func main() {}',
            new_string: 'func main() { serve() }',
          },
        },
      ],
    });
    await crashed(newSession('full-auto', 'edit'), 'after_tool_executed_before_result');
    const id = onlySessionId(cli.home);
    expect(fs.readFileSync(path.join(cli.project, 'src/server.go'), 'utf8')).toBe(
      'package main\n\nfunc main() {}\n',
    );
    cli.server.enqueue({ kind: 'reply', text: 'edited' });
    expect((await keel(cli.home, ['resume', id])).code).toBe(0);
    const result = eventsOf(cli.home, id).find((e) => e.kind === 'tool_result');
    expect(result?.kind === 'tool_result' && result.content).toMatch(/already applied/);
    expect(fs.readFileSync(path.join(cli.project, 'src/server.go'), 'utf8')).toBe(
      'package main\n\nfunc main() { serve() }\n',
    );
  });

  it('after_approval_before_execute: the approved command runs exactly once after the crash', async () => {
    cli.server.enqueue(appendLine('once.txt'));
    expect((await keel(cli.home, newSession('ask', 'go'))).code).toBe(3);
    const id = onlySessionId(cli.home);
    expect((await keel(cli.home, ['approve', id, '--scope', 'once'])).code).toBe(0);
    await crashed(['resume', id], 'after_approval_before_execute');
    expect(checkoutLines(id, 'once.txt')).toEqual([]);
    cli.server.enqueue({ kind: 'reply', text: 'done' });
    expect((await keel(cli.home, ['resume', id])).code).toBe(0);
    expect(checkoutLines(id, 'once.txt')).toEqual(['ran']);
    expect(lines('once.txt')).toEqual(['ran']);
    const events = eventsOf(cli.home, id);
    expect(events.filter((e) => e.kind === 'tool_result')).toHaveLength(1);
    expect(rejected(cli.server)).toEqual([]);
  });

  it('during_append: a result whose commit died is unknown, never half-written, and not repeated', async () => {
    cli.server.enqueue(appendLine('once.txt'));
    const run = await keel(cli.home, newSession('full-auto', 'go'), {
      KEEL_CRASH_AT: 'during_append',
      KEEL_CRASH_KIND: 'tool_result',
    });
    expect(run.signal).toBe('SIGKILL');
    const id = onlySessionId(cli.home);
    expect(checkoutLines(id, 'once.txt')).toEqual(['ran']);
    expect(kinds(eventsOf(cli.home, id))).toEqual([
      'session_created',
      'user_message',
      'assistant_message',
      'tool_call_started',
    ]);
    expect((await keel(cli.home, ['resume', id])).code).toBe(3);
    cli.server.enqueue({ kind: 'reply', text: 'noted' });
    expect((await keel(cli.home, ['deny', id, '--reason', 'it ran', '--resume'])).code).toBe(0);
    expect(checkoutLines(id, 'once.txt')).toEqual(['ran']);
    expect(lines('once.txt')).toEqual(['ran']);
    expect(rejected(cli.server)).toEqual([]);
  });

  it('during_append of a parallel read run: every read is re-run once on resume and answered in call order', async () => {
    fs.writeFileSync(path.join(cli.project, 'src', 'util.go'), 'package main\n\nfunc limit() {}\n');
    cli.server.enqueue({
      kind: 'reply',
      toolCalls: [
        { id: 'r1', name: 'read_file', arguments: { path: 'src/server.go' } },
        { id: 'g1', name: 'grep', arguments: { pattern: 'func limit' } },
        { id: 'r2', name: 'read_file', arguments: { path: 'src/util.go' } },
      ],
    });
    // The three reads run together: all three started, the process dies committing the first result.
    const run = await keel(cli.home, newSession('ask', 'look'), {
      KEEL_CRASH_AT: 'during_append',
      KEEL_CRASH_KIND: 'tool_result',
    });
    expect(run.signal).toBe('SIGKILL');
    const id = onlySessionId(cli.home);
    expect(kinds(eventsOf(cli.home, id)).slice(2)).toEqual([
      'assistant_message',
      'tool_call_started',
      'tool_call_started',
      'tool_call_started',
    ]);
    cli.server.enqueue({ kind: 'reply', text: 'read them' });
    expect((await keel(cli.home, ['resume', id])).code).toBe(0);
    const results = eventsOf(cli.home, id).flatMap((e) => (e.kind === 'tool_result' ? [e] : []));
    expect(results.map((e) => e.toolCallId)).toEqual(['r1', 'g1', 'r2']);
    expect(results.map((e) => e.content)).toEqual([
      expect.stringContaining('func main()'),
      expect.stringContaining('src/util.go'),
      expect.stringContaining('func limit()'),
    ]);
    expect(rejected(cli.server)).toEqual([]);
  });

  it('during_append of the first event: nothing was acknowledged, and the session still works', async () => {
    const run = await keel(cli.home, newSession('ask', 'hello'), {
      KEEL_CRASH_AT: 'during_append',
      KEEL_CRASH_KIND: 'user_message',
    });
    expect(run.signal).toBe('SIGKILL');
    const id = onlySessionId(cli.home);
    expect(kinds(eventsOf(cli.home, id))).toEqual(['session_created']);
    cli.server.enqueue({ kind: 'reply', text: 'hi again' });
    expect((await keel(cli.home, ['run', '--session', id, 'hello'])).code).toBe(0);
    expect(kinds(eventsOf(cli.home, id))).toEqual(['session_created', 'user_message', 'assistant_message']);
  });
});
