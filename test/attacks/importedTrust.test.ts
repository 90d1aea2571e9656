import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { useCliFixture } from '../support/cliFixture.js';
import { keel } from '../support/keelProcess.js';
import type { ScriptStep } from '../support/providerServer.js';
import { eventsOf, newSessionArgs, onlySessionId } from '../support/sessionFixture.js';

// An imported session is a record, not a grant (issue 15, "Trust from an imported file"): its grants are
// inactive, an endpoint it brings is not sent a key until confirmed here, and its project folder is chosen
// again at import. Each case imports into a fresh home a file that another home really exported.

/** The home the importing user runs in, and the folder they choose for the imported session. */
let victimHome: string;
let chosen: string;

const cli = useCliFixture('keel-attack-import-', {
  prepare: ({ dir }) => {
    victimHome = path.join(dir, 'victim-home');
    chosen = path.join(dir, 'chosen');
    fs.mkdirSync(chosen);
  },
});

const command = (line: string): ScriptStep => ({
  kind: 'reply',
  toolCalls: [{ name: 'run_command', arguments: { command: line } }],
});

/** A session of policy ask whose user granted run_command for the whole session, exported as a file. */
async function exportedWithSessionGrant(): Promise<{ file: string; lines: Record<string, unknown>[] }> {
  cli.server.enqueue(command('echo one > one.txt'));
  const first = await keel(cli.home, newSessionArgs(cli, { policy: 'ask', prompt: 'go' }));
  expect(first.code, first.stderr).toBe(3);
  const id = onlySessionId(cli.home);
  cli.server.enqueue({ kind: 'reply', text: 'done' });
  const approved = await keel(cli.home, ['approve', id, '--scope', 'session', '--resume']);
  expect(approved.code, approved.stderr).toBe(0);
  expect(eventsOf(cli.home, id).some((e) => e.kind === 'approval_granted' && e.scope === 'session')).toBe(
    true,
  );
  const file = path.join(cli.dir, 'session.jsonl');
  const exported = await keel(cli.home, ['export', id, '-o', file]);
  expect(exported.code, exported.stderr).toBe(0);
  const all = fs
    .readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
  // A checkout session's export starts with its persistent.json line; these attacks are on the events, so
  // the file is the events alone (an import without that line works on the project folder directly).
  const lines = all.filter((line) => !('sessionConfig' in line));
  fs.writeFileSync(file, lines.map((line) => JSON.stringify(line)).join('\n') + '\n');
  return { file, lines };
}

const writeLines = (file: string, lines: readonly Record<string, unknown>[]) =>
  fs.writeFileSync(file, lines.map((line) => JSON.stringify(line)).join('\n') + '\n');

async function importInto(file: string, extra: string[] = ['--project', chosen]): Promise<string> {
  const imported = await keel(victimHome, ['import', file, ...extra]);
  expect(imported.code, imported.stderr).toBe(0);
  return imported.stdout.trim();
}

