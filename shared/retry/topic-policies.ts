import { DEFAULT_RETRY_POLICY, type RetryPolicy } from './retry-policy.ts';

/**
 * The policy lookup of per-topic retry policies (`RETRY_POLICIES`) and per-subscriber ones
 * (`SUBSCRIBER_RETRY_POLICIES`): a subscriber's delivery takes its subscriber's policy, then its topic's, then the
 * default. Maps, so a topic named like an Object.prototype member (`constructor`) is just a topic.
 * @example
 * const policyFor = retryPolicyLookup({ 'order.created': fast }, { loyalty: patient });
 * policyFor('order.created', 'loyalty'); // patient
 */
export function retryPolicyLookup(
  policies: Readonly<Record<string, RetryPolicy>>,
  subscriberPolicies: Readonly<Record<string, RetryPolicy>> = {},
): (topic: string, subscriber?: string) => RetryPolicy {
  const byTopic = new Map(Object.entries(policies));
  const bySubscriber = new Map(Object.entries(subscriberPolicies));
  return (topic, subscriber) =>
    (subscriber === undefined ? undefined : bySubscriber.get(subscriber)) ??
    byTopic.get(topic) ??
    DEFAULT_RETRY_POLICY;
}
