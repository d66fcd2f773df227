import { DEFAULT_RETRY_POLICY, type RetryPolicy } from './retry-policy.ts';

/**
 * The policy lookup of per-topic retry policies (`RETRY_POLICIES`): a topic without an entry gets the
 * default policy. A Map, so a topic named like an Object.prototype member (`constructor`) is just a topic.
 */
export function retryPolicyLookup(
  policies: Readonly<Record<string, RetryPolicy>>,
): (topic: string) => RetryPolicy {
  const byTopic = new Map(Object.entries(policies));
  return (topic) => byTopic.get(topic) ?? DEFAULT_RETRY_POLICY;
}
