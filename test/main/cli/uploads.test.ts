import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { EventOf } from '../../../main/common/events.js';
import { useCliFixture } from '../../support/cliFixture.js';
import { keel } from '../../support/keelProcess.js';
import { eventsOf, newSessionArgs, onlySessionId } from '../../support/sessionFixture.js';

// `keel run --file FILE` (issue #32): any file staged at /session/uploads/NAME, named in the prompt, readable by the tools.

const cli = useCliFixture('keel-cli-uploads-');

describe('keel run --file', () => {
  it('stages files under sanitized, distinct names, names them in the prompt, and the tools read them', async () => {
    const a = path.join(cli.dir, 'a');
    const b = path.join(cli.dir, 'b');
    fs.mkdirSync(a);
    fs.mkdirSync(b);
    fs.writeFileSync(path.join(a, '.data;x.csv'), 'id,name\n1,alpha\n');
    fs.writeFileSync(path.join(b, 'data;x.csv'), 'id,name\n2,beta\n');
    cli.server.enqueue(
      {
        kind: 'reply',
        toolCalls: [{ name: 'read_file', arguments: { path: '/session/uploads/data_x-2.csv' } }],
      },
      { kind: 'reply', text: 'read it' },
    );
    const run = await keel(
      cli.home,
      newSessionArgs(cli, {
        policy: 'ask',
        prompt: 'summarize the files',
        extra: ['--file', path.join(a, '.data;x.csv'), '--file', path.join(b, 'data;x.csv')],
      }),
    );
    expect(run.code, run.stderr).toBe(0);
    const id = onlySessionId(cli.home);
    const events = eventsOf(cli.home, id);
    const staged = events.filter((e): e is EventOf<'file_staged'> => e.kind === 'file_staged');
    expect(staged.map((e) => [e.path, e.size, e.source])).toEqual([
      ['/session/uploads/data_x.csv', 16, 'upload'],
      ['/session/uploads/data_x-2.csv', 15, 'upload'],
    ]);
    const message = events.find((e): e is EventOf<'user_message'> => e.kind === 'user_message');
    expect(message?.content).toContain('summarize the files');
    expect(message?.content).toContain(
      '- /session/uploads/data_x.csv (16 bytes)\n- /session/uploads/data_x-2.csv (15 bytes)',
    );
    const uploads = path.join(cli.home, 'sessions', id, 'workspace', 'session', 'uploads');
    expect(fs.readdirSync(uploads).sort()).toEqual(['data_x-2.csv', 'data_x.csv']);
    const result = events.find((e): e is EventOf<'tool_result'> => e.kind === 'tool_result');
    expect(result?.content).toContain('2,beta');
  });

  it('refuses a missing file or a folder before making a session', async () => {
    const missing = await keel(
      cli.home,
      newSessionArgs(cli, { policy: 'ask', prompt: 'x', extra: ['--file', path.join(cli.dir, 'nope.txt')] }),
    );
    expect(missing.code).not.toBe(0);
    expect(missing.stderr).toMatch(/--file: .*nope\.txt: ENOENT/);
    const folder = await keel(
      cli.home,
      newSessionArgs(cli, { policy: 'ask', prompt: 'x', extra: ['--file', cli.dir] }),
    );
    expect(folder.stderr).toMatch(/--file: .* is not a regular file/);
    const sessions = path.join(cli.home, 'sessions');
    expect(fs.existsSync(sessions) ? fs.readdirSync(sessions) : []).toEqual([]);
  });
});
