import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { SessionEvent } from '../../main/common/events.js';
import { detectSandbox } from '../../main/sandbox/box.js';
import { createSession, readEvents, sendMessage, setUpApp, waitForIdle } from './appFixture.js';
import { HAS_CHROMIUM, screenshot } from './harness.js';

/*
 * A subagent's command in the live terminal, in a browser against keel serve: the parent's turn spawns a
 * subagent whose run_command prints a line every 100 ms; from the parent's spawn_subagent card the user opens
 * the child session, watches the output stream into its terminal, kills it; the command ends as killed, the
 * child answers and the parent's turn ends cleanly. Also, purely: how the transcript folds a subagent call.
 */

// The renderer is compiled by tsconfig.web.json: its fold is loaded at run time, described by what is read here.
type Item = {
  type: string;
  status?: string;
  subagent?: { childId: string; task: string };
  [k: string]: unknown;
};
const transcriptModule = '../../renderer/src/screens/session/transcriptItems.js';
const { foldTranscript } = (await import(/* @vite-ignore */ transcriptModule)) as {
  foldTranscript: (events: readonly SessionEvent[]) => Item[];
};

const sandbox = await detectSandbox();
const boxed = sandbox.kind !== 'none';

describe('a spawn_subagent call in the transcript', () => {
  let seq = 0;
  const at = '2025-03-01T10:00:00.000Z';
  const event = (fields: Record<string, unknown>) => ({ ...fields, seq: ++seq, at }) as SessionEvent;
  const spawnCall = { id: 'spawn1', name: 'spawn_subagent', arguments: '{"task":"Run it."}' };

  it('is one card that runs while its child does, carries the child id, and holds the answer', () => {
    seq = 0;
    const events = [
      event({ kind: 'assistant_message', content: 'Delegating.', toolCalls: [spawnCall] }),
      event({
        kind: 'subagent_started',
        childId: 'child1',
        toolCallId: 'spawn1',
        task: 'Run it.',
        tools: [],
      }),
    ];
    const running = foldTranscript(events).filter((item) => item.type === 'tool' || item.type === 'note');
    expect(running).toEqual([
      expect.objectContaining({
        type: 'tool',
        status: 'running',
        subagent: { childId: 'child1', task: 'Run it.' },
      }),
    ]);
    // A mirrored approval of the child's: waiting, then (whatever the decision) running again.
    events.push(
      event({ kind: 'approval_request', toolCallId: 'spawn1', tool: 'run_command', arguments: '{}' }),
    );
    expect(foldTranscript(events).at(-1)).toMatchObject({ status: 'awaiting_approval' });
    events.push(event({ kind: 'approval_denied', requestSeq: seq, reason: 'no' }));
    expect(foldTranscript(events).at(-1)).toMatchObject({ status: 'running' });
    events.push(
      event({ kind: 'subagent_result', childId: 'child1', toolCallId: 'spawn1', content: 'It ran.' }),
    );
    const done = foldTranscript(events).filter((item) => item.type === 'tool' || item.type === 'note');
    expect(done).toHaveLength(1);
    expect(done[0]).toMatchObject({
      status: 'succeeded',
      subagent: { childId: 'child1', task: 'Run it.' },
      subagentResult: { content: 'It ran.' },
    });
  });
});

