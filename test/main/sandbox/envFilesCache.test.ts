// Issue #36: the .env search keeps each folder's listing while the folder's change time says its entries are the
// same; whatever is added, removed or renamed since is found by the next search, and a folder changed in the clock
// tick of its listing is never trusted.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  ENV_SEARCH_LIMITS,
  findEnvFiles,
  FolderListings,
  type LayeredFolder,
} from '../../../main/sandbox/envFiles.js';
import { clearLayers, OverlayView, probeOverlay } from '../../../main/sandbox/overlayView.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

let root: string;
beforeEach(() => {
  root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'keel-envcache-')));
  for (const folder of ['a/b/c', 'a/d', 'e']) fs.mkdirSync(path.join(root, folder), { recursive: true });
  fs.writeFileSync(path.join(root, '.env'), 'TOP_TOKEN=top-secret-1\n');
  for (let i = 0; i < 20; i += 1) fs.writeFileSync(path.join(root, 'a/b/c', `f${i}.ts`), '');
});
afterEach(() => {
  vi.restoreAllMocks();
  fs.rmSync(root, { recursive: true, force: true });
});

/** The folders `findEnvFiles` lists (readdir) while `search` runs. */
function listedDuring(search: () => void): string[] {
  const spy = vi.spyOn(fs, 'readdirSync');
  try {
    search();
    return spy.mock.calls.map((call) => path.relative(root, String(call[0])) || '.');
  } finally {
    spy.mockRestore();
  }
}

const paths = (cache: FolderListings) =>
  findEnvFiles(root, ENV_SEARCH_LIMITS, cache).files.map((f) => f.path);

describe('the .env search through kept folder listings', () => {
  it('lists again only the folders whose entries changed, and finds what was added, removed or renamed', async () => {
    // Settled folders are trusted at once: the tick rule is the next case's.
    const cache = new FolderListings(0);
    // The folders' ctimes (made just now) must lie in an earlier tick than the changes below.
    await sleep(30);
    expect(paths(cache)).toEqual(['.env']);
    expect(listedDuring(() => paths(cache))).toEqual([]);

    await sleep(30);
    fs.writeFileSync(path.join(root, 'a/b/c/.env.local'), 'DEEP_TOKEN=deep-secret-2\n');
    let found: string[] = [];
    expect(listedDuring(() => (found = paths(cache)))).toEqual(['a/b/c']);
    expect(found).toEqual(['.env', 'a/b/c/.env.local']);
    // The .env files' text is read at every search: a value changed in place is known.
    fs.writeFileSync(path.join(root, 'a/b/c/.env.local'), 'DEEP_TOKEN=changed-secret-3\n');
    expect(findEnvFiles(root, ENV_SEARCH_LIMITS, cache).files.map((f) => f.text)).toContain(
      'DEEP_TOKEN=changed-secret-3\n',
    );

    await sleep(30);
    fs.renameSync(path.join(root, 'a/b/c/.env.local'), path.join(root, 'a/d/.env.production'));
    expect(paths(cache)).toEqual(['.env', 'a/d/.env.production']);

    await sleep(30);
    // A folder replaced by another of the same name (its parent's entries change too): the new one is searched.
    fs.rmSync(path.join(root, 'e'), { recursive: true });
    fs.mkdirSync(path.join(root, 'e/f'), { recursive: true });
    fs.writeFileSync(path.join(root, 'e/f/.env'), 'NEW_TOKEN=new-secret-4\n');
    fs.rmSync(path.join(root, 'a/d/.env.production'));
    expect(paths(cache)).toEqual(['.env', 'e/f/.env']);
  });

  it('never keeps a folder changed in the clock tick of its listing', () => {
    const cache = new FolderListings();
    expect(paths(cache)).toEqual(['.env']);
    // Every folder here changed within the last two seconds: each is listed again, so a .env written in the same
    // tick as the first search (same ctime) is found.
    fs.writeFileSync(path.join(root, 'a/b/c/.env'), 'SAME_TICK=same-tick-secret-5\n');
    let found: string[] = [];
    expect(listedDuring(() => (found = paths(cache))).sort()).toEqual(['.', 'a', 'a/b', 'a/b/c', 'a/d', 'e']);
    expect(found).toEqual(['.env', 'a/b/c/.env']);
  });

  it('lists every folder of a filesystem whose times it does not trust', () => {
    const cache = new FolderListings(0);
    // procfs: its folders' times say nothing about their entries.
    expect(cache.usableFor('/proc/self')).toBeUndefined();
    // A local filesystem (the temp folder) is trusted on Linux.
    if (process.platform === 'linux') expect(cache.usableFor(root)).toBeDefined();
  });
});

