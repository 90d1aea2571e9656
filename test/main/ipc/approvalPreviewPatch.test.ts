import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startFixture, type IpcFixture } from './support.js';

// approvals.preview for an apply_patch request: one preview per file (both texts, its own diff, what happens
// to it), a move shown once as old → new, protection named per file, and a path suggestion covering them all.

let f: IpcFixture;

beforeEach(async () => {
  f = await startFixture('keel-ipc-patch-');
  fs.mkdirSync(path.join(f.project, 'src', 'old'), { recursive: true });
  fs.writeFileSync(path.join(f.project, 'src', 'app.ts'), 'export const port = 3000;\n');
  fs.writeFileSync(path.join(f.project, 'src', 'old', 'name.ts'), 'export const n = 1;\n');
  fs.writeFileSync(path.join(f.project, 'src', 'gone.ts'), 'export {};\n');
});

afterEach(async () => {
  await f.close();
});

const INPUT = [
  '*** Begin Patch',
  '*** Update File: src/app.ts',
  '@@',
  '-export const port = 3000;',
  '+export const port = 8080;',
  '*** Update File: src/old/name.ts',
  '*** Move to: src/new/name.ts',
  '@@',
  '-export const n = 1;',
  '+export const n = 2;',
  '*** Delete File: src/gone.ts',
  '*** Add File: src/limit.ts',
  '+export const limit = 10;',
  '*** End Patch',
].join('\n');

describe('approvals.preview of an apply_patch call', () => {
  it('previews every file of the patch, each with its texts and its own diff', async () => {
    const session = await f.newSession({ policy: 'ask', checkout: 'direct' });
    f.server.enqueue({ kind: 'reply', toolCalls: [{ name: 'apply_patch', arguments: { input: INPUT } }] });
    const { turnId } = await f.call('turns.send', { sessionId: session.id, prompt: 'patch it' });
    expect((await f.turnEnded(session.id, turnId)).outcome?.status).toBe('awaiting_approval');
    const [request] = (await f.call('approvals.list', { sessionId: session.id })).pending;
    if (!request) throw new Error('no request');
    const preview = await f.call('approvals.preview', { sessionId: session.id, requestSeq: request.seq });
    expect(preview.file).toBeUndefined();
    expect(preview.allowedScopes).toEqual(['once', 'session', 'path']);
    expect(preview.suggested).toEqual({ path: 'path:src/**' });
    const files = preview.files ?? [];
    expect(files.map((file) => [file.change, file.fromPath ?? null, file.path])).toEqual([
      ['modified', null, 'src/app.ts'],
      ['moved', 'src/old/name.ts', 'src/new/name.ts'],
      ['deleted', null, 'src/gone.ts'],
      ['added', null, 'src/limit.ts'],
    ]);
    expect(files[0]).toMatchObject({
      original: 'export const port = 3000;\n',
      proposed: 'export const port = 8080;\n',
      changedSinceRequest: false,
    });
    expect(files[1]).toMatchObject({ original: 'export const n = 1;\n', proposed: 'export const n = 2;\n' });
    expect(files[1]?.diff).toContain('--- a/src/old/name.ts\n+++ b/src/new/name.ts');
    expect(files[2]).toMatchObject({ original: 'export {};\n', proposed: '' });
    expect(files[3]).toMatchObject({ original: null, proposed: 'export const limit = 10;\n' });
    for (const file of files) expect(request.diff).toContain(file.diff);

    // One file changes under the pending request: that file says so, the others do not.
    fs.writeFileSync(path.join(f.project, 'src', 'app.ts'), 'export const port = 3000;\n// note\n');
    const again = await f.call('approvals.preview', { sessionId: session.id, requestSeq: request.seq });
    expect(again.files?.map((file) => file.changedSinceRequest)).toEqual([true, false, false, false]);
    expect(fs.existsSync(path.join(f.project, 'src', 'limit.ts'))).toBe(false);
  });

  it('names each protected file, and a patch that no longer applies gives its error', async () => {
    const session = await f.newSession({ policy: 'auto-edit', checkout: 'direct' });
    const input = [
      '*** Begin Patch',
      '*** Add File: .vscode/tasks.json',
      '+{}',
      '*** Add File: a.txt',
      '+a',
      '*** End Patch',
    ].join('\n');
    f.server.enqueue({ kind: 'reply', toolCalls: [{ name: 'apply_patch', arguments: { input } }] });
    const { turnId } = await f.call('turns.send', { sessionId: session.id, prompt: 'patch it' });
    expect((await f.turnEnded(session.id, turnId)).outcome?.status).toBe('awaiting_approval');
    const [request] = (await f.call('approvals.list', { sessionId: session.id })).pending;
    const preview = await f.call('approvals.preview', { sessionId: session.id, requestSeq: request?.seq });
    expect(preview.protectedReason).toMatch(/^\.vscode\/tasks\.json: .*\.vscode/);
    expect(preview.suggested).toEqual({});
    fs.mkdirSync(path.join(f.project, 'a.txt'));
    const broken = await f.call('approvals.preview', { sessionId: session.id, requestSeq: request?.seq });
    expect(broken.files).toHaveLength(1);
    expect(broken.files?.[0]?.error).toMatch(/^Argument "Add File" \("a\.txt"\): .*(folder|directory)/);
  });
});
