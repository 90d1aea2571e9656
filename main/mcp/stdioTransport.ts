import { spawn, type ChildProcessByStdio } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { JSONRPCMessageSchema, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

/** The longest line (one JSON-RPC message) a server may print: a bigger reply ends the connection. */
export const MAX_MESSAGE_BYTES = 32 * 1024 * 1024;
/** How much of the server's stderr is kept for the state people see ("failed: <tail>"). */
const STDERR_TAIL_CHARS = 4000;
/** How many lines of non-JSON on stdout are tolerated before the server is taken as broken. */
const MAX_GARBAGE_LINES = 20;

/** What to spawn: an argv already wrapped by the box, and its whole environment. */
export type SpawnSpec = { argv: string[]; env: Record<string, string>; cwd?: string };

/**
 * The client side of MCP's stdio transport over a process Keel spawned itself (the SDK's own transport
 * merges a default environment and cannot be given a boxed argv and nothing else). One message per line;
 * a line that is not JSON-RPC is reported through `onerror` and skipped (too many end the connection); a
 * message bigger than MAX_MESSAGE_BYTES ends it. Keeps the tail of stderr for people.
 */
export class BoxedStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  private child: ChildProcessByStdio<Writable, Readable, Readable> | undefined;
  private chunks: Buffer[] = [];
  private buffered = 0;
  private garbage = 0;
  private stderr = '';
  private closed = false;
  /** Why the connection ended, when Keel ended it (too big a message, garbage); else the exit status. */
  exitReason: string | undefined;

  constructor(private readonly spec: SpawnSpec) {}

  /** The last characters the server wrote to stderr. */
  get stderrTail(): string {
    return this.stderr;
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  start(): Promise<void> {
    const [command, ...args] = this.spec.argv;
    if (command === undefined) return Promise.reject(new Error('nothing to start'));
    return new Promise((resolve, reject) => {
      const child = spawn(command, args, {
        env: this.spec.env,
        stdio: ['pipe', 'pipe', 'pipe'],
        ...(this.spec.cwd ? { cwd: this.spec.cwd } : {}),
      });
      this.child = child;
      child.once('error', (error) => {
        this.exitReason ??= `could not start: ${error.message}`;
        reject(error);
        this.finish();
      });
      child.once('spawn', () => resolve());
      child.once('close', (code, signal) => {
        this.exitReason ??= signal ? `exited on ${signal}` : `exited with status ${code}`;
        this.finish();
      });
      child.stdout.on('data', (chunk: Buffer) => this.onData(chunk));
      child.stderr.on('data', (chunk: Buffer) => {
        this.stderr = (this.stderr + chunk.toString('utf8')).slice(-STDERR_TAIL_CHARS);
      });
      // A server that exits while a message is being written: the close event reports it.
      child.stdin.on('error', () => undefined);
    });
  }

  send(message: JSONRPCMessage): Promise<void> {
    const child = this.child;
    if (!child || this.closed) return Promise.reject(new Error('the MCP server is not running'));
    return new Promise((resolve) => {
      if (child.stdin.write(`${JSON.stringify(message)}\n`)) resolve();
      else child.stdin.once('drain', () => resolve());
    });
  }

  /** Ends the server: stdin closed, then SIGTERM, then SIGKILL (the box's PID namespace takes its children). */
  async close(): Promise<void> {
    const child = this.child;
    if (!child || this.closed) {
      this.finish();
      return;
    }
    child.stdin.end();
    const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
    const wait = (ms: number) =>
      Promise.race([exited.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), ms))]);
    if (!(await wait(200))) {
      child.kill('SIGTERM');
      if (!(await wait(1000))) child.kill('SIGKILL');
      await exited;
    }
    this.finish();
  }

  private finish(): void {
    if (this.closed) return;
    this.closed = true;
    this.chunks = [];
    this.onclose?.();
  }

  private fail(reason: string): void {
    this.exitReason = reason;
    this.onerror?.(new Error(reason));
    this.child?.kill('SIGKILL');
  }

  private onData(chunk: Buffer): void {
    let start = 0;
    for (;;) {
      const newline = chunk.indexOf(0x0a, start);
      if (newline === -1) break;
      const piece = chunk.subarray(start, newline);
      const line = this.chunks.length === 0 ? piece : Buffer.concat([...this.chunks, piece]);
      this.chunks = [];
      this.buffered = 0;
      start = newline + 1;
      if (line.length > MAX_MESSAGE_BYTES) return this.fail(tooBig(line.length));
      this.onLine(line.toString('utf8').replace(/\r$/, ''));
      if (this.closed) return;
    }
    const rest = chunk.subarray(start);
    if (rest.length === 0) return;
    this.buffered += rest.length;
    if (this.buffered > MAX_MESSAGE_BYTES) {
      this.chunks = [];
      return this.fail(tooBig(this.buffered));
    }
    this.chunks.push(Buffer.from(rest));
  }

  private onLine(line: string): void {
    if (line.trim() === '') return;
    let message: JSONRPCMessage;
    try {
      message = JSONRPCMessageSchema.parse(JSON.parse(line));
    } catch {
      this.garbage++;
      const shown = line.length > 120 ? `${line.slice(0, 120)}…` : line;
      this.onerror?.(new Error(`the server printed a line that is not JSON-RPC on stdout: ${shown}`));
      if (this.garbage > MAX_GARBAGE_LINES) {
        this.fail(`the server printed more than ${MAX_GARBAGE_LINES} lines that are not JSON-RPC on stdout`);
      }
      return;
    }
    this.onmessage?.(message);
  }
}

function tooBig(bytes: number): string {
  return `the server sent a message of more than ${MAX_MESSAGE_BYTES} bytes (${bytes} so far); the connection was closed`;
}
