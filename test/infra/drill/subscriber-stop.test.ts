import { describe, expect, it } from 'vitest';
import { ownDelayOf } from '../../../infra/dev/drill/subscriber-stop.ts';

const NOW = Date.parse('2030-01-01T00:01:00.000Z');
/** A delivery sent once, a minute ago, and not confirmed yet. */
const sentOnce = { messageId: 'm-1#inventory', status: 'SENT', attempts: 1, seq: 1 };

describe('ownDelayOf', () => {
  it('finds no delay of its own in a delivery sent once and not finished: it waits on something else', () => {
    expect(ownDelayOf(sentOnce, { now: NOW })).toBeUndefined();
    expect(ownDelayOf({ ...sentOnce, status: 'PENDING', attempts: 0 }, { now: NOW })).toBeUndefined();
  });

  it('names a resend, a retried send, and a refusal', () => {
    expect(ownDelayOf({ ...sentOnce, resends: 2 }, { now: NOW })).toBe(
      'resent 2 time(s) past its confirmation deadline',
    );
    expect(ownDelayOf({ ...sentOnce, attempts: 3 }, { now: NOW })).toBe('its send retried (3 attempts)');
    expect(ownDelayOf({ ...sentOnce, status: 'PENDING', lastError: 'InternalError' }, { now: NOW })).toBe(
      'its send retried (InternalError)',
    );
    expect(ownDelayOf({ ...sentOnce, refusals: 1 }, { now: NOW })).toMatch(/^its send retried/);
  });

  it('names its own predecessor not confirmed, and not a confirmed one', () => {
    const cancel = { ...sentOnce, messageId: 'm-2#inventory', seq: 2 };

    expect(ownDelayOf(cancel, { predecessor: { status: 'SENT' }, now: NOW })).toBe(
      'behind its own seq 1 (SENT)',
    );
    expect(ownDelayOf(cancel, { predecessor: { status: 'CONFIRMED' }, now: NOW })).toBeUndefined();
  });

  it("names a fault the drill saw on its way, and a sweeper's live claim, but not an expired one", () => {
    expect(ownDelayOf(sentOnce, { trouble: 'its receipt lost', now: NOW })).toBe('its receipt lost');
    const claimed = { ...sentOnce, leaseUntil: '2030-01-01T00:01:10.000Z' };
    expect(ownDelayOf(claimed, { now: NOW })).toBe('claimed by a sweeper reconciling it');
    expect(ownDelayOf({ ...claimed, leaseUntil: '2030-01-01T00:00:50.000Z' }, { now: NOW })).toBeUndefined();
  });
});
