import { TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { UnreportedCommits } from '../../../infra/drill/unreported-commits.ts';

function inboxPut(messageId: string, outcome: string) {
  return new TransactWriteCommand({
    TransactItems: [{ Put: { TableName: 'inbox', Item: { messageId, topic: 'order.created', outcome } } }],
  });
}

describe('UnreportedCommits', () => {
  it('counts a row whose delivery failed at its confirm, by topic and outcome', async () => {
    const commits = new UnreportedCommits();

    await commits.invocation(async () => {
      commits.committed(inboxPut('m-1', 'APPLIED'), 'inbox');
      commits.confirming('m-1')();
      commits.committed(inboxPut('m-2', 'REJECTED_OUT_OF_STOCK'), 'inbox');
      commits.confirming('m-2')();
    });

    expect(commits.counts()).toEqual({ 'order.created': { applied: 1, rejected: 1 } });
  });

  it('counts nothing for a duplicate, or for a commit whose confirm succeeded', async () => {
    const commits = new UnreportedCommits();

    await commits.invocation(async () => {
      commits.committed(inboxPut('m-1', 'APPLIED'), 'inbox');
      commits.confirming('m-1');
      // A second copy of m-1 in the same batch: a duplicate, whose confirm fails.
      commits.confirming('m-1')();
    });

    expect(commits.total()).toBe(0);
  });

  it('keeps concurrent invocations apart: a commit is matched only with its own delivery', async () => {
    const commits = new UnreportedCommits();
    let release: () => void = () => {};
    const committed = new Promise<void>((resolve) => {
      release = resolve;
    });

    await Promise.all([
      commits.invocation(async () => {
        commits.committed(inboxPut('m-1', 'APPLIED'), 'inbox');
        release();
        await new Promise((resolve) => setTimeout(resolve, 5));
        commits.confirming('m-1');
      }),
      commits.invocation(async () => {
        await committed;
        // Another copy of m-1, a duplicate elsewhere, whose confirm fails first.
        commits.confirming('m-1')();
      }),
    ]);

    expect(commits.total()).toBe(0);
  });

  it('ignores writes that are not inbox puts', async () => {
    const commits = new UnreportedCommits();

    await commits.invocation(async () => {
      commits.committed(inboxPut('m-1', 'APPLIED'), 'other-table');
      commits.confirming('m-1')();
    });

    expect(commits.total()).toBe(0);
  });
});
