import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createRedactor, isPlaceholder, isSecretName, parseDotenv } from '../../../main/sandbox/redact.js';
import type { Redactor } from '../../../main/sandbox/redact.js';
import { trackChild } from '../../support/childProcesses.js';
import { createFixture } from './pathsFixture.js';
import type { Fixture } from './pathsFixture.js';

// Fake credentials, assembled at run time so no credential-shaped literal sits in the source.
const FAKE = {
  aws: 'AKIA' + 'Z3Q7XK2M4N5P6R7T',
  awsSecret: 'wJalrXUtnFEMI/K7MDENG/' + 'bPxRfiCYzZ9QpL3mTq',
  github: 'ghp' + '_' + 'a1B2'.repeat(9),
  githubPat: 'github' + '_pat_' + '11ABCDEFG0' + 'x9Y8z7'.repeat(10),
  openai: 'sk-' + 'proj-' + 'Ab3'.repeat(16),
  anthropic: 'sk-' + 'ant-api03-' + 'Xy9_'.repeat(20),
  slack: 'xox' + 'b-1234567890-' + 'AbCdEf'.repeat(4),
  google: 'AI' + 'za' + 'Sy' + 'A1b2C3d4E5'.repeat(3) + 'xyz',
  stripe: 'sk_' + 'live_' + '4eC39HqLyjWDarjtT1zdp7dc',
  npm: 'npm' + '_' + 'q1W2e3R4'.repeat(4) + 'zZ9y',
  huggingface: 'hf' + '_' + 'Qw3Er4Ty5U'.repeat(3) + 'abcd',
  jwt:
    'eyJ' + 'hbGciOiJIUzI1NiJ9.eyJ' + 'zdWIiOiIxMjM0NTY3ODkwIn0.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c',
  bearer: 'b3ar' + 'erTok3nValue0123456789',
  urlPassword: 'S3cr3t' + 'Passw0rd',
};
const PEM = [
  '-----BEGIN RSA ' + 'PRIVATE KEY-----',
  'MIIEowIBAAKCAQEA0Z3VS5JJcds3xfn/ygWyF8PbnGy0AHB7MhgHcTz6sE2I2yPB',
  'aFDrBz9vFqU4yQ8e2XGd0mH1w9pKq3N7dKw5vW4sT1yRcL9pQ2mZ8xJ7vN3bH6gF',
  'kT2wY5uR8eQ1aS4dF7gH0jK3lZ6xC9vB2nM5qW8eR1tY4uI7oP0aS3dF6gH9jK2l',
  '-----END RSA ' + 'PRIVATE KEY-----',
].join('\n');

const fixtures: Fixture[] = [];
afterEach(() => {
  for (const f of fixtures.splice(0)) f.cleanup();
});

function workspace(files: Record<string, string>): Fixture {
  const f = createFixture();
  fixtures.push(f);
  for (const [name, content] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(f.ws, name)), { recursive: true });
    fs.writeFileSync(path.join(f.ws, name), content);
  }
  return f;
}

const noEnv = {};

/** Streams `text` through a fresh stream cut at `cuts` (UTF-8 byte offsets) and returns what came out. */
function streamBytes(redactor: Redactor, text: string, cuts: number[]): string {
  const bytes = Buffer.from(text, 'utf8');
  const stream = redactor.stream();
  let out = '';
  let previous = 0;
  for (const cut of [...cuts, bytes.length]) {
    out += stream.push(bytes.subarray(previous, cut));
    previous = cut;
  }
  return out + stream.end();
}

interface SecretCase {
  name: string;
  text: string;
  secret: string;
  label: string;
  options?: Parameters<typeof createRedactor>[0];
  /** Text that must survive redaction (context around the secret). */
  keeps?: string;
}

