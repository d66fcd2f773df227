import { describe, expect, it } from 'vitest';
import type { RedriveReport } from '../../../shared/admin/redrive-dead-letters.ts';
import {
  formatActionResult,
  formatAge,
  formatBulkReplay,
  formatErase,
  formatMessageDetails,
  formatMessagePage,
  formatRecover,
  formatRedrive,
  formatStats,
  formatSubscriberStats,
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
      bySubscriber: [{ topic: 'order.created', ...counts(2, 3) }],
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
    // No topic has subscribers: no subscriber table, nothing said of their stacks.
    expect(text).not.toContain('SUBSCRIBER');
    expect(text).not.toContain("subscriber's stack");
  });

  it('adds a row per subscriber of a topic with subscribers, its rows without one shown as (none)', () => {
    const text = formatStats({
      at: '2026-01-01T00:00:00.000Z',
      topics: { 'order.created': counts(3, 2), 'payment.captured': counts(1, 0) },
      totals: { PENDING: 4, SENT: 0, FAILED: 2, CANCELLED: 0 },
      bySubscriber: [
        { topic: 'order.created', ...counts(1, 0) },
        { topic: 'order.created', subscriber: 'inventory', ...counts(0, 0) },
        { topic: 'order.created', subscriber: 'loyalty', ...counts(2, 2, 125) },
        { topic: 'payment.captured', ...counts(1, 0) },
      ],
      notCounted: { CONFIRMED: 'no index holds them' },
      deadLetterQueues: [],
    });
    expect(text).toMatch(/^TOPIC +SUBSCRIBER +PENDING +SENT +FAILED +CANCELLED +OLDEST PENDING/m);
    expect(text).toMatch(/^order\.created +\(none\) +1 +0 +0 +0/m);
    expect(text).toMatch(/^order\.created +inventory +0 +0 +0 +0 +0s +0s$/m);
    expect(text).toMatch(/^order\.created +loyalty +2 +0 +2 +0 +2m 05s +0s$/m);
    // A topic without subscribers is its row of the topic table only.
    expect(text).not.toMatch(/^payment\.captured +\(none\)/m);
    expect(text).toContain('outbox stats --stack <the subscriber');
  });

  it("says when only one subscriber's deliveries are counted", () => {
    const text = formatStats({
      at: '2026-01-01T00:00:00.000Z',
      topics: { 'order.created': counts(2, 2) },
      totals: { PENDING: 2, SENT: 0, FAILED: 2, CANCELLED: 0 },
      bySubscriber: [{ topic: 'order.created', subscriber: 'loyalty', ...counts(2, 2) }],
      subscriber: 'loyalty',
      notCounted: { CONFIRMED: 'no index holds them' },
      deadLetterQueues: [],
    });
    expect(text.split('\n')[0]).toBe('outbox at 2026-01-01T00:00:00.000Z (the deliveries to loyalty only)');
  });
});

/** Counts of a topic or a subscriber's deliveries: PENDING, FAILED, and the oldest PENDING's age. */
function counts(pending: number, failed: number, oldestPendingAgeSeconds = 0) {
  return {
    PENDING: pending,
    SENT: 0,
    FAILED: failed,
    CANCELLED: 0,
    oldestPendingAgeSeconds,
    oldestSentUnconfirmedAgeSeconds: 0,
  };
}

describe('formatSubscriberStats', () => {
  it("shows a subscriber's queue, dead letters and inbox, and where its deliveries' statuses are", () => {
    const text = formatSubscriberStats({
      at: '2026-01-01T00:00:00.000Z',
      subscriber: 'inventory',
      queues: [
        { queueUrl: 'https://q/inv', queueName: 'inv', topics: ['order.created'], messages: 3, inFlight: 1 },
      ],
      deadLetterQueues: [
        {
          queueUrl: 'https://q/inv-dlq',
          queueName: 'inv-dlq',
          topics: ['order.created'],
          messages: 2,
          inFlight: 0,
        },
      ],
      inboxes: [{ table: 'InventoryInbox', topics: ['order.created'] }],
    });
    expect(text.split('\n')[0]).toBe('subscriber inventory at 2026-01-01T00:00:00.000Z');
    expect(text).toMatch(/^inv +order\.created +3 +1$/m);
    expect(text).toMatch(/^inv-dlq +order\.created +2 +0$/m);
    expect(text).toMatch(/^InventoryInbox +order\.created$/m);
    expect(text).toContain("outbox stats --subscriber inventory on the producer's stack");
  });
});

const summary = {
  topic: 'order.created',
  aggregateId: 'o-1',
  status: 'FAILED' as const,
  attempts: 4,
  resends: 0,
  createdAt: '2026-01-01T00:00:00.000Z',
  updatedAt: '2026-01-01T00:01:00.000Z',
};

