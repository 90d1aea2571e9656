#!/usr/bin/env node
/** Reads all of standard input as UTF-8. */
async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

// A reader that stops early (`keel export X | head`) is not an error.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE') process.exit(0);
  throw error;
});

try {
  // Imported here so a module that fails to load (e.g. an unbuilt native module) is reported in one line.
  const { runCli } = await import('./program.js');
  // exitCode instead of process.exit(): pending stdout writes (a large export into a pipe) still flush.
  process.exitCode = await runCli(process.argv.slice(2), {
    stdout: (text) => void process.stdout.write(text),
    stderr: (text) => void process.stderr.write(text),
    env: process.env,
    stderrIsTTY: process.stderr.isTTY,
    readStdin,
  });
} catch (error) {
  const message = error instanceof Error ? error.message : String(error);
  process.stderr.write(`keel: cannot start: ${message.split('\n')[0] ?? ''}\n`);
  if (process.env.KEEL_DEBUG === '1' && error instanceof Error)
    process.stderr.write(`${error.stack ?? ''}\n`);
  process.exitCode = 1;
}
