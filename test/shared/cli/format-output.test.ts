import { describe, expect, it } from 'vitest';
import type { RedriveReport } from '../../../shared/admin/redrive-dead-letters.ts';
import {
  formatAge,
  formatErase,
  formatRecover,
  formatRedrive,
  formatStats,
  formatTable,
} from '../../../shared/cli/format-output.ts';
import { bar } from '../../../shared/cli/progress.ts';
import type { RecoverReport } from '../../../shared/cli/recover.ts';

describe('formatTable', () => {
  it('aligns every column to its widest cell and trims trailing spaces', () => {
    expect(
      formatTable(
        ['A', 'LONG HEADER'],
        [
          ['wide cell', 'x'],
          ['b', ''],
        ],
      ),
    ).toBe(['A          LONG HEADER', 'wide cell  x', 'b'].join('\n'));
  });
});

describe('formatAge', () => {
  it.each([
    [0, '0s'],
    [59, '59s'],
    [61, '1m 01s'],
    [3_600 + 120, '1h 02m'],
    [3 * 86_400 + 4 * 3_600, '3d 4h'],
  ])('shows %i seconds as %s', (seconds, text) => {
    expect(formatAge(seconds)).toBe(text);
  });
});

describe('bar', () => {
  it('fills in proportion, and fully for no work', () => {
    expect(bar(1, 2)).toBe(`[${'#'.repeat(15)}${'-'.repeat(15)}]`);
    expect(bar(0, 0)).toBe(`[${'#'.repeat(30)}]`);
  });
});

describe('formatStats', () => {
  it('shows a row per topic, the totals, and each DLQ depth', () => {
    const text = formatStats({
      at: '2026-01-01T00:00:00.000Z',
      topics: {
        'order.created': {
          PENDING: 2,
          SENT: 1,
          FAILED: 3,
          CANCELLED: 0,
          oldestPendingAgeSeconds: 75,
          oldestSentUnconfirmedAgeSeconds: 0,
        },
      },
      totals: { PENDING: 2, SENT: 1, FAILED: 3, CANCELLED: 0 },
      notCounted: { CONFIRMED: 'no index holds them' },
      deadLetterQueues: [
        {
          queueUrl: 'https://q/dlq-1',
          queueName: 'dlq-1',
          topics: ['order.created'],
          messages: 4,
          inFlight: 1,
        },
      ],
    });
    expect(text).toMatch(/^order\.created +2 +1 +3 +0 +1m 15s +0s$/m);
    expect(text).toMatch(/^total +2 +1 +3 +0$/m);
    expect(text).toMatch(/^dlq-1 +order\.created +4 +1$/m);
    expect(text).toContain('CONFIRMED is not counted: no index holds them');
  });
});

describe('formatRedrive', () => {
  const dlq = 'https://sqs.eu-west-1.amazonaws.com/123456789012/order-events-dlq';
  // One dead-letter queue: the report's totals are that queue's counts.
  const counts = {
    examined: 2,
    matched: 2,
    moved: 0,
    resumed: 0,
    left: 0,
    causes: { MAX_RECEIVES: 1, REDRIVE_POLICY: 1 },
  };
  const dryRun: RedriveReport = {
    dryRun: true,
    ...counts,
    queues: [
      {
        deadLetterQueueUrl: dlq,
        sourceQueueUrl: dlq.replace('-dlq', ''),
        ...counts,
        wouldMove: [
          {
            sqsMessageId: 's-1',
            messageId: 'm-1',
            topic: 'order.created',
            cause: 'MAX_RECEIVES',
            receives: 5,
          },
          {
            sqsMessageId: 's-2',
            messageId: 'm-2',
            topic: 'order.created',
            cause: 'REDRIVE_POLICY',
            receives: 6,
          },
        ],
      },
    ],
  };

  it("names each dead letter's cause and receives, and says what a redrive-policy one means", () => {
    const text = formatRedrive(dryRun);

    expect(text).toContain('by cause: 1 MAX_RECEIVES, 1 REDRIVE_POLICY');
    expect(text).toContain("REDRIVE_POLICY: moved by the queue's redrive policy, without a reason");
    expect(text).toMatch(/CAUSE\s+RECEIVES/);
    expect(text).toMatch(/s-2\s+m-2\s+order\.created\s+REDRIVE_POLICY\s+6/);
  });

  it('says nothing of the redrive policy when every dead letter carries its reason', () => {
    const text = formatRedrive({ ...dryRun, causes: { POISON: 2 } });

    expect(text).toContain('by cause: 2 POISON');
    expect(text).not.toContain('redrive policy');
  });
});

describe('formatRecover', () => {
  const base: RecoverReport = {
    topic: 'order.created',
    outcome: 'UNRESOLVED',
    health: { checked: false, healthy: true, detail: 'no health hook given (--health <module>): skipped' },
    wait: { tracked: 2, confirmed: 1, waitedSeconds: 300, timedOut: true },
    unresolved: {
      messages: [{ messageId: 'm-2', status: 'PENDING', step: 'redrive' }],
      failed: 1,
      deadLetterQueues: [
        {
          queueUrl: 'https://q/dlq-1',
          queueName: 'dlq-1',
          topics: ['order.created'],
          messages: 2,
          inFlight: 0,
        },
      ],
    },
  };

  it('lists each step and everything that remains', () => {
    const text = formatRecover(base);
    expect(text).toContain('1. downstream  not checked: no health hook given');
    expect(text).toContain('4. wait        1 of 2 CONFIRMED after 300s (gave up waiting)');
    expect(text).toContain('5. result      UNRESOLVED:');
    expect(text).toContain('message m-2 is PENDING (redrive)');
    expect(text).toContain('1 FAILED message(s) of the topic');
    expect(text).toContain('2 message(s) in dead-letter queue dlq-1');
  });

  it('stops after the health check when the downstream is unhealthy', () => {
    const text = formatRecover({
      ...base,
      outcome: 'UNHEALTHY',
      health: { checked: true, healthy: false, detail: 'inventory table is DELETING' },
    });
    expect(text).toContain('1. downstream  UNHEALTHY: inventory table is DELETING');
    expect(text).toContain('nothing was replayed or moved');
    expect(text).not.toContain('2. replay');
  });
});

describe('formatErase', () => {
  it('names each subscriber sent an erase, and where its outcome will show', () => {
    const text = formatErase({
      aggregateId: 'order-7',
      messagesDeleted: 2,
      parkedRowsDeleted: 0,
      claimCheckObjectsDeleted: 0,
      claimCheckObjectsNotDeleted: [],
      skippedInFlight: [],
      erasesSent: [
        { subscriber: 'inventory', messageId: 'c-1', topic: 'outbox.erase' },
        { subscriber: 'loyalty', messageId: 'c-2', topic: 'outbox.erase' },
      ],
      actionId: 'a-1',
    });

    expect(text.split('\n').slice(1)).toEqual([
      '  subscriber inventory: sent outbox.erase c-1; its consumer deletes its parked copies, and its receipt confirms it ERASED (show c-1#inventory)',
      '  subscriber loyalty: sent outbox.erase c-2; its consumer deletes its parked copies, and its receipt confirms it ERASED (show c-2#loyalty)',
    ]);
  });
});
