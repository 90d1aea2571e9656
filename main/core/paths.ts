import fs from 'node:fs';
import path from 'node:path';

/**
 * The on-disk layout of a Keel home and its sessions, spelled once. A session's folder is
 * `<home>/sessions/<id>`; its workspace is `<dataDir>/workspace`:
 *
 *   session/               private to the session: uploads/, app-context/, scratch/
 *   persistent/<name>/     the session's checkout of each Persistent Dir (the project is `project`)
 *
 * The tools' root is the project's checkout (`persistent/project/`); the model addresses the private area
 * as `/session/...` and the other checkouts as `/persistent/<name>/...`. A session from before (no `pathRoot`
 * in its session_created) keeps the workspace itself as its root (`persistent/project/src/x`).
 *
 * A session without `persistent.json` predates Persistent Dirs or was made to work on its folder directly
 * (`keel run --commit direct`, the app's "Edit the folder directly"): its root is its project folder.
 */

/** Folders made in `session/` of every new session. */
export const SESSION_FOLDERS = ['uploads', 'app-context', 'scratch'] as const;

/** Creates the private area's folders of a session workspace. */
export function makeSessionFolders(dataDir: string): void {
  for (const folder of SESSION_FOLDERS)
    fs.mkdirSync(path.join(dataDir, 'workspace', 'session', folder), { recursive: true });
  fs.mkdirSync(path.join(dataDir, 'workflows'), { recursive: true });
}

/** The Keel home a session folder (`<home>/sessions/<id>`) belongs to. */
export function homeOf(dataDir: string): string {
  return path.resolve(dataDir, '..', '..');
}

/** The session's history store: bytes of the files its changes touched, before and after (persistent/kept.ts). */
export function historyStoreOf(dataDir: string): string {
  return path.join(dataDir, 'history', 'blobs');
}

/** `<home>/sessions`: one folder per session. */
export function sessionsDir(home: string): string {
  return path.join(home, 'sessions');
}

/** `<home>/sessions/<id>`: a session's folder (its `dataDir`). */
export function sessionDir(home: string, id: string): string {
  return path.join(home, 'sessions', id);
}

/** A session's event log. */
export function eventsFile(dataDir: string): string {
  return path.join(dataDir, 'events.sqlite');
}

/** The whole output of a session's commands and other artifacts (the model reads them as `/artifacts/`). */
export function artifactsDir(dataDir: string): string {
  return path.join(dataDir, 'artifacts');
}

/** A session's workspace: `session/` and `persistent/<name>/`. */
export function workspaceDir(dataDir: string): string {
  return path.join(dataDir, 'workspace');
}

/** The private area of a session's workspace (`/session/` to the model). */
export function sessionAreaDir(dataDir: string): string {
  return path.join(dataDir, 'workspace', 'session');
}

/** The checkout of one Persistent Dir in a session's workspace. */
export function checkoutDir(dataDir: string, name: string): string {
  return path.join(dataDir, 'workspace', 'persistent', name);
}

/** Where a checkout keeps its state (state.json, its commit intent). */
export function checkoutStateDir(dataDir: string, name: string): string {
  return path.join(dataDir, 'checkouts', name);
}

/** The home's locks (backing folders' commit locks). */
export function locksDir(home: string): string {
  return path.join(home, 'locks');
}

/** A session's history folder: its store of changed files' bytes, the fork base, a pending revert, direct trees. */
export function historyDir(dataDir: string): string {
  return path.join(dataDir, 'history');
}
