import { execFile, spawn } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { overlayChanges } from '../../../main/core/persistent/overlayChanges.js';
import { detectSandbox, wrapCommand, type SandboxInfo } from '../../../main/sandbox/box.js';
import {
  clearLayers,
  enterHolder,
  holderArgv,
  OverlayView,
  probeOverlay,
  unsafeLayerPath,
  type OverlayLayers,
} from '../../../main/sandbox/overlayView.js';
import { waitForLine } from '../store/support/childProcess.js';
import { trackChild } from '../../support/childProcesses.js';

// Issue #36: the copy-on-write view's mechanics on the real kernel, with the real bwrap box entered into the
// view's namespace. Linux only (the probe says why elsewhere, tested below).
const linux = process.platform === 'linux';
const run = promisify(execFile);

let root: string;
let lower: string;
let sandbox: SandboxInfo;
const views: OverlayView[] = [];

beforeAll(async () => {
  root = mkdtempSync(path.join(os.tmpdir(), 'keel-view-'));
  lower = path.join(root, 'project');
  mkdirSync(path.join(lower, 'src', 'gone'), { recursive: true });
  mkdirSync(path.join(lower, 'src', 'remade'), { recursive: true });
  writeFileSync(path.join(lower, 'README.md'), 'lower readme\n');
  writeFileSync(path.join(lower, 'src', 'a.ts'), 'export const a = 1;\n');
  writeFileSync(path.join(lower, 'src', 'b.ts'), 'export const b = 1;\n');
  writeFileSync(path.join(lower, 'src', 'gone', 'x.ts'), 'x\n');
  writeFileSync(path.join(lower, 'src', 'gone', 'y.ts'), 'y\n');
  writeFileSync(path.join(lower, 'src', 'remade', 'old.ts'), 'old\n');
  writeFileSync(path.join(lower, 'src', 'remade', 'kept.ts'), 'kept\n');
  sandbox = await detectSandbox();
});

afterAll(async () => {
  for (const view of views) await view.stop();
  // overlayfs leaves work/work with mode 000: clearLayers opens it again, so no root is needed to remove it.
  for (const view of views) clearLayers(view.layers);
  rmSync(root, { recursive: true, force: true });
});

/** The layers of one session's view of `lower`. */
function layersOf(session: string): OverlayLayers {
  const base = path.join(root, session);
  const mountpoint = path.join(base, 'workspace', 'project');
  mkdirSync(mountpoint, { recursive: true });
  return { lower, upper: path.join(base, 'upper'), work: path.join(base, 'work'), mountpoint };
}

async function startView(session: string): Promise<OverlayView> {
  const view = await OverlayView.start(layersOf(session));
  views.push(view);
  return view;
}

/** Runs `command` in the real bwrap box, its workspace the view's folder, entered into the view's namespace. */
async function inBox(view: OverlayView, command: string): Promise<string> {
  const wrapped = wrapCommand({ sandbox, command, workspace: view.layers.mountpoint, network: 'none' });
  const [file, ...args] = view.enter(wrapped.argv);
  const { stdout } = await run(file as string, args, { env: { ...process.env, ...wrapped.env } });
  return stdout;
}

