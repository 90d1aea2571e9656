import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { COMMAND_MODULES } from '../../../main/cli/commands/index.js';
import { createContext } from '../../../main/cli/context.js';
import { runKeel } from '../../support/cli.js';
import { useCliFixture } from '../../support/cliFixture.js';
import { keel } from '../../support/keelProcess.js';
import { newSessionArgs } from '../../support/sessionFixture.js';

/*
 * Start-up cost: every `keel` command used to load the provider SDKs, the MCP client (with ajv), node-pty and
 * the WebSocket server before doing anything (~0.3 s of the ~0.75 s each spawn cost). They are loaded where
 * they are used (main/providers/sdk.ts, main/mcp/start.ts, main/runner/pty.ts, commands/serve.ts). These tests
 * run the built CLI with a preload that logs every module it loads and name what must not be among them; no
 * timing is asserted (test/bench `cli-start` measures it).
 */

const REGISTER = pathToFileURL(path.join(import.meta.dirname, '../../fixtures/moduleLog/register.mjs')).href;

/** Packages a command that neither calls a model, nor starts an MCP server, nor runs a command, never needs. */
const HEAVY = ['@anthropic-ai/sdk', 'openai', '@modelcontextprotocol/sdk', 'ajv', 'node-pty', 'ws'] as const;

const fixture = useCliFixture('keel-startup-');

/** The environment that makes the CLI log its modules to a file in the fixture's folder, and that file. */
function moduleLog(name: string): { env: NodeJS.ProcessEnv; packages: () => Set<string> } {
  const file = path.join(fixture.dir, `${name}.modules`);
  return {
    env: {
      KEEL_MODULE_LOG: file,
      NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --import ${REGISTER}`.trim(),
    },
    packages: () => {
      const urls = fs.readFileSync(file, 'utf8').split('\n').filter(Boolean);
      // The CLI's own entry in the log proves the hook saw the process at all (an empty log would pass anything).
      expect(urls.some((url) => url.endsWith('/dist/cli/bin.js'))).toBe(true);
      const names = urls.map((url) => /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url)?.[1]);
      return new Set(names.filter((n): n is string => n !== undefined));
    },
  };
}

describe('keel start-up loads only what the command uses', () => {
  it('names, for each command module, exactly the subcommands it registers, and --help lists them all in order', async () => {
    const io = {
      stdout: () => undefined,
      stderr: () => undefined,
      env: {},
      readStdin: () => Promise.resolve(''),
    };
    const all: string[] = [];
    for (const module of COMMAND_MODULES) {
      const program = new Command('keel');
      (await module.load())(
        program,
        createContext(io, () => undefined),
      );
      const registered = program.commands.map((command) => command.name());
      expect(registered).toEqual(module.names);
      all.push(...registered);
    }
    const help = runKeel(fixture.home, ['--help']);
    expect(help.code).toBe(0);
    const listed = [...help.stdout.matchAll(/^ {2}([a-z]+)\b/gm)].map((match) => match[1]);
    expect(listed).toEqual([...all, 'help']);
  });

  it('keel --help and keel sessions on an empty home load no provider SDK, MCP client, pty or WebSocket server', () => {
    for (const [name, args] of [
      ['help', ['--help']],
      ['sessions', ['sessions']],
    ] as const) {
      const log = moduleLog(name);
      const run = runKeel(fixture.home, args, { env: log.env });
      expect(run.code, run.stderr).toBe(0);
      expect(run.stderr).toBe('');
      const packages = log.packages();
      // What they do need is there: the log sees packages at all (the session index's SQLite, a native module
      // the bundle leaves in node_modules: scripts/bundle-cli.mjs).
      if (name === 'sessions') expect(packages.has('better-sqlite3')).toBe(true);
      expect(HEAVY.filter((heavy) => packages.has(heavy))).toEqual([]);
    }
  });

  it('a turn on an OpenAI-compatible server loads the openai SDK and none of the others', async () => {
    const log = moduleLog('run');
    const run = await keel(
      fixture.home,
      newSessionArgs(fixture, { policy: 'read-only', prompt: 'say hello' }),
      log.env,
    );
    expect(run.code, run.stderr).toBe(0);
    expect(fixture.server.requests.length).toBeGreaterThan(0);
    const packages = log.packages();
    expect(packages.has('openai')).toBe(true);
    expect(HEAVY.filter((heavy) => heavy !== 'openai' && packages.has(heavy))).toEqual([]);
  });
});
