import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { claimUpdate, releaseUpdate, requeueUpdate } from '../../../shared/aws/outbox-table/claim-updates.ts';
import { cancelUpdate, replayUpdate } from '../../../shared/aws/outbox-table/operator-updates.ts';
import {
  appliedAfterCancelUpdate,
  confirmUpdate,
  markSentUpdate,
  type OutboxUpdate,
  sendFailureUpdate,
} from '../../../shared/aws/outbox-table/transition-updates.ts';
import { MemoryDocumentClient } from '../../../shared/memory/memory-document-client.ts';
import { MessageStatus } from '../../../shared/message/message-status.ts';
import type { HistoryEntry } from '../../../shared/outbox/history.ts';
import { attentionKeyOf } from '../../../shared/outbox/outbox-item.ts';
import {
  applyTransition,
  isAllowedChange,
  TERMINAL_STATUSES,
  TRANSITIONS,
  type TransitionName,
} from '../../../shared/outbox/state-machine.ts';
import { FIXED_NOW, MEMORY_TABLE_SCHEMAS, outboxItem, testMessageId } from '../../support/factories.ts';

/**
 * Every actor that changes a message — relay, sweepers, consumer, operator — acting on it in any order,
 * each from its own (possibly stale) view. DynamoDB serialises writes to one item, so an interleaving is a
 * sequence of conditional writes; the state machine must hold after every one of them.
 */

const { PENDING, SENT, FAILED, CONFIRMED, CANCELLED } = MessageStatus;
/** CONFIRMED and CANCELLED are terminal: only an operator's replay moves a message out of CANCELLED. */
const TERMINAL: readonly MessageStatus[] = [CONFIRMED, CANCELLED];
/** The statuses the attention index holds. */
const ATTENTION: readonly MessageStatus[] = [FAILED, CANCELLED];
const messageId = testMessageId(42);
const CONFIRM_DEADLINE_MS = 300_000;
const LEASE_MS = 60_000;

type Owner = 'sweeper-a' | 'sweeper-b';
/** How an actor knows the attempt count or status it acts on: fresh, or a stale value. */
type Seen<T> = { readonly fresh: true } | { readonly fresh: false; readonly value: T };

type Action =
  | { readonly actor: 'relay.markSent' | 'sweeper.markSent' }
  | { readonly actor: 'relay.recordAttempt' | 'relay.fail'; readonly attempts: Seen<number> }
  | { readonly actor: 'sweeper.claim'; readonly owner: Owner; readonly status: Seen<MessageStatus> }
  | { readonly actor: 'sweeper.requeue' | 'sweeper.release'; readonly owner: Owner }
  | { readonly actor: 'consumer.confirm' }
  | { readonly actor: 'operator.replay' | 'operator.cancel'; readonly status: Seen<MessageStatus> };

/** The transition an actor's write carries out, or undefined for lease bookkeeping. */
const TRANSITION_OF: Record<Action['actor'], TransitionName | undefined> = {
  'relay.markSent': 'markSent',
  'sweeper.markSent': 'markSent',
  'relay.recordAttempt': 'recordAttempt',
  'relay.fail': 'fail',
  'sweeper.claim': undefined,
  'sweeper.requeue': 'requeue',
  'sweeper.release': undefined,
  'consumer.confirm': 'confirm',
  'operator.replay': 'replay',
  'operator.cancel': 'cancel',
};

const owner = fc.constantFrom<Owner>('sweeper-a', 'sweeper-b');
const seen = <T>(stale: fc.Arbitrary<T>): fc.Arbitrary<Seen<T>> =>
  fc.oneof(
    fc.constant({ fresh: true } as const),
    stale.map((value) => ({ fresh: false, value }) as const),
  );

// Weighted so that runs live long enough to reach requeues, replays and late confirmations.
const action: fc.Arbitrary<Action> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom('relay.markSent', 'sweeper.markSent').map((actor) => ({ actor })) },
  {
    weight: 3,
    arbitrary: fc.record({
      actor: fc.constantFrom('relay.recordAttempt', 'relay.fail'),
      attempts: seen(fc.integer({ min: 0, max: 3 })),
    }),
  },
  {
    weight: 4,
    arbitrary: fc.record({
      actor: fc.constant('sweeper.claim'),
      owner,
      status: seen(fc.constantFrom<MessageStatus>(PENDING, SENT)),
    }),
  },
  {
    weight: 4,
    arbitrary: fc.record({ actor: fc.constantFrom('sweeper.requeue', 'sweeper.release'), owner }),
  },
  { weight: 1, arbitrary: fc.constant({ actor: 'consumer.confirm' }) },
  {
    weight: 2,
    arbitrary: fc.record({
      actor: fc.constantFrom('operator.replay', 'operator.cancel'),
      status: seen(fc.constantFrom<MessageStatus>(PENDING, SENT, FAILED, CANCELLED)),
    }),
  },
) as fc.Arbitrary<Action>;

