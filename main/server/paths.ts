import fs from 'node:fs';
import path from 'node:path';

/** The folder of Keel's package.json above `from` (source tree, dist/ build or installed package), or undefined. */
export function findPackageRoot(from: string): string | undefined {
  for (let dir = path.resolve(from); ; dir = path.dirname(dir)) {
    const manifest = path.join(dir, 'package.json');
    try {
      const parsed = JSON.parse(fs.readFileSync(manifest, 'utf8')) as { name?: unknown };
      if (parsed.name === 'keel') return dir;
    } catch {
      // No manifest here (or not ours): keep walking up.
    }
    if (path.dirname(dir) === dir) return undefined;
  }
}

/** Keel's version from its package.json ('0.0.0' when it cannot be found). */
export function readKeelVersion(root: string | undefined): string {
  if (root === undefined) return '0.0.0';
  try {
    const parsed = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as {
      version?: unknown;
    };
    return typeof parsed.version === 'string' ? parsed.version : '0.0.0';
  } catch {
    return '0.0.0';
  }
}

/** Where `electron-vite build` puts the renderer: `<package root>/out/renderer`. */
export function defaultRendererDir(root: string | undefined): string {
  return path.join(root ?? process.cwd(), 'out', 'renderer');
}
