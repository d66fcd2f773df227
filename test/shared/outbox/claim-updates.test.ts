import { describe, expect, it } from 'vitest';
import { claimUpdate, releaseUpdate, requeueUpdate } from '../../../shared/aws/outbox-table/claim-updates.ts';
import type { OutboxUpdate } from '../../../shared/aws/outbox-table/transition-updates.ts';
import { applyUpdate, compileCondition, type Item } from '../../../shared/memory/expressions.ts';
import { MessageStatus } from '../../../shared/message/message-status.ts';
import { FIXED_NOW, outboxItem, testMessageId } from '../../support/factories.ts';

const messageId = testMessageId(3);
const LEASE_MS = 60_000;
const at = (offsetMs: number) => new Date(FIXED_NOW.getTime() + offsetMs).toISOString();

function contextOf(update: OutboxUpdate) {
  return {
    ...(update.ExpressionAttributeNames ? { names: update.ExpressionAttributeNames } : {}),
    ...(update.ExpressionAttributeValues ? { values: update.ExpressionAttributeValues } : {}),
  };
}

/** Whether DynamoDB would accept the update's condition for the stored `item`. */
function accepts(update: OutboxUpdate, item: Item): boolean {
  return compileCondition(update.ConditionExpression ?? '', contextOf(update))(item);
}

/** The item after the update. */
function updated(update: OutboxUpdate, item: Item): Item {
  return applyUpdate(item, update.UpdateExpression ?? '', contextOf(update));
}

