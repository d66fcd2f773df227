import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MemoryDocumentClient } from '../../../shared/memory/memory-document-client.ts';
import { MessageStatus } from '../../../shared/message/message-status.ts';
import { claimUpdate, releaseUpdate, requeueUpdate } from '../../../shared/outbox/claim-updates.ts';
import { dueShardOf } from '../../../shared/outbox/outbox-item.ts';
import {
  applyTransition,
  isAllowedChange,
  TERMINAL_STATUSES,
  TRANSITIONS,
  type TransitionName,
} from '../../../shared/outbox/state-machine.ts';
import {
  confirmUpdate,
  markSentUpdate,
  type OutboxUpdate,
  sendFailureUpdate,
} from '../../../shared/outbox/transition-updates.ts';
import { FIXED_NOW, MEMORY_TABLE_SCHEMAS, outboxItem, testMessageId } from '../../support/factories.ts';

/**
 * Every actor that changes a message — relay, sweepers, consumer, operator — acting on it in any order,
 * each from its own (possibly stale) view. DynamoDB serialises writes to one item, so an interleaving is a
 * sequence of conditional writes; the state machine must hold after every one of them.
 */

const { PENDING, SENT, FAILED, CONFIRMED, CANCELLED } = MessageStatus;
/** CONFIRMED and CANCELLED are terminal: no actor may move a message out of them. */
const TERMINAL: readonly MessageStatus[] = [CONFIRMED, CANCELLED];
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
  | { readonly actor: 'consumer.confirm' | 'operator.replay' | 'operator.cancel' };

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
  {
    weight: 1,
    arbitrary: fc.constantFrom('consumer.confirm', 'operator.cancel').map((actor) => ({ actor })),
  },
  { weight: 1, arbitrary: fc.constant({ actor: 'operator.replay' }) },
) as fc.Arbitrary<Action>;

const steps = fc.array(
  fc.record({ elapseMs: fc.constantFrom(0, 1_000, LEASE_MS, CONFIRM_DEADLINE_MS), action }),
  { minLength: 1, maxLength: 40, size: 'max' },
);

describe('the state machine under interleaved actors (pure model)', () => {
  it('has exactly the terminal statuses of the design', () => {
    expect([...TERMINAL_STATUSES].sort()).toEqual([...TERMINAL].sort());
  });

  it('only ever makes allowed changes, never leaves CONFIRMED or CANCELLED, and leaves FAILED only by replay or confirm', () => {
    fc.assert(
      fc.property(steps, (interleaving) => {
        let status: MessageStatus = PENDING;
        for (const { action: step } of interleaving) {
          const name = TRANSITION_OF[step.actor];
          // Applied only if the transition allows it, as the conditional update on the status would be.
          const next: MessageStatus = name === undefined ? status : (applyTransition(status, name) ?? status);
          if (next !== status) expect(isAllowedChange(status, next)).toBe(true);
          if (TERMINAL.includes(status)) expect(next).toBe(status);
          if (status === FAILED && next !== FAILED) expect(['replay', 'confirm']).toContain(name);
          status = next;
        }
      }),
      { numRuns: 300 },
    );
  });
});

/** The operator's audited moves, built like the library's updates: conditional on TRANSITIONS[name].from. */
function operatorUpdate(name: 'replay' | 'cancel', now: Date): OutboxUpdate {
  const transition = TRANSITIONS[name];
  const from = Object.fromEntries(transition.from.map((status, index) => [`:from${index}`, status]));
  const condition = `#status IN (${Object.keys(from).join(', ')})`;
  if (name === 'replay') {
    return {
      Key: { messageId },
      UpdateExpression:
        'SET #status = :to, #attempts = :zero, #nextAttemptAt = :now, #dueShard = :shard, #updatedAt = :now',
      ConditionExpression: condition,
      ExpressionAttributeNames: {
        '#status': 'status',
        '#attempts': 'attempts',
        '#nextAttemptAt': 'nextAttemptAt',
        '#dueShard': 'dueShard',
        '#updatedAt': 'updatedAt',
      },
      ExpressionAttributeValues: {
        ...from,
        ':to': transition.to,
        ':zero': 0,
        ':now': now.toISOString(),
        ':shard': dueShardOf(messageId),
      },
    };
  }
  return {
    Key: { messageId },
    UpdateExpression:
      'SET #status = :to, #updatedAt = :now REMOVE #dueShard, #nextAttemptAt, #leaseOwner, #leaseUntil',
    ConditionExpression: condition,
    ExpressionAttributeNames: {
      '#status': 'status',
      '#updatedAt': 'updatedAt',
      '#dueShard': 'dueShard',
      '#nextAttemptAt': 'nextAttemptAt',
      '#leaseOwner': 'leaseOwner',
      '#leaseUntil': 'leaseUntil',
    },
    ExpressionAttributeValues: { ...from, ':to': transition.to, ':now': now.toISOString() },
  };
}

