import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { buildChildEnv } from '../../../main/sandbox/env.js';

const temps: string[] = [];
afterEach(() => {
  for (const dir of temps.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

function privateHome(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'keel-env-'));
  temps.push(dir);
  return dir;
}

/** The environment a real child process sees, as printed by /usr/bin/env. */
function envSeenByChild(env: Record<string, string>): Record<string, string> {
  const output = execFileSync('/usr/bin/env', [], { env, encoding: 'utf8' });
  return Object.fromEntries(
    output
      .split('\n')
      .filter((line) => line.includes('='))
      .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
  );
}

const hostile = {
  PATH: '/usr/bin:/bin',
  HOME: '/root',
  LANG: 'C.UTF-8',
  LC_ALL: 'C.UTF-8',
  LC_CTYPE: 'C.UTF-8',
  TERM: 'xterm-256color',
  TZ: 'UTC',
  USER: 'alice',
  SHELL: '/bin/bash',
  TMPDIR: '/tmp',
  ANTHROPIC_API_KEY: 'sk-ant-should-never-leak',
  OPENAI_API_KEY: 'sk-should-never-leak',
  AWS_SECRET_ACCESS_KEY: 'aws-should-never-leak',
  GITHUB_TOKEN: 'gh-should-never-leak',
  NPM_TOKEN: 'npm-should-never-leak',
  SSH_AUTH_SOCK: '/tmp/agent.sock',
  KEEL_HOME: '/root/.config/Keel',
  LD_PRELOAD: '/tmp/evil.so',
  NODE_OPTIONS: '--require /tmp/evil.js',
  GIT_ASKPASS: '/usr/bin/askpass',
  PAGER: 'less',
  GIT_PAGER: 'less',
};

describe('bad input: child environment', () => {
  it("never passes Keel's or the user's keys to a tool process", () => {
    const home = privateHome();
    const seen = envSeenByChild(buildChildEnv({ base: hostile, home }));
    for (const leaked of [
      'sk-ant-should-never-leak',
      'sk-should-never-leak',
      'aws-should-never-leak',
      'gh-should-never-leak',
      'npm-should-never-leak',
    ]) {
      expect(Object.values(seen)).not.toContain(leaked);
    }
    expect(Object.keys(seen).sort()).toEqual(
      [
        'GIT_PAGER',
        'GIT_TERMINAL_PROMPT',
        'HOME',
        'LANG',
        'LC_ALL',
        'LC_CTYPE',
        'PAGER',
        'PATH',
        'SHELL',
        'TERM',
        'TMPDIR',
        'TZ',
        'USER',
      ].sort(),
    );
  });

  it("sets HOME to the private home, never the user's, and disables pagers and git prompts", () => {
    const home = privateHome();
    const seen = envSeenByChild(buildChildEnv({ base: hostile, home, tmpDir: '/tmp/private' }));
    expect(seen).toMatchObject({
      HOME: home,
      PAGER: 'cat',
      GIT_PAGER: 'cat',
      GIT_TERMINAL_PROMPT: '0',
      TMPDIR: '/tmp/private',
    });
  });

  it('gives a PATH even when the parent has none', () => {
    expect(buildChildEnv({ base: {}, home: '/h' })).toEqual({
      PATH: '/usr/local/bin:/usr/bin:/bin',
      HOME: '/h',
      PAGER: 'cat',
      GIT_PAGER: 'cat',
      GIT_TERMINAL_PROMPT: '0',
    });
  });

  it('adds extra variables the runner sets on purpose, and refuses malformed ones', () => {
    const env = buildChildEnv({ base: {}, home: '/h', extra: { HTTPS_PROXY: 'http://127.0.0.1:3128' } });
    expect(env.HTTPS_PROXY).toBe('http://127.0.0.1:3128');
    expect(() => buildChildEnv({ base: {}, home: '/h', extra: { 'BAD=NAME': 'x' } })).toThrow(
      /environment variable name/,
    );
    expect(() => buildChildEnv({ base: {}, home: '/h', extra: { OK: 'a\0b' } })).toThrow(/NUL byte/);
  });

  it('defaults to process.env and still drops its API keys', () => {
    const saved = process.env.ANTHROPIC_API_KEY;
    process.env.ANTHROPIC_API_KEY = 'sk-ant-from-process-env';
    try {
      const env = buildChildEnv({ home: '/h' });
      expect(Object.values(env)).not.toContain('sk-ant-from-process-env');
      expect(env.ANTHROPIC_API_KEY).toBeUndefined();
    } finally {
      if (saved === undefined) delete process.env.ANTHROPIC_API_KEY;
      else process.env.ANTHROPIC_API_KEY = saved;
    }
  });
});
