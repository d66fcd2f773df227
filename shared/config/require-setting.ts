import { ConfigError } from '../errors.ts';

/** An environment, as handed to `createHandler` (process.env in Lambda, a resolved map locally). */
export type Env = Readonly<Record<string, string | undefined>>;

/** The value of a required setting, or a ConfigError that names it. */
export function requireSetting(env: Env, name: string): string {
  const value = env[name];
  if (value === undefined || value === '') throw new ConfigError(`${name} is not set`);
  return value;
}

/**
 * An integer setting of at least `minimum`, its default when absent, or a ConfigError that names it. Most
 * settings want a minimum of 1: a zero deadline or receive count would quietly change what the outbox does.
 */
export function integerSetting(env: Env, name: string, defaultValue: number, minimum = 0): number {
  const raw = env[name];
  if (raw === undefined) return defaultValue;
  // Digits only: Number() would silently read '' or ' ' as 0, and accept '1e3' or '0x10'.
  const value = Number(raw);
  if (!/^\d+$/.test(raw) || !Number.isSafeInteger(value) || value < minimum) {
    throw new ConfigError(`${name} must be an integer of at least ${minimum}, got "${raw}"`);
  }
  return value;
}

/** A required integer setting of at least `minimum`, or a ConfigError that names it. */
export function requireIntegerSetting(env: Env, name: string, minimum = 1): number {
  requireSetting(env, name);
  return integerSetting(env, name, minimum, minimum);
}
