import * as z from 'zod/mini';
import type { $ZodType } from 'zod/v4/core';
import { ConfigError } from '../errors.ts';
import { safeParse } from '../validation/safe-parse.ts';

/** An environment, as a handler is built from it (process.env in Lambda, a resolved map locally). */
export type Env = Readonly<Record<string, string | undefined>>;

/**
 * One environment variable of a shipped function: its name, how its text is read and checked, and how a
 * value is written. The handlers read with it and the CDK construct writes with it, so a value the
 * function would refuse at start fails `cdk synth` instead, with the same message.
 */
export interface Setting<T> {
  /** The environment variable. */
  readonly name: string;
  /** What it configures, for errors and docs. */
  readonly description: string;
  /** The value when the variable is absent; `undefined` makes the variable required. */
  readonly defaultValue: T | undefined;
  /** The value of the variable's text; a {@link ConfigError} naming the variable when it is malformed. */
  parse(raw: string): T;
  /** `value` itself when it is allowed; a {@link ConfigError} naming the variable otherwise. */
  validate(value: T): T;
  /** The variable's text for `value`, checked with {@link Setting.validate} first. */
  format(value: T): string;
}

/**
 * The value of `setting` in `env`: its default when absent, a {@link ConfigError} that names the variable
 * when it is required and absent or when its text is malformed.
 * @example
 * const deadlineMs = readSetting(env, OutboxSettings.confirmDeadlineMs);
 */
export function readSetting<T>(env: Env, setting: Setting<T>): T {
  const raw = env[setting.name];
  if (raw !== undefined) return setting.parse(raw);
  if (setting.defaultValue === undefined) {
    throw new ConfigError(`${setting.name} is not set (${setting.description})`);
  }
  return setting.defaultValue;
}

/** The value of `setting` in `env`, or `undefined` when the variable is absent (even if it has a default). */
export function readOptionalSetting<T>(env: Env, setting: Setting<T>): T | undefined {
  const raw = env[setting.name];
  return raw === undefined ? undefined : setting.parse(raw);
}

/** A required environment variable the caller names itself (a business table of a consumer, say). */
export function requireEnv(env: Env, name: string): string {
  const value = env[name];
  if (value === undefined || value === '') throw new ConfigError(`${name} is not set`);
  return value;
}

interface Definition<T> {
  readonly name: string;
  readonly description: string;
  readonly defaultValue?: T;
}

function define<T>(
  definition: Definition<T>,
  schema: $ZodType<T>,
  codec: { decode(raw: string): unknown; encode(value: T): string },
): Setting<T> {
  const fail = (problem: string, cause?: unknown): never => {
    throw new ConfigError(`${definition.name} ${problem}`, cause === undefined ? undefined : { cause });
  };
  const validate = (value: unknown): T => {
    const parsed = safeParse(schema, value);
    if (parsed.success) return parsed.data;
    // A scalar gets its one problem and the value; an object (routes, policies) every problem with its path.
    if (typeof value !== 'object' || value === null) {
      return fail(`${parsed.error.issues[0]?.message ?? 'is invalid'}, got ${JSON.stringify(value)}`);
    }
    return fail(`is invalid: ${z.prettifyError(withKeyProblems(parsed.error)).replaceAll('\n', ' ')}`);
  };
  if (definition.defaultValue !== undefined) validate(definition.defaultValue);
  return {
    name: definition.name,
    description: definition.description,
    defaultValue: definition.defaultValue,
    parse(raw) {
      let decoded: unknown;
      try {
        decoded = codec.decode(raw);
      } catch (cause) {
        const problem = cause instanceof Error ? cause.message : String(cause);
        return fail(`${problem}, got ${JSON.stringify(raw)}`, cause);
      }
      return validate(decoded);
    },
    validate,
    format: (value) => codec.encode(validate(value)),
  };
}

/**
 * `error` with each record key's issue saying what is wrong with the key (zod's own says only "Invalid key in
 * record"): a topic `outbox.erase` must read as reserved, `OrderCreated` as not dotted lowercase.
 */
function withKeyProblems(error: z.core.$ZodError): z.core.$ZodError {
  const issues = error.issues.map((issue) =>
    issue.code === 'invalid_key' && issue.issues[0] !== undefined
      ? { ...issue, message: issue.issues[0].message }
      : issue,
  );
  return { ...error, issues };
}

/** A text setting (a table name, a queue URL), refused when empty or when it breaks `schema`. */
export function textSetting(
  definition: Definition<string>,
  schema: $ZodType<string, string> = z.string(),
): Setting<string> {
  return define(definition, z.pipe(z.string().check(z.minLength(1, 'must not be empty')), schema), {
    decode: (raw) => raw,
    encode: (value) => value,
  });
}

/** A whole-number setting within `[min, max]`; the text must be plain digits (no `1e3`, `0x10`, spaces). */
export function integerSetting(
  definition: Definition<number> & { readonly min: number; readonly max?: number },
): Setting<number> {
  const max = definition.max ?? Number.MAX_SAFE_INTEGER;
  const range =
    definition.max === undefined ? `of at least ${definition.min}` : `from ${definition.min} to ${max}`;
  return define(
    definition,
    z
      .number({ error: `must be an integer ${range}` })
      .check(
        z.int(`must be an integer ${range}`),
        z.minimum(definition.min, `must be an integer ${range}`),
        z.maximum(max, `must be an integer ${range}`),
      ),
    {
      decode: (raw) => {
        if (!/^\d+$/.test(raw)) throw new Error(`must be an integer ${range}`);
        return Number(raw);
      },
      encode: (value) => String(value),
    },
  );
}

/** A JSON setting checked against `schema` (topic routes, retry policies). */
export function jsonSetting<T>(definition: Definition<T>, schema: $ZodType<T>): Setting<T> {
  return define(definition, schema, {
    decode: (raw) => {
      const value: unknown = JSON.parse(raw);
      // zod's records skip a `__proto__` key silently; a setting must never lose an entry without a word.
      if (hasProtoKey(value)) throw new Error('has a "__proto__" key, which is not allowed');
      return value;
    },
    encode: (value) => JSON.stringify(value),
  });
}

function hasProtoKey(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return false;
  if (Object.hasOwn(value, '__proto__')) return true;
  return Object.values(value).some(hasProtoKey);
}
