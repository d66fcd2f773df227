import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MessageStatus } from '../../../shared/message/message-status.ts';
import {
  applyTransition,
  isAllowedChange,
  TERMINAL_STATUSES,
  TRANSITIONS,
  type Transition,
  type TransitionName,
} from '../../../shared/outbox/state-machine.ts';

const { PENDING, SENT, CONFIRMED, FAILED, CANCELLED } = MessageStatus;
const ALL_STATUSES = Object.values(MessageStatus);
const TRANSITION_NAMES = Object.keys(TRANSITIONS) as TransitionName[];

describe('state machine', () => {
  it.each([
    ['markSent', [PENDING], SENT],
    ['confirm', [PENDING, SENT, FAILED], CONFIRMED],
    ['recordAttempt', [PENDING, SENT], PENDING],
    ['fail', [PENDING, SENT], FAILED],
    ['requeue', [SENT], PENDING],
    ['replay', [FAILED, CANCELLED], PENDING],
    ['cancel', [PENDING, FAILED], CANCELLED],
    ['applyAfterCancel', [CANCELLED], CANCELLED],
  ] as const)('%s leads from %j to %s and from nowhere else', (name, from, to) => {
    for (const status of ALL_STATUSES) {
      const expected = (from as readonly string[]).includes(status) ? to : undefined;
      expect(applyTransition(status, name), `${name} from ${status}`).toBe(expected);
    }
  });

  it('defines exactly the documented transitions', () => {
    expect(TRANSITION_NAMES.sort()).toEqual(
      [
        'applyAfterCancel',
        'cancel',
        'confirm',
        'fail',
        'failUnreadable',
        'markSent',
        'recordAttempt',
        'replay',
        'requeue',
      ].sort(),
    );
  });

  it('follows the happy path PENDING → SENT → CONFIRMED', () => {
    const sent = applyTransition(PENDING, 'markSent');
    expect(sent).toBe(SENT);
    expect(sent && applyTransition(sent, 'confirm')).toBe(CONFIRMED);
  });

  it('lets a confirmation overtake the relay (PENDING → CONFIRMED)', () => {
    expect(isAllowedChange(PENDING, CONFIRMED)).toBe(true);
  });

  it('lets a late delivery confirm a FAILED message (FAILED → CONFIRMED)', () => {
    expect(isAllowedChange(FAILED, CONFIRMED)).toBe(true);
  });

  it('treats exactly CONFIRMED and CANCELLED as terminal', () => {
    expect([...TERMINAL_STATUSES].sort()).toEqual([CANCELLED, CONFIRMED].sort());
  });

  it.each([
    [CONFIRMED, PENDING],
    [CONFIRMED, SENT],
    [CONFIRMED, FAILED],
    [CONFIRMED, CANCELLED],
    [CANCELLED, SENT],
    [CANCELLED, CONFIRMED],
    [CANCELLED, FAILED],
    [SENT, CANCELLED],
    [FAILED, SENT],
  ] as const)('rejects the change %s → %s', (from, to) => {
    expect(isAllowedChange(from, to)).toBe(false);
  });

  it('lets an operator cancel a FAILED message and replay a CANCELLED one (cancel and replay are operator moves)', () => {
    expect(applyTransition(FAILED, 'cancel')).toBe(CANCELLED);
    expect(applyTransition(CANCELLED, 'replay')).toBe(PENDING);
    expect(TRANSITIONS.replay.byOperator).toBe(true);
    expect(TRANSITIONS.cancel.byOperator).toBe(true);
    const automatic = TRANSITION_NAMES.filter((name) => name !== 'replay' && name !== 'cancel');
    for (const name of automatic) expect(TRANSITIONS[name] as Transition).not.toHaveProperty('byOperator');
  });

  it('records a delivery that lands after a cancel without leaving CANCELLED', () => {
    expect(applyTransition(CANCELLED, 'applyAfterCancel')).toBe(CANCELLED);
    expect(applyTransition(CANCELLED, 'confirm')).toBeUndefined();
  });

  it('fails a PENDING or SENT message whose stored item cannot be read, and only those', () => {
    expect(applyTransition(PENDING, 'failUnreadable')).toBe(FAILED);
    expect(applyTransition(SENT, 'failUnreadable')).toBe(FAILED);
    for (const status of [CONFIRMED, FAILED, CANCELLED])
      expect(applyTransition(status, 'failUnreadable')).toBeUndefined();
  });

  it('allows every documented change', () => {
    const allowed: [MessageStatus, MessageStatus][] = [
      [PENDING, SENT],
      [SENT, CONFIRMED],
      [PENDING, FAILED],
      [SENT, PENDING],
      [FAILED, PENDING],
      [PENDING, CANCELLED],
      [FAILED, CANCELLED],
      [CANCELLED, PENDING],
      [CANCELLED, CANCELLED],
      [PENDING, CONFIRMED],
      [FAILED, CONFIRMED],
      [PENDING, PENDING],
      [SENT, FAILED],
    ];
    for (const [from, to] of allowed) expect(isAllowedChange(from, to), `${from} → ${to}`).toBe(true);
  });

  it("allows nothing out of CONFIRMED, and out of CANCELLED only an operator's replay (a cancel can be undone)", () => {
    for (const name of TRANSITION_NAMES) expect(applyTransition(CONFIRMED, name)).toBeUndefined();
    for (const to of ALL_STATUSES) expect(isAllowedChange(CONFIRMED, to)).toBe(false);
    const leavingCancelled = TRANSITION_NAMES.filter((name) => {
      const next = applyTransition(CANCELLED, name);
      return next !== undefined && next !== CANCELLED;
    });
    expect(leavingCancelled).toEqual(['replay']);
  });

  it("only ever produces allowed changes, and leaves a terminal status only by an operator's replay, whatever is attempted", () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...TRANSITION_NAMES), { maxLength: 40 }), (names) => {
        let status: MessageStatus = PENDING;
        for (const name of names) {
          const next = applyTransition(status, name);
          if (next === undefined) continue;
          expect(isAllowedChange(status, next)).toBe(true);
          if (TERMINAL_STATUSES.includes(status) && next !== status) {
            expect(name).toBe('replay');
            expect((TRANSITIONS[name] as Transition).byOperator).toBe(true);
          }
          if (status === CONFIRMED) expect(next).toBe(CONFIRMED);
          status = next;
        }
      }),
      { numRuns: 500 },
    );
  });
});
