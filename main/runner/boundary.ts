/**
 * The runner's view of redaction and the child environment, owned by main/sandbox (redact.ts, env.ts).
 * Until those modules land this file carries a minimal stand-in with the same signatures; switch the
 * bodies to re-exports (`export { createRedactor } from '../sandbox/redact.js'`) once they exist.
 */

/** Streaming redactor: `push` returns what is safe to emit now; `flush` returns the held-back rest. */
export interface StreamRedactor {
  push(chunk: string): string;
  flush(): string;
}

/** A redactor bound to one workspace and environment. */
export interface Redactor {
  stream(): StreamRedactor;
}

const SECRET_NAME = /KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH/i;
const KNOWN_FORMATS = [
  /\bsk-[A-Za-z0-9_-]{20,}/g,
  /\bAKIA[0-9A-Z]{16}\b/g,
  /\bgh[pousr]_[A-Za-z0-9]{30,}/g,
  /-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----/g,
];
const MARK = '[REDACTED]';

/** Stand-in for main/sandbox/redact: secret-named env values and a few key formats, split-chunk safe. */
export function createRedactor(options: { workspaceRoot: string; env: NodeJS.ProcessEnv }): Redactor {
  const values = Object.entries(options.env)
    .filter(([name, value]) => SECRET_NAME.test(name) && typeof value === 'string' && value.length >= 8)
    .map(([, value]) => value as string)
    .sort((a, b) => b.length - a.length);
  const holdBack = Math.max(64, ...values.map((value) => value.length));
  const scrub = (text: string): string => {
    let out = text;
    for (const value of values) out = out.split(value).join(MARK);
    for (const pattern of KNOWN_FORMATS) out = out.replace(pattern, MARK);
    return out;
  };
  return {
    stream() {
      let pending = '';
      return {
        push(chunk) {
          pending = scrub(pending + chunk);
          // Whole lines are safe to emit (values are single-line); a long unterminated tail keeps only
          // enough back to catch a value split across chunks.
          const lineEnd = pending.lastIndexOf('\n') + 1;
          const safeEnd = Math.max(lineEnd, pending.length - holdBack);
          const out = pending.slice(0, safeEnd);
          pending = pending.slice(safeEnd);
          return out;
        },
        flush() {
          const out = scrub(pending);
          pending = '';
          return out;
        },
      };
    },
  };
}

const PASSED_THROUGH = /^(PATH|LANG|LANGUAGE|LC_[A-Z]+|TZ|USER|LOGNAME|SHELL|TERM|COLORTERM|TMPDIR|HOME)$/;

/** Stand-in for main/sandbox/env: an allowlist of harmless variables from `base`, then `extra`. */
export function buildChildEnv(options: {
  base: NodeJS.ProcessEnv;
  extra?: Record<string, string>;
}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(options.base)) {
    if (value !== undefined && PASSED_THROUGH.test(name)) env[name] = value;
  }
  return { ...env, ...(options.extra ?? {}) };
}