describe("the .env search of a copy-on-write view, kept by the view's layers", () => {
  it('finds what the session and the user add or remove, in merged folders too, listing only changed folders', async (context) => {
    const support = await probeOverlay(root);
    if (!support.available) context.skip();
    const lower = path.join(root, 'lower');
    fs.mkdirSync(path.join(lower, 'src/deep/er'), { recursive: true });
    fs.mkdirSync(path.join(lower, 'docs'), { recursive: true });
    fs.writeFileSync(path.join(lower, '.env'), 'LOWER_TOKEN=lower-secret-6\n');
    const layers = {
      lower,
      upper: path.join(root, 'upper'),
      work: path.join(root, 'work'),
      mountpoint: path.join(root, 'mount'),
    };
    fs.mkdirSync(layers.mountpoint);
    const view = await OverlayView.start(layers);
    try {
      const mount = view.hostPath(layers.mountpoint);
      const views: LayeredFolder[] = [{ mount, lower, upper: layers.upper }];
      const cache = new FolderListings(0);
      const search = () => findEnvFiles(mount, ENV_SEARCH_LIMITS, cache, views).files.map((f) => f.path);
      // The merged folders listed (upper's own small folders are listed to know which it lacks: not a merged listing).
      const listed = (run: () => void) =>
        listedDuring(run)
          .filter((folder) => !path.resolve(root, folder).startsWith(layers.upper))
          .map((folder) => path.relative(path.relative(root, mount), folder) || '.');
      await sleep(30);
      expect(search()).toEqual(['.env']);
      // Through the overlay, where a merged folder's times are its upper folder's: kept by the layers' folders.
      expect(listed(() => search())).toEqual([]);

      // The session writes in the view: src/deep/er becomes a merged folder (copied up).
      await sleep(30);
      fs.writeFileSync(path.join(mount, 'src/deep/er/.env.session'), 'SESSION_TOKEN=session-secret-7\n');
      expect(search()).toEqual(['.env', 'src/deep/er/.env.session']);
      // Copied up in the millisecond the search began (ctime not yet before its clock), a folder is not kept even
      // with no racy window: the next search lists it again. Settled, nothing is listed.
      await sleep(30);
      search();
      expect(listed(() => search())).toEqual([]);

      // The user adds a .env below that merged folder in the project: upper's folder did not change, lower's did.
      await sleep(30);
      fs.writeFileSync(path.join(lower, 'src/deep/er/.env.user'), 'USER_TOKEN=user-secret-8\n');
      let found: string[] = [];
      expect(listed(() => (found = search()))).toEqual(['src/deep/er']);
      expect(found).toEqual(['.env', 'src/deep/er/.env.session', 'src/deep/er/.env.user']);

      // The session removes the project's .env (a whiteout in upper) and one in a folder only lower has.
      await sleep(30);
      fs.writeFileSync(path.join(lower, 'docs/.env.docs'), 'DOCS_TOKEN=docs-secret-9\n');
      expect(search()).toContain('docs/.env.docs');
      await sleep(30);
      fs.rmSync(path.join(mount, '.env'));
      fs.rmSync(path.join(mount, 'docs/.env.docs'));
      expect(search()).toEqual(['src/deep/er/.env.session', 'src/deep/er/.env.user']);
    } finally {
      await view.stop();
      clearLayers(layers);
    }
  });
});
