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
 *
 * The check is generated as source (one function per object and array, the field tests inline) and made
 * with `new Function`: a tree of closures, one per field, touched ~40 scattered functions and contexts per
 * event, and after an fsync every one of them was a cache miss (bench `append`). Nothing of the value is
 * ever put in the source: keys and literals are written as JSON string literals, anything else (a regex, a
 * non-finite number) is passed in as a reference. Where code cannot be generated (a renderer whose CSP
 * forbids eval), there is no check and zod answers.
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
  const program = new Program();
  let entry: string;
  try {
    entry = program.function('v', (v) => [`return ${program.expression(schema, v)};`]);
  } catch (error) {
    if (error instanceof Unsupported) return undefined;
    throw error;
  }
  const source = [
    "'use strict';",
    ...program.refs.map((_, i) => `const r${i} = refs[${i}];`),
    ...program.functions,
    `return ${entry};`,
  ].join('\n');
  let make: (refs: readonly unknown[]) => ExactCheck;
  try {
    // The source comes from the schema alone (keys and literals as JSON string literals), never from a value.
    // eslint-disable-next-line @typescript-eslint/no-implied-eval
    make = new Function('refs', source) as typeof make;
  } catch (error) {
    // Code generation refused (a CSP without unsafe-eval, node --disallow-code-generation-from-strings).
    if (error instanceof EvalError) return undefined;
    throw error;
  }
  return make(program.refs);
}

/** The source being generated: helper functions, the references they use, and fresh local names. */
class Program {
  readonly refs: unknown[] = [];
  readonly functions: string[] = [];
  private names = 0;

  /** A new local name. */
  local(): string {
    return `x${this.names++}`;
  }

  /** A function of one parameter whose body `lines` writes; returns its name. */
  function(param: string, lines: (param: string) => string[]): string {
    const name = `f${this.functions.length}`;
    this.functions.push(''); // its place, so the functions it calls (pushed while writing it) get later names
    const at = this.functions.length - 1;
    this.functions[at] = `function ${name}(${param}) {\n${lines(param).join('\n')}\n}`;
    return name;
  }

  /** A JS expression for a constant: inline for strings, finite numbers, booleans, null and undefined. */
  constant(value: unknown): string {
    if (typeof value === 'string') return JSON.stringify(value);
    if (typeof value === 'number' && Number.isFinite(value) && !Object.is(value, -0)) return String(value);
    if (typeof value === 'boolean' || value === null) return String(value);
    if (value === undefined) return 'undefined';
    this.refs.push(value);
    return `r${this.refs.length - 1}`;
  }

  /** A boolean expression: whether `v` (a local name) passes `schema` exactly. */
  expression(schema: z.ZodType, v: string): string {
    const def = defOf(schema);
    switch (def.type) {
      case 'string':
        return all([`typeof ${v} === 'string'`, ...this.checks(def, v, stringCheck)]);
      case 'number':
        return all([
          `typeof ${v} === 'number'`,
          `Number.isFinite(${v})`,
          ...this.checks(def, v, numberCheck),
        ]);
      case 'boolean':
        // Parenthesized: the object's check negates it (`!typeof x === 'boolean'` was always false).
        return this.plain(def, `(typeof ${v} === 'boolean')`);
      case 'unknown':
        return this.plain(def, 'true');
      case 'literal':
        return this.plain(def, this.oneOf(def.values ?? [], v));
      case 'enum': {
        const values = Object.values(def.entries ?? {});
        if (!values.every((value) => typeof value === 'string')) throw new Unsupported('a numeric enum');
        return this.plain(def, this.oneOf(values, v));
      }
      case 'optional':
        return this.plain(def, `(${v} === undefined || ${this.expression(innerOf(def), v)})`);
      case 'default':
        // zod puts the default in for a missing value (then its answer is not the value): only a present one is a yes.
        return this.plain(def, `(${v} !== undefined && ${this.expression(innerOf(def), v)})`);
      case 'nullable':
        return this.plain(def, `(${v} === null || ${this.expression(innerOf(def), v)})`);
      case 'array':
        return `${this.array(def)}(${v})`;
      case 'object':
        return `${this.object(def)}(${v})`;
      case 'union':
        return `${this.discriminated(def)}(${v})`;
      default:
        throw new Unsupported(def.type);
    }
  }

  /** A construct that takes no checks of its own. */
  private plain(def: Def, expression: string): string {
    if (def.checks?.length) throw new Unsupported(`checks on ${def.type}`);
    return expression;
  }

  private oneOf(values: readonly unknown[], v: string): string {
    if (values.length === 0) return 'false';
    return `(${values.map((value) => `${v} === ${this.constant(value)}`).join(' || ')})`;
  }

