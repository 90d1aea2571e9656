// Attack corpus: key material reaching the model (issue 15). Real keys generated per run, printed the
// ways the campaign did: without the BEGIN line, one line per 0.3 s through a pty in the box, numbered by
// read_file, grepped; secret values under secret names in JSON and INI; a secret split by a pause.
import { spawnSync } from 'node:child_process';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Checkout } from '../../main/core/persistent/checkout.js';
import { stopAllViews } from '../../main/core/persistent/viewHolder.js';
import type { SandboxInfo } from '../../main/sandbox/box.js';
import { createRedactor } from '../../main/sandbox/redact.js';
import { makeRepo, makeTemp, writeFiles } from '../main/core/persistent/support.js';
import { boxedSandbox, createArea, run, type RunnerArea } from '../main/runner/runnerFixtures.js';

const redactor = createRedactor({ env: {} });

function rsaPkcs1(): string {
  return generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({
    type: 'pkcs1',
    format: 'pem',
  }) as string;
}

function ecPkcs8(): string {
  return generateKeyPairSync('ec', { namedCurve: 'secp384r1' }).privateKey.export({
    type: 'pkcs8',
    format: 'pem',
  }) as string;
}

/** An OpenSSH-format key (70-character lines) from ssh-keygen, or null where it is missing. */
function openSshKey(): string | null {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'keel-sshkey-'));
  try {
    const made = spawnSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', path.join(dir, 'k')]);
    return made.status === 0 ? readFileSync(path.join(dir, 'k'), 'utf8') : null;
  } catch {
    return null;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The base64 lines of a PEM block (its key material). */
function bodyLines(pem: string): string[] {
  return pem.split('\n').filter((line) => line.length > 0 && !line.startsWith('-----'));
}

/** Fails naming the first body line (or any 16-character piece of one) found in `text`. */
function expectNoKeyMaterial(text: string, pem: string): void {
  for (const line of bodyLines(pem)) {
    for (let at = 0; at + 16 <= line.length; at += 16) expect(text).not.toContain(line.slice(at, at + 16));
  }
}

/** `text` pushed through a stream one line at a time, flushed after each line (output going idle). */
function streamedLineByLine(text: string): string {
  const stream = redactor.stream();
  let out = '';
  for (const line of text.split(/(?<=\n)/)) out += stream.push(line) + stream.flush();
  return out + stream.end();
}

describe('PEM key material, without its markers or one line at a time', () => {
  const keys = { 'RSA PKCS#1': rsaPkcs1(), 'EC PKCS#8': ecPkcs8() } as Record<string, string>;
  const ssh = openSshKey();
  if (ssh !== null) keys['OpenSSH ed25519'] = ssh;

  const shapes: Record<string, (pem: string) => string> = {
    whole: (pem) => pem,
    'tail -n +2 (no BEGIN line)': (pem) => pem.split('\n').slice(1).join('\n'),
    'grep -v PRIVATE (no markers)': (pem) => bodyLines(pem).join('\n') + '\n',
    'read_file from line 2 (numbered)': (pem) =>
      pem
        .split('\n')
        .slice(1)
        .map((line, i) => `${String(i + 2).padStart(6)}\t${line}`)
        .join('\n'),
    'grep -n (file:line: prefix)': (pem) =>
      bodyLines(pem)
        .map((line, i) => `keys/id_rsa:${i + 2}:${line}`)
        .join('\n'),
    'indented in YAML': (pem) => `key: |\n${pem.replace(/^/gm, '    ')}`,
    'escaped in JSON (service account)': (pem) => JSON.stringify({ private_key: pem }),
  };

  for (const [kind, pem] of Object.entries(keys)) {
    for (const [shape, make] of Object.entries(shapes)) {
      it(`${kind}, ${shape}: redacted whole and streamed line by line`, () => {
        const text = `$ cat id\n${make(pem)}\n$ echo done\ndone\n`;
        const whole = redactor.redact(text);
        expectNoKeyMaterial(whole, pem);
        expect(whole).toContain('[REDACTED:');
        expect(whole).toContain('$ echo done\ndone\n');
        expectNoKeyMaterial(streamedLineByLine(text), pem);
      });
    }
  }

  it('leaves hashes, hex digests and ordinary long words alone', () => {
    const text = [
      'sha256 ' + randomBytes(32).toString('hex'),
      'integrity sha512-' + randomBytes(64).toString('base64'),
      'commit ' + randomBytes(20).toString('hex'),
      'src/main/java/com/example/project/module/submodule/ServiceImpl.java',
      'a'.repeat(64),
    ].join('\n');
    expect(redactor.redact(text)).toBe(text);
  });
});

/**
 * `text` as a pty delivers it (`\r\n` line ends) through one stream, flushed after every piece (output
 * going idle), each line cut in `pieces` the way a loaded machine reads a pty: a line and its line break
 * may come apart, also between `\r` and `\n`.
 */
function streamedLikeAPty(text: string, pieces: (line: string) => string[]): string {
  const stream = redactor.stream();
  let out = '';
  for (const line of text.replace(/\n/g, '\r\n').split(/(?<=\n)/)) {
    for (const piece of pieces(line)) out += stream.push(piece) + stream.flush();
  }
  return out + stream.end();
}

describe('a key printed one line at a time, an idle flush between every piece (deterministic)', () => {
  const keys = { 'RSA PKCS#1': rsaPkcs1(), 'EC PKCS#8': ecPkcs8() } as Record<string, string>;
  const ssh = openSshKey();
  if (ssh !== null) keys['OpenSSH ed25519'] = ssh;
  const cuts: Record<string, (line: string) => string[]> = {
    'whole lines': (line) => [line],
    'line | \\r\\n': (line) => (line.endsWith('\r\n') ? [line.slice(0, -2), '\r\n'] : [line]),
    'line\\r | \\n': (line) => (line.endsWith('\r\n') ? [line.slice(0, -1), '\n'] : [line]),
  };

  for (const [kind, pem] of Object.entries(keys)) {
    for (const [cut, pieces] of Object.entries(cuts)) {
      // The campaign's failure under load: the last (short) body line and the END line came out raw.
      it(`${kind}, with its BEGIN line, ${cut}: nothing of the block, END line included, is released`, () => {
        const out = streamedLikeAPty(`$ cat id\n${pem}$ echo done\ndone\n`, pieces);
        expectNoKeyMaterial(out, pem);
        expect(out).not.toContain('-----END');
        expect(out).toContain('[REDACTED:private-key]');
        expect(out).toContain('$ echo done\r\ndone\r\n');
      });

      it(`${kind}, without its BEGIN line, ${cut}: no body line and not the last one`, () => {
        const out = streamedLikeAPty(`$ tail -n +2 id\n${pem.split('\n').slice(1).join('\n')}`, pieces);
        expectNoKeyMaterial(out, pem);
        expect(out).toContain('[REDACTED:private-key]');
      });
    }
  }
});

describe('values under secret names in JSON, INI and YAML', () => {
  const value = 'Zq7' + 'x9K2mP4vR8tW1yB3nL6cF0hJ5gD2sA8eQ4uI7oT';
  const cases: Record<string, string> = {
    'JSON aws_secret_access_key': `{"aws_access_key_id": "id", "aws_secret_access_key": "${value}"}`,
    'INI ~/.aws/credentials': `[default]\naws_access_key_id = AKIA\naws_secret_access_key = ${value}\n`,
    'a shorter value than AWS uses': `aws_secret_access_key = ${value.slice(0, 24)}\n`,
    'JSON password': `{"user": "ci", "password": "${value.slice(0, 14)}!"}`,
    'YAML api_key': `service:\n  api_key: ${value}\n`,
    'client_secret in a query string': `GET /token?client_id=abc&client_secret=${value}&grant=1`,
  };
  for (const [name, text] of Object.entries(cases)) {
    it(`${name}: redacted`, () => {
      const out = redactor.redact(text);
      expect(out).toContain('[REDACTED:');
      expect(out).not.toContain(value.slice(0, 14));
      let streamed = '';
      const stream = redactor.stream();
      for (const char of text) streamed += stream.push(char);
      expect(streamed + stream.end()).toBe(out);
    });
  }

  it('keeps ordinary settings under names that merely contain KEY or PASS', () => {
    const text = '{"sortKey": "createdAt", "primaryKey": "id", "passes": 12345678, "keyboard": "us-intl"}';
    expect(redactor.redact(text)).toBe(text);
  });
});

describe('through the runner: result, artifact and live view', () => {
  let area: RunnerArea;
  let sandbox: SandboxInfo;
  beforeAll(async () => {
    area = createArea();
    sandbox = await boxedSandbox();
  });
  afterAll(() => area.cleanup());

  it('a key printed one line per 0.3 s in the box reaches neither the excerpt, the artifact nor the live view', async (context) => {
    if (sandbox.kind !== 'bwrap') return context.skip(`no bwrap: ${sandbox.reason}`);
    const pem = ecPkcs8();
    writeFileSync(path.join(area.workspace, 'id_ec'), pem, { mode: 0o600 });
    let live = '';
    const result = await run(
      area,
      sandbox,
      'while IFS= read -r l; do printf "%s\\n" "$l"; sleep 0.3; done < id_ec; tail -n +2 id_ec | head -3',
      { onData: (text) => (live += text) },
    );
    expect(result.exitCode).toBe(0);
    for (const text of [result.excerpt, readFileSync(result.artifact, 'utf8'), live]) {
      expectNoKeyMaterial(text, pem);
      expect(text).toContain('[REDACTED:private-key]');
    }
  });

  it('a secret split by a pause longer than the idle flush is redacted in the artifact and the excerpt', async (context) => {
    if (sandbox.kind !== 'bwrap') return context.skip(`no bwrap: ${sandbox.reason}`);
    const secret = 'tok_' + randomBytes(16).toString('hex');
    const command = `printf 'split=${secret.slice(0, 12)}'; sleep 0.6; printf '${secret.slice(12)}\\n'`;
    const result = await run(area, sandbox, command, { env: { DEPLOY_TOKEN: secret } });
    for (const text of [result.excerpt, readFileSync(result.artifact, 'utf8')]) {
      expect(text).toBe(
        'split=[REDACTED:DEPLOY_TOKEN]\n'.replace('\n', text.endsWith('\r\n') ? '\r\n' : '\n'),
      );
    }
  });
});

describe("a persistent commit's patch artifact", () => {
  let dir: string;
  beforeAll(() => {
    dir = makeTemp('keel-attack-patch-');
  });
  afterAll(async () => {
    await stopAllViews();
    rmSync(dir, { recursive: true, force: true });
  });

  it('holds no .env value, old or new, and no key material', async () => {
    const oldSecret = 'old-' + randomBytes(12).toString('hex');
    const newSecret = 'new-' + randomBytes(12).toString('hex');
    const pem = ecPkcs8();
    const backing = makeRepo(path.join(dir, 'project'), {
      '.env': `DATABASE_PASSWORD=${oldSecret}\nPORT=3000\n`,
      'src/a.txt': 'one\n',
    });
    const workspaceRoot = path.join(dir, 'home', 'workspace');
    const location = {
      workspaceRoot,
      checkout: path.join(workspaceRoot, 'persistent', 'project'),
      stateDir: path.join(dir, 'home', 'checkouts', 'project'),
      locksRoot: path.join(dir, 'home', 'locks'),
    };
    const checkout = await Checkout.open({ name: 'project', path: backing, commit: 'auto' }, location);
    // The model's writes land in the checkout's files as Keel reaches them (a view's through its holder).
    writeFiles(await checkout.mount(), {
      '.env': `DATABASE_PASSWORD=${newSecret}\nPORT=3001\n`,
      'src/a.txt': 'two\n',
      'keys/deploy.pem': pem,
    });
    Checkout.markDirty(location);
    const artifactsDir = path.join(dir, 'artifacts');
    const report = await checkout.commit({ artifactsDir, artifactStem: 'commits/1-project' });
    expect(report.status).toBe('committed');
    const patch =
      report.status === 'committed' ? readFileSync(path.join(artifactsDir, report.diffArtifact), 'utf8') : '';
    expect(patch).toContain('+two');
    expect(patch).toContain('+PORT=3001');
    expect(patch).not.toContain(oldSecret);
    expect(patch).not.toContain(newSecret);
    expect(patch).toContain('[REDACTED:DATABASE_PASSWORD]');
    expectNoKeyMaterial(patch, pem);
    // The backing folder got the real values: only the artifact is redacted.
    expect(readFileSync(path.join(backing, '.env'), 'utf8')).toContain(newSecret);
  });
});
