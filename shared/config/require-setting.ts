import { ConfigError } from '../errors';

/** An environment, as handed to `createHandler` (process.env in Lambda, a resolved map locally). */
export type Env = Readonly<Record<string, string | undefined>>;

/** The value of a required setting, or a ConfigError that names it. */
export function requireSetting(env: Env, name: string): string {
  const value = env[name];
  if (value === undefined || value === '') throw new ConfigError(`${name} is not set`);
  return value;
}

/** A positive integer setting, its default when absent, or a ConfigError that names it. */
export function integerSetting(env: Env, name: string, defaultValue: number): number {
  const raw = env[name];
  if (raw === undefined) return defaultValue;
  // Digits only: Number() would silently read '' or ' ' as 0, and accept '1e3' or '0x10'.
  const value = Number(raw);
  if (!/^\d+$/.test(raw) || !Number.isSafeInteger(value)) {
    throw new ConfigError(`${name} must be a non-negative integer, got "${raw}"`);
  }
  return value;
}
