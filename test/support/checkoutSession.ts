import { withWritableSession } from '../../main/core/harness/lock.js';
import { SessionLog } from '../../main/core/log/sessionLog.js';
import { writePersistentConfig } from '../../main/core/persistent/config.js';
import { prepareTurn } from '../../main/core/persistent/turnCheckouts.js';
import { stopSessionViews } from '../../main/core/persistent/viewHolder.js';
import type { CommitModel } from '../../main/core/persistent/types.js';

/**
 * Issue 36: a session in `home` on `project` (its Persistent Dir `project`, commit model `commit`) whose
 * checkout exists, as after its first turn's preparation; no provider is ever asked. Returns its id.
 */
export async function sessionWithCheckout(
  home: string,
  project: string,
  commit: CommitModel,
): Promise<string> {
  const log = SessionLog.create(home, {
    projectFolder: project,
    provider: 'openai-compatible',
    model: 'scripted-model',
    baseUrl: 'http://127.0.0.1:9/v1',
    contextWindow: 32_000,
    toolMode: 'write',
    policy: 'auto-edit',
  });
  const id = log.id;
  writePersistentConfig(log.dir, {
    version: 1,
    dirs: [{ name: 'project', path: project, commit }],
    readOnly: [],
  });
  log.close();
  await withWritableSession(home, id, async (opened) => {
    await prepareTurn(opened, { newTurn: true });
    // As after a `keel run` that ended: a copy-on-write view (KEEL_CHECKOUT_KIND=view) is mounted by no process.
    await stopSessionViews(opened.dir);
  });
  return id;
}