type Stored = Record<string, unknown> & { status: MessageStatus; attempts: number };

/** The conditional write an actor makes, from its view of the message (`current` when fresh). */
function writeOf(step: Action, current: Stored, now: Date): OutboxUpdate {
  switch (step.actor) {
    case 'relay.markSent':
    case 'sweeper.markSent':
      return markSentUpdate(messageId, now, CONFIRM_DEADLINE_MS);
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
      return sendFailureUpdate({ messageId, seenAttempts, decision, error: 'SQS rejected the entry', now });
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
      return requeueUpdate(messageId, step.owner, now);
    case 'sweeper.release':
      return releaseUpdate({
        messageId,
        owner: step.owner,
        now,
        nextAttemptAt: new Date(now.getTime() + 120_000),
      });
    case 'consumer.confirm':
      return confirmUpdate({ messageId, now, outcome: 'APPLIED' });
    case 'operator.replay':
      return operatorUpdate('replay', now);
    case 'operator.cancel':
      return operatorUpdate('cancel', now);
  }
}

describe('the state machine under interleaved actors (real updates on the in-memory table)', () => {
  it('keeps every invariant after every conditional write, whatever the order and staleness of the actors', async () => {
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
          let applied = true;
          try {
            await db.send(new UpdateCommand({ TableName: 'outbox', ...update }));
          } catch (error) {
            if (!(error instanceof ConditionalCheckFailedException)) throw error;
            applied = false;
          }
          const afterWrite = await read();
          const name = TRANSITION_OF[step.actor];
          const label = `${step.actor} on ${before.status}`;

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
          // Terminal statuses are never left; a terminal message is not touched at all.
          if (TERMINAL.includes(before.status)) expect(afterWrite, label).toEqual(before);
          // FAILED is left only by an operator's replay or a late confirmation.
          if (before.status === FAILED && afterWrite.status !== FAILED) {
            expect(['operator.replay', 'consumer.confirm'], label).toContain(step.actor);
          }
          // A message with work left is always in the due index (never silently lost); a finished one never is.
          const hasWork = afterWrite.status === PENDING || afterWrite.status === SENT;
          expect(afterWrite.dueShard !== undefined && afterWrite.nextAttemptAt !== undefined, label).toBe(
            hasWork,
          );
          if (!hasWork) expect(afterWrite, label).not.toHaveProperty('leaseOwner');
          // Attempts only grow within a delivery round; a replay or a reconciliation requeue starts a new one,
          // and a requeue counts it in `resends`.
          if (step.actor === 'sweeper.requeue' && afterWrite.status !== before.status) {
            expect(afterWrite.resends ?? 0, label).toBe(((before as { resends?: number }).resends ?? 0) + 1);
          } else if (step.actor !== 'operator.replay' && step.actor !== 'sweeper.requeue') {
            expect(afterWrite.attempts, label).toBeGreaterThanOrEqual(before.attempts);
          }
          if (afterWrite.status === CONFIRMED) expect(afterWrite.expiresAt, label).toBeTypeOf('number');
          if (afterWrite.status === FAILED) expect(afterWrite.lastError, label).toBeTypeOf('string');
          before = afterWrite;
        }
      }),
      { numRuns: 150 },
    );
  });
});