describe.runIf(linux)('a copy-on-write view (overlay in a namespace of its own)', () => {
  it('is available here, and the probe says so with its reason', async () => {
    const probe = await probeOverlay(root);
    expect(probe.available, probe.reason).toBe(true);
    expect(readdirSync(root).filter((name) => name.startsWith('overlay-probe-'))).toEqual([]);
  });

  it('keeps two sessions apart: each box sees only its own writes, and the project folder never changes', async () => {
    const a = await startView('a');
    const b = await startView('b');
    const seen = await inBox(
      a,
      'echo "changed by a" > src/a.ts && rm src/b.ts && mkdir -p new && echo n > new/n.ts && cat src/a.ts && ls src',
    );
    expect(seen).toBe('changed by a\na.ts\ngone\nremade\n');
    expect(await inBox(b, 'cat src/a.ts && ls src')).toBe('export const a = 1;\na.ts\nb.ts\ngone\nremade\n');
    expect(readFileSync(path.join(lower, 'src', 'a.ts'), 'utf8')).toBe('export const a = 1;\n');
    expect(existsSync(path.join(lower, 'src', 'b.ts'))).toBe(true);
    expect(existsSync(path.join(lower, 'new'))).toBe(false);
    // Nothing is mounted where Keel's own process looks: the host folder stays empty.
    expect(readdirSync(a.layers.mountpoint)).toEqual([]);
    // Only what a changed is stored: the upper layer holds the written files and a whiteout, not the project.
    expect(readdirSync(a.layers.upper).sort()).toEqual(['new', 'src']);
    expect(readdirSync(path.join(a.layers.upper, 'src')).sort()).toEqual(['a.ts', 'b.ts']);
  });

  it("lets Keel's own reads and writes reach the very view the box sees, through the holder", async () => {
    const view = await startView('keel');
    writeFileSync(view.hostPath(path.join(view.layers.mountpoint, 'README.md')), 'written by keel\n');
    expect(await inBox(view, 'cat README.md')).toBe('written by keel\n');
    await inBox(view, 'echo "from the box" > src/box.ts');
    expect(readFileSync(view.hostPath(path.join(view.layers.mountpoint, 'src', 'box.ts')), 'utf8')).toBe(
      'from the box\n',
    );
    expect(readFileSync(path.join(lower, 'README.md'), 'utf8')).toBe('lower readme\n');
  });

  it('lists what the view changed from its upper layer: writes, deletions, removed and remade folders', async () => {
    const view = await startView('changes');
    await inBox(
      view,
      [
        'echo changed > src/a.ts',
        'rm src/b.ts',
        'rm -r src/gone',
        'rm -r src/remade && mkdir src/remade && echo new > src/remade/new.ts && echo kept > src/remade/kept.ts',
        'mkdir -p lib/deep && echo d > lib/deep/d.ts',
        'rm README.md && mkdir README.md && echo inner > README.md/inner',
        'ln -s a.ts src/link.ts',
      ].join(' && '),
    );
    const sides = { lower, upper: view.layers.upper, view: view.hostPath(view.layers.mountpoint) };
    expect(overlayChanges(sides)).toEqual([
      { path: 'README.md', change: 'deleted' },
      { path: 'README.md/inner', change: 'written' },
      { path: 'lib/deep/d.ts', change: 'written' },
      { path: 'src/a.ts', change: 'written' },
      { path: 'src/b.ts', change: 'deleted' },
      { path: 'src/gone/x.ts', change: 'deleted' },
      { path: 'src/gone/y.ts', change: 'deleted' },
      { path: 'src/link.ts', change: 'written' },
      { path: 'src/remade/kept.ts', change: 'written' },
      { path: 'src/remade/new.ts', change: 'written' },
      { path: 'src/remade/old.ts', change: 'deleted' },
    ]);
  });

  it('resets: with the view down its layers are emptied, and the next view is the project folder again', async () => {
    const first = await startView('reset');
    await inBox(first, 'echo session > src/a.ts && rm src/b.ts');
    await first.stop();
    expect(first.running).toBe(false);
    // A path through an ended holder is refused: its pid may name another process's root later.
    expect(() => first.hostPath(first.layers.mountpoint)).toThrow(/view has ended/);
    clearLayers(first.layers);
    const again = await startView('reset');
    expect(await inBox(again, 'cat src/a.ts && ls src')).toBe(
      'export const a = 1;\na.ts\nb.ts\ngone\nremade\n',
    );
    expect(readdirSync(again.layers.upper)).toEqual([]);
  });

  it('mounts one view more and takes one down in the same holder, whose pid (and paths through it) stay', async () => {
    const view = await startView('held-a');
    const second = layersOf('held-b');
    await view.up(second);
    expect(view.isMounted(second.mountpoint)).toBe(true);
    writeFileSync(view.hostPath(path.join(second.mountpoint, 'README.md')), 'b\n');
    expect(readFileSync(path.join(second.upper, 'README.md'), 'utf8')).toBe('b\n');
    await view.down(second.mountpoint);
    expect(view.isMounted(second.mountpoint)).toBe(false);
    // Down, its layers can be cleared (a reset); up again, the same holder shows the project folder.
    clearLayers(second);
    await view.up(second);
    expect(readFileSync(view.hostPath(path.join(second.mountpoint, 'README.md')), 'utf8')).toBe(
      'lower readme\n',
    );
    expect(view.all.map((one) => one.mountpoint).sort()).toEqual(
      [view.layers.mountpoint, second.mountpoint].sort(),
    );
    await view.down(second.mountpoint);
    clearLayers(second);
  });

  it('is entered only while its holder runs, never through a pid this process did not start', async () => {
    const view = await OverlayView.start(layersOf('entered'));
    expect(enterHolder(view.pid)).toEqual(expect.arrayContaining([`--target=${view.pid}`]));
    expect(enterHolder(process.pid)).toBeUndefined();
    await view.stop();
    clearLayers(view.layers);
    expect(enterHolder(view.pid)).toBeUndefined();
  });

  it("ends with Keel: a killed Keel process takes the view's holder with it, the session's changes stay", async () => {
    const layers = layersOf('crash');
    mkdirSync(layers.upper, { recursive: true });
    mkdirSync(layers.work, { recursive: true });
    // Keel's part, as OverlayView.start does it: the holder's stdin is a pipe this (killed) process holds.
    const starter = `const argv = JSON.parse(process.argv[1]);
      const holder = require('node:child_process').spawn(argv[0], argv.slice(1), { stdio: ['pipe', 'pipe', 'inherit'] });
      holder.stdout.on('data', (d) => String(d).includes('ready') && console.log('holder ' + holder.pid));
      setInterval(() => {}, 60000);`;
    const keel = trackChild(
      spawn(process.execPath, ['-e', starter, JSON.stringify(holderArgv(layers))], {
        stdio: ['ignore', 'pipe', 'inherit'],
      }),
    );
    const holder = Number((await waitForLine(keel, /^holder \d+$/)).split(' ')[1]);
    writeFileSync(path.join(`/proc/${holder}/root`, layers.mountpoint, 'kept.ts'), 'survives\n');
    expect(existsSync(`/proc/${holder}`)).toBe(true);
    keel.kill('SIGKILL');
    for (let i = 0; i < 200 && existsSync(`/proc/${holder}`); i += 1)
      await new Promise((r) => setTimeout(r, 10));
    expect(existsSync(`/proc/${holder}`)).toBe(false);
    expect(readFileSync(path.join(layers.upper, 'kept.ts'), 'utf8')).toBe('survives\n');
    expect(existsSync(path.join(lower, 'kept.ts'))).toBe(false);
  });
});

describe('where no view can be had, the probe says why (the checkout stays a full copy)', () => {
  it('names the platform, a missing tool, and a path overlayfs cannot carry', async () => {
    const scratch = mkdtempSync(path.join(os.tmpdir(), 'keel-view-probe-'));
    try {
      expect(await probeOverlay(scratch, { platform: 'darwin' })).toEqual({
        available: false,
        reason: 'overlayfs is a Linux file system; darwin gets full copies',
      });
      expect(await probeOverlay(scratch, { platform: 'linux', locate: () => null })).toEqual({
        available: false,
        reason: 'util-linux `unshare` / `nsenter` are not installed',
      });
      expect(unsafeLayerPath({ lower: '/p/a,b', upper: '/u', work: '/w', mountpoint: '/m' })).toMatch(
        /lower folder's path contains/,
      );
      await expect(
        OverlayView.start({ lower: '/p/a:b', upper: '/u', work: '/w', mountpoint: '/m' }),
      ).rejects.toThrow(/cannot mount a copy-on-write view/);
    } finally {
      rmSync(scratch, { recursive: true, force: true });
    }
  });
});