const steps = fc.array(
  fc.record({ elapseMs: fc.constantFrom(0, 1_000, LEASE_MS, CONFIRM_DEADLINE_MS), action }),
  { minLength: 1, maxLength: 40, size: 'max' },
);

describe('the state machine under interleaved actors (pure model)', () => {
  it('has exactly the terminal statuses of the design', () => {
    expect([...TERMINAL_STATUSES].sort()).toEqual([...TERMINAL].sort());
  });

  it('only ever makes allowed changes, never leaves CONFIRMED, leaves CANCELLED only by replay, and FAILED only by replay, cancel or confirm (operators cancel FAILED and replay CANCELLED)', () => {
    fc.assert(
      fc.property(steps, (interleaving) => {
        let status: MessageStatus = PENDING;
        for (const { action: step } of interleaving) {
          let name = TRANSITION_OF[step.actor];
          // A consumer's confirmation of a cancelled message is recorded, not applied.
          if (name === 'confirm' && status === CANCELLED) name = 'applyAfterCancel';
          // Applied only if the transition allows it, as the conditional update on the status would be.
          const next: MessageStatus = name === undefined ? status : (applyTransition(status, name) ?? status);
          if (next !== status) expect(isAllowedChange(status, next)).toBe(true);
          if (status === CONFIRMED) expect(next).toBe(status);
          if (status === CANCELLED && next !== CANCELLED) expect(name).toBe('replay');
          if (status === FAILED && next !== FAILED) expect(['replay', 'cancel', 'confirm']).toContain(name);
          status = next;
        }
      }),
      { numRuns: 300 },
    );
  });
});

type Stored = Record<string, unknown> & {
  status: MessageStatus;
  attempts: number;
  history?: HistoryEntry[];
};

/**
 * The conditional write an actor makes, from its view of the message (`current` when fresh); undefined when the
 * actor refuses before writing (an operator whose view of the status does not allow the move).
 */
function writeOf(step: Action, current: Stored, now: Date): OutboxUpdate | undefined {
  switch (step.actor) {
    case 'relay.markSent':
    case 'sweeper.markSent':
      return markSentUpdate({
        messageId,
        now,
        confirmDeadlineMs: CONFIRM_DEADLINE_MS,
        by: step.actor.split('.')[0] ?? '',
      });
    case 'relay.recordAttempt':
    case 'relay.fail': {
      const seenAttempts = step.attempts.fresh ? current.attempts : step.attempts.value;
      const decision =
        step.actor === 'relay.fail'
          ? ({ kind: 'fail', attempts: seenAttempts + 1 } as const)
          : ({
              kind: 'retry',
              attempts: seenAttempts + 1,
              nextAttemptAt: new Date(now.getTime() + 2_000),
            } as const);
      return sendFailureUpdate(
        { messageId, seenAttempts, decision, error: 'SQS rejected the entry', now },
        { by: 'relay' },
      );
    }
    case 'sweeper.claim':
      return claimUpdate({
        messageId,
        status: step.status.fresh ? current.status : step.status.value,
        owner: step.owner,
        now,
        leaseMs: LEASE_MS,
      });
    case 'sweeper.requeue':
      return requeueUpdate({ messageId, owner: step.owner, now, by: 'sweeper' });
    case 'sweeper.release':
      return releaseUpdate({
        messageId,
        owner: step.owner,
        now,
        nextAttemptAt: new Date(now.getTime() + 120_000),
      });
    case 'consumer.confirm':
      // The store confirms, and records the delivery instead when the message turns out to be CANCELLED.
      return current.status === CANCELLED
        ? appliedAfterCancelUpdate({ messageId, now, outcome: 'APPLIED', by: 'consumer' })
        : confirmUpdate({ messageId, now, outcome: 'APPLIED', by: 'consumer' });
    case 'operator.replay':
    case 'operator.cancel': {
      const name = step.actor === 'operator.replay' ? 'replay' : 'cancel';
      const from = step.status.fresh ? current.status : step.status.value;
      if (!(TRANSITIONS[name].from as readonly MessageStatus[]).includes(from)) return undefined;
      const move = { messageId, from, now, by: 'local:ana', reason: 'downstream fixed' };
      return name === 'replay' ? replayUpdate(move) : cancelUpdate(move);
    }
  }
}

