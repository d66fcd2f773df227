import { z } from 'zod';
import { ConfigError } from '../errors';

const routesSchema = z.record(z.string().min(1), z.url());

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
