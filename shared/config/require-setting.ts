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
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0) {
    throw new ConfigError(`${name} must be a non-negative integer, got "${raw}"`);
  }
  return value;
}
