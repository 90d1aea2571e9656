import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createHandlers } from '../../../main/ipc/handlers.js';
import { useIpcFixture } from './support.js';

// The settings screen's channels for a project's setup (issue 30): the same core functions keel trust and
// keel rules call, over the handler table `keel serve` mounts.
let userHome = '';
const ipc = useIpcFixture('keel-ipc-setup-', {
  prepare: ({ project, dir }) => {
    userHome = path.join(dir, 'user-home');
    fs.mkdirSync(path.join(userHome, '.claude'), { recursive: true });
    fs.writeFileSync(
      path.join(userHome, '.claude/settings.json'),
      '{"permissions":{"deny":["Bash(git push:*)"]}}',
    );
    fs.mkdirSync(path.join(project, '.claude'), { recursive: true });
    fs.writeFileSync(
      path.join(project, '.claude/settings.json'),
      '{"permissions":{"allow":["Bash(npm test:*)"]}}',
    );
  },
  handlers: ({ home }) =>
    createHandlers({
      home,
      mode: 'serve',
      version: '1',
      env: { PATH: process.env.PATH, KEEL_USER_HOME: userHome },
    }),
});
const { call, fail } = ipc;

describe('setup and rules channels', () => {
  it('shows, approves exactly what was shown, lists rules with their source, adds and removes a Keel rule', async () => {
    const folder = ipc.project;
    const { report } = await call('setup.trust', { folder });
    expect(report.status).toBe('untrusted');
    expect(report.entries).toEqual([
      expect.objectContaining({ path: '.claude/settings.json', state: 'new' }),
    ]);
    const before = await call('rules.list', { folder });
    expect(before.rules).toEqual([
      { action: 'deny', rule: 'Bash(git push:*)', source: 'user ~/.claude/settings.json' },
    ]);
    expect(before.untrusted).toEqual([
      { action: 'allow', rule: 'Bash(npm test:*)', source: 'project .claude/settings.json' },
    ]);

    const stale = await fail('setup.approve', {
      folder,
      hashes: { '.claude/settings.json': 'f'.repeat(64) },
    });
    expect(stale.code).toBe('invalid_state');
    expect(stale.message).toContain('changed since they were shown');
    const hashes = Object.fromEntries(report.entries.map((entry) => [entry.path, entry.hash]));
    expect((await call('setup.approve', { folder, hashes })).report.status).toBe('trusted');
    expect((await call('rules.list', { folder })).rules).toHaveLength(2);

    const added = await call('rules.add', { folder, action: 'ask', rule: 'Edit(src/**)' });
    expect(added.rules.at(-1)).toEqual({ action: 'ask', rule: 'Edit(src/**)', source: 'keel' });
    expect((await fail('rules.add', { folder, action: 'ask', rule: 'Edit(' })).message).toContain(
      'is not a rule',
    );
    expect((await fail('rules.remove', { folder, rule: 'Bash(git push:*)' })).message).toContain(
      'edit that file',
    );
    const removed = await call('rules.remove', { folder, rule: 'Edit(src/**)' });
    expect(removed.kept).toEqual([]);
    expect((await call('setup.revoke', { folder })).report.status).toBe('untrusted');
  });
});
