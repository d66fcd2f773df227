import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../../shared/errors.ts';
import { DEFAULT_RETRY_POLICY, type RetryPolicy } from '../../../shared/retry/retry-policy.ts';
import { parseRetryPolicies } from '../../../shared/retry/topic-policies.ts';

const fast: RetryPolicy = { baseDelayMs: 500, multiplier: 3, maxDelayMs: 30_000, maxAttempts: 4 };

/** The ConfigError thrown for `json`, so its message can be inspected. */
function configErrorFor(json: string, setting?: string): ConfigError {
  try {
    parseRetryPolicies(json, setting);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return error as ConfigError;
  }
  throw new Error(`expected ${json} to be refused`);
}

describe('parseRetryPolicies', () => {
  it('gives every topic the default policy when RETRY_POLICIES is not set', () => {
    const policyFor = parseRetryPolicies(undefined);

    expect(policyFor('order.created')).toEqual(DEFAULT_RETRY_POLICY);
    expect(policyFor('anything.else')).toEqual(DEFAULT_RETRY_POLICY);
  });

  it('gives the default policy to a topic without an entry', () => {
    const policyFor = parseRetryPolicies(JSON.stringify({ 'order.created': fast }));

    expect(policyFor('order.shipped')).toEqual(DEFAULT_RETRY_POLICY);
    expect(parseRetryPolicies('{}')('order.created')).toEqual(DEFAULT_RETRY_POLICY);
  });

  it('uses a topic’s own policy when it has one', () => {
    const slow = { baseDelayMs: 60_000, multiplier: 1, maxDelayMs: 60_000, maxAttempts: 100 };
    const policyFor = parseRetryPolicies(JSON.stringify({ 'order.created': fast, 'order.shipped': slow }));

    expect(policyFor('order.created')).toEqual(fast);
    expect(policyFor('order.shipped')).toEqual(slow);
  });

  it('refuses text that is not JSON, naming RETRY_POLICIES and keeping the parse error as cause', () => {
    const error = configErrorFor('{"order.created": ');

    expect(error.message).toContain('RETRY_POLICIES');
    expect(error.code).toBe('INVALID_CONFIG');
    expect(error.cause).toBeInstanceOf(SyntaxError);
  });

  it.each([
    ['a negative base delay', { ...fast, baseDelayMs: -1 }],
    ['a zero base delay', { ...fast, baseDelayMs: 0 }],
    ['a negative maximum delay', { ...fast, maxDelayMs: -1_000 }],
    ['a fractional delay', { ...fast, baseDelayMs: 1.5 }],
    ['a shrinking multiplier', { ...fast, multiplier: 0.5 }],
    ['zero attempts', { ...fast, maxAttempts: 0 }],
    ['more than 1 000 attempts', { ...fast, maxAttempts: 1_001 }],
    ['a missing field', { baseDelayMs: 1_000, multiplier: 2, maxDelayMs: 10_000 }],
    ['an unknown field', { ...fast, jitter: 'full' }],
    ['a delay given as text', { ...fast, baseDelayMs: '1000' }],
  ])('refuses %s, naming RETRY_POLICIES', (_case, policy) => {
    const error = configErrorFor(JSON.stringify({ 'order.created': policy }));

    expect(error.message).toContain('RETRY_POLICIES');
  });

  it('refuses a base delay above the maximum delay', () => {
    const error = configErrorFor(
      JSON.stringify({ 'order.created': { ...fast, baseDelayMs: 60_000, maxDelayMs: 1_000 } }),
    );

    expect(error.message).toContain('RETRY_POLICIES');
    expect(error.message).toContain('baseDelayMs must not exceed maxDelayMs');
  });

  it.each([
    ['an array', '[]'],
    ['a number', '42'],
    ['null', 'null'],
    ['an empty topic name', JSON.stringify({ '': fast })],
  ])('refuses %s instead of a topic → policy object', (_case, json) => {
    expect(configErrorFor(json).message).toContain('RETRY_POLICIES');
  });

  it('names the setting it was given', () => {
    expect(configErrorFor('nope', 'SWEEPER_RETRY_POLICIES').message).toContain('SWEEPER_RETRY_POLICIES');
  });

  it('accepts the boundaries: base = max, multiplier 1, one attempt, 1 000 attempts', () => {
    const edge = { baseDelayMs: 5_000, multiplier: 1, maxDelayMs: 5_000, maxAttempts: 1 };
    const most = { ...edge, maxAttempts: 1_000 };
    const policyFor = parseRetryPolicies(JSON.stringify({ 'a.b': edge, 'c.d': most }));

    expect(policyFor('a.b')).toEqual(edge);
    expect(policyFor('c.d')).toEqual(most);
  });
});
