import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  InteractiveTerminalError,
  killAllInteractiveTerminals,
  openInteractiveTerminal,
  type InteractiveTerminal,
} from '../../../main/runner/interactive.js';
import type { SandboxInfo } from '../../../main/sandbox/box.js';
import {
  boxedSandbox,
  createArea,
  noSandbox,
  processesMatching,
  waitFor,
  type RunnerArea,
} from './runnerFixtures.js';

let area: RunnerArea;
let sandbox: SandboxInfo;

beforeAll(async () => {
  // Under /var/tmp the sibling "outside" folder stays visible (read-only) inside the box.
  area = createArea('/var/tmp');
  sandbox = await boxedSandbox();
  expect(sandbox.kind, sandbox.reason).toBe('bwrap');
});
afterEach(() => killAllInteractiveTerminals());
afterAll(() => area.cleanup());

/** Opens a terminal and collects everything it prints. */
async function openCollecting(
  extra: Partial<Parameters<typeof openInteractiveTerminal>[0]> = {},
): Promise<{ terminal: InteractiveTerminal; output: () => string; until: (re: RegExp) => Promise<void> }> {
  const terminal = await openInteractiveTerminal({ workspace: area.workspace, sandbox, ...extra });
  let text = '';
  terminal.onData((chunk) => (text += chunk));
  const until = async (re: RegExp): Promise<void> => {
    const seen = await waitFor(() => re.test(text), 10_000);
    if (!seen) throw new Error(`terminal never printed ${re}; got:\n${text}`);
  };
  return { terminal, output: () => text, until };
}

describe('openInteractiveTerminal', () => {
  it('runs what the user types and prints it back, in the workspace', async () => {
    const { terminal, until } = await openCollecting();
    terminal.write('echo hi-$((20 + 22)); pwd\r');
    await until(/hi-42/);
    await until(new RegExp(area.workspace.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')));
    terminal.write('exit 7\r');
    expect(await terminal.exited).toEqual({ exitCode: 7, signal: null, killed: false });
  });

  it('writes inside the workspace, but not outside it', async () => {
    const outsideFile = path.join(area.outside, 'escaped.txt');
    const { terminal, until } = await openCollecting();
    // The shell echoes what is typed: markers are computed so only the output can match them.
    terminal.write(
      `echo inside > made-here.txt && echo WROTE-$((1 + 1)); echo x > ${outsideFile} || echo REFUSED-$((2 + 2))\r`,
    );
    await until(/REFUSED-4/);
    await until(/WROTE-2/);
    expect(readFileSync(path.join(area.workspace, 'made-here.txt'), 'utf8')).toBe('inside\n');
    expect(existsSync(outsideFile)).toBe(false);
  });

  it('has no network: a server on the host loopback cannot be reached', async () => {
    const server = net.createServer((socket) => socket.end('HELLO-FROM-HOST\n'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as net.AddressInfo).port;
    let connections = 0;
    server.on('connection', () => (connections += 1));
    try {
      const { terminal, output, until } = await openCollecting();
      terminal.write(
        `(exec 3<>/dev/tcp/127.0.0.1/${port} && cat <&3) 2>/dev/null || echo NO-ROUTE-$((1 + 1))\r`,
      );
      await until(/NO-ROUTE-2/);
      expect(output()).not.toContain('HELLO-FROM-HOST');
      expect(connections).toBe(0);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('reaches an allowlisted host through the proxy, and nothing else', async () => {
    const server = http.createServer((request, response) => response.end(`registry saw ${request.url}\n`));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as net.AddressInfo).port;
    try {
      const { terminal, until } = await openCollecting({
        network: { allow: ['registry.test'], hosts: { 'registry.test': '127.0.0.1' } },
      });
      terminal.write(
        `curl -sS --max-time 5 http://registry.test:${port}/from-terminal; ` +
          `curl -s --max-time 5 -o /dev/null -w 'evil=%{http_code}\\n' http://evil.test:${port}/\r`,
      );
      await until(/registry saw \/from-terminal/);
      await until(/evil=403/);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('kill() ends the whole tree: background jobs and setsid escapees included', async () => {
    const marker = `keel-terminal-kill-${process.pid}-${Date.now()}`;
    const { terminal, until } = await openCollecting();
    terminal.write(
      `bash -c 'exec -a ${marker} sleep 1000' & setsid bash -c 'exec -a ${marker} sleep 1001' & echo STARTED-$((5 + 5))\r`,
    );
    await until(/STARTED-10/);
    expect(await waitFor(() => processesMatching(marker).length >= 2, 5_000)).toBe(true);
    const exit = await terminal.kill();
    expect(exit.killed).toBe(true);
    expect(exit.exitCode).toBeNull();
    expect(processesMatching(marker)).toEqual([]);
    terminal.write('echo after\r');
  });

  it('Ctrl-C stops the foreground job and the shell goes on (job control works)', async () => {
    const { terminal, until } = await openCollecting();
    terminal.write('sleep 30; echo SLEEP-ENDED\r');
    await new Promise((resolve) => setTimeout(resolve, 300));
    terminal.write('\x03');
    terminal.write('echo STILL-$((2 * 3))\r');
    await until(/STILL-6/);
    terminal.write('exit\r');
    const exit = await terminal.exited;
    expect(exit.killed).toBe(false);
  });

  it('redacts secrets in what the terminal prints', async () => {
    writeFileSync(path.join(area.workspace, '.env'), 'SERVICE_TOKEN=abcd-1234-efgh-5678\n');
    const { terminal, output, until } = await openCollecting();
    terminal.write('cat .env; echo PRINTED-$((4 + 4))\r');
    await until(/PRINTED-8/);
    expect(output()).not.toContain('abcd-1234-efgh-5678');
    expect(output()).toContain('[REDACTED');
  });

  it('resizes the pty: the shell sees the new size', async () => {
    const { terminal, until } = await openCollecting({ cols: 80, rows: 24 });
    terminal.resize(132, 43);
    terminal.write('stty size\r');
    await until(/43 132/);
  });

  it('with flow control, output stalls until the consumer acks, then continues', async () => {
    const terminal = await openInteractiveTerminal({
      workspace: area.workspace,
      sandbox,
      flowControl: { highWatermarkChars: 20_000, lowWatermarkChars: 1_000 },
    });
    let received = 0;
    let text = '';
    terminal.onData((chunk) => {
      received += chunk.length;
      text += chunk.slice(-64);
      text = text.slice(-128);
    });
    terminal.write("yes 'a line of output' | head -n 20000; echo FLOW-DONE\r");
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect(received).toBeLessThan(20_000 + 65_536);
    expect(text).not.toContain('FLOW-DONE');
    const acking = setInterval(() => terminal.ack(received), 5);
    try {
      expect(await waitFor(() => text.includes('FLOW-DONE'), 10_000)).toBe(true);
    } finally {
      clearInterval(acking);
    }
    expect(received).toBeGreaterThan(20_000 * 'a line of output\r\n'.length);
  });

  it('refuses to open without a sandbox unless the user approved running unconfined', async () => {
    await expect(openInteractiveTerminal({ workspace: area.workspace, sandbox: noSandbox })).rejects.toThrow(
      InteractiveTerminalError,
    );
    await expect(openInteractiveTerminal({ workspace: area.workspace, sandbox: noSandbox })).rejects.toThrow(
      /explicit approval/,
    );
    const { terminal, until } = await openCollecting({ sandbox: noSandbox, unconfinedApproved: true });
    expect(terminal.sandbox).toBe('none');
    terminal.write('echo UNCONFINED-$((3 * 3))\r');
    await until(/UNCONFINED-9/);
  });
});
