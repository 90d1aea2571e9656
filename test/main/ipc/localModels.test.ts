import { describe, expect, it } from 'vitest';
import { createHandlers } from '../../../main/ipc/handlers.js';
import { useIpcFixture } from './support.js';

// Issue 34: the local-model channels and sessions.create with provider local, over the handler table keel serve
// mounts (the download itself: core/harness/localModels.test.ts; the whole first run: renderer/firstRunLocalModel).
const ipc = useIpcFixture('keel-ipc-local-models-', {
  handlers: ({ home }) =>
    createHandlers({ home, mode: 'serve', version: '1', env: { PATH: process.env.PATH } }),
});
const { call, fail } = ipc;

describe('local model channels', () => {
  it('lists the catalogue, refuses an unknown id, and refuses a local session on a model not downloaded', async () => {
    const listed = await call('models.localList', {});
    expect(listed.models.length).toBeGreaterThanOrEqual(3);
    expect(listed.models.every((model) => !model.downloaded && model.approxBytes > 0)).toBe(true);
    expect(listed.otherFiles).toEqual([]);

    const unknown = await fail('models.localPull', { id: 'no-such-model' });
    expect(unknown).toMatchObject({
      code: 'not_found',
      message: expect.stringMatching(/catalogue/) as string,
    });
    expect(await call('models.localCancel', { id: 'qwen2.5-coder-3b' })).toEqual({ cancelled: false });

    const notPulled = await fail('sessions.create', {
      projectFolder: ipc.project,
      provider: 'local',
      model: 'qwen2.5-coder-3b',
    });
    expect(notPulled).toMatchObject({
      code: 'invalid_input',
      message: expect.stringMatching(/keel models local pull qwen2\.5-coder-3b/) as string,
    });
  });
});