/** DynamoDB refuses placeholders that are defined but unused, or used but undefined. */
function expectWellFormed(update: OutboxUpdate): void {
  const text = `${update.UpdateExpression} ${update.ConditionExpression ?? ''}`;
  expect(new Set(Object.keys(update.ExpressionAttributeNames ?? {}))).toEqual(new Set(text.match(/#\w+/g)));
  expect(new Set(Object.keys(update.ExpressionAttributeValues ?? {}))).toEqual(new Set(text.match(/:\w+/g)));
  expect(update.Key).toEqual({ messageId });
}

const pending = (overrides: Record<string, unknown> = {}): Item => ({
  ...outboxItem({ messageId, nextAttemptAt: at(-1_000) }),
  ...overrides,
});

describe('claimUpdate', () => {
  const claim = (status: MessageStatus = MessageStatus.PENDING, owner = 'sweeper-a') =>
    claimUpdate({ messageId, status, owner, now: FIXED_NOW, leaseMs: LEASE_MS });

  it('is well formed', () => {
    expectWellFormed(claim());
  });

  it('claims a message in the expected status whose nextAttemptAt has passed', () => {
    expect(accepts(claim(), pending())).toBe(true);
  });

  it('claims a message that fell due exactly now', () => {
    expect(accepts(claim(), pending({ nextAttemptAt: FIXED_NOW.toISOString() }))).toBe(true);
  });

  it('refuses a message that is not due yet — including one freshly claimed by another sweeper', () => {
    expect(accepts(claim(), pending({ nextAttemptAt: at(1) }))).toBe(false);
    const claimedByB = updated(claim(MessageStatus.PENDING, 'sweeper-b'), pending());
    expect(accepts(claim(), claimedByB)).toBe(false);
  });

  it('refuses a message whose status changed since it was read', () => {
    expect(accepts(claim(MessageStatus.PENDING), pending({ status: MessageStatus.SENT }))).toBe(false);
    expect(accepts(claim(MessageStatus.SENT), pending())).toBe(false);
    expect(accepts(claim(MessageStatus.PENDING), pending({ status: MessageStatus.CONFIRMED }))).toBe(false);
  });

  it('refuses a message that left the due index (no nextAttemptAt) or does not exist', () => {
    const { nextAttemptAt: _gone, ...finished } = pending({ status: MessageStatus.PENDING });
    expect(accepts(claim(), finished)).toBe(false);
    expect(accepts(claim(), {})).toBe(false);
  });

  it('takes over an expired claim of a crashed sweeper', () => {
    const crashed = pending({ leaseOwner: 'crashed', leaseUntil: at(-1), nextAttemptAt: at(-1) });
    expect(accepts(claim(), crashed)).toBe(true);
    expect(updated(claim(), crashed)).toMatchObject({ leaseOwner: 'sweeper-a' });
  });

  it('sets the lease and moves nextAttemptAt to its end, so the message is due again if the claimant dies', () => {
    const claimed = updated(claim(), pending());

    expect(claimed).toMatchObject({
      status: MessageStatus.PENDING,
      leaseOwner: 'sweeper-a',
      leaseUntil: at(LEASE_MS),
      nextAttemptAt: at(LEASE_MS),
    });
  });
});

describe('requeueUpdate', () => {
  const sentClaimedBy = (owner: string | undefined): Item =>
    pending({ status: MessageStatus.SENT, ...(owner === undefined ? {} : { leaseOwner: owner }) });

  it('is well formed', () => {
    expectWellFormed(requeueUpdate({ messageId, owner: 'sweeper-a', now: FIXED_NOW }));
  });

  it('requires the message to be SENT and claimed by the caller', () => {
    const requeue = requeueUpdate({ messageId, owner: 'sweeper-a', now: FIXED_NOW });

    expect(accepts(requeue, sentClaimedBy('sweeper-a'))).toBe(true);
    expect(accepts(requeue, sentClaimedBy('sweeper-b'))).toBe(false);
    expect(accepts(requeue, sentClaimedBy(undefined))).toBe(false);
    expect(accepts(requeue, pending({ leaseOwner: 'sweeper-a' }))).toBe(false);
    expect(accepts(requeue, pending({ status: MessageStatus.CONFIRMED, leaseOwner: 'sweeper-a' }))).toBe(
      false,
    );
  });

  it('moves SENT back to PENDING with the reason, keeping the claim and the due time', () => {
    const claimed = sentClaimedBy('sweeper-a');
    const requeued = updated(requeueUpdate({ messageId, owner: 'sweeper-a', now: FIXED_NOW }), claimed);

    expect(requeued).toMatchObject({
      status: MessageStatus.PENDING,
      leaseOwner: 'sweeper-a',
      nextAttemptAt: claimed.nextAttemptAt,
      updatedAt: FIXED_NOW.toISOString(),
    });
    expect(requeued.lastError).toMatch(/not confirmed/);
  });
});

describe('releaseUpdate', () => {
  const next = new Date(FIXED_NOW.getTime() + 120_000);

  it('is well formed', () => {
    expectWellFormed(releaseUpdate({ messageId, owner: 'sweeper-a', now: FIXED_NOW, nextAttemptAt: next }));
  });

  it('requires the caller to hold the lease', () => {
    const release = releaseUpdate({ messageId, owner: 'sweeper-a', now: FIXED_NOW, nextAttemptAt: next });

    expect(accepts(release, pending({ status: MessageStatus.SENT, leaseOwner: 'sweeper-a' }))).toBe(true);
    expect(accepts(release, pending({ status: MessageStatus.SENT, leaseOwner: 'sweeper-b' }))).toBe(false);
    expect(accepts(release, pending({ status: MessageStatus.SENT }))).toBe(false);
  });

  it('drops the lease and makes the message due at the given time, keeping its status', () => {
    const claimed = pending({
      status: MessageStatus.SENT,
      leaseOwner: 'sweeper-a',
      leaseUntil: at(LEASE_MS),
    });
    const released = updated(
      releaseUpdate({ messageId, owner: 'sweeper-a', now: FIXED_NOW, nextAttemptAt: next }),
      claimed,
    );

    expect(released).toMatchObject({ status: MessageStatus.SENT, nextAttemptAt: next.toISOString() });
    expect(released).not.toHaveProperty('leaseOwner');
    expect(released).not.toHaveProperty('leaseUntil');
  });
});
