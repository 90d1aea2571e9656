import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { programRoots } from '../../../main/mcp/boxedServer.js';
import { makeTempDir, removeTempDir } from '../../support/cli.js';

// The folders bound read-only so a stdio server's own program is visible in its box (the box hides /tmp and
// the home folder): real files in a temp folder, a stand-in home, the real function.
let base: string;
let home: string;

beforeEach(() => {
  base = fs.realpathSync(makeTempDir('keel-program-roots-'));
  home = path.join(base, 'home');
  fs.mkdirSync(home);
});
afterEach(() => removeTempDir(base));

/** Writes a file (and its folders) under `base`; returns its path. */
function file(relative: string, text = 'export {};\n'): string {
  const target = path.join(base, relative);
  fs.mkdirSync(path.dirname(target), { recursive: true });
  fs.writeFileSync(target, text);
  return target;
}
const folder = (relative: string) => {
  const target = path.join(base, relative);
  fs.mkdirSync(target, { recursive: true });
  return target;
};
// No PATH unless a test gives one: a bare `node` then binds nothing.
const roots = (args: string[], project: string, command = 'node', pathEnv?: string) =>
  programRoots({ command, args }, project, home, pathEnv ?? '');

describe('programRoots', () => {
  it('binds an installed package’s whole node_modules (where its dependencies are)', () => {
    const script = file('cache/node_modules/server-x/dist/index.js');
    const project = folder('projects/app');
    expect(roots([script, 'stdio'], project)).toEqual([path.join(base, 'cache/node_modules')]);
  });

  it('binds the nearest folder with a node_modules above a script of another checkout', () => {
    folder('tool/node_modules');
    const script = file('tool/test/fixtures/server.mjs');
    expect(roots([script], folder('projects/app'))).toEqual([path.join(base, 'tool')]);
  });

  it('never binds a folder holding the project: the script’s folder instead, else the script alone', () => {
    folder('work/node_modules');
    const project = folder('work/project');
    const nested = file('work/scripts/server.mjs');
    expect(roots([nested], project)).toEqual([path.join(base, 'work/scripts')]);
    // Its own folder holds the project too (the project's siblings would show): only the file.
    const beside = file('work/server.mjs');
    expect(roots([beside], project)).toEqual([beside]);
  });

  it('never binds the home folder itself', () => {
    folder('home/node_modules');
    const project = folder('projects/app');
    const inTools = file('home/tools/server.mjs');
    expect(roots([inTools], project)).toEqual([path.join(home, 'tools')]);
    const inHome = file('home/server.mjs');
    expect(roots([inHome], project)).toEqual([inHome]);
  });

  it('binds nothing for a script inside the project (visible with it) or the project folder itself', () => {
    folder('tool/node_modules');
    const script = file('tool/test/server.mjs');
    expect(roots([script], path.join(base, 'tool'))).toEqual([]);
    expect(roots([file('projects/app/server.mjs')], path.join(base, 'projects/app'))).toEqual([]);
  });

  it('looks at the command (absolute, or found on PATH) and at the script a runtime runs only', () => {
    const project = folder('projects/app');
    const script = file('cache/node_modules/server-x/dist/index.js');
    folder('bin');
    fs.symlinkSync(script, path.join(base, 'bin', 'server-x'));
    expect(roots([], project, path.join(base, 'bin', 'server-x'))).toEqual([
      path.join(base, 'cache/node_modules'),
    ]);
    // Not scripts, relative, missing, or a folder: nothing bound for them.
    const data = file('data/config.json', '{}');
    folder('data/dir.js');
    expect(
      roots(
        [data, 'relative/server.mjs', path.join(base, 'missing.mjs'), path.join(base, 'data/dir.js')],
        project,
      ),
    ).toEqual([]);
    // A bare command is looked up on PATH (absolute entries only) as the box's shell would; not found, nothing.
    const runtime = file('home/.nvm/versions/node/v20/bin/node', '');
    fs.chmodSync(runtime, 0o755);
    const bin = path.dirname(runtime);
    expect(roots([], project, 'node', `relative/bin:${bin}`)).toEqual([bin]);
    expect(roots([], project, 'node', `${base}/nowhere`)).toEqual([]);
    expect(roots([], project, 'node')).toEqual([]);
    // An absolute runtime under the hidden home (an nvm node) binds its own folder.
    expect(roots([], project, runtime)).toEqual([bin]);
  });

  it('binds only the first script a runtime is given, and none after inline code (issue #38)', () => {
    const project = folder('projects/app');
    const server = file('tools/srv/server.mjs');
    const other = file('elsewhere/secret-folder/tool.js');
    expect(roots([server, other], project)).toEqual([path.dirname(server)]);
    expect(roots(['--inspect', server, '--config', other], project)).toEqual([path.dirname(server)]);
    for (const flag of ['-e', '--eval', '-p', '--print', '-c', '--eval=1'])
      expect(roots([flag, 'import("x")', other], project)).toEqual([]);
  });

  it('reads nothing from a shell server’s arguments: its script text names no program (issue #38)', () => {
    const project = folder('projects/app');
    const script = file('tools/srv/server.mjs');
    const secret = file('elsewhere/secret.txt', 'secret');
    const line = `${secret}; exec node "${script}" | tee /dev/null`;
    // Whatever the shell itself binds (its own folder), its arguments add nothing.
    for (const shell of ['sh', 'bash', '/bin/sh', '/usr/bin/zsh'])
      expect(roots(['-c', line, script], project, shell)).toEqual(roots([], project, shell));
    expect(roots(['-c', line, script], project, 'sh')).toEqual([]);
    // The shell itself is its program: an absolute one outside the usual folders binds its own folder.
    const shell = file('home/.local/bin/bash', '');
    expect(roots(['-lc', line], project, shell)).toEqual([path.dirname(shell)]);
  });
});
