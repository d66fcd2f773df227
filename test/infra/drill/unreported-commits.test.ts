import { TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { UnreportedCommits } from '../../../infra/dev/drill/unreported-commits.ts';

function inboxPut(messageId: string, outcome: string) {
  return new TransactWriteCommand({
    TransactItems: [{ Put: { TableName: 'inbox', Item: { messageId, topic: 'order.created', outcome } } }],
  });
}

/** A parked row of an ordered message, written in the inbox table beside the inbox rows. */
function parkedPut(messageId: string) {
  return new TransactWriteCommand({
    TransactItems: [
      {
        Put: {
          TableName: 'inbox',
          Item: { messageId: `parked#order#o-1#2`, parkedMessageId: messageId, topic: 'order.cancelled' },
        },
      },
    ],
  });
}

describe('UnreportedCommits', () => {
  it('counts the rows of deliveries that then failed, by topic and outcome', async () => {
    const commits = new UnreportedCommits();

    await commits.invocation(async () => {
      // m-1's receipt went out, then its delivery failed at the drain of its parked successors.
      commits.committed(inboxPut('m-1', 'APPLIED'), 'inbox');
      // m-2's delivery failed before its receipt.
      commits.committed(inboxPut('m-2', 'REJECTED_OUT_OF_STOCK'), 'inbox');
    });

    expect(commits.counts()).toEqual({ 'order.created': { applied: 1, rejected: 1 } });
    expect(commits.total()).toBe(2);
  });

  it("matches a subscriber's inbox row (<messageId>#<subscriber>) with the line that names its message", async () => {
    const commits = new UnreportedCommits({ subscriber: 'loyalty' });
    const logger = commits.logger(() => {});

    await commits.invocation(async () => {
      commits.committed(inboxPut('m-1#loyalty', 'AWARDED'), 'inbox');
      logger.info('consumed message', { messageId: 'm-1', kind: 'APPLIED' });
      commits.committed(inboxPut('m-2#loyalty', 'AWARDED'), 'inbox');
    });

    expect(commits.counts()).toEqual({ 'order.created': { applied: 1, rejected: 0 } });
  });

  it('counts nothing for a delivery the consumer logged as consumed, nor for a duplicate', async () => {
    const commits = new UnreportedCommits();
    const logger = commits.logger(() => {});

    await commits.invocation(async () => {
      commits.committed(inboxPut('m-1', 'APPLIED'), 'inbox');
      logger.info('consumed message', { messageId: 'm-1', kind: 'APPLIED', confirmation: 'RECEIPT_SENT' });
      // A second copy of m-1 in the same batch: a duplicate, which fails.
      logger.warn('message failed', { messageId: 'm-1' });
      // A parked successor applied by the drain is reported under its own id.
      commits.committed(inboxPut('m-2', 'REJECTED_OUT_OF_STOCK'), 'inbox');
      logger.info('consumed parked message', {
        messageId: 'm-2',
        kind: 'REJECTED',
        confirmation: 'RECEIPT_SENT',
      });
    });

    expect(commits.total()).toBe(0);
    expect(commits.counts()).toEqual({});
  });

  it('keeps concurrent invocations apart: a commit is matched only with its own delivery', async () => {
    const commits = new UnreportedCommits();
    const logger = commits.logger(() => {});
    let release: () => void = () => {};
    const committed = new Promise<void>((resolve) => {
      release = resolve;
    });

    await Promise.all([
      commits.invocation(async () => {
        await committed;
        // Another copy of m-1, elsewhere, which commits nothing and fails.
        logger.warn('message failed', { messageId: 'm-1' });
      }),
      commits.invocation(async () => {
        commits.committed(inboxPut('m-1', 'APPLIED'), 'inbox');
        release();
        await new Promise((resolve) => setTimeout(resolve, 5));
        logger.info('consumed message', { messageId: 'm-1', kind: 'APPLIED' });
      }),
    ]);

    expect(commits.total()).toBe(0);
  });

  it('keeps a row whose delivery failed when a later copy is logged as a duplicate', async () => {
    const commits = new UnreportedCommits();
    const logger = commits.logger(() => {});

    await commits.invocation(async () => {
      // m-2 applied from its parked row by a drain whose receipt then failed: the drain reports nothing.
      commits.committed(inboxPut('m-2', 'APPLIED'), 'inbox');
      // Another copy of m-2 later in the batch: a duplicate, which sends the receipt again.
      logger.info('consumed message', { messageId: 'm-2', kind: 'DUPLICATE', confirmation: 'RECEIPT_SENT' });
    });

    expect(commits.counts()).toEqual({ 'order.created': { applied: 1, rejected: 0 } });
  });

  it('counts what a record handed back at the wrap-up point commits after its invocation returned', async () => {
    const commits = new UnreportedCommits();
    const logger = commits.logger(() => {});
    let answer: () => void = () => {};
    const stillInFlight = new Promise<void>((resolve) => {
      answer = resolve;
    });
    let late: Promise<void> = Promise.resolve();

    await commits.invocation(async () => {
      // The record's transaction is still in flight when the invocation returns (it was handed back).
      late = stillInFlight.then(() => {
        commits.committed(inboxPut('m-1', 'APPLIED'), 'inbox');
        // Nothing the invocation publishes can count it any more, whatever is logged.
        logger.info('consumed message', { messageId: 'm-1', kind: 'APPLIED', confirmation: 'RECEIPT_SENT' });
      });
    });
    expect(commits.total()).toBe(0);

    answer();
    await late;

    expect(commits.counts()).toEqual({ 'order.created': { applied: 1, rejected: 0 } });
  });

  it('ignores writes that are not inbox rows: another table, or a parked row', async () => {
    const commits = new UnreportedCommits();

    await commits.invocation(async () => {
      commits.committed(inboxPut('m-1', 'APPLIED'), 'other-table');
      commits.committed(parkedPut('m-2'), 'inbox');
    });

    expect(commits.total()).toBe(0);
  });

  it('hands on one line per record handled, not per parked successor drained, with its level and what it names', async () => {
    const lines: unknown[] = [];
    const logger = new UnreportedCommits().logger((line) => lines.push(line));

    logger.info('consumed message', { messageId: 'm-1' });
    logger.info('consumed parked message', { messageId: 'm-2' });
    logger.warn('message failed', { messageId: 'm-3', disposition: 'RETRY_LATER' });

    expect(lines).toEqual([
      { level: 'info', message: 'consumed message', attributes: { messageId: 'm-1' } },
      {
        level: 'warn',
        message: 'message failed',
        attributes: { messageId: 'm-3', disposition: 'RETRY_LATER' },
      },
    ]);
  });
});