describe('formatMessagePage', () => {
  it("lists a delivery by its message's own id with its subscriber", () => {
    const text = formatMessagePage({
      items: [
        { ...summary, messageId: '01J0000000000000000000000A', subscriber: 'loyalty', lastError: 'down' },
        { ...summary, messageId: '01J0000000000000000000000B' },
      ],
    });
    expect(text).toMatch(/^MESSAGE ID +SUBSCRIBER +STATUS +TOPIC/m);
    expect(text).toMatch(/^01J0000000000000000000000A +loyalty +FAILED +order\.created +o-1 +4 .* down$/m);
    expect(text).toMatch(/^01J0000000000000000000000B +\(none\) +FAILED/m);
  });

  it('has no subscriber column when nothing listed has a subscriber', () => {
    const text = formatMessagePage({ items: [{ ...summary, messageId: '01J0000000000000000000000B' }] });
    expect(text).not.toContain('SUBSCRIBER');
    expect(text).toMatch(/^01J0000000000000000000000B +FAILED +order\.created +o-1/m);
  });
});

describe('formatMessageDetails', () => {
  it("shows the derived status, each delivery, each delivery's history and the audit's subscriber", () => {
    const text = formatMessageDetails({
      message: {
        messageId: '01J0000000000000000000000A',
        status: 'FAILED',
        topic: 'order.created',
        aggregateId: 'o-1',
        createdAt: '2026-01-01T00:00:00.000Z',
        payload: { orderId: 'o-1' },
      },
      deliveries: [
        {
          subscriber: 'inventory',
          delivery: {
            status: 'CONFIRMED',
            attempts: 1,
            outcome: 'APPLIED',
            sentAt: '2026-01-01T00:00:01.000Z',
            confirmedAt: '2026-01-01T00:00:02.000Z',
            updatedAt: '2026-01-01T00:00:02.000Z',
          },
          history: [
            { at: '2026-01-01T00:00:01.000Z', event: 'SENT', from: 'PENDING', to: 'SENT', by: 'relay' },
          ],
        },
        {
          subscriber: 'loyalty',
          delivery: {
            status: 'FAILED',
            attempts: 4,
            updatedAt: '2026-01-01T00:05:00.000Z',
            lastError: 'down',
          },
          history: [],
        },
      ],
      history: [],
      audit: [
        {
          subject: 'message:01J0000000000000000000000A',
          actionId: '01J0000000000000000000000Z',
          at: '2026-01-01T00:06:00.000Z',
          action: 'REPLAY',
          actor: 'local:ana',
          reason: 'loyalty is back',
          details: { subscriber: 'loyalty' },
        },
      ],
    });
    expect(text).toMatch(/^status +FAILED \(from its 2 deliveries\)$/m);
    expect(text).toMatch(/^SUBSCRIBER +STATUS +ATTEMPTS +OUTCOME +SENT +CONFIRMED +UPDATED +LAST ERROR$/m);
    expect(text).toMatch(
      /^inventory +CONFIRMED +1 +APPLIED +2026-01-01T00:00:01\.000Z +2026-01-01T00:00:02\.000Z +2026-01-01T00:00:02\.000Z$/m,
    );
    expect(text).toMatch(/^loyalty +FAILED +4 +2026-01-01T00:05:00\.000Z +down$/m);
    expect(text).toContain('history of the delivery to inventory\nAT');
    expect(text).toContain('history of the delivery to loyalty\n  none');
    expect(text).toMatch(/^2026-01-01T00:06:00\.000Z +REPLAY +local:ana +loyalty +loyalty is back$/m);
  });
});

describe('formatActionResult', () => {
  const base = {
    messageId: '01J0000000000000000000000A',
    action: 'REPLAY' as const,
    topic: 'order.created',
    aggregateId: 'o-1',
    at: '2026-01-01T00:06:00.000Z',
    actionId: '01J0000000000000000000000Z',
  };

  it("names one subscriber's delivery", () => {
    expect(formatActionResult({ ...base, subscriber: 'loyalty', from: 'FAILED', to: 'PENDING' })).toBe(
      "replayed loyalty's delivery of 01J0000000000000000000000A (order.created, o-1): FAILED → PENDING at 2026-01-01T00:06:00.000Z, audit 01J0000000000000000000000Z",
    );
  });

  it('says what became of each delivery, and that a CONFIRMED one is left as it is', () => {
    const text = formatActionResult({
      ...base,
      from: 'FAILED',
      to: 'PENDING',
      deliveries: [
        { subscriber: 'inventory', from: 'CONFIRMED', unchanged: 'CONFIRMED: it is never sent again' },
        { subscriber: 'loyalty', from: 'FAILED', to: 'PENDING' },
      ],
    });
    expect(text.split('\n')).toEqual([
      'replayed 01J0000000000000000000000A (order.created, o-1): FAILED → PENDING at 2026-01-01T00:06:00.000Z, audit 01J0000000000000000000000Z',
      '  inventory  left as it is: CONFIRMED: it is never sent again',
      '  loyalty    FAILED → PENDING',
    ]);
  });
});

describe('formatBulkReplay', () => {
  it('lists the deliveries a dry run would replay with their subscribers', () => {
    const text = formatBulkReplay({
      dryRun: true,
      total: 1,
      done: 0,
      replayed: 0,
      skipped: 0,
      failed: 0,
      problems: [],
      wouldReplay: [
        {
          messageId: '01J0000000000000000000000A',
          subscriber: 'loyalty',
          status: 'FAILED',
          createdAt: '2026-01-01T00:00:00.000Z',
        },
      ],
    });
    expect(text).toMatch(/^01J0000000000000000000000A +loyalty +FAILED +2026-01-01T00:00:00\.000Z$/m);
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
