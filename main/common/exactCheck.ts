import type { z } from 'zod';

/**
 * A check that answers, without allocating, whether a zod schema would accept a value and give back the
 * same value (nothing stripped, defaulted or transformed). The log's append validates every event with
 * zod; zod's parse builds a result object and an issue list per field, and on the append path (cold
 * caches after each fsync) that was the largest piece of Keel's own CPU per append. Where this check says
 * yes, the value is what zod would return; where it says no (an invalid value, an unknown key zod would
 * strip), the caller runs zod for its answer and its message. Only the constructs listed here are compiled;
 * a schema with anything else (a transform, a refinement, a record, a plain union...) gets no check
 * (`exactCheck` returns undefined) and the caller always runs zod. zod stays the schema of record.
 */
export type ExactCheck = (value: unknown) => boolean;

type Def = {
  type: string;
  checks?: readonly { _zod: { def: CheckDef } }[];
  shape?: Record<string, z.ZodType>;
  catchall?: z.ZodType;
  innerType?: z.ZodType;
  element?: z.ZodType;
  options?: readonly z.ZodType[];
  discriminator?: string;
  values?: readonly unknown[];
  entries?: Record<string, unknown>;
};

type CheckDef = {
  check: string;
  format?: string;
  minimum?: number;
  maximum?: number;
  value?: number;
  inclusive?: boolean;
  pattern?: RegExp;
};

class Unsupported extends Error {}

const defOf = (schema: z.ZodType): Def => (schema as unknown as { _zod: { def: Def } })._zod.def;

/** The compiled check of `schema`, or undefined when it uses anything this file does not compile. */
export function exactCheck(schema: z.ZodType): ExactCheck | undefined {
  try {
    return compile(schema);
  } catch (error) {
    if (error instanceof Unsupported) return undefined;
    throw error;
  }
}

function compile(schema: z.ZodType): ExactCheck {
  const def = defOf(schema);
  switch (def.type) {
    case 'string':
      return withChecks(def, (v) => typeof v === 'string', lengthCheck);
    case 'number':
      return withChecks(def, (v) => typeof v === 'number' && Number.isFinite(v), numberCheck);
    case 'boolean':
      return noChecks(def, (v) => typeof v === 'boolean');
    case 'unknown':
      return noChecks(def, () => true);
    case 'literal': {
      const values = new Set<unknown>(def.values ?? []);
      return noChecks(def, (v) => values.has(v));
    }
    case 'enum': {
      const values = new Set<unknown>(Object.values(def.entries ?? {}));
      if (![...values].every((v) => typeof v === 'string')) throw new Unsupported('a numeric enum');
      return noChecks(def, (v) => values.has(v));
    }
    case 'optional': {
      const inner = compile(innerOf(def));
      return noChecks(def, (v) => v === undefined || inner(v));
    }
    case 'default': {
      // zod puts the default in for a missing value (then its answer is not the value): only a present one is a yes.
      const inner = compile(innerOf(def));
      return noChecks(def, (v) => v !== undefined && inner(v));
    }
    case 'nullable': {
      const inner = compile(innerOf(def));
      return noChecks(def, (v) => v === null || inner(v));
    }
    case 'array':
      return arrayCheck(def);
    case 'object':
      return objectCheck(def);
    case 'union':
      return discriminatedCheck(def);
    default:
      throw new Unsupported(def.type);
  }
}

function innerOf(def: Def): z.ZodType {
  if (!def.innerType) throw new Unsupported(`${def.type} without an inner type`);
  return def.innerType;
}

function noChecks(def: Def, check: ExactCheck): ExactCheck {
  if (def.checks?.length) throw new Unsupported(`checks on ${def.type}`);
  return check;
}

/** The type test, then each of the schema's checks, each compiled by `one` (which refuses what it does not know). */
function withChecks(
  def: Def,
  type: ExactCheck,
  one: (check: CheckDef) => ((v: never) => boolean) | undefined,
): ExactCheck {
  const checks = (def.checks ?? []).map((c) => {
    const compiled = one(c._zod.def);
    if (!compiled) throw new Unsupported(`${def.type} check ${c._zod.def.check}`);
    return compiled as (v: unknown) => boolean;
  });
  if (checks.length === 0) return type;
  return (v) => {
    if (!type(v)) return false;
    for (const check of checks) if (!check(v)) return false;
    return true;
  };
}

function lengthCheck(check: CheckDef): ((v: { length: number }) => boolean) | undefined {
  const { minimum, maximum, pattern } = check;
  if (check.check === 'min_length' && minimum !== undefined) return (v) => v.length >= minimum;
  if (check.check === 'max_length' && maximum !== undefined) return (v) => v.length <= maximum;
  if (check.check === 'string_format' && check.format === 'regex' && pattern) {
    return (v) => {
      pattern.lastIndex = 0;
      return pattern.test(v as unknown as string);
    };
  }
  return undefined;
}

function numberCheck(check: CheckDef): ((v: number) => boolean) | undefined {
  const { value, inclusive } = check;
  if (check.check === 'number_format' && check.format === 'safeint') return Number.isSafeInteger;
  if (check.check === 'greater_than' && value !== undefined) {
    return inclusive ? (v) => v >= value : (v) => v > value;
  }
  if (check.check === 'less_than' && value !== undefined) {
    return inclusive ? (v) => v <= value : (v) => v < value;
  }
  return undefined;
}

function arrayCheck(def: Def): ExactCheck {
  if (!def.element) throw new Unsupported('array without an element');
  const element = compile(def.element);
  const length = withChecks({ type: 'array', checks: def.checks }, () => true, lengthCheck);
  return (v) => {
    if (!Array.isArray(v) || !length(v)) return false;
    for (const item of v) if (!element(item)) return false;
    return true;
  };
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** zod strips keys its shape does not name: a value with one is not given back as it is, so it is a no. */
function objectCheck(def: Def): ExactCheck {
  if (def.catchall || !def.shape) throw new Unsupported('an object with a catchall');
  const fields = Object.entries(def.shape).map(([key, field]) => [key, compile(field)] as const);
  const known = new Set(fields.map(([key]) => key));
  return (v) => {
    if (!isObject(v)) return false;
    for (const key in v) if (!known.has(key)) return false;
    for (const [key, check] of fields) if (!check(v[key])) return false;
    return true;
  };
}

/** Only a discriminated union: zod picks its option by the discriminator, so the check can too. */
function discriminatedCheck(def: Def): ExactCheck {
  const { discriminator, options } = def;
  if (discriminator === undefined || !options) throw new Unsupported('a union without a discriminator');
  const byValue = new Map<unknown, ExactCheck>();
  for (const option of options) {
    const shape = defOf(option).shape;
    const tag = shape?.[discriminator];
    const values = tag ? defOf(tag).values : undefined;
    if (!tag || defOf(tag).type !== 'literal' || !values)
      throw new Unsupported('a non-literal discriminator');
    const check = compile(option);
    for (const value of values) {
      if (byValue.has(value)) throw new Unsupported('a discriminator value two options share');
      byValue.set(value, check);
    }
  }
  return (v) => {
    if (!isObject(v)) return false;
    const check = byValue.get(v[discriminator]);
    return check !== undefined && check(v);
  };
}
