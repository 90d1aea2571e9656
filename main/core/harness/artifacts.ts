import fs from 'node:fs';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { ConfinedFileError, readFileConfined, resolveInWorkspace } from '../../sandbox/paths.js';
import type { HarnessArtifact, HarnessArtifactAccessor } from './types.js';

/** Default cap of `read`: bigger artifacts are read with `stream`. */
const READ_MAX_BYTES = 64 * 1024 * 1024;

const { constants } = fs;
const O_NOFOLLOW = constants.O_NOFOLLOW ?? 0;
const O_NONBLOCK = constants.O_NONBLOCK ?? 0;

function toArtifact(handle: string, stat: fs.Stats): HarnessArtifact {
  return { handle, size: stat.size, modifiedAt: stat.mtime.toISOString() };
}

/**
 * Reads a session's artifacts by handle (a `/`-separated path under `<dataDir>/artifacts`). Every handle
 * is resolved by the sandbox's path confinement with the artifacts folder as the root, so `..`, absolute
 * paths and links out are refused; only regular files are artifacts.
 */
export function createArtifactAccessor(artifactsDir: string): HarnessArtifactAccessor {
  const resolve = (handle: string) => resolveInWorkspace(artifactsDir, handle, { argName: 'handle' });
  return {
    list() {
      const found: HarnessArtifact[] = [];
      if (!fs.existsSync(artifactsDir)) return Promise.resolve(found);
      const walk = (dir: string, prefix: string) => {
        for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
          const handle = prefix === '' ? entry.name : `${prefix}/${entry.name}`;
          // Links are never followed: an artifact is a file Keel wrote, not a pointer elsewhere.
          if (entry.isDirectory()) walk(path.join(dir, entry.name), handle);
          else if (entry.isFile()) found.push(toArtifact(handle, fs.lstatSync(path.join(dir, entry.name))));
        }
      };
      walk(artifactsDir, '');
      return Promise.resolve(found.sort((a, b) => a.handle.localeCompare(b.handle)));
    },
    stat(handle) {
      let real: string;
      try {
        real = resolve(handle);
      } catch {
        return Promise.resolve(undefined);
      }
      const stat = fs.lstatSync(real, { throwIfNoEntry: false });
      return Promise.resolve(stat?.isFile() ? toArtifact(handle, stat) : undefined);
    },
    async read(handle, options = {}) {
      const { data } = await readFileConfined(artifactsDir, handle, {
        argName: 'handle',
        maxBytes: options.maxBytes ?? READ_MAX_BYTES,
      });
      return data;
    },
    stream(handle): Promise<Readable> {
      return Promise.resolve().then(() => openStream(handle));
    },
  };

  function openStream(handle: string): Readable {
    {
      const real = resolve(handle);
      const before = fs.lstatSync(real, { throwIfNoEntry: false });
      if (!before?.isFile()) {
        throw new ConfinedFileError(
          'handle',
          'not_found',
          `Argument "handle" (${JSON.stringify(handle)}): no such artifact.`,
        );
      }
      const fd = fs.openSync(real, constants.O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
      const opened = fs.fstatSync(fd);
      // The file opened must be the one resolved (no swap between the check and the open).
      if (!opened.isFile() || opened.ino !== before.ino || opened.dev !== before.dev) {
        fs.closeSync(fd);
        throw new ConfinedFileError(
          'handle',
          'changed',
          `Argument "handle" (${JSON.stringify(handle)}): the artifact changed while it was opened.`,
        );
      }
      return fs.createReadStream('', { fd, autoClose: true });
    }
  }
}
