// Redaction at the boundary: tool output is redacted where it is captured, before it reaches the event
// log, the artifacts shown to the model, the UI or the model. Secrets come from three places: .env*
// files in the workspace, secret-looking environment variables, and well-known credential formats.
import { findEnvFiles } from './envFiles.js';
import { findKeyBodySpans, findNamedValueSpans, mayPrecedeLastKeyLine, type KeySpan } from './redactKeys.js';
import { findRuleSpans } from './redactRules.js';

/** Values shorter than this are never redacted: redacting "true" or "3000" would wreck the output. */
export const MIN_SECRET_LENGTH = 6;
/** How much text a stream holds back at least, so a known-format secret split across chunks is caught. */
const PATTERN_HOLD = 256;
/** A stream never holds more than this; a longer still-growing match is redacted and its tail swallowed. */
const HOLD_CAP = 256 * 1024;
/** Options of createRedactor. */
export interface RedactorOptions {
  /** Workspace whose .env* files (any depth, not node_modules/.git) contribute secret values. */
  workspaceRoot?: string;
  /** Environment whose secret-looking variables are redacted (default: process.env). */
  env?: Readonly<Record<string, string | undefined>>;
  /** More named secrets, e.g. Keel's own API keys read from the OS keychain. */
  extraSecrets?: Readonly<Record<string, string>>;
  /** Dotenv texts read like .env files (e.g. the `.env` lines of a patch). */
  envTexts?: readonly string[];
}

/** Redacts a stream of output chunks; a secret split across chunks is still redacted. */
export interface RedactionStream {
  /** Accepts the next chunk (UTF-8 bytes or text) and returns the text that is safe to release now. */
  push(chunk: string | Uint8Array): string;
  /** Releases everything held back (e.g. when output goes idle); the stream stays usable. */
  flush(): string;
  /** Releases everything, including an incomplete UTF-8 sequence at the very end; the stream is done. */
  end(): string;
}

/** Redacts secrets from text, whole or streamed. */
export interface Redactor {
  /** Returns `text` with every secret replaced by `[REDACTED:<name or kind>]`. */
  redact(text: string): string;
  /** A new stream for one output channel. */
  stream(): RedactionStream;
  /** Names (never values) of the collected secrets, for diagnostics. */
  readonly secretNames: readonly string[];
  /** The .env* files read, relative to the workspace. */
  readonly envFiles: readonly string[];
  /**
   * What the .env search could not cover, one line each (a file not read or read in part, folders not
   * searched): empty when every .env file of the workspace was read. See describeEnvGaps.
   */
  readonly envGaps: readonly string[];
}

/** A secret in text; `continuation` (the characters that may continue it) is undefined when complete. */
type Span = KeySpan;

interface PatternDetector {
  kind: string;
  pattern: RegExp;
  /** Redact only this capture group (the secret), keeping the context that identified it. */
  group?: number;
  continuation?: RegExp;
}

const TOKEN_CHARS = /^[A-Za-z0-9_-]+/;