describe.skipIf(!HAS_CHROMIUM || !boxed)("a subagent's command in the live terminal", () => {
  let project: string;
  const app = setUpApp({
    prefix: 'keel-ui-subagent-terminal-',
    prepare: ({ dir }) => {
      project = path.join(dir, 'project');
      fs.mkdirSync(project, { recursive: true });
    },
  });

  it('opens the running subagent from its card, streams its command live, kills it, and both turns end', async () => {
    const watched = app.watch('subagent-terminal');
    const page = await app.goto();
    const parentId = await createSession(page, {
      projectFolder: project,
      title: 'Parent session',
      policy: 'full-auto',
    });

    // One request after another: the parent spawns, the child runs its command, the child answers, the parent ends.
    const command = 'for i in $(seq 1 600); do echo "sub-line $i"; sleep 0.1; done';
    app.provider.enqueue(
      {
        kind: 'reply',
        text: 'Delegating the slow count.',
        toolCalls: [
          {
            name: 'spawn_subagent',
            arguments: { task: 'Run the slow counter and report.', tools: ['run_command'] },
          },
        ],
      },
      {
        kind: 'reply',
        text: 'Running the counter.',
        toolCalls: [{ name: 'run_command', arguments: { command } }],
      },
      { kind: 'reply', text: 'The counter was killed before it finished.' },
      { kind: 'reply', text: 'The subagent reports its counter was killed.' },
    );
    await sendMessage(page, 'Run the slow counter in a subagent.');

    // The spawn_subagent card runs while its child does, and opens the child.
    const card = page.getByRole('article', { name: 'Tool call spawn_subagent: Running' });
    await card.getByRole('button', { name: 'Open subagent' }).waitFor();
    await screenshot(page, '60-subagent-card-running');
    await card.getByRole('button', { name: 'Open subagent' }).click();
    const banner = page.getByText(/Subagent session, running inside its parent’s turn/);
    await banner.waitFor();
    // The child's run_command card counts as running (its parent's turn runs it), not as an unknown outcome.
    const commandCard = page.getByRole('article', { name: 'Tool call run_command: Running' });
    await commandCard.waitFor();

    // Its terminal streams the output live: later lines keep arriving while the pane watches.
    await commandCard.getByRole('button', { name: /Open in terminal|In the terminal/ }).click();
    const pane = page
      .getByRole('region', { name: 'Terminals' })
      .getByRole('region', { name: /^Command for i in/ });
    const screen = pane.locator('.xterm-rows');
    await screen.getByText('sub-line 3', { exact: true }).waitFor();
    expect(await pane.locator('.run-state').getAttribute('data-state')).toBe('running');
    const lineCount = async () =>
      Math.max(
        0,
        ...[...(await screen.innerText()).matchAll(/sub-line (\d+)/g)].map((match) => Number(match[1])),
      );
    const seen = await lineCount();
    await expect.poll(lineCount, { timeout: 10_000 }).toBeGreaterThan(seen + 5);
    await screenshot(page, '61-subagent-terminal-live');

    // Kill: the child's command ends as killed by the user, and the child then the parent go on to their ends.
    await pane.getByRole('button', { name: 'Kill' }).click();
    await expect
      .poll(() => pane.locator('.run-state').getAttribute('data-state'), { timeout: 15_000 })
      .toBe('stopped');
    expect(await pane.locator('.run-state').textContent()).toBe('Killed by you');
    await screen.getByText(/── Killed by you/).waitFor();
    await page.getByText('The counter was killed before it finished.').waitFor();
    // The child's turn is over: no longer live, so no Kill and no running card.
    await page.getByText(/Subagent session: another session ran it/).waitFor();
    await screenshot(page, '62-subagent-terminal-killed');

    // The parent: its turn ended cleanly with the child's answer.
    await page.getByRole('button', { name: 'Open parent session' }).click();
    await page.getByRole('heading', { name: 'Parent session' }).waitFor();
    await page.getByText('The subagent reports its counter was killed.').waitFor();
    await waitForIdle(page);
    await page.getByRole('article', { name: 'Tool call spawn_subagent: Done' }).waitFor();
    await screenshot(page, '63-subagent-parent-done');

    // The logs agree: the child's command was stopped by the user, the child answered, the parent completed.
    const parentEvents = await readEvents(page, parentId);
    const started = parentEvents.find((event) => event.kind === 'subagent_started');
    expect(started?.kind).toBe('subagent_started');
    const child = started?.kind === 'subagent_started' ? started.childId : '';
    const childEvents = await readEvents(page, child);
    const result = childEvents.find((event) => event.kind === 'tool_result');
    expect(result?.kind === 'tool_result' ? result.content : '').toMatch(/\[stopped by the user/);
    expect(childEvents.at(-1)).toMatchObject({
      kind: 'assistant_message',
      content: 'The counter was killed before it finished.',
    });
    const turnKinds = parentEvents
      .map((event) => event.kind)
      .filter((kind) => ['assistant_message', 'subagent_started', 'subagent_result'].includes(kind));
    expect(turnKinds).toEqual([
      'assistant_message',
      'subagent_started',
      'subagent_result',
      'assistant_message',
    ]);
    expect(parentEvents.some((event) => event.kind === 'interrupted' || event.kind === 'error')).toBe(false);
    expect(app.provider.pending).toBe(0);
    expect(watched.errors).toEqual([]);
    expect(watched.foreignRequests).toEqual([]);
  }, 120_000);

  it("stops the subagent alone from its own view: the parent's turn takes the partial answer and goes on", async () => {
    const watched = app.watch('subagent-stop');
    const page = await app.goto();
    const parentId = await createSession(page, {
      projectFolder: project,
      title: 'Stopping parent',
      policy: 'full-auto',
    });
    app.provider.enqueue(
      {
        kind: 'reply',
        text: 'Delegating.',
        toolCalls: [
          { name: 'spawn_subagent', arguments: { task: 'Wait a long time.', tools: ['run_command'] } },
        ],
      },
      {
        kind: 'reply',
        text: 'Waiting.',
        toolCalls: [{ name: 'run_command', arguments: { command: 'echo waiting; sleep 300' } }],
      },
      { kind: 'reply', text: 'The subagent was stopped; I carry on without it.' },
    );
    const composer = page.getByRole('textbox', { name: 'Message' });
    await sendMessage(page, 'Wait in a subagent.');
    await page
      .getByRole('article', { name: 'Tool call spawn_subagent: Running' })
      .getByRole('button', { name: 'Open subagent' })
      .click();
    await page.getByRole('article', { name: 'Tool call run_command: Running' }).waitFor();
    expect(await composer.getAttribute('placeholder')).toMatch(/ends this subagent only/);
    await page.getByRole('button', { name: 'Stop', exact: true }).click();

    await page.getByText(/Subagent session: another session ran it/).waitFor({ timeout: 15_000 });
    await page.getByRole('button', { name: 'Open parent session' }).click();
    await page.getByText('The subagent was stopped; I carry on without it.').waitFor();
    await waitForIdle(page);
    const parentEvents = await readEvents(page, parentId);
    const answer = parentEvents.find((event) => event.kind === 'subagent_result');
    expect(answer?.kind === 'subagent_result' ? answer.content : '').toMatch(/stopped/i);
    expect(parentEvents.some((event) => event.kind === 'interrupted')).toBe(false);
    expect(app.provider.pending).toBe(0);
    expect(watched.errors).toEqual([]);
  }, 90_000);
});
