import fs from 'node:fs';
import path from 'node:path';
import { beforeEach } from 'vitest';

/** Writes `text` at `relative` under `base`, making its folders (a setup file of a home or a project). */
export function writeUnder(base: string, relative: string, text: string): void {
  fs.mkdirSync(path.dirname(path.join(base, relative)), { recursive: true });
  fs.writeFileSync(path.join(base, relative), text);
}

/** A fresh user home (`KEEL_USER_HOME`) in the fixture's folder for each test; read `.path` inside a test. */
export function useUserHome(fixture: { readonly dir: string }): { readonly path: string } {
  let current = '';
  beforeEach(() => {
    current = path.join(fixture.dir, 'user-home');
    fs.mkdirSync(current, { recursive: true });
  });
  return {
    get path() {
      return current;
    },
  };
}