// Order matters only for labels: overlapping matches merge, the earlier detector names the span.
const DETECTORS: readonly PatternDetector[] = [
  { kind: 'anthropic-api-key', pattern: /\bsk-ant-[A-Za-z0-9_-]{20,}/g, continuation: TOKEN_CHARS },
  {
    kind: 'openai-api-key',
    pattern: /\bsk-(?:proj-|svcacct-|admin-)?(?=[A-Za-z0-9_-]*\d)[A-Za-z0-9_-]{20,}/g,
    continuation: TOKEN_CHARS,
  },
  { kind: 'github-token', pattern: /\bgh[pousr]_[A-Za-z0-9]{36,255}/g, continuation: TOKEN_CHARS },
  { kind: 'github-token', pattern: /\bgithub_pat_[A-Za-z0-9_]{22,255}/g, continuation: TOKEN_CHARS },
  { kind: 'aws-access-key-id', pattern: /\b(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}(?![A-Z0-9])/g },
  {
    kind: 'aws-secret-access-key',
    pattern: /(aws_?secret_?access_?key["']?\s*[:=]\s*["']?)([A-Za-z0-9/+=]{40})(?![A-Za-z0-9/+=])/dgi,
    group: 2,
  },
  { kind: 'slack-token', pattern: /\bxox[abposr]-[A-Za-z0-9-]{10,250}/g, continuation: TOKEN_CHARS },
  {
    kind: 'slack-webhook',
    pattern: /https:\/\/hooks\.slack\.com\/services\/[A-Za-z0-9/_-]{20,}/g,
    continuation: /^[A-Za-z0-9/_-]+/,
  },
  { kind: 'google-api-key', pattern: /\bAIza[0-9A-Za-z_-]{35}(?![0-9A-Za-z_-])/g },
  {
    kind: 'stripe-key',
    pattern: /\b(?:sk|rk)_(?:live|test)_[0-9A-Za-z]{16,247}/g,
    continuation: TOKEN_CHARS,
  },
  { kind: 'stripe-webhook-secret', pattern: /\bwhsec_[0-9A-Za-z]{24,}/g, continuation: TOKEN_CHARS },
  { kind: 'npm-token', pattern: /\bnpm_[A-Za-z0-9]{36}(?![A-Za-z0-9])/g },
  { kind: 'huggingface-token', pattern: /\bhf_[A-Za-z0-9]{30,}/g, continuation: TOKEN_CHARS },
  {
    kind: 'jwt',
    pattern: /\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/g,
    continuation: TOKEN_CHARS,
  },
  {
    kind: 'bearer-token',
    pattern: /(\b[Bb]earer\s+)([A-Za-z0-9._~+/=-]{16,})/dg,
    group: 2,
    continuation: /^[A-Za-z0-9._~+/=-]+/,
  },
  {
    kind: 'url-password',
    // Anchored on "://" rather than on the scheme, so the scan does not start at every word.
    pattern: /(:\/\/[^\s:/@'"]{1,128}:)([^\s@/'"]{3,256})@/dg,
    group: 2,
  },
];

const PEM_BEGIN = /-----BEGIN ([A-Z0-9 ]*)PRIVATE KEY( BLOCK)?-----/g;
const PEM_END = /-----END [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----/g;
// A key body: base64 lines and RFC 1421 headers (Proc-Type, DEK-Info), also with its line breaks escaped
// (`\n` in a JSON service-account key). Anything else ends the block.
const PEM_BODY = /[A-Za-z0-9+/=\s:,\\-]*/y;
// What continues a block not ended yet, also from inside its END line: key material up to the first dash
// followed by no letter, digit or dash (the END line's closing dashes: a body line has no dash, a header's
// sit inside words), or else key material as far as it goes.
const PEM_CONTINUATION = /^[A-Za-z0-9+/=\s:,\\-]*?-(?![A-Za-z0-9-])|^[A-Za-z0-9+/=\s:,\\-]+/;

const PLACEHOLDER_VALUE =
  /^(?:\$\{?[A-Za-z_][A-Za-z0-9_]*\}?|<[^<>]*>|\{\{[^{}]*\}\}|%[A-Za-z_][A-Za-z0-9_]*%|process\.env\.[A-Za-z_][A-Za-z0-9_]*|(?:your|my)[-_ ].*|changeme|change_me|placeholder|redacted|null|undefined|none|example.*)$/i;

/** True for values that stand for a secret instead of being one: `$API_KEY`, `${TOKEN}`, `<your-key>`. */
export function isPlaceholder(value: string): boolean {
  const trimmed = value.trim();
  if (PLACEHOLDER_VALUE.test(trimmed)) return true;
  if (/^(.)\1+$/.test(trimmed)) return true;
  return /x{5,}|\*{4,}|your[-_]?(?:api[-_]?)?(?:key|token|secret)|example|placeholder/i.test(trimmed);
}

const SECRET_NAME =
  /KEY|TOKEN|SECRET|PASSWORD|PASSWD|PASS|_PWD$|CREDENTIAL|AUTH(?!OR)|PRIVATE|COOKIE|SIGNATURE/i;
// Locations and switches, not secrets, even when the name matches above.
const NOT_SECRET_NAME = /(?:_SOCK|_PATH|_FILE|_DIR|_HOME|_URL_BASE)$|^(?:PWD|OLDPWD|KEYBOARD|KEYMAP)$/i;

/** True when an environment variable's name says it holds a secret (`*KEY*`, `*TOKEN*`, `*SECRET*`...). */
export function isSecretName(name: string): boolean {
  return SECRET_NAME.test(name) && !NOT_SECRET_NAME.test(name);
}

/** Values in .env files with an ordinary name that are obviously configuration, not secrets. */
function isBenignConfigValue(value: string): boolean {
  return (
    /^-?\d+(?:\.\d+)?$/.test(value) ||
    /^(?:true|false|yes|no|on|off)$/i.test(value) ||
    /^[a-z]+(?:[-_][a-z]+)*$/.test(value) ||
    /^(?:\.{0,2}\/)[\w./-]*$/.test(value) ||
    /^https?:\/\/[^\s@?#]+$/.test(value)
  );
}

/** One KEY=value entry of a dotenv file. */
export interface DotenvEntry {
  name: string;
  value: string;
  /** The value as written between its quotes (escapes not applied), when it differs from `value`. */
  raw?: string;
}

function unescapeDoubleQuoted(raw: string): string {
  return raw.replace(/\\([nrt"\\])/g, (_match, char: string) => {
    if (char === 'n') return '\n';
    if (char === 'r') return '\r';
    if (char === 't') return '\t';
    return char;
  });
}

/** Parses dotenv syntax: `KEY=value`, `export KEY=value`, quotes (multi-line), `#` comments. */
export function parseDotenv(text: string): DotenvEntry[] {
  const entries: DotenvEntry[] = [];
  const line = /^[ \t]*(?:export[ \t]+)?([A-Za-z_][A-Za-z0-9_.-]*)[ \t]*[=:][ \t]*/gm;
  let match: RegExpExecArray | null;
  while ((match = line.exec(text)) !== null) {
    const name = match[1] as string;
    let index = line.lastIndex;
    const quote = text[index];
    if (quote === '"' || quote === "'" || quote === '`') {
      let close = index + 1;
      while (close < text.length && text[close] !== quote)
        close += text[close] === '\\' && quote === '"' ? 2 : 1;
      const raw = text.slice(index + 1, close);
      const value = quote === '"' ? unescapeDoubleQuoted(raw) : raw;
      entries.push(raw === value ? { name, value } : { name, value, raw });
      index = close + 1;
    } else {
      const endOfLine = text.indexOf('\n', index);
      const rest = text.slice(index, endOfLine === -1 ? text.length : endOfLine);
      const value = rest.replace(/(?:^|[ \t]+)#.*$/, '').trim();
      entries.push({ name, value });
      // Some dotenv dialects start a comment at any '#': redact the shorter reading too.
      const beforeHash = value.split('#')[0]?.trim();
      if (beforeHash !== undefined && beforeHash !== value && beforeHash.length > 0)
        entries.push({ name, value: beforeHash });
      index = endOfLine === -1 ? text.length : endOfLine;
    }
    const nextLine = text.indexOf('\n', index);
    line.lastIndex = nextLine === -1 ? text.length : nextLine + 1;
  }
  return entries;
}

function sanitizeLabel(name: string): string {
  return name.replace(/[^A-Za-z0-9_.-]/g, '_').slice(0, 64) || 'secret';
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

class SecretSet {
  readonly byValue = new Map<string, string>();

  add(name: string, value: string, alwaysSecret: boolean): void {
    if (!alwaysSecret && isBenignConfigValue(value.trim())) return;
    for (const candidate of this.variants(value)) {
      const trimmed = candidate.trim();
      if (trimmed.length < MIN_SECRET_LENGTH || isPlaceholder(trimmed)) continue;
      if (!this.byValue.has(trimmed)) this.byValue.set(trimmed, sanitizeLabel(name));
    }
  }

  /** A multi-line value is also matched line by line, since output may re-wrap or re-indent it. */
  private variants(value: string): string[] {
    if (!value.includes('\n')) return [value];
    const lines = value.split(/\r?\n/).filter((part) => part.trim().length >= 16);
    return [value, ...lines];
  }
}

function addDotenvSecrets(text: string, secrets: SecretSet): void {
  for (const entry of parseDotenv(text)) {
    const secretName = isSecretName(entry.name);
    secrets.add(entry.name, entry.value, secretName);
    if (entry.raw !== undefined) secrets.add(entry.name, entry.raw, secretName);
  }
}

function findPemSpans(text: string, spans: Span[]): void {
  PEM_BEGIN.lastIndex = 0;
  let begin: RegExpExecArray | null;
  while ((begin = PEM_BEGIN.exec(text)) !== null) {
    const start = begin.index;
    PEM_BODY.lastIndex = PEM_BEGIN.lastIndex;
    PEM_BODY.exec(text);
    const bodyEnd = PEM_BODY.lastIndex;
    PEM_END.lastIndex = PEM_BEGIN.lastIndex;
    const end = PEM_END.exec(text);
    if (end !== null && end.index <= bodyEnd) {
      spans.push({ start, end: end.index + end[0].length, label: 'private-key' });
      PEM_BEGIN.lastIndex = end.index + end[0].length;
    } else {
      // No END yet: the block runs as far as the text looks like a key body, and may go on.
      spans.push({ start, end: bodyEnd, label: 'private-key', continuation: PEM_CONTINUATION });
      PEM_BEGIN.lastIndex = Math.max(bodyEnd, PEM_BEGIN.lastIndex);
    }
  }
}

function mergeSpans(spans: Span[]): Span[] {
  spans.sort((a, b) => a.start - b.start || b.end - a.end);
  const merged: Span[] = [];
  for (const span of spans) {
    const last = merged[merged.length - 1];
    if (last !== undefined && span.start < last.end) {
      if (span.end > last.end) {
        last.end = span.end;
        last.continuation = span.continuation;
        last.keyBody = span.keyBody;
      }
    } else {
      merged.push({ ...span });
    }
  }
  return merged;
}

function applySpans(text: string, spans: readonly Span[]): string {
  let out = '';
  let cursor = 0;
  for (const span of spans) {
    out += `${text.slice(cursor, span.start)}[REDACTED:${span.label}]`;
    cursor = span.end;
  }
  return out + text.slice(cursor);
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

const NAMED_VALUE_RULES = { isSecretName, isPlaceholder, isBenign: isBenignConfigValue };

class Matcher {
  private readonly literal: RegExp | undefined;
  readonly hold: number;

  constructor(private readonly secrets: ReadonlyMap<string, string>) {
    const values = [...secrets.keys()].sort((a, b) => b.length - a.length);
    this.literal = values.length > 0 ? new RegExp(values.map(escapeRegExp).join('|'), 'g') : undefined;
    const longest = values.reduce((max, value) => Math.max(max, value.length), 0);
    this.hold = Math.min(Math.max(PATTERN_HOLD, longest), HOLD_CAP);
  }

  /**
   * Every secret in `text`, merged into non-overlapping spans sorted by position. `afterKeyBody`: the
   * text released since a PEM body line, when `text` continues it (its first line may be the block's last).
   */
  findSpans(text: string, afterKeyBody?: string): Span[] {
    const spans: Span[] = [];
    if (this.literal) {
      this.literal.lastIndex = 0;
      let match: RegExpExecArray | null;
      while ((match = this.literal.exec(text)) !== null) {
        spans.push({
          start: match.index,
          end: match.index + match[0].length,
          label: this.secrets.get(match[0]) ?? 'secret',
        });
      }
    }
    for (const detector of DETECTORS) {
      detector.pattern.lastIndex = 0;
      let match: RegExpExecArray | null;
      while ((match = detector.pattern.exec(text)) !== null) {
        const secret = detector.group === undefined ? match[0] : match[detector.group];
        const range: readonly [number, number] | undefined =
          detector.group === undefined
            ? [match.index, match.index + match[0].length]
            : match.indices?.[detector.group];
        if (secret === undefined || range === undefined || isPlaceholder(secret)) continue;
        spans.push({
          start: range[0],
          end: range[1],
          label: detector.kind,
          continuation: detector.continuation,
        });
      }
    }
    findPemSpans(text, spans);
    findKeyBodySpans(text, spans, afterKeyBody);
    // The rule set's findings and values under secret names count only where no format above matched:
    // those name the secret better and keep its context (a rule may report the whole line or URL).
    const named: Span[] = [];
    findRuleSpans(text, named);
    findNamedValueSpans(text, named, NAMED_VALUE_RULES);
    named.sort((a, b) => a.start - b.start);
    const known = mergeSpans(spans);
    let k = 0;
    const free = named.filter((span) => {
      while (k < known.length && (known[k] as Span).end <= span.start) k += 1;
      const next = known[k];
      return next === undefined || next.start >= span.end;
    });
    return free.length === 0 ? known : mergeSpans([...known, ...free]);
  }
}

class Stream implements RedactionStream {
  private buffer = '';
  private readonly decoder = new TextDecoder('utf-8');
  /**
   * The text released last ended in a secret that may go on (released redacted at the hold cap or by a
   * flush): what continues it at the start of the next text is swallowed, as a whole-text redact would.
   */
  private swallow: RegExp | undefined;
  /** The text released since a PEM body line while the next may be the block's last (one line at a time). */
  private afterKeyBody: string | undefined;

  constructor(private readonly matcher: Matcher) {}

  push(chunk: string | Uint8Array): string {
    this.buffer += typeof chunk === 'string' ? chunk : this.decoder.decode(chunk, { stream: true });
    return this.release(false);
  }

  flush(): string {
    return this.release(true);
  }

  end(): string {
    this.buffer += this.decoder.decode();
    return this.release(true);
  }

  private release(all: boolean): string {
    if (this.swallow !== undefined && this.buffer.length > 0) {
      const continued = this.swallow.exec(this.buffer)?.[0].length ?? 0;
      this.buffer = this.buffer.slice(continued);
      // All of it continued the secret: it may go on still, also past a flush (output going idle).
      if (this.buffer.length > 0) this.swallow = undefined;
    }
    const spans = this.matcher.findSpans(this.buffer, this.afterKeyBody);
    let cut = all ? this.buffer.length : this.buffer.length - this.matcher.hold;
    if (!all) {
      let held: Span | undefined;
      for (const span of spans) {
        const straddles = span.start < cut && span.end > cut;
        const mayGrow =
          span.continuation !== undefined && span.end === this.buffer.length && span.start < cut;
        if (straddles || mayGrow) {
          cut = span.start;
          held = span;
        }
      }
      if (held !== undefined && this.buffer.length - cut > HOLD_CAP) {
        // Still growing past the cap: release it redacted now and swallow whatever continues it.
        cut = held.end;
      }
    }
    if (cut <= 0) return '';
    if (cut < this.buffer.length && isHighSurrogate(this.buffer.charCodeAt(cut - 1))) cut -= 1;
    const releasedSpans = spans.filter((span) => span.end <= cut);
    const released = applySpans(this.buffer.slice(0, cut), releasedSpans);
    const last = releasedSpans[releasedSpans.length - 1];
    if (last?.continuation !== undefined && last.end === this.buffer.length) this.swallow = last.continuation;
    // Text released without a secret in it (a line break alone, a prefix) keeps the body line's place.
    const sinceKeyBody =
      last === undefined
        ? this.afterKeyBody === undefined
          ? undefined
          : this.afterKeyBody + this.buffer.slice(0, cut)
        : last.keyBody === true
          ? this.buffer.slice(last.end, cut)
          : undefined;
    this.afterKeyBody =
      sinceKeyBody !== undefined && mayPrecedeLastKeyLine(sinceKeyBody) ? sinceKeyBody : undefined;
    this.buffer = this.buffer.slice(cut);
    return released;
  }
}

/**
 * Builds a redactor from the workspace's .env* files, the secret-looking variables of `env`, and
 * `extraSecrets`, plus the built-in credential formats. Reads .env files confined (no FIFO hangs).
 */
export function createRedactor(options: RedactorOptions = {}): Redactor {
  const secrets = new SecretSet();
  const env = options.env ?? process.env;
  for (const [name, value] of Object.entries(env)) {
    if (value !== undefined && isSecretName(name)) secrets.add(name, value, true);
  }
  for (const [name, value] of Object.entries(options.extraSecrets ?? {})) secrets.add(name, value, true);
  const found =
    options.workspaceRoot === undefined ? { files: [], gaps: [] } : findEnvFiles(options.workspaceRoot);
  for (const file of found.files) addDotenvSecrets(file.text, secrets);
  for (const text of options.envTexts ?? []) addDotenvSecrets(text, secrets);
  const matcher = new Matcher(secrets.byValue);
  return {
    redact: (text) => applySpans(text, matcher.findSpans(text)),
    stream: () => new Stream(matcher),
    secretNames: [...new Set(secrets.byValue.values())],
    envFiles: found.files.map((file) => file.path),
    envGaps: found.gaps,
  };
}