const secretCases: SecretCase[] = [
  { name: 'AWS access key id', text: `key=${FAKE.aws} ok`, secret: FAKE.aws, label: 'aws-access-key-id' },
  {
    name: 'AWS secret access key in a config line',
    text: `aws_secret_access_key = ${FAKE.awsSecret}\n`,
    secret: FAKE.awsSecret,
    label: 'aws-secret-access-key',
    keeps: 'aws_secret_access_key = ',
  },
  { name: 'GitHub classic token', text: `token: ${FAKE.github}`, secret: FAKE.github, label: 'github-token' },
  {
    name: 'GitHub fine-grained token',
    text: `${FAKE.githubPat}\n`,
    secret: FAKE.githubPat,
    label: 'github-token',
  },
  { name: 'OpenAI project key', text: `OPENAI=${FAKE.openai}`, secret: FAKE.openai, label: 'openai-api-key' },
  { name: 'Anthropic key', text: `"${FAKE.anthropic}"`, secret: FAKE.anthropic, label: 'anthropic-api-key' },
  { name: 'Slack bot token', text: `slack ${FAKE.slack} end`, secret: FAKE.slack, label: 'slack-token' },
  { name: 'Google API key', text: `?key=${FAKE.google}&x=1`, secret: FAKE.google, label: 'google-api-key' },
  { name: 'Stripe live key', text: `stripe(${FAKE.stripe})`, secret: FAKE.stripe, label: 'stripe-key' },
  {
    name: 'npm token',
    text: `//registry.npmjs.org/:_authToken=${FAKE.npm}`,
    secret: FAKE.npm,
    label: 'npm-token',
  },
  {
    name: 'Hugging Face token',
    text: `HF ${FAKE.huggingface}`,
    secret: FAKE.huggingface,
    label: 'huggingface-token',
  },
  {
    name: 'JWT',
    text: `cookie: session=${FAKE.jwt}; Path=/`,
    secret: FAKE.jwt,
    label: 'jwt',
    keeps: '; Path=/',
  },
  {
    name: 'Bearer token in a header',
    text: `Authorization: Bearer ${FAKE.bearer}\r\n`,
    secret: FAKE.bearer,
    label: 'bearer-token',
    keeps: 'Authorization: Bearer ',
  },
  {
    name: 'password in a database URL',
    text: `postgres://admin:${FAKE.urlPassword}@db.internal:5432/app`,
    secret: FAKE.urlPassword,
    label: 'url-password',
    keeps: 'postgres://admin:',
  },
  {
    name: 'PEM private key block',
    text: `key:\n${PEM}\ndone`,
    secret: 'MIIEowIBAAKCAQEA0Z3VS5JJcds3',
    label: 'private-key',
  },
  {
    name: 'PEM block cut short (no END line)',
    text: `$ head -3 id_rsa\n${PEM.split('\n').slice(0, 3).join('\n')}`,
    secret: 'aFDrBz9vFqU4yQ8e2XGd0mH1w9pKq3N7',
    label: 'private-key',
    keeps: '$ head -3 id_rsa',
  },
  {
    name: 'value of a secret-named environment variable',
    text: 'echo $OPENAI_API_KEY -> live-key-value-9f8e7d',
    secret: 'live-key-value-9f8e7d',
    label: 'OPENAI_API_KEY',
    options: { env: { OPENAI_API_KEY: 'live-key-value-9f8e7d' } },
    keeps: 'echo $OPENAI_API_KEY -> ',
  },
  {
    name: 'value of a *PASSWORD* variable',
    text: 'connecting with hunter2-hunter2',
    secret: 'hunter2-hunter2',
    label: 'DB_PASSWORD',
    options: { env: { DB_PASSWORD: 'hunter2-hunter2' } },
  },
  {
    name: 'extra secret (a key from the OS keychain)',
    text: 'leaked keychain-value-123456',
    secret: 'keychain-value-123456',
    label: 'anthropic',
    options: { env: noEnv, extraSecrets: { anthropic: 'keychain-value-123456' } },
  },
];