describe('the state machine under interleaved actors (real updates on the in-memory table)', () => {
  it('keeps every invariant after every conditional write, whatever the order and staleness of the actors', async () => {
    const changes = new Set<string>();
    await fc.assert(
      fc.asyncProperty(steps, async (interleaving) => {
        const db = new MemoryDocumentClient(MEMORY_TABLE_SCHEMAS);
        let now = FIXED_NOW.getTime();
        // A message whose stream record was lost: due for the sweeper now.
        const item = outboxItem({ messageId, nextAttemptAt: new Date(now).toISOString() });
        await db.send(new PutCommand({ TableName: 'outbox', Item: { ...item } }));
        const read = async () =>
          (await db.send(new GetCommand({ TableName: 'outbox', Key: { messageId } }))).Item as Stored;

        let before = await read();
        for (const { elapseMs, action: step } of interleaving) {
          now += elapseMs;
          const update = writeOf(step, before, new Date(now));
          if (update === undefined) continue;
          let applied = true;
          try {
            await db.send(new UpdateCommand({ TableName: 'outbox', ...update }));
          } catch (error) {
            if (!(error instanceof ConditionalCheckFailedException)) throw error;
            applied = false;
          }
          const afterWrite = await read();
          let name = TRANSITION_OF[step.actor];
          if (name === 'confirm' && before.status === CANCELLED) name = 'applyAfterCancel';
          const label = `${step.actor} on ${before.status}`;
          const added = (afterWrite.history ?? []).slice((before.history ?? []).length);

          // A refused write changes nothing.
          if (!applied) expect(afterWrite, label).toEqual(before);
          // An applied write makes exactly the change the state machine names for it.
          if (applied && name !== undefined) {
            expect(applyTransition(before.status, name), label).toBe(afterWrite.status);
          }
          if (applied && name === undefined) expect(afterWrite.status, label).toBe(before.status);
          if (afterWrite.status !== before.status) {
            expect(isAllowedChange(before.status, afterWrite.status), label).toBe(true);
          }
          // CONFIRMED is never touched; CANCELLED is left only by an operator's replay.
          if (before.status === CONFIRMED) expect(afterWrite, label).toEqual(before);
          if (before.status === CANCELLED && afterWrite.status !== CANCELLED) {
            expect(step.actor, label).toBe('operator.replay');
          }
          // FAILED is left only by an operator (replay, cancel) or a late confirmation.
          if (before.status === FAILED && afterWrite.status !== FAILED) {
            expect(['operator.replay', 'operator.cancel', 'consumer.confirm'], label).toContain(step.actor);
          }
          // No message is ever lost from sight: one with work left is in the due index, one waiting for an
          // operator in the attention index under its own status and shard, and a finished one in neither.
          const hasWork = afterWrite.status === PENDING || afterWrite.status === SENT;
          expect(afterWrite.dueShard !== undefined && afterWrite.nextAttemptAt !== undefined, label).toBe(
            hasWork,
          );
          if (!hasWork) expect(afterWrite, label).not.toHaveProperty('leaseOwner');
          if (ATTENTION.includes(afterWrite.status)) {
            expect(afterWrite.attentionKey, label).toBe(
              attentionKeyOf(afterWrite.status as typeof FAILED, messageId),
            );
          } else {
            expect(afterWrite, label).not.toHaveProperty('attentionKey');
          }
          // Every status change appends exactly one history entry naming it; nothing else does, but an
          // operator's move and the first delivery recorded after a cancel.
          if (afterWrite.status !== before.status) {
            expect(added, label).toHaveLength(1);
            expect(added[0]?.to, label).toBe(afterWrite.status);
            if (added[0]?.from !== undefined) expect(added[0].from, label).toBe(before.status);
          } else if (applied && name === 'applyAfterCancel') {
            expect(
              added.map((entry) => entry.event),
              label,
            ).toEqual(['APPLIED_AFTER_CANCEL']);
          } else {
            expect(added, label).toEqual([]);
          }
          // Attempts only grow within a delivery round; a replay or a reconciliation requeue starts a new one,
          // and a requeue counts it in `resends`, a replay resets it.
          if (step.actor === 'sweeper.requeue' && afterWrite.status !== before.status) {
            expect(afterWrite.resends ?? 0, label).toBe(((before as { resends?: number }).resends ?? 0) + 1);
          } else if (step.actor === 'operator.replay' && afterWrite.status !== before.status) {
            expect([afterWrite.attempts, afterWrite.resends], label).toEqual([0, 0]);
          } else if (step.actor !== 'sweeper.requeue') {
            expect(afterWrite.attempts, label).toBeGreaterThanOrEqual(before.attempts);
          }
          // Terminal messages expire by TTL; nothing else does (a FAILED message waits for an operator).
          expect(afterWrite.expiresAt !== undefined, label).toBe(TERMINAL.includes(afterWrite.status));
          if (afterWrite.status === FAILED) expect(afterWrite.lastError, label).toBeTypeOf('string');
          if (applied) changes.add(`${step.actor}: ${before.status} → ${afterWrite.status}`);
          before = afterWrite;
        }
      }),
      { numRuns: 150 },
    );
    // The runs reached the operator's moves and the late delivery, not only the happy path.
    expect([...changes]).toEqual(
      expect.arrayContaining([
        'operator.cancel: PENDING → CANCELLED',
        'operator.cancel: FAILED → CANCELLED',
        'operator.replay: FAILED → PENDING',
        'operator.replay: CANCELLED → PENDING',
        'consumer.confirm: CANCELLED → CANCELLED',
        'consumer.confirm: FAILED → CONFIRMED',
      ]),
    );
  });
});
