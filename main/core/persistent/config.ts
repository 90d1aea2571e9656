import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import type { CheckoutLocation } from './checkout.js';
import { PersistentDirName, PersistentDirSpec } from './types.js';
import { checkoutDir, checkoutStateDir, homeOf, locksDir, workspaceDir } from '../paths.js';

// A session's Persistent Dirs (`persistent.json` in its folder) and where each one's checkout lives.

/** `<dataDir>/persistent.json`: the session's Persistent Dirs and which of them are read-only. */
export const PersistentConfig = z.object({
  version: z.literal(1),
  dirs: z.array(PersistentDirSpec),
  readOnly: z.array(PersistentDirName).default([]),
});
export type PersistentConfig = z.infer<typeof PersistentConfig>;

const CONFIG_FILE = 'persistent.json';

/** The session's Persistent Dir configuration, or undefined for a session that works on its project folder directly. */
export function readPersistentConfig(dataDir: string): PersistentConfig | undefined {
  const file = path.join(dataDir, CONFIG_FILE);
  // A turn asks up to seven times: for a session without one, a stat that answers undefined, not an ENOENT thrown.
  if (fs.statSync(file, { throwIfNoEntry: false }) === undefined) return undefined;
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  const parsed = PersistentConfig.safeParse(JSON.parse(text));
  if (!parsed.success) {
    throw new Error(`${file} is not valid: ${z.prettifyError(parsed.error)}`);
  }
  return parsed.data;
}

/** Writes the configuration atomically (temp file + rename), validated first. */
export function writePersistentConfig(dataDir: string, config: PersistentConfig): void {
  const valid = PersistentConfig.parse(config);
  const names = new Set<string>();
  for (const dir of valid.dirs) {
    if (names.has(dir.name)) throw new Error(`two Persistent Dirs are named "${dir.name}"`);
    names.add(dir.name);
  }
  const file = path.join(dataDir, CONFIG_FILE);
  const temp = `${file}.${process.pid}.${Date.now()}.tmp`;
  fs.writeFileSync(temp, JSON.stringify(valid, null, 2));
  fs.renameSync(temp, file);
}

/** Where the checkout of one Persistent Dir of a session lives. */
export function checkoutLocation(dataDir: string, name: string): CheckoutLocation {
  return {
    workspaceRoot: workspaceDir(dataDir),
    checkout: checkoutDir(dataDir, name),
    stateDir: checkoutStateDir(dataDir, name),
    locksRoot: locksDir(homeOf(dataDir)),
  };
}
