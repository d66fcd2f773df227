import { describe, expect, it } from 'vitest';
import { DEFAULT_RETRY_POLICY, type RetryPolicy } from '../../../shared/retry/retry-policy.ts';
import { retryPolicyLookup } from '../../../shared/retry/topic-policies.ts';

const fast: RetryPolicy = { baseDelayMs: 500, multiplier: 3, maxDelayMs: 30_000, maxAttempts: 4 };
const slow: RetryPolicy = { baseDelayMs: 60_000, multiplier: 1, maxDelayMs: 60_000, maxAttempts: 100 };

describe('retryPolicyLookup', () => {
  it('gives every topic the default policy when no policy is configured', () => {
    const policyFor = retryPolicyLookup({});

    expect(policyFor('order.created')).toEqual(DEFAULT_RETRY_POLICY);
    expect(policyFor('anything.else')).toEqual(DEFAULT_RETRY_POLICY);
  });

  it('gives the default policy to a topic without an entry', () => {
    expect(retryPolicyLookup({ 'order.created': fast })('order.shipped')).toEqual(DEFAULT_RETRY_POLICY);
  });

  it('uses a topic’s own policy when it has one', () => {
    const policyFor = retryPolicyLookup({ 'order.created': fast, 'order.shipped': slow });

    expect(policyFor('order.created')).toEqual(fast);
    expect(policyFor('order.shipped')).toEqual(slow);
  });

  it.each(['constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf'])(
    'gives a topic named `%s` the default policy, not an Object.prototype member',
    (topic) => {
      const policyFor = retryPolicyLookup({ 'order.created': fast });

      expect(policyFor(topic)).toEqual(DEFAULT_RETRY_POLICY);
    },
  );

  it('gives a topic named `constructor` or `__proto__` its own policy when it has one', () => {
    // JSON.parse makes `__proto__` an own key, as it would be in a parsed setting.
    const policies = JSON.parse(
      `{"constructor":${JSON.stringify(fast)},"__proto__":${JSON.stringify(slow)}}`,
    ) as Record<string, RetryPolicy>;
    const policyFor = retryPolicyLookup(policies);

    expect(policyFor('constructor')).toEqual(fast);
    expect(policyFor('__proto__')).toEqual(slow);
    expect(policyFor('order.created')).toEqual(DEFAULT_RETRY_POLICY);
  });

  it('reads the policies once: a later change to the object does not change the lookup', () => {
    const policies: Record<string, RetryPolicy> = { 'order.created': fast };
    const policyFor = retryPolicyLookup(policies);

    policies['order.created'] = slow;

    expect(policyFor('order.created')).toEqual(fast);
  });

  it("gives a subscriber's deliveries its own policy over the topic's, and other deliveries the topic's", () => {
    const policyFor = retryPolicyLookup({ 'order.created': fast }, { loyalty: slow });

    expect(policyFor('order.created', 'loyalty')).toEqual(slow);
    expect(policyFor('order.cancelled', 'loyalty')).toEqual(slow);
    expect(policyFor('order.created', 'inventory')).toEqual(fast);
    expect(policyFor('order.created')).toEqual(fast);
    expect(policyFor('order.cancelled', 'inventory')).toEqual(DEFAULT_RETRY_POLICY);
  });
});
