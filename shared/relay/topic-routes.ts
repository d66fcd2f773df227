import { z } from 'zod';
import { ConfigError } from '../errors.ts';

const routesSchema = z.record(z.string().min(1), z.url());
const tableNamesSchema = z.record(z.string().min(1), z.string().regex(/^[A-Za-z0-9_.-]{3,255}$/));

/**
 * Parses the relay's topic → queue URL routing (`TOPIC_QUEUES`, a JSON object), failing loudly on a bad
 * setting rather than dropping messages at run time.
 */
export function parseTopicRoutes(
  json: string | undefined,
  setting = 'TOPIC_QUEUES',
): ReadonlyMap<string, string> {
  if (json === undefined) throw new ConfigError(`${setting} is not set`);
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch (cause) {
    throw new ConfigError(`${setting} is not valid JSON`, { cause });
  }
  const parsed = routesSchema.safeParse(value);
  if (!parsed.success) {
    throw new ConfigError(`${setting} must map topics to queue URLs: ${z.prettifyError(parsed.error)}`);
  }
  return new Map(Object.entries(parsed.data));
}

/**
 * Parses a topic → table name map (`DELIVERY_INBOXES`: the inbox table whose rows prove a topic's messages
 * were applied downstream). Absent means no topic has a reconciliation check.
 */
export function parseTopicTables(json: string | undefined, setting: string): ReadonlyMap<string, string> {
  if (json === undefined) return new Map();
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch (cause) {
    throw new ConfigError(`${setting} is not valid JSON`, { cause });
  }
  const parsed = tableNamesSchema.safeParse(value);
  if (!parsed.success) {
    throw new ConfigError(`${setting} must map topics to table names: ${z.prettifyError(parsed.error)}`);
  }
  return new Map(Object.entries(parsed.data));
}
