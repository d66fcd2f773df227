import { z } from 'zod';
import { ConfigError } from '../errors.ts';
import { DEFAULT_RETRY_POLICY, type RetryPolicy } from './retry-policy.ts';

const retryPolicySchema = z
  .object({
    baseDelayMs: z.number().int().positive(),
    multiplier: z.number().min(1),
    maxDelayMs: z.number().int().positive(),
    maxAttempts: z.number().int().min(1).max(1_000),
  })
  .strict()
  .refine((policy) => policy.baseDelayMs <= policy.maxDelayMs, 'baseDelayMs must not exceed maxDelayMs');

const policiesSchema = z.record(z.string().min(1), retryPolicySchema);

/**
 * Parses per-topic retry policies (`RETRY_POLICIES`: JSON topic → policy). A topic without an entry gets
 * the default policy; a malformed entry fails loudly at start.
 */
export function parseRetryPolicies(
  json: string | undefined,
  setting = 'RETRY_POLICIES',
): (topic: string) => RetryPolicy {
  if (json === undefined) return () => DEFAULT_RETRY_POLICY;
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch (cause) {
    throw new ConfigError(`${setting} is not valid JSON`, { cause });
  }
  const parsed = policiesSchema.safeParse(value);
  if (!parsed.success) throw new ConfigError(`${setting} is invalid: ${z.prettifyError(parsed.error)}`);
  const policies = new Map(Object.entries(parsed.data));
  return (topic) => policies.get(topic) ?? DEFAULT_RETRY_POLICY;
}
