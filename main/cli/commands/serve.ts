import fs from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import { InvalidArgumentError } from 'commander';
import { localCatalogueBase } from '../../core/harness/index.js';
import { defaultRendererDir, findPackageRoot, readKeelVersion } from '../../server/paths.js';
import { newServeToken, readServeState, serveStatePath, writeServeState } from '../../server/serveState.js';
import type { CliContext } from '../context.js';
import { CliError } from '../errors.js';

type ServeOptions = { port?: number; renderer?: string; newToken?: boolean };

function parsePort(value: string): number {
  const port = Number(value);
  if (!/^\d+$/.test(value.trim()) || port < 0 || port > 65_535) {
    throw new InvalidArgumentError('Expected a port number from 0 to 65535 (0 picks a free one).');
  }
  return port;
}

/**
 * `keel serve [--port N] [--renderer DIR] [--new-token]`: serves the built renderer and the app's handler
 * table on 127.0.0.1 only, behind a token carried by the printed URL. The port and token are kept in the
 * Keel home (server/serveState.ts), so a restart serves the same URL and an open page reconnects. Runs
 * until SIGINT/SIGTERM, then stops running turns (interruptions recorded) and releases their leases.
 */
export function registerServe(program: Command, context: CliContext): void {
  program
    .command('serve')
    .description('serve the app to a local browser on 127.0.0.1 (open the printed URL; it carries the token)')
    .option(
      '--port <n>',
      "port to listen on (default: the last run's, else a free one; 0: a free one)",
      parsePort,
    )
    .option('--new-token', 'make a new access token (pages opened with the old URL are refused)')
    .option('--renderer <dir>', 'the built renderer folder (default: out/renderer of this install)')
    .action(async (options: ServeOptions) => {
      // The app's whole handler table and the WebSocket server: loaded here, not for every other command.
      const [{ createHandlers }, { startKeelServer }] = await Promise.all([
        import('../../ipc/handlers.js'),
        import('../../server/server.js'),
      ]);
      const root = findPackageRoot(import.meta.dirname);
      const rendererDir = path.resolve(options.renderer ?? defaultRendererDir(root));
      if (!fs.existsSync(path.join(rendererDir, 'index.html'))) {
        context.io.stderr(
          `keel: warning: ${rendererDir} has no index.html (run npm run build); serving the API only\n`,
        );
      }
      // Issue 34's test seam: catalogue downloads from a loopback server (refused unless http://127.0.0.1:<port>).
      const localModelBase = localCatalogueBase(context.io.env);
      const handlers = createHandlers({
        home: context.home(),
        mode: 'serve',
        version: readKeelVersion(root),
        env: context.io.env,
        ...(localModelBase ? { localModelBase } : {}),
      });
      const home = context.home();
      const kept = readServeState(home);
      const token = !options.newToken && kept ? kept.token : newServeToken();
      // The last run's port unless one is named: a page reloaded after a restart finds this server.
      const wanted = options.port ?? kept?.port ?? 0;
      const tokenHelp = `The token is kept in ${serveStatePath(home)}; keel serve --new-token replaces it.`;
      const start = (port: number) => startKeelServer({ handlers, rendererDir, port, token, tokenHelp });
      let server;
      try {
        try {
          server = await start(wanted);
        } catch (error) {
          // The kept port taken by another program: a free one this time, said plainly (open pages need the new URL).
          if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE' || options.port !== undefined)
            throw error;
          server = await start(0);
          context.io.stderr(
            `keel: port ${wanted} (the last run's) is in use; serving on ${server.port} this time: open the new URL\n`,
          );
        }
      } catch (error) {
        await handlers.close();
        const code = (error as NodeJS.ErrnoException).code;
        if (code === 'EADDRINUSE')
          throw new CliError(`port ${options.port ?? 0} is in use: choose another with --port`);
        throw error;
      }
      // The kept port moves only when one was named or none was kept (a taken port is tried again next time).
      const port = options.port === undefined && kept && server.port !== wanted ? kept.port : server.port;
      writeServeState(home, { port, token });
      context.io.stderr(
        'keel: serving on 127.0.0.1 only; open this URL (Ctrl-C stops). A restart serves the same URL:\n',
      );
      context.io.stdout(`${server.url}\n`);
      const signal = await new Promise<NodeJS.Signals>((resolve) => {
        process.once('SIGINT', () => resolve('SIGINT'));
        process.once('SIGTERM', () => resolve('SIGTERM'));
      });
      const running = handlers.runningSessions().length;
      context.io.stderr(
        `keel: ${signal}: ${running > 0 ? `stopping ${running} running turn${running === 1 ? '' : 's'}, ` : ''}shutting down\n`,
      );
      await server.close();
      await handlers.close();
    });
}
