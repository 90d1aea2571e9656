import { Readable, Writable } from 'node:stream';
import type { Command } from 'commander';
import { findPackageRoot, readKeelVersion } from '../../server/paths.js';
import type { CliContext } from '../context.js';

/**
 * `keel acp`: Keel as an Agent Client Protocol agent on standard input and output, for editors (Zed,
 * JetBrains, Neovim) that start it. Standard output carries only the protocol; Keel's own lines go to
 * standard error. Ends when the editor closes the connection (running turns are stopped, interruptions
 * recorded) or on SIGINT/SIGTERM.
 */
export function registerAcp(program: Command, context: CliContext): void {
  program
    .command('acp')
    .description('run Keel as an Agent Client Protocol agent over stdio (for Zed, JetBrains, Neovim)')
    .action(async () => {
      // The SDK and the agent: loaded for this command only.
      const [{ ndJsonStream }, { serveAcp }] = await Promise.all([
        import('@agentclientprotocol/sdk'),
        import('../../acp/agent.js'),
      ]);
      const stream = ndJsonStream(
        Writable.toWeb(process.stdout) as WritableStream<Uint8Array>,
        Readable.toWeb(process.stdin),
      );
      const connection = serveAcp(
        {
          home: context.home(),
          env: context.io.env,
          version: readKeelVersion(findPackageRoot(import.meta.dirname)),
        },
        stream,
      );
      const stopped = new Promise<void>((resolve) => {
        const stop = () => {
          connection.close();
          resolve();
        };
        process.once('SIGINT', stop);
        process.once('SIGTERM', stop);
      });
      await Promise.race([connection.closed.catch(() => undefined), stopped]);
      await connection.stopAll();
    });
}