describe('bad input: secrets', () => {
  for (const secretCase of secretCases) {
    it(`redacts: ${secretCase.name}`, () => {
      const redactor = createRedactor(secretCase.options ?? { env: noEnv });
      const out = redactor.redact(secretCase.text);
      expect(out).not.toContain(secretCase.secret);
      expect(out).toContain(`[REDACTED:${secretCase.label}]`);
      if (secretCase.keeps !== undefined) expect(out).toContain(secretCase.keeps);
      // The same text streamed one byte at a time comes out identical.
      const everyByte = Array.from({ length: Buffer.byteLength(secretCase.text) }, (_, i) => i + 1);
      expect(streamBytes(redactor, secretCase.text, everyByte)).toBe(out);
    });
  }

  it('redacts values from .env files (quotes, export, multi-line) and names them', () => {
    const f = workspace({
      '.env': [
        '# database',
        'DB_PASSWORD="pa55-word-with spaces"',
        "export API_TOKEN='tok-12345-abcdef'",
        'SESSION_SALT=q8Zr!t7Lp2x   # inline comment',
        'MULTI="first-line-of-the-secret-value\\nsecond-line-of-the-secret-value"',
        'NODE_ENV=development',
        'PORT=3000',
        'SHORT_KEY=abc',
        'PLACEHOLDER_KEY=${OTHER_VAR}',
        '#COMMENTED_KEY=commented-out-value',
      ].join('\n'),
      'apps/web/.env.local': 'STRIPE_SECRET=local-stripe-value-1\n',
    });
    const redactor = createRedactor({ workspaceRoot: f.ws, env: noEnv });
    expect(redactor.envFiles).toEqual(['.env', 'apps/web/.env.local']);
    const output = [
      'pa55-word-with spaces',
      'tok-12345-abcdef',
      'q8Zr!t7Lp2x',
      'second-line-of-the-secret-value',
      'local-stripe-value-1',
      'mode development on port 3000, abc, ${OTHER_VAR}, commented-out-value',
    ].join('\n');
    expect(redactor.redact(output)).toBe(
      [
        '[REDACTED:DB_PASSWORD]',
        '[REDACTED:API_TOKEN]',
        '[REDACTED:SESSION_SALT]',
        '[REDACTED:MULTI]',
        '[REDACTED:STRIPE_SECRET]',
        'mode development on port 3000, abc, ${OTHER_VAR}, commented-out-value',
      ].join('\n'),
    );
  });

  it('leaves placeholders alone', () => {
    const redactor = createRedactor({ env: { API_KEY: '${API_KEY}', TOKEN: '<your-token>' } });
    const text = [
      'export API_KEY=$API_KEY',
      'curl -H "Authorization: Bearer ${TOKEN}"',
      'apiKey: <your-key>',
      'const key = process.env.OPENAI_API_KEY;',
      'OPENAI_API_KEY=sk-your-key-here',
      'AWS docs example: AKIAIOSFODNN7EXAMPLE',
      'password: ********',
    ].join('\n');
    expect(redactor.redact(text)).toBe(text);
  });

  it('does not redact values shorter than 6 characters or obviously not secret', () => {
    const redactor = createRedactor({
      env: {
        API_KEY: 'abc',
        AUTH_MODE: 'on',
        SSH_AUTH_SOCK: '/tmp/ssh-agent.sock',
        AUTHOR_NAME: 'Jane Writer',
      },
    });
    const text = 'abc on /tmp/ssh-agent.sock by Jane Writer';
    expect(redactor.redact(text)).toBe(text);
  });

  it('redacts a secret split across two chunks at every possible split point', () => {
    const secret = 'split-secret-value-0123456789';
    const redactor = createRedactor({ env: { MY_SECRET: secret } });
    const text = `before ${secret} after`;
    for (let cut = 1; cut < text.length; cut += 1) {
      expect(streamBytes(redactor, text, [cut])).toBe('before [REDACTED:MY_SECRET] after');
    }
  });

  it('redacts known formats and PEM blocks split across three chunks', () => {
    const redactor = createRedactor({ env: noEnv });
    const text = `a ${FAKE.aws} b ${FAKE.jwt} c\n${PEM}\nd`;
    const expected = 'a [REDACTED:aws-access-key-id] b [REDACTED:jwt] c\n[REDACTED:private-key]\nd';
    expect(redactor.redact(text)).toBe(expected);
    for (let first = 3; first < text.length; first += 17) {
      for (let second = first + 5; second < text.length; second += 41) {
        expect(streamBytes(redactor, text, [first, second])).toBe(expected);
      }
    }
  });

  it('never splits a UTF-8 character, also next to a secret', () => {
    const secret = 'ünïcode-secret-€-value';
    const redactor = createRedactor({ env: { UNI_TOKEN: secret } });
    const text = `€→ ${secret} ←€ 🎉`;
    const bytes = Buffer.byteLength(text);
    for (let cut = 1; cut < bytes; cut += 1) {
      const out = streamBytes(redactor, text, [cut]);
      expect(out).toBe('€→ [REDACTED:UNI_TOKEN] ←€ 🎉');
      expect(out).not.toContain('\uFFFD');
    }
  });

  it('holds back only a bounded tail and releases ordinary output as it comes', () => {
    const redactor = createRedactor({ env: noEnv });
    const stream = redactor.stream();
    const chunk = 'x'.repeat(64 * 1024);
    let released = 0;
    for (let i = 1; i <= 32; i += 1) {
      released += stream.push(chunk).length;
      expect(i * chunk.length - released).toBeLessThanOrEqual(256);
    }
    expect(released + stream.end().length).toBe(32 * chunk.length);
  });

  it('releases held text on flush and keeps redacting afterwards', () => {
    const redactor = createRedactor({ env: { A_TOKEN: 'flush-token-123456' } });
    const stream = redactor.stream();
    expect(stream.push('prompt> ')).toBe('');
    expect(stream.flush()).toBe('prompt> ');
    expect(stream.push('flush-token-123456 ok') + stream.end()).toBe('[REDACTED:A_TOKEN] ok');
  });

  it('a key block cut by an idle flush anywhere comes out as when whole, END line included', () => {
    const redactor = createRedactor({ env: noEnv });
    const text = `$ cat id\n${PEM}\n$ echo done\ndone\n`;
    const whole = redactor.redact(text);
    expect(whole).toBe('$ cat id\n[REDACTED:private-key]\n$ echo done\ndone\n');
    const beginLine = [text.indexOf('-----BEGIN'), text.indexOf('\n', text.indexOf('-----BEGIN'))];
    for (let cut = 1; cut < text.length; cut += 1) {
      const stream = redactor.stream();
      const out =
        stream.push(text.slice(0, cut)) + stream.flush() + stream.push(text.slice(cut)) + stream.end();
      for (const line of PEM.split('\n').slice(1, -1)) {
        for (let at = 0; at + 16 <= line.length; at += 16) expect(out).not.toContain(line.slice(at, at + 16));
      }
      // Cut inside the BEGIN line, the block is found from its body lines alone (its END line stays).
      const insideBegin = cut > (beginLine[0] as number) && cut < (beginLine[1] as number);
      if (!insideBegin) expect(out, `cut at ${cut}`).toBe(whole);
    }
  });

  it('swallows what continues a known-format secret cut by an idle flush', () => {
    const redactor = createRedactor({ env: noEnv });
    const stream = redactor.stream();
    expect(stream.push(`using ${FAKE.anthropic.slice(0, 40)}`) + stream.flush()).toBe(
      'using [REDACTED:anthropic-api-key]',
    );
    expect(stream.push(FAKE.anthropic.slice(40, 60)) + stream.flush()).toBe('');
    expect(stream.push(`${FAKE.anthropic.slice(60)} ok\n`) + stream.end()).toBe(' ok\n');
  });

  it('ends a key block cut short at the first line that is not key material', () => {
    const redactor = createRedactor({ env: noEnv });
    const truncated = PEM.split('\n').slice(0, 3).join('\n');
    const text = `${truncated}\n$ echo done!\ndone!`;
    expect(redactor.redact(text)).toBe('[REDACTED:private-key]$ echo done!\ndone!');
    expect(streamBytes(redactor, text, [40, 90, 150])).toBe('[REDACTED:private-key]$ echo done!\ndone!');
  });

  it('bounds memory on an endless key-like stream, swallowing its continuation', () => {
    const redactor = createRedactor({ env: noEnv });
    const stream = redactor.stream();
    let out = stream.push(`-----BEGIN ${'PRIVATE'} KEY-----\n`);
    for (let i = 0; i < 20; i += 1) out += stream.push(`${'QUJD'.repeat(4096)}\n`);
    out += stream.push('!end of noise');
    out += stream.end();
    expect(out).toBe('[REDACTED:private-key]!end of noise');
  });

  it('reads .env files confined: a FIFO does not hang, a link outside is not read', () => {
    const f = workspace({});
    fs.writeFileSync(path.join(f.outside, '.env'), 'OUTSIDE_SECRET_KEY=outside-value-123456\n');
    fs.symlinkSync(path.join(f.outside, '.env'), path.join(f.ws, '.env'));
    expect(spawnSync('mkfifo', [path.join(f.ws, '.env.pipe')]).status).toBe(0);
    // If the FIFO were opened blocking, this helper would unblock it after 3 s and the timing would fail.
    const helper = trackChild(
      spawn('sh', ['-c', 'sleep 3; exec 3<>"$0"; sleep 1', path.join(f.ws, '.env.pipe')], {
        stdio: 'ignore',
      }),
    );
    const before = f.snapshotOutside();
    const started = performance.now();
    const redactor = createRedactor({ workspaceRoot: f.ws, env: noEnv });
    expect(performance.now() - started).toBeLessThan(2000);
    if (helper.pid !== undefined && helper.exitCode === null) process.kill(helper.pid, 'SIGKILL');
    expect(redactor.envFiles).toEqual([]);
    expect(redactor.redact('outside-value-123456')).toBe('outside-value-123456');
    expect(f.snapshotOutside()).toEqual(before);
  });

  it('names secrets without exposing their values', () => {
    const redactor = createRedactor({ env: { GITHUB_TOKEN: 'gh-value-1234567' } });
    expect(redactor.secretNames).toEqual(['GITHUB_TOKEN']);
    expect(JSON.stringify(redactor.secretNames)).not.toContain('gh-value');
  });
});