  /** The schema's checks as expressions, each written by `one` (which refuses what it does not know). */
  private checks(
    def: Def,
    v: string,
    one: (check: CheckDef, v: string, program: Program) => string | undefined,
  ): string[] {
    return (def.checks ?? []).map((c) => {
      const expression = one(c._zod.def, v, this);
      if (expression === undefined) throw new Unsupported(`${def.type} check ${c._zod.def.check}`);
      return expression;
    });
  }

  private array(def: Def): string {
    const element = def.element;
    if (!element) throw new Unsupported('array without an element');
    return this.function('a', (a) => {
      const item = this.local();
      return [
        `if (!Array.isArray(${a})) return false;`,
        ...this.checks(def, a, lengthCheck).map((check) => `if (!${check}) return false;`),
        `for (let i = 0; i < ${a}.length; i++) {`,
        `  const ${item} = ${a}[i];`,
        `  if (!${this.expression(element, item)}) return false;`,
        '}',
        'return true;',
      ];
    });
  }

  /** zod strips keys its shape does not name: a value with one is not given back as it is, so it is a no. */
  private object(def: Def): string {
    const shape = def.shape;
    if (def.catchall || !shape) throw new Unsupported('an object with a catchall');
    if (def.checks?.length) throw new Unsupported('checks on an object');
    return this.function('o', (o) => {
      const keys = Object.keys(shape);
      const lines = [`if (typeof ${o} !== 'object' || ${o} === null || Array.isArray(${o})) return false;`];
      lines.push(
        keys.length === 0
          ? `for (const k in ${o}) return false;`
          : `for (const k in ${o}) if (${keys.map((key) => `k !== ${JSON.stringify(key)}`).join(' && ')}) return false;`,
      );
      for (const key of keys) {
        const field = this.local();
        lines.push(`const ${field} = ${o}[${JSON.stringify(key)}];`);
        lines.push(`if (!${this.expression(shape[key] as z.ZodType, field)}) return false;`);
      }
      lines.push('return true;');
      return lines;
    });
  }

  /** Only a discriminated union: zod picks its option by the discriminator, so the check can too. */
  private discriminated(def: Def): string {
    const { discriminator, options } = def;
    if (discriminator === undefined || !options) throw new Unsupported('a union without a discriminator');
    const seen = new Set<unknown>();
    const cases: string[] = [];
    for (const option of options) {
      const tag = defOf(option).shape?.[discriminator];
      const values = tag ? defOf(tag).values : undefined;
      if (!tag || defOf(tag).type !== 'literal' || !values)
        throw new Unsupported('a non-literal discriminator');
      const check = this.expression(option, 'o');
      for (const value of values) {
        if (seen.has(value)) throw new Unsupported('a discriminator value two options share');
        seen.add(value);
        cases.push(`  case ${this.constant(value)}: return ${check};`);
      }
    }
    return this.function('o', (o) => [
      `if (typeof ${o} !== 'object' || ${o} === null || Array.isArray(${o})) return false;`,
      `switch (${o}[${JSON.stringify(discriminator)}]) {`,
      ...cases,
      '  default: return false;',
      '}',
    ]);
  }
}

function innerOf(def: Def): z.ZodType {
  if (!def.innerType) throw new Unsupported(`${def.type} without an inner type`);
  return def.innerType;
}

const all = (terms: readonly string[]): string => `(${terms.join(' && ')})`;

function lengthCheck(check: CheckDef, v: string, program: Program): string | undefined {
  const { minimum, maximum } = check;
  if (check.check === 'min_length' && minimum !== undefined)
    return `${v}.length >= ${program.constant(minimum)}`;
  if (check.check === 'max_length' && maximum !== undefined)
    return `${v}.length <= ${program.constant(maximum)}`;
  return undefined;
}

function stringCheck(check: CheckDef, v: string, program: Program): string | undefined {
  if (check.check === 'string_format' && check.format === 'regex' && check.pattern) {
    const pattern = program.constant(check.pattern);
    return `(${pattern}.lastIndex = 0, ${pattern}.test(${v}))`;
  }
  return lengthCheck(check, v, program);
}

function numberCheck(check: CheckDef, v: string, program: Program): string | undefined {
  const { value, inclusive } = check;
  if (check.check === 'number_format' && check.format === 'safeint') return `Number.isSafeInteger(${v})`;
  if (check.check === 'greater_than' && value !== undefined) {
    return `${v} ${inclusive ? '>=' : '>'} ${program.constant(value)}`;
  }
  if (check.check === 'less_than' && value !== undefined) {
    return `${v} ${inclusive ? '<=' : '<'} ${program.constant(value)}`;
  }
  return undefined;
}
