import { execFile } from 'node:child_process';
import {
  existsSync,
  lstatSync,
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
import { detectSandbox, wrapCommand } from '../../../main/sandbox/box.js';
import { clearLayers, OverlayView } from '../../../main/sandbox/overlayView.js';
import {
  readFileConfined,
  removeFileConfined,
  resolveInWorkspace,
  writeFileConfined,
} from '../../../main/sandbox/paths.js';
import { realpathNative } from '../../../main/sandbox/viewPath.js';

// Issue #36: Keel's confined file layer on a copy-on-write view, through the view's holder (/proc/<pid>/root). Before
// viewPath.ts, realpath resolved such a root in Keel's own namespace (the empty mount point): a read said the folder
// did not exist and a write landed on the host's empty folder instead of in the view.
const run = promisify(execFile);
let root: string;
let lower: string;
let view: OverlayView;
let inView: string;

beforeAll(async () => {
  root = mkdtempSync(path.join(os.tmpdir(), 'keel-viewpath-'));
  lower = path.join(root, 'project');
  mkdirSync(path.join(lower, 'src'), { recursive: true });
  writeFileSync(path.join(lower, 'src', 'a.ts'), 'lower a\n');
  writeFileSync(path.join(lower, 'src', 'b.ts'), 'lower b\n');
  const mountpoint = path.join(root, 'workspace', 'project');
  mkdirSync(mountpoint, { recursive: true });
  view = await OverlayView.start({
    lower,
    upper: path.join(root, 'upper'),
    work: path.join(root, 'work'),
    mountpoint,
  });
  inView = view.hostPath(mountpoint);
});

afterAll(async () => {
  await view.stop();
  clearLayers(view.layers);
  rmSync(root, { recursive: true, force: true });
});

async function inBox(command: string): Promise<string> {
  const sandbox = await detectSandbox();
  const wrapped = wrapCommand({ sandbox, command, workspace: view.layers.mountpoint, network: 'none' });
  const [file, ...args] = view.enter(wrapped.argv);
  return (await run(file as string, args, { env: { ...process.env, ...wrapped.env } })).stdout;
}

describe.runIf(process.platform === 'linux')("Keel's confined file layer on a view", () => {
  it('resolves real paths in the view, keeping the holder prefix', () => {
    expect(realpathNative(inView)).toBe(inView);
    expect(resolveInWorkspace(inView, 'src/a.ts', { argName: 'path' })).toBe(
      path.join(inView, 'src', 'a.ts'),
    );
  });

  it('reads the lower file, writes into the view (its upper layer), never the project or the host folder', async () => {
    expect(
      (await readFileConfined(inView, 'src/a.ts', { argName: 'path', maxBytes: 100 })).data.toString(),
    ).toBe('lower a\n');
    await writeFileConfined(inView, 'src/a.ts', 'keel a\n', { argName: 'path' });
    await writeFileConfined(inView, 'lib/new.ts', 'new\n', { argName: 'path' });
    expect(await inBox('cat src/a.ts lib/new.ts')).toBe('keel a\nnew\n');
    expect(readFileSync(path.join(view.layers.upper, 'src', 'a.ts'), 'utf8')).toBe('keel a\n');
    expect(readFileSync(path.join(lower, 'src', 'a.ts'), 'utf8')).toBe('lower a\n');
    expect(existsSync(path.join(lower, 'lib'))).toBe(false);
    expect(readdirSync(view.layers.mountpoint)).toEqual([]);
  });

  it('removes a lower file from the view only: a whiteout in upper, the project file kept', async () => {
    removeFileConfined(inView, 'src/b.ts', { argName: 'path' });
    expect(await inBox('ls src')).not.toContain('b.ts');
    expect(lstatSync(path.join(view.layers.upper, 'src', 'b.ts')).isCharacterDevice()).toBe(true);
    expect(readFileSync(path.join(lower, 'src', 'b.ts'), 'utf8')).toBe('lower b\n');
  });

  it("follows a link whose absolute target is the view's own file as a copy does, and refuses one leaving it", async () => {
    // The box names the checkout by its mount point; Keel sees it under /proc/<pid>/root. The kernel would take such a
    // target from Keel's own `/` (the empty host folder): the walk takes it from the holder's.
    const mountpoint = view.layers.mountpoint;
    await inBox(
      [
        `ln -s ${path.join(mountpoint, 'src', 'a.ts')} src/abs.ts`,
        `ln -s ${path.join(mountpoint, 'src')} srcdir`,
        `ln -s ${path.join(mountpoint, 'src', '..', '..', '..')} src/above`,
        'ln -s /etc/hostname src/host',
      ].join(' && '),
    );
    expect(resolveInWorkspace(inView, 'src/abs.ts', { argName: 'path' })).toBe(
      path.join(inView, 'src', 'a.ts'),
    );
    expect(realpathNative(path.join(inView, 'srcdir', 'abs.ts'))).toBe(path.join(inView, 'src', 'a.ts'));
    const before = readFileSync(view.hostPath(path.join(mountpoint, 'src', 'a.ts')), 'utf8');
    expect(
      (await readFileConfined(inView, 'src/abs.ts', { argName: 'path', maxBytes: 100 })).data.toString(),
    ).toBe(before);
    await writeFileConfined(inView, 'srcdir/via-link.ts', 'through\n', { argName: 'path' });
    await writeFileConfined(inView, 'src/abs.ts', 'abs\n', { argName: 'path' });
    expect(await inBox('cat src/via-link.ts src/a.ts')).toBe('through\nabs\n');
    expect(readdirSync(view.layers.mountpoint)).toEqual([]);
    // Still confined: a target outside the checkout is refused, in the holder's namespace and on the host alike.
    await expect(readFileConfined(inView, 'src/host', { argName: 'path', maxBytes: 100 })).rejects.toThrow(
      /outside/,
    );
    await expect(writeFileConfined(inView, 'src/above/x', 'owned\n', { argName: 'path' })).rejects.toThrow(
      /outside/,
    );
    expect(() =>
      resolveInWorkspace(inView, '../../../../../../../etc/hostname', { argName: 'path' }),
    ).toThrow(/outside/);
    expect(readFileSync(path.join(lower, 'src', 'a.ts'), 'utf8')).toBe('lower a\n');
  });

  it("refuses a link the box planted toward the project folder's own files (it would write the real project)", async () => {
    await inBox(`ln -s ${path.join(lower, 'src', 'a.ts')} src/evil.ts && ln -s ${lower} src/up`);
    await expect(writeFileConfined(inView, 'src/evil.ts', 'owned\n', { argName: 'path' })).rejects.toThrow(
      /outside/,
    );
    await expect(
      writeFileConfined(inView, 'src/up/src/a.ts', 'owned\n', { argName: 'path' }),
    ).rejects.toThrow(/outside/);
    await expect(readFileConfined(inView, 'src/evil.ts', { argName: 'path', maxBytes: 100 })).rejects.toThrow(
      /outside/,
    );
    expect(readFileSync(path.join(lower, 'src', 'a.ts'), 'utf8')).toBe('lower a\n');
  });
});