describe('redaction helpers', () => {
  it('parses dotenv syntax', () => {
    expect(
      parseDotenv('A=1\nexport B = "two words" # c\nC=\'x # y\'\n# D=4\nE=plain # note\nF="a\\nb"\n'),
    ).toEqual([
      { name: 'A', value: '1' },
      { name: 'B', value: 'two words' },
      { name: 'C', value: 'x # y' },
      { name: 'E', value: 'plain' },
      { name: 'F', value: 'a\nb', raw: 'a\\nb' },
    ]);
  });

  it('recognises secret-looking names and placeholders', () => {
    for (const name of [
      'OPENAI_API_KEY',
      'GITHUB_TOKEN',
      'CLIENT_SECRET',
      'DB_PASSWORD',
      'PGPASSWD',
      'AWS_CREDENTIALS',
      'AUTH',
      'PRIVATE_PEM',
    ]) {
      expect(isSecretName(name)).toBe(true);
    }
    for (const name of ['PATH', 'HOME', 'SSH_AUTH_SOCK', 'AUTHOR', 'PWD', 'KEYBOARD', 'GIT_SSH_KEY_PATH']) {
      expect(isSecretName(name)).toBe(false);
    }
    for (const value of ['$API_KEY', '${TOKEN}', '<your-key>', 'process.env.X', 'xxxxxxxx', 'your-api-key']) {
      expect(isPlaceholder(value)).toBe(true);
    }
    expect(isPlaceholder('q8Zr!t7Lp2x')).toBe(false);
  });

  it('streams 20 MB of output at a useful rate', () => {
    const redactor = createRedactor({ env: { SOME_TOKEN: 'needle-token-0123456789' } });
    const stream = redactor.stream();
    const line = 'INFO request served in 12ms path=/api/v1/items status=200 user=42\n';
    const chunk = Buffer.from(line.repeat(Math.ceil((64 * 1024) / line.length)));
    const total = 20 * 1024 * 1024;
    const started = performance.now();
    let released = 0;
    for (let sent = 0; sent < total; sent += chunk.length) released += stream.push(chunk).length;
    released += stream.end().length;
    const seconds = (performance.now() - started) / 1000;
    console.info(`redaction stream: ${(total / 1024 / 1024 / seconds).toFixed(0)} MB/s`);
    expect(released).toBeGreaterThan(total - chunk.length);
    expect(seconds).toBeLessThan(10);
  });
});
