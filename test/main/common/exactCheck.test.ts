import { afterEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import type { ZodType } from 'zod';
import { exactCheck } from '../../../main/common/exactCheck.js';
import { parseSessionEvent, SessionEvent } from '../../../main/common/events.js';

/*
 * The exact check must never say yes where zod would refuse a value or give back anything but the value
 * itself. Values are generated from each event kind's own zod definition (valid ones, and ones broken at any
 * depth), deterministically, and the check is held against zod's answer for every one of them.
 */

type Def = {
  type: string;
  shape?: Record<string, ZodType>;
  innerType?: ZodType;
  element?: ZodType;
  options?: readonly ZodType[];
  values?: readonly unknown[];
  entries?: Record<string, unknown>;
  /** A string's checks: a pattern is `{ format: 'regex', pattern }`. */
  checks?: readonly { _zod: { def: { check?: string; minimum?: number; pattern?: RegExp } } }[];
};
const defOf = (schema: ZodType): Def => (schema as unknown as { _zod: { def: Def } })._zod.def;

/** A small deterministic PRNG (mulberry32), so a failure names a seed that repeats it. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const JUNK: readonly unknown[] = [
  null,
  undefined,
  '',
  'x',
  0,
  -1,
  1.5,
  Number.NaN,
  Infinity,
  true,
  [],
  {},
  [1],
];
const STRINGS = ['', 'a', 'src/server.js', 'x'.repeat(501), 'path:src/**', 'ünï ☃'];
/** Samples for patterned strings: a sha256 (the hashes' pattern) and one in capitals that the pattern refuses. */
const PATTERNED = ['0f'.repeat(32), '0F'.repeat(32)];
const NUMBERS = [0, 1, 2, -1, 2.5, 1e20, 2 ** 53, -0];

function generate(
  schema: ZodType,
  next: () => number,
  breakRate: number,
  numbers: readonly number[] = NUMBERS,
): unknown {
  const pick = <T>(list: readonly T[]): T => list[Math.floor(next() * list.length)] as T;
  if (next() < breakRate) return pick(JUNK);
  const def = defOf(schema);
  const inner = (s: ZodType | undefined) => generate(s as ZodType, next, breakRate, numbers);
  switch (def.type) {
    case 'string': {
      // A patterned string (a sha256) is mostly given one of the samples its pattern takes, so valid events
      // are common; the others stay in the draw to be refused.
      const patterns = (def.checks ?? []).flatMap((check) => check._zod.def.pattern ?? []);
      if (patterns.length === 0) return pick(STRINGS);
      const matching = PATTERNED.filter((text) => patterns.every((pattern) => pattern.test(text)));
      return matching.length > 0 && next() < 0.8 ? pick(matching) : pick([...STRINGS, ...PATTERNED]);
    }
    case 'number':
      return pick(numbers);
    case 'boolean':
      return next() < 0.5;
    case 'unknown':
      return pick([1, 's', null, { a: 1 }, [1]]);
    case 'literal':
      return next() < 0.95 ? def.values?.[0] : 'another';
    case 'enum':
      return next() < 0.9 ? pick(Object.values(def.entries ?? {})) : 'another';
    case 'optional':
    case 'default':
      return next() < 0.3 ? undefined : inner(def.innerType);
    case 'nullable':
      return next() < 0.2 ? null : inner(def.innerType);
    case 'array': {
      // Mostly as long as a minimum length asks (an empty one is still drawn, to be refused).
      const min =
        (def.checks ?? []).find((check) => check._zod.def.check === 'min_length')?._zod.def.minimum ?? 0;
      const length = next() < 0.1 ? 0 : min + Math.floor(next() * 3);
      return Array.from({ length }, () => inner(def.element));
    }
    case 'union':
      return inner(pick(def.options ?? []));
    case 'record':
      return next() < 0.5 ? {} : { key: pick([1, 'v']) };
    case 'object': {
      const value: Record<string, unknown> = {};
      for (const [key, field] of Object.entries(def.shape ?? {})) {
        const v = inner(field);
        // A missing value is sometimes an absent key, sometimes a key holding undefined (zod tells them apart).
        if (v !== undefined || next() < 0.3) value[key] = v;
      }
      if (next() < 0.05) value['unexpected'] = 'a key the schema does not name';
      return value;
    }
    default:
      throw new Error(`the generator meets a ${def.type}`);
  }
}

/** What zod says: the value is valid and zod gives back exactly it. */
function zodGivesItBack(schema: ZodType, value: unknown): boolean {
  const result = schema.safeParse(value);
  if (!result.success) return false;
  try {
    expect(result.data).toStrictEqual(value);
    return true;
  } catch {
    return false;
  }
}

const members = SessionEvent.options as readonly ZodType[];
const kindOf = (member: ZodType) => defOf(defOf(member).shape?.['kind'] as ZodType).values?.[0] as string;

describe('exactCheck against zod, on values generated from every event kind', () => {
  it('compiles the kinds nearly every append writes (the hot path), and leaves only a few to zod', () => {
    const compiled = members.filter((m) => exactCheck(m) !== undefined).map(kindOf);
    for (const kind of ['user_message', 'assistant_message', 'tool_call_started', 'tool_result']) {
      expect(compiled).toContain(kind);
    }
    // session_created has a record (metadata), approval_granted a plain union (its scope), hook_ran a record (a
    // hook's rewritten input; once per hook run, off the hot path): zod answers for them.
    expect(members.map(kindOf).filter((kind) => !compiled.includes(kind))).toEqual([
      'session_created',
      'approval_granted',
      'hook_ran',
    ]);
  });

  for (const member of members) {
    const check = exactCheck(member);
    if (!check) continue;
    const kind = kindOf(member);
    it(`${kind}: says yes exactly where zod accepts the value and gives it back unchanged`, () => {
      let yes = 0;
      // The fourth run draws only small whole numbers: a kind with many counts (budget_reached, a compaction's
      // usage) is then valid often enough for the agreement on valid values to be tested too.
      for (const [seed, breakRate, numbers] of [
        [1, 0, NUMBERS],
        [2, 0.02, NUMBERS],
        [3, 0.1, NUMBERS],
        [4, 0, [0, 1, 2]],
      ] as const) {
        const next = random(seed * 7919 + kind.length);
        for (let i = 0; i < 700; i += 1) {
          const value = generate(member, next, breakRate, numbers);
          const expected = zodGivesItBack(member, value);
          if (check(value) !== expected) {
            throw new Error(
              `${kind} seed ${seed} #${i}: check ${!expected}, zod ${expected}: ${JSON.stringify(value)}`,
            );
          }
          if (expected) yes += 1;
        }
      }
      // Not a vacuous run: valid, unchanged values were among them.
      expect(yes).toBeGreaterThan(5);
    });
  }

  it('takes the events a turn appends as they are (no zod copy on the hot path)', () => {
    const at = '2026-12-01T10:00:00.000Z';
    const events = [
      { seq: 2, at, kind: 'user_message', content: 'fix the failing test', messageId: 'm1' },
      {
        seq: 3,
        at,
        kind: 'assistant_message',
        content: 'Reading it first.',
        toolCalls: [{ id: 'toolu_01', name: 'read_file', arguments: '{"path":"src/server.js"}' }],
        reasoning: [{ type: 'thinking', thinking: 'The test fails on…', signature: 'EqQBCkgIAR' }],
        usage: { inputTokens: 5120, outputTokens: 88, cacheReadTokens: 4096, reasoningTokens: 40 },
        stopReason: 'tool_use',
        model: 'claude-sonnet-4-5',
      },
      {
        seq: 4,
        at,
        kind: 'tool_call_started',
        toolCallId: 'toolu_01',
        tool: 'apply_patch',
        idempotencyKey: 's1:4',
        preImageHash: null,
        postImageHash: 'ab12',
        files: [{ path: 'src/server.js', preImageHash: 'cd34', postImageHash: 'ab12' }],
      },
      {
        seq: 5,
        at,
        kind: 'tool_result',
        toolCallId: 'toolu_01',
        tool: 'shell',
        content: 'ok',
        exitCode: 0,
        durationMs: 12,
      },
    ];
    for (const event of events) expect(parseSessionEvent(event)).toBe(event);
  });

  it('parseSessionEvent returns the value itself on a yes, zod’s copy where zod strips, zod’s error on a no', () => {
    const event = {
      seq: 4,
      at: '2026-12-01T10:00:00.000Z',
      kind: 'tool_result',
      toolCallId: 'call_1',
      content: 'ok',
    };
    expect(parseSessionEvent(event)).toBe(event);
    const extra = { ...event, notInTheSchema: true };
    const parsed = parseSessionEvent(extra);
    expect(parsed).not.toBe(extra);
    expect(parsed).toStrictEqual(event);
    // A default zod fills in (toolCalls) is zod's answer, not the value.
    const bare = { seq: 5, at: '2026-12-01T10:00:00.000Z', kind: 'assistant_message', content: 'hi' };
    expect(parseSessionEvent(bare)).toStrictEqual({ ...bare, toolCalls: [] });
    expect(() => parseSessionEvent({ ...event, toolCallId: '' })).toThrow(z.ZodError);
    expect(() => parseSessionEvent({ ...event, kind: 'assistent_message' })).toThrow(z.ZodError);
  });
});

describe('exactCheck as generated code', () => {
  afterEach(() => {
    vi.unstubAllGlobals();
  });

  it('writes keys and literals as data: quotes, backslashes, line breaks and code in them change nothing', () => {
    const nasty = `a"b\\c'\n\u2028}); globalThis.pwned = true; ({`;
    const schema = z.object({
      [nasty]: z.literal(nasty),
      constructor: z.enum(['x"y', "z'w"]).optional(),
      n: z
        .number()
        .int()
        .min(-0)
        .max(2 ** 53 - 1),
      tag: z.string().regex(/^[a-z]+$/),
    });
    const check = exactCheck(schema);
    expect(check).toBeDefined();
    const good = { [nasty]: nasty, constructor: 'x"y', n: 3, tag: 'abc' };
    expect(check?.(good)).toBe(true);
    expect(check?.({ ...good, [nasty]: 'other' })).toBe(false);
    expect(check?.({ ...good, constructor: 'x' })).toBe(false);
    expect(check?.({ ...good, tag: 'ABC' })).toBe(false);
    expect(check?.({ ...good, n: 1.5 })).toBe(false);
    expect(check?.({ ...good, extra: 1 })).toBe(false);
    expect((globalThis as { pwned?: boolean }).pwned).toBeUndefined();
    for (const value of [good, { ...good, tag: 'ABC' }, { ...good, constructor: undefined }]) {
      expect(check?.(value)).toBe(zodGivesItBack(schema, value));
    }
  });

  it('gives no check where code cannot be generated (a CSP without eval), and zod answers', () => {
    vi.stubGlobal(
      'Function',
      class {
        constructor() {
          throw new EvalError('Code generation from strings disallowed for this context');
        }
      },
    );
    const schema = z.object({ a: z.string() });
    expect(exactCheck(schema)).toBeUndefined();
  });
});
