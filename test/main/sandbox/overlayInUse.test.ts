import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { detectSandbox, wrapCommand, type SandboxInfo } from '../../../main/sandbox/box.js';
import { overlayInUse } from '../../../main/sandbox/overlayInUse.js';
import {
  clearLayers,
  OverlayView,
  probeOverlay,
  type OverlayLayers,
} from '../../../main/sandbox/overlayView.js';
import { waitForExit, waitForLine } from '../store/support/childProcess.js';
import { trackChild } from '../../support/childProcesses.js';

// Issue #36: a box started in a view keeps the overlay in a mount namespace of its own after the view is taken
// down in its holder (a reset) or the holder ends: overlayInUse finds that mount (the real kernel, the real box).

let root: string;
let layers: OverlayLayers;
let sandbox: SandboxInfo;
let skip: string | undefined;

beforeAll(async () => {
  root = mkdtempSync('/var/tmp/keel-inuse-');
  layers = {
    lower: path.join(root, 'project'),
    upper: path.join(root, 'state with space', 'upper'),
    work: path.join(root, 'state with space', 'work'),
    mountpoint: path.join(root, 'view'),
  };
  mkdirSync(layers.lower, { recursive: true });
  mkdirSync(layers.mountpoint, { recursive: true });
  writeFileSync(path.join(layers.lower, 'a.txt'), 'a\n');
  sandbox = await detectSandbox();
  const support = await probeOverlay(root);
  skip = !support.available ? support.reason : sandbox.kind !== 'bwrap' ? sandbox.reason : undefined;
});

afterAll(() => {
  clearLayers(layers);
  rmSync(root, { recursive: true, force: true });
});

describe.runIf(process.platform === 'linux')('overlayInUse', () => {
  it('finds the mount a running box keeps after the view is down, and nothing once the box ends', async (context) => {
    if (skip !== undefined) context.skip();
    expect(overlayInUse(layers.upper)).toEqual({ devs: new Set(), pids: [] });
    const view = await OverlayView.start(layers);
    try {
      // The holder's own mount is seen, unless the holder is the process ignored.
      expect(overlayInUse(layers.upper).pids).toEqual([view.pid]);
      expect(overlayInUse(layers.upper, view.pid).devs.size).toBe(0);
      const wrapped = wrapCommand({
        sandbox,
        command: 'cat a.txt; echo up; sleep 60',
        workspace: layers.mountpoint,
        network: 'none',
      });
      const [file, ...args] = view.enter(wrapped.argv);
      const box = trackChild(
        spawn(file as string, args, {
          env: { ...process.env, ...wrapped.env },
          stdio: ['ignore', 'pipe', 'pipe'],
        }),
      );
      await waitForLine(box, /^up$/);
      const both = overlayInUse(layers.upper, view.pid);
      expect(both.devs.size).toBe(1);
      expect(both.pids.length).toBeGreaterThan(0);
      await view.down(layers.mountpoint);
      // Down in the holder, still alive in the box's namespace: the same overlay instance.
      const down = overlayInUse(layers.upper);
      expect(down.devs).toEqual(both.devs);
      expect(down.pids.length).toBeGreaterThan(0);
      await view.stop();
      expect(overlayInUse(layers.upper).devs).toEqual(both.devs);
      box.kill('SIGKILL');
      await waitForExit(box);
      const deadline = Date.now() + 5_000;
      while (overlayInUse(layers.upper).devs.size > 0 && Date.now() < deadline)
        await new Promise((resolve) => setTimeout(resolve, 25));
      expect(overlayInUse(layers.upper)).toEqual({ devs: new Set(), pids: [] });
    } finally {
      await view.stop();
    }
  });
});
