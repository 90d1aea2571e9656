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
