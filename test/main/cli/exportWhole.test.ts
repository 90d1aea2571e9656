import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeTempDir, removeTempDir } from '../../support/cli.js';
import { useCliFixture } from '../../support/cliFixture.js';
import { keel } from '../../support/keelProcess.js';
import { newSessionArgs } from '../../support/sessionFixture.js';

/*
 * Issue 20, item 5: an export carries everything the projection needs. A session on a checkout (`--commit
 * auto`, the default) has a persistent.json the system prompt describes; exported and imported (`--project`
 * names the folder here), its payload and its compactions are the original's, byte for byte.
 */

const cli = useCliFixture('keel-export-whole-');

async function ok(args: string[], where = cli.home) {
  const run = await keel(where, args);
  expect(run.code, run.stderr).toBe(0);
  return run;
}

describe('export/import keeps a session whole', () => {
  it('a checkout session round-trips with its persistent.json: same payload, same compactions', async () => {
    cli.server.enqueue(
      { kind: 'reply', toolCalls: [{ name: 'write_file', arguments: { path: 'a.txt', content: 'a\n' } }] },
      { kind: 'reply', text: 'wrote it' },
    );
    await ok(newSessionArgs(cli, { policy: 'full-auto', prompt: 'write a.txt' }));
    const [id] = fs.readdirSync(path.join(cli.home, 'sessions'));
    const original = id as string;
    expect(fs.existsSync(path.join(cli.home, 'sessions', original, 'persistent.json'))).toBe(true);

    const exported = (await ok(['export', original])).stdout;
    expect(exported.split('\n')[0]).toMatch(/^\{"sessionConfig":\{"persistent":\{"version":1,"dirs":\[/);
    const file = path.join(cli.dir, 'export.jsonl');
    fs.writeFileSync(file, exported);

    const otherHome = makeTempDir('keel-export-whole-home-');
    try {
      const imported = (await ok(['import', file, '--project', cli.project], otherHome)).stdout.trim();
      const config = JSON.parse(
        fs.readFileSync(path.join(otherHome, 'sessions', imported, 'persistent.json'), 'utf8'),
      ) as { dirs: { name: string; path: string }[] };
      expect(config.dirs).toEqual([expect.objectContaining({ name: 'project', path: cli.project })]);

      for (const args of [
        ['payload', '--json'],
        ['compactions', '--json'],
      ]) {
        const [command, ...flags] = args as [string, ...string[]];
        const before = (await ok([command, original, ...flags])).stdout;
        const after = (await ok([command, imported, ...flags], otherHome)).stdout;
        expect(after.replaceAll(imported, original)).toBe(before);
      }
      const payload = (await ok(['payload', imported], otherHome)).stdout;
      expect(payload).toMatch(/You work in a checkout of the project/);

      // The imported session's export is the file again.
      expect((await ok(['export', imported], otherHome)).stdout.replaceAll(imported, original)).toBe(
        exported,
      );
    } finally {
      removeTempDir(otherHome);
    }
  });

  it('a session on its folder directly exports events only, as before', async () => {
    cli.server.enqueue({ kind: 'reply', text: 'hi' });
    await ok(newSessionArgs(cli, { policy: 'ask', prompt: 'hello', extra: ['--commit', 'direct'] }));
    const [id] = fs.readdirSync(path.join(cli.home, 'sessions'));
    const exported = (await ok(['export', id as string])).stdout;
    expect(exported.split('\n')[0]).toMatch(/^\{"seq":1,"kind":"session_created"/);
  });

  it('validates the config line: a bad one, or one after the first line, writes nothing and names the line', async () => {
    cli.server.enqueue({ kind: 'reply', text: 'hi' });
    await ok(newSessionArgs(cli, { policy: 'ask', prompt: 'hello' }));
    const [id] = fs.readdirSync(path.join(cli.home, 'sessions'));
    const lines = (await ok(['export', id as string])).stdout.trimEnd().split('\n');
    const otherHome = makeTempDir('keel-export-whole-bad-');
    try {
      const cases: [string, RegExp][] = [
        [
          [lines[0]?.replace('"commit":"auto"', '"commit":"sometimes"'), ...lines.slice(1)].join('\n'),
          /line 1: sessionConfig: .*commit/,
        ],
        [
          [lines[1], lines[0], ...lines.slice(2)].join('\n'),
          /line 2: a sessionConfig line may only be the first line/,
        ],
        [
          [lines[0]?.replace('"version":1', '"version":1,"extra":true'), ...lines.slice(1)].join('\n'),
          /line 1: sessionConfig: .*extra/,
        ],
      ];
      for (const [text, message] of cases) {
        const bad = path.join(cli.dir, 'bad.jsonl');
        fs.writeFileSync(bad, `${text}\n`);
        const run = await keel(otherHome, ['import', bad, '--project', cli.project]);
        expect(run.code, `${String(message)} ${run.stdout}`).not.toBe(0);
        expect(run.stderr).toMatch(message);
        expect(
          fs.existsSync(path.join(otherHome, 'sessions'))
            ? fs.readdirSync(path.join(otherHome, 'sessions'))
            : [],
        ).toEqual([]);
      }
    } finally {
      removeTempDir(otherHome);
    }
  });

  it('drops Persistent Dirs other than the project: their folders come from the file', async () => {
    cli.server.enqueue({ kind: 'reply', text: 'hi' });
    await ok(newSessionArgs(cli, { policy: 'ask', prompt: 'hello' }));
    const [id] = fs.readdirSync(path.join(cli.home, 'sessions'));
    const lines = (await ok(['export', id as string])).stdout.trimEnd().split('\n');
    const config = JSON.parse(lines[0] as string) as {
      sessionConfig: { persistent: { dirs: { name: string; path: string; commit: string }[] } };
    };
    config.sessionConfig.persistent.dirs.push({ name: 'secrets', path: '/root/.ssh', commit: 'auto' });
    const file = path.join(cli.dir, 'more.jsonl');
    fs.writeFileSync(file, [JSON.stringify(config), ...lines.slice(1)].join('\n') + '\n');
    const otherHome = makeTempDir('keel-export-whole-dirs-');
    try {
      const run = await keel(otherHome, ['import', file, '--project', cli.project]);
      expect(run.code, run.stderr).toBe(0);
      expect(run.stderr).toMatch(
        /the Persistent Dir "secrets" was not imported: its folder comes from the file/,
      );
      const written = JSON.parse(
        fs.readFileSync(path.join(otherHome, 'sessions', run.stdout.trim(), 'persistent.json'), 'utf8'),
      ) as { dirs: { name: string }[] };
      expect(written.dirs.map((d) => d.name)).toEqual(['project']);
    } finally {
      removeTempDir(otherHome);
    }
  });
});
