// Credential formats from a maintained rule set: secretlint's recommended preset (pinned, bundled, no
// dependencies, offline), run synchronously through a minimal rule context. Keel's own DETECTORS in
// redact.ts stay beside it (formats the preset lacks, continuations for streaming).
import { rules as presetRules } from '@secretlint/secretlint-rule-preset-recommend';
import type { KeySpan } from './redactKeys.js';

/** The source a secretlint rule's `file` handler reads. */
interface RuleSource {
  content: string;
  contentType: 'text';
  filePath: string;
  ext: string;
}

/** The part of secretlint's rule context the preset's rules call. */
interface RuleContext {
  createTranslator(messages: unknown): (messageId: string, data?: unknown) => string;
  report(descriptor: { message: string; range: readonly [number, number] }): void;
  ignore(descriptor: unknown): void;
}

interface Rule {
  meta: { id: string };
  create(context: RuleContext, options: Record<string, never>): { file?(source: RuleSource): unknown };
}

/**
 * Rules left out: filter-comments would let a `secretlint-disable` comment printed by a command switch
 * redaction off; the gcp rule looks for .p12 files (bytes, asynchronously), which output never is.
 */
const LEFT_OUT = new Set(['@secretlint/secretlint-rule-filter-comments', '@secretlint/secretlint-rule-gcp']);

/** The rule set's name and version, for diagnostics and the README. */
export const RULE_SET = '@secretlint/secretlint-rule-preset-recommend 12.0.0';

let sink: KeySpan[] | undefined;

const context: RuleContext = {
  // A rule reports a message id (e.g. `GITLAB_PERSONAL_ACCESS_TOKEN`): that is the label.
  createTranslator: () => (messageId) => messageId,
  report: ({ message, range }) => {
    const [start, end] = range;
    if (sink === undefined || !(start >= 0 && end > start)) return;
    sink.push({ start, end, label: message.replace(/[^A-Za-z0-9_.-]/g, '_').slice(0, 64) || 'secret' });
  },
  ignore: () => undefined,
};

const sourceOf = (content: string): RuleSource => ({
  content,
  contentType: 'text',
  filePath: 'output.txt',
  ext: '.txt',
});

/** A rule whose handler answers a promise is left out: its reports would come after the text was released. */
function isSynchronous(handler: { file?(source: RuleSource): unknown }): boolean {
  const result = handler.file?.(sourceOf(''));
  if (result instanceof Promise) result.catch(() => undefined);
  return !(result instanceof Promise);
}

const handlers = (presetRules as unknown as readonly Rule[])
  .filter((rule) => !LEFT_OUT.has(rule.meta.id))
  .map((rule) => ({ id: rule.meta.id, handler: rule.create(context, {}) }))
  .filter((rule) => isSynchronous(rule.handler));

/** The ids of the rules that run. */
export const RULE_IDS: readonly string[] = handlers.map((rule) => rule.id);

/** Pushes every secret the rule set finds in `text`. A rule that throws finds nothing (never breaks output). */
export function findRuleSpans(text: string, spans: KeySpan[]): void {
  const source = sourceOf(text);
  sink = spans;
  try {
    for (const { handler } of handlers) {
      try {
        handler.file?.(source);
      } catch {
        // Skip the rule for this text.
      }
    }
  } finally {
    sink = undefined;
  }
}