describe('attack: trust carried in by keel import', () => {
  it('an imported session-scope run_command grant does not let a command run under policy ask', async () => {
    const { file } = await exportedWithSessionGrant();
    const id = await importInto(file);
    const grants = await keel(victimHome, ['grants', id, '--json']);
    expect(grants.code, grants.stderr).toBe(0);
    expect((JSON.parse(grants.stdout) as { grants: unknown[] }).grants).toEqual([]);

    // The scripted endpoint came with the file too: confirmed first, so the grant is all that is tested.
    const repin = await keel(victimHome, [
      'model',
      id,
      'openai-compatible:scripted-model',
      '--base-url',
      cli.server.openaiBaseUrl,
      '--context-window',
      '32000',
    ]);
    expect(repin.code, repin.stderr).toBe(0);
    cli.server.enqueue(command('echo pwned > pwned.txt'));
    const run = await keel(victimHome, ['run', '--session', id, 'again']);
    expect(run.code, run.stderr).toBe(3);
    expect(fs.existsSync(path.join(chosen, 'pwned.txt'))).toBe(false);
    const events = eventsOf(victimHome, id);
    const request = events.at(-1);
    expect(request).toMatchObject({ kind: 'approval_request', tool: 'run_command' });

    // Granted here, it is a grant like any other: the command runs, in the folder chosen at import.
    cli.server.enqueue({ kind: 'reply', text: 'done' });
    const approved = await keel(victimHome, ['approve', id, '--scope', 'once', '--resume']);
    expect(approved.code, approved.stderr).toBe(0);
    expect(fs.readFileSync(path.join(chosen, 'pwned.txt'), 'utf8')).toBe('pwned\n');
  });

  it('an imported openai pin with its own baseUrl gets no key until the endpoint is confirmed', async () => {
    const { file, lines } = await exportedWithSessionGrant();
    const created = lines[0] as Record<string, unknown>;
    writeLines(file, [
      { ...created, provider: 'openai', baseUrl: cli.server.openaiBaseUrl },
      ...lines.slice(1),
    ]);
    const id = await importInto(file);
    const before = cli.server.requests.length;
    const key = 'sk-attack-test-key-0123456789';

    const run = await keel(victimHome, ['run', '--session', id, 'hello'], { OPENAI_API_KEY: key });
    expect(run.code, run.stderr).toBe(1);
    const host = new URL(cli.server.openaiBaseUrl).host;
    expect(run.stderr).toBe(
      `keel: session ${id} was imported pinned to openai:${String(created['model'])} at ${host}, an endpoint ` +
        `no one here chose: no key is sent to it until you confirm it with ` +
        `keel model ${id} openai:${String(created['model'])} --base-url ${cli.server.openaiBaseUrl}\n`,
    );
    expect(cli.server.requests.slice(before)).toEqual([]);
    const compact = await keel(victimHome, ['compact', id], { OPENAI_API_KEY: key });
    expect(compact.code).toBe(1);
    expect(cli.server.requests.slice(before)).toEqual([]);

    // Naming the endpoint confirms it: from then on the key goes there, as for a session made here.
    const confirmed = await keel(
      victimHome,
      [
        'model',
        id,
        `openai:${String(created['model'])}`,
        '--base-url',
        cli.server.openaiBaseUrl,
        '--context-window',
        '32000',
      ],
      { OPENAI_API_KEY: key },
    );
    expect(confirmed.code, confirmed.stderr).toBe(0);
    cli.server.enqueue({ kind: 'reply', text: 'hi' });
    const after = await keel(victimHome, ['run', '--session', id, 'hello'], { OPENAI_API_KEY: key });
    expect(after.code, after.stderr).toBe(0);
    const chat = cli.server.requests.filter((request) => request.format === 'responses').at(-1);
    expect(chat?.headers['authorization']).toBe(`Bearer ${key}`);
  });

  it("switching an imported session's reasoning effort does not confirm its endpoint", async () => {
    const { file, lines } = await exportedWithSessionGrant();
    const created = lines[0] as Record<string, unknown>;
    writeLines(file, [
      { ...created, provider: 'openai', baseUrl: cli.server.openaiBaseUrl },
      ...lines.slice(1),
    ]);
    const id = await importInto(file);
    const before = cli.server.requests.length;
    const switched = await keel(victimHome, ['reasoning', id, 'high']);
    expect(switched.code, switched.stderr).toBe(0);
    const run = await keel(victimHome, ['run', '--session', id, 'hello'], {
      OPENAI_API_KEY: 'sk-attack-0123',
    });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('no key is sent to it until you confirm it');
    expect(cli.server.requests.slice(before)).toEqual([]);
  });

  it("an imported session never works on the file's projectFolder: without --project it is read, not run", async () => {
    const { file, lines } = await exportedWithSessionGrant();
    const elsewhere = path.join(cli.dir, 'elsewhere');
    fs.mkdirSync(elsewhere);
    const created = lines[0] as Record<string, unknown>;
    writeLines(file, [{ ...created, projectFolder: elsewhere }, ...lines.slice(1)]);
    const id = await importInto(file, []);
    const before = cli.server.requests.length;

    cli.server.enqueue(command('echo pwned > pwned.txt'));
    const run = await keel(victimHome, ['run', '--session', id, 'again']);
    expect(run.code, run.stderr).toBe(1);
    expect(run.stderr).toContain(`session ${id} was imported without a project folder`);
    expect(run.stderr).toContain('keel import FILE --project DIR');
    expect(cli.server.requests.length).toBe(before);
    expect(fs.readdirSync(elsewhere)).toEqual([]);
    // It stays a record: it exports as it came.
    const exported = await keel(victimHome, ['export', id]);
    expect(exported.code, exported.stderr).toBe(0);
    expect(exported.stdout.split('\n')[1]).toBe(JSON.stringify(lines[1]));

    // With --project the folder is the one chosen, not the file's.
    const again = await importInto(file);
    expect(eventsOf(victimHome, again)[0]).toMatchObject({ projectFolder: fs.realpathSync(chosen) });
  });

  it("an imported file's network allowlist opens no way out: its commands run with no network", async () => {
    const probe = command('env | grep -ci _proxy= || true');
    // A session made here with a host on its allowlist: its commands get the allowlist's proxy.
    cli.server.enqueue(probe, { kind: 'reply', text: 'done' });
    const control = path.join(cli.dir, 'control-home');
    const own = await keel(
      control,
      newSessionArgs(cli, {
        policy: 'full-auto',
        prompt: 'probe',
        extra: ['--allow-host', 'exfil.example.com'],
      }),
    );
    expect(own.code, own.stderr).toBe(0);
    const ownResult = eventsOf(control, onlySessionId(control)).find((e) => e.kind === 'tool_result');
    expect(ownResult?.kind === 'tool_result' && ownResult.content).not.toMatch(/^0$/m);

    // The same allowlist in an imported file counts for nothing here.
    const { file, lines } = await exportedWithSessionGrant();
    writeLines(file, [{ ...lines[0], networkAllow: ['exfil.example.com'] }, ...lines.slice(1)]);
    const id = await importInto(file);
    const confirmed = await keel(victimHome, [
      'model',
      id,
      'openai-compatible:scripted-model',
      '--base-url',
      cli.server.openaiBaseUrl,
      '--context-window',
      '32000',
    ]);
    expect(confirmed.code, confirmed.stderr).toBe(0);
    cli.server.enqueue(probe);
    expect((await keel(victimHome, ['run', '--session', id, 'probe'])).code).toBe(3);
    cli.server.enqueue({ kind: 'reply', text: 'done' });
    const approved = await keel(victimHome, ['approve', id, '--scope', 'once', '--resume']);
    expect(approved.code, approved.stderr).toBe(0);
    const result = eventsOf(victimHome, id).findLast((e) => e.kind === 'tool_result');
    expect(result?.kind === 'tool_result' && result.content).toMatch(/^0$/m);
    const shown = await keel(victimHome, ['show', id, '--json']);
    expect(shown.code, shown.stderr).toBe(0);
  });

  it('refuses --project naming no folder', async () => {
    const { file } = await exportedWithSessionGrant();
    const imported = await keel(victimHome, ['import', file, '--project', path.join(cli.dir, 'missing')]);
    expect(imported.code).toBe(2);
    expect(imported.stderr).toBe(
      `keel: the project folder ${path.join(cli.dir, 'missing')} does not exist or is not a folder\n`,
    );
  });
});
