import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { detectSandbox } from '../../main/sandbox/box.js';
import { createSession, sendMessage, setUpApp } from './appFixture.js';
import { HAS_CHROMIUM, recordMeasurement, screenshot } from './harness.js';

/*
 * The live terminal in a browser against keel serve: a command's coloured UTF-8 output streams into its
 * xterm pane and Kill ends it; the user's own shell runs in the box; a finished run replays; and the
 * measurement: a 100,000-line flood streamed to the terminal, frame times recorded.
 */

const sandbox = await detectSandbox();
const boxed = sandbox.kind !== 'none';

let project: string;

const round = (value: number) => Math.round(value * 10) / 10;
const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;
};

const runCommand = (command: string) => ({
  kind: 'reply' as const,
  text: 'Running it.',
  toolCalls: [{ name: 'run_command', arguments: { command } }],
});

describe.skipIf(!HAS_CHROMIUM || !boxed)('the live terminal', () => {
  const app = setUpApp({
    prefix: 'keel-ui-terminal-',
    prepare: ({ dir }) => {
      project = path.join(dir, 'project');
      fs.mkdirSync(project, { recursive: true });
    },
  });

  it("streams a command's output live, kills it, opens a shell in the box and replays a finished run", async () => {
    const watched = app.watch('terminal');
    const page = await app.goto();
    // A full-auto session (commands run without asking), in the folder itself, so the shell's file lands there
    // at once (the flood below runs on the default checkout).
    await createSession(page, {
      projectFolder: project,
      title: 'Terminal session',
      policy: 'full-auto',
      checkout: 'direct',
    });
    await page.getByRole('button', { name: 'Terminal', exact: true }).click();
    const dock = page.getByRole('region', { name: 'Terminals' });
    await dock.getByText(/Command runs show here live/).waitFor();

    // A command that prints coloured UTF-8 lines, then hangs: its tab opens and the output streams in.
    app.provider.enqueue(
      runCommand(
        "for i in $(seq 1 30); do printf '\\033[32mline %d ✓ naïve café 日本\\033[0m\\n' $i; sleep 0.03; done; sleep 120",
      ),
      { kind: 'reply', text: 'It was stopped.' },
    );
    await sendMessage(page, 'Run the slow script.');
    const pane = dock.getByRole('region', { name: /^Command for i in/ });
    const screen = pane.locator('.xterm-rows');
    await screen.getByText('line 30 ✓ naïve café 日本').waitFor();
    // ANSI green (SGR 32) reaches the screen as xterm's palette colour 2.
    expect(await screen.locator('span.xterm-fg-2', { hasText: 'line 30' }).count()).toBe(1);
    expect(await pane.getByRole('status').textContent()).toBe('Running');
    // The transcript's card defers to the terminal.
    const card = page.getByRole('article', { name: /Tool call run_command: Running/ });
    await card.getByRole('button', { name: 'In the terminal' }).waitFor();
    expect(await card.locator('.tool-output.is-live').count()).toBe(0);
    await screenshot(page, '50-terminal-live');

    // Kill: the whole tree dies, the run shows how it ended, and the turn goes on.
    await pane.getByRole('button', { name: 'Kill' }).click();
    await expect
      .poll(() => pane.locator('.run-state').getAttribute('data-state'), { timeout: 15_000 })
      .toBe('stopped');
    expect(await pane.locator('.run-state').textContent()).toBe('Killed by you');
    await page.getByText('It was stopped.').waitFor();
    await screen.getByText(/── Killed by you/).waitFor();
    await screenshot(page, '51-terminal-killed');

    // The user's own shell, in the session's box: what is typed runs there.
    await dock.getByRole('button', { name: '+ Shell' }).click();
    const shell = dock.getByRole('region', { name: 'Shell 1' });
    await shell.getByText('In the box').waitFor();
    await shell.locator('.xterm').click();
    await page.keyboard.type('echo hello-$((6*7)) && touch made-in-shell.txt\n');
    await shell.locator('.xterm-rows').getByText('hello-42').waitFor();
    await expect.poll(() => fs.existsSync(path.join(project, 'made-in-shell.txt'))).toBe(true);
    await page.keyboard.type('touch /usr/keel-probe 2>/dev/null || echo outside=refused\n');
    await shell.locator('.xterm-rows').getByText('outside=refused', { exact: true }).waitFor();
    await screenshot(page, '52-terminal-shell');
    await dock.getByRole('button', { name: 'Close Shell 1' }).click();
    await expect
      .poll(async () =>
        page.evaluate<number>('window.keel.terminal.list({}).then((r) => r.value.terminals.length)'),
      )
      .toBe(0);

    // After a reload the finished run replays from its artifact (the whole output, colours kept) in its own pane.
    await page.reload();
    await page.getByRole('option', { name: /Terminal session/ }).click();
    await page.getByRole('heading', { name: 'Terminal session' }).waitFor();
    await page
      .getByRole('article', { name: /Tool call run_command/ })
      .getByRole('button', { name: 'Open in terminal' })
      .click();
    const replay = page
      .getByRole('region', { name: 'Terminals' })
      .getByRole('region', { name: /^Command for i in/ });
    const replayed = replay.locator('.xterm-rows');
    await replayed.getByText('── Killed by you').waitFor();
    expect(await replayed.locator('span.xterm-fg-2', { hasText: 'line 30 ✓ naïve café' }).count()).toBe(1);
    expect(await replay.locator('.run-state').textContent()).toBe('Killed by you');
    await screenshot(page, '53-terminal-replay');
    expect(watched.errors).toEqual([]);
    expect(watched.foreignRequests).toEqual([]);
  }, 90_000);

  it('streams a 100,000-line command output to the terminal (frame times measured)', async () => {
    app.watch('terminal-flood');
    const page = await app.goto();
    await createSession(page, { projectFolder: project, title: 'Flood session', policy: 'full-auto' });
    await page.getByRole('button', { name: 'Terminal', exact: true }).click();
    const lines = 100_000;
    app.provider.enqueue(
      runCommand(
        `seq 1 ${lines} | awk '{ printf "\\033[3%dm%06d\\033[0m row ✓ ünïcödé\\n", $1 % 7 + 1, $1 }'`,
      ),
      { kind: 'reply', text: 'Flood done.' },
    );
    // Frame deltas, long tasks and pushed output, recorded in the page from the first chunk to the result.
    await page.evaluate(`(() => {
      const state = (window.__flood = { frames: [], longTasks: [], chunks: 0, chars: 0, first: 0, last: 0, recording: false });
      window.keel.subscribe('tool.output', ({ chunk }) => {
        if (!state.first) { state.first = performance.now(); state.recording = true; tick.last = performance.now(); requestAnimationFrame(tick); }
        state.chunks++; state.chars += chunk.length; state.last = performance.now();
      });
      const tick = (now) => {
        state.frames.push(now - tick.last);
        tick.last = now;
        if (state.recording) requestAnimationFrame(tick);
      };
      new PerformanceObserver((list) => { for (const entry of list.getEntries()) if (state.recording) state.longTasks.push(entry.duration); })
        .observe({ type: 'longtask' });
    })()`);
    await sendMessage(page, 'Flood the terminal.');
    const pane = page
      .getByRole('region', { name: 'Terminals' })
      .getByRole('region', { name: /^Command seq 1/ });
    await pane
      .locator('.xterm-rows')
      .getByText(`${String(lines)} row ✓ ünïcödé`)
      .waitFor({ timeout: 60_000 });
    await page.getByText('Flood done.').waitFor({ timeout: 60_000 });
    const flood = await page.evaluate<{
      frames: number[];
      longTasks: number[];
      chunks: number;
      chars: number;
      first: number;
      last: number;
    }>('(window.__flood.recording = false, window.__flood)');
    const frames = flood.frames.slice(1);
    const expectedChars = Array.from(
      { length: lines },
      (_, n) => `\x1b[3${((n + 1) % 7) + 1}m${String(n + 1).padStart(6, '0')}\x1b[0m row ✓ ünïcödé\r\n`,
    ).join('').length;
    recordMeasurement('terminalFlood100kLines', {
      lines,
      chars: flood.chars,
      chunks: flood.chunks,
      streamMs: round(flood.last - flood.first),
      charsPerSecond: Math.round(flood.chars / ((flood.last - flood.first) / 1000)),
      frames: frames.length,
      maxFrameMs: round(Math.max(...frames)),
      p95FrameMs: round(percentile(frames, 95)),
      medianFrameMs: round(percentile(frames, 50)),
      framesOver50Ms: frames.filter((delta) => delta > 50).length,
      longTasks: flood.longTasks.length,
      longestTaskMs: round(Math.max(0, ...flood.longTasks)),
      target: 'no frame over 50 ms',
      flowControl: 'tool.watch while the dock is open; acks batched from xterm write callbacks',
      loadAverage: os.loadavg().map(round),
    });
    await screenshot(page, '54-terminal-flood-100k');

    // Replayed after a reload from its artifact: past 2 MB only the tail (the terminal keeps 10,000 lines), to the last line.
    await page.reload();
    await page.getByRole('option', { name: /Flood session/ }).click();
    await page
      .getByRole('article', { name: /Tool call run_command/ })
      .getByRole('button', { name: 'Open in terminal' })
      .click();
    const replay = page
      .getByRole('region', { name: 'Terminals' })
      .getByRole('region', { name: /^Command seq 1/ });
    await replay.locator('.xterm-rows').getByText('── Exit 0').waitFor({ timeout: 30_000 });
    await replay
      .locator('.xterm-rows')
      .getByText(`${String(lines)} row ✓ ünïcödé`)
      .waitFor();
    // Every character arrived (the stream is redacted, never shortened) and the screen shows the end.
    expect(flood.chars).toBeGreaterThanOrEqual(expectedChars);
    expect(frames.length).toBeGreaterThan(10);
  }, 90_000);
});
