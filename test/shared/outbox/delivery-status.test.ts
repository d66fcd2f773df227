import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MessageStatus } from '../../../shared/message/message-status.ts';
import { messageStatusOf } from '../../../shared/outbox/delivery-status.ts';

const { PENDING, SENT, CONFIRMED, FAILED, CANCELLED } = MessageStatus;
const status = fc.constantFrom(...Object.values(MessageStatus));
const deliveries = fc.array(status, { minLength: 1, maxLength: 6 });
const RUNS = { numRuns: 500, seed: 20_261_202 } as const;

describe('messageStatusOf', () => {
  it.each([
    [[CONFIRMED], CONFIRMED],
    [[CONFIRMED, CONFIRMED], CONFIRMED],
    [[CONFIRMED, SENT], SENT],
    [[CONFIRMED, PENDING, SENT], PENDING],
    [[CONFIRMED, FAILED], FAILED],
    [[FAILED, SENT], SENT],
    [[CANCELLED, CANCELLED], CANCELLED],
    [[CONFIRMED, CANCELLED], CANCELLED],
    [[FAILED, CANCELLED], FAILED],
  ] as const)('%j → %s', (statuses, expected) => {
    expect(messageStatusOf(statuses)).toBe(expected);
  });

  it('refuses a message without deliveries', () => {
    expect(() => messageStatusOf([])).toThrow('a message has at least one delivery');
  });

  it('is CONFIRMED exactly when every delivery is, whatever the order of the deliveries', () => {
    fc.assert(
      fc.property(deliveries, (statuses) => {
        const derived = messageStatusOf(statuses);
        expect(derived === CONFIRMED).toBe(statuses.every((s) => s === CONFIRMED));
        expect(messageStatusOf([...statuses].reverse())).toBe(derived);
      }),
      RUNS,
    );
  });

  it('shows a message in flight while any delivery has work left, and FAILED only when one failed and none is in flight', () => {
    fc.assert(
      fc.property(deliveries, (statuses) => {
        const derived = messageStatusOf(statuses);
        const inFlight = statuses.some((s) => s === PENDING || s === SENT);
        expect([PENDING, SENT].includes(derived as 'PENDING' | 'SENT')).toBe(inFlight);
        if (derived === FAILED) expect(statuses).toContain(FAILED);
      }),
      RUNS,
    );
  });
});
