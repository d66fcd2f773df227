import { describe, expect, it } from 'vitest';
import type { DrillSnapshot } from '../../../infra/dev/drill/drill-snapshot.ts';
import { checkInvariants } from '../../../infra/dev/drill/invariants.ts';
import { NO_OPERATOR_ACTIONS } from '../../../infra/dev/drill/operator-actions.ts';
import { deadLetterCounts } from '../../../infra/dev/drill/operator-invariants.ts';
import { NO_RECEIPT_FAULTS } from '../../../infra/dev/drill/receipt-faults.ts';
import {
  cancelledOrder,
  deliveryRow,
  inboxRow,
  placedOrder,
  WRITTEN_AT,
  withRow,
  withSubscriber,
} from './drill-snapshot-fixture.ts';

const invariant = (snapshot: DrillSnapshot, prefix: string) =>
  checkInvariants(snapshot).find((result) => result.name.startsWith(prefix));
const failures = (snapshot: DrillSnapshot) =>
  checkInvariants(snapshot)
    .filter((result) => !result.ok)
    .map((result) => `${result.name.slice(0, 40)}: ${result.detail}`);
const deadLetter = (orderId: string, attributes: Record<string, string>) => ({
  body: JSON.stringify({ messageId: 'm-9', aggregateId: orderId }),
  attributes,
});

describe('checkInvariants', () => {
  it('passes an order applied once at each subscriber, each delivery confirmed once by its own receipt', () => {
    expect(failures(placedOrder())).toEqual([]);
    expect(invariant(placedOrder(), 'every acknowledged order')?.detail).toBe(
      '1 orders (0 cancelled), 1 messages, 2 deliveries (one to each of inventory and loyalty)',
    );
    expect(invariant(placedOrder(), 'points awarded once')?.detail).toBe(
      "1 orders awarded (0 revoked), 1 customers' balances reconcile, none negative",
    );
  });

  it('passes an order cancelled after both applied it: the stock back, the points revoked, the cursors at 2', () => {
    expect(failures(cancelledOrder())).toEqual([]);
    expect(invariant(cancelledOrder(), 'applied in order')?.detail).toBe(
      'inventory: 1 RELEASED after APPLIED, 0 NOTHING_TO_RELEASE after REJECTED_OUT_OF_STOCK; ' +
        'loyalty: 1 REVOKED after AWARDED, 0 NOTHING_TO_REVOKE after ALREADY_AWARDED',
    );
  });

  it('catches an effect applied twice: the stock moved twice, the points awarded twice', () => {
    expect(invariant({ ...placedOrder(), inventory: [{ sku: 'A', available: 6 }] }, 'stock moved')?.ok).toBe(
      false,
    );
    const twice = { ...placedOrder(), points: [{ pk: 'customer#c-1', customerId: 'c-1', points: 40 }] };
    expect(invariant(twice, 'points awarded once')?.detail).toContain(
      'customer c-1 has 40 points, their unrevoked awards 20',
    );
  });

  it('catches a delivery left PENDING at one subscriber, and a FAILED one that was not poisoned', () => {
    const pending = withRow(placedOrder(), 'm-1#loyalty', { status: 'PENDING' });
    expect(invariant(pending, 'no delivery lost')?.detail).toContain('m-1#loyalty is PENDING');
    const failed = withRow(placedOrder(), 'm-1#inventory', { status: 'FAILED', lastError: 'x' });
    expect(invariant(failed, 'no delivery lost')?.ok).toBe(false);
  });

  it('catches a message written with a delivery to one subscriber only, and a row that is no delivery', () => {
    const oneDelivery = {
      ...placedOrder(),
      outbox: placedOrder().outbox.filter((row) => row.messageId !== 'm-1#loyalty'),
    };
    expect(invariant(oneDelivery, 'every acknowledged order')?.detail).toContain(
      "order o-1's order.created has no delivery to loyalty",
    );
    const stray = {
      ...placedOrder(),
      outbox: [...placedOrder().outbox, { messageId: 'm-9', topic: 'order.created' }],
    };
    expect(invariant(stray, 'every acknowledged order')?.detail).toContain("m-9 is no subscriber's delivery");
  });

  it("derives a message's status from its deliveries: CONFIRMED at every subscriber, or only at some", () => {
    expect(invariant(placedOrder(), "a message's status")?.detail).toBe(
      "1 messages CONFIRMED at every subscriber, 0 at some (the others' deliveries FAILED, CANCELLED or stalled)",
    );
    const withdrawnAtLoyalty = {
      ...withSubscriber(withRow(placedOrder(), 'm-1#loyalty', { status: 'CANCELLED' }), 'loyalty', {
        inbox: [],
        cursors: [],
      }),
      points: [],
      awards: [],
      operator: { ...NO_OPERATOR_ACTIONS, cancelled: new Set(['m-1#loyalty']) },
    };
    expect(failures(withdrawnAtLoyalty)).toEqual([]);
    expect(invariant(withdrawnAtLoyalty, "a message's status")?.detail).toMatch(
      /^0 messages CONFIRMED at every subscriber, 1 at some/,
    );
  });

  it("catches an inbox row keyed for another subscriber, and a delivery confirmed without its subscriber's inbox row", () => {
    const misfiled = withSubscriber(placedOrder(), 'inventory', {
      inbox: [...placedOrder().subscribers.inventory.inbox, { messageId: 'm-1#loyalty', outcome: 'AWARDED' }],
    });
    expect(invariant(misfiled, 'each delivery applied once')?.detail).toContain(
      "inventory's inbox row m-1#loyalty is not keyed <messageId>#inventory",
    );
    const unapplied = withSubscriber(placedOrder(), 'loyalty', { inbox: [] });
    expect(invariant(unapplied, 'each delivery applied once')?.detail).toContain(
      'm-1#loyalty confirmed without an inbox row at loyalty',
    );
  });

  it('catches a cancel applied at one subscriber before its create there, and a cursor behind at one', () => {
    const early = withSubscriber(cancelledOrder(), 'loyalty', {
      inbox: [
        inboxRow('loyalty', { messageId: 'm-1', topic: 'order.created', seq: 1, outcome: 'AWARDED' }),
        {
          ...inboxRow('loyalty', { messageId: 'm-2', topic: 'order.cancelled', seq: 2, outcome: 'REVOKED' }),
          processedAt: WRITTEN_AT,
        },
      ],
    });
    expect(invariant(early, 'applied in order')?.detail).toContain(
      'order o-1 at loyalty: cancel processed at',
    );
    const behind = withSubscriber(cancelledOrder(), 'loyalty', {
      cursors: [{ messageId: 'cursor#order#o-1#loyalty', lastSeq: 1 }],
    });
    expect(invariant(behind, "each subscriber's cursor")?.detail).toContain(
      'cursor#order#o-1#loyalty: lastSeq 1, 2 processed',
    );
  });

  it('catches points revoked without a cancel applied, an award nobody applied, and a balance below zero', () => {
    const revoked = { ...placedOrder(), awards: [{ ...placedOrder().awards[0], revokedAt: WRITTEN_AT }] };
    expect(invariant(revoked, 'points awarded once')?.detail).toContain('its award revoked');
    const unapplied = withSubscriber(placedOrder(), 'loyalty', { inbox: [] });
    expect(invariant(unapplied, 'points awarded once')?.detail).toContain('yet it has an award row');
    const negative = {
      ...cancelledOrder(),
      points: [{ pk: 'customer#c-1', customerId: 'c-1', points: -20 }],
    };
    expect(invariant(negative, 'points awarded once')?.ok).toBe(false);
  });

  it('counts a rogue message neither as an order message nor as a lost one, and catches one not FAILED at a subscriber', () => {
    expect(invariant(placedOrder(), 'every rogue message')?.detail).toBe(
      '1 messages, 2 deliveries FAILED (set)',
    );
    const pending = withRow(placedOrder(), 'r-1#loyalty', { status: 'PENDING', lastError: undefined });
    expect(invariant(pending, 'every rogue message')?.detail).toContain(
      'rogue set delivery r-1#loyalty is PENDING',
    );
    const missing = {
      ...placedOrder(),
      outbox: placedOrder().outbox.filter((row) => row.messageId !== 'r-1#inventory'),
    };
    expect(invariant(missing, 'every rogue message')?.detail).toContain('has no delivery to inventory');
  });
});

describe('checkInvariants on the receipts', () => {
  const name = 'receipts confirm each delivery once';

  it("catches a delivery confirmed twice, by the other subscriber's receipt, or with an outcome it was not applied with", () => {
    const row = placedOrder().outbox[0] ?? {};
    const history = row.history as Record<string, unknown>[];
    const twice = withRow(placedOrder(), 'm-1#inventory', { history: [...history, history[1]] });
    expect(invariant(twice, name)?.detail).toContain('m-1#inventory was confirmed 2 times');
    const foreign = withRow(placedOrder(), 'm-1#inventory', {
      history: [history[0], { ...history[1], by: 'receipt:loyalty' }],
    });
    expect(invariant(foreign, name)?.detail).toContain("not by inventory's receipt");
    const otherOutcome = withRow(placedOrder(), 'm-1#inventory', { outcome: 'REJECTED_OUT_OF_STOCK' });
    expect(invariant(otherOutcome, name)?.detail).toContain(
      'm-1#inventory confirmed with REJECTED_OUT_OF_STOCK, applied with APPLIED',
    );
    const early = withRow(placedOrder(), 'm-1#inventory', { confirmedAt: WRITTEN_AT });
    expect(invariant(early, name)?.detail).toContain('before it was applied');
  });

  it('accepts a lost receipt whose delivery a later receipt confirmed, and catches one whose delivery stayed SENT', () => {
    const receipts = { ...NO_RECEIPT_FAULTS, sent: 3, bodies: 3, lost: new Map([['m-1#loyalty', 1]]) };
    const recovered = withRow({ ...placedOrder(), receipts }, 'm-1#loyalty', { resends: 1 });
    expect(invariant(recovered, name)).toMatchObject({
      ok: true,
      detail: expect.stringContaining(
        '1 lost (their 1 deliveries confirmed by a later receipt, after 1 resends',
      ),
    });
    const stuck = withSubscriber(withRow(recovered, 'm-1#loyalty', { status: 'SENT' }), 'loyalty', {});
    expect(invariant(stuck, name)?.detail).toContain('m-1#loyalty lost its receipt and is SENT');
  });
});

describe('checkInvariants on the stopped subscriber', () => {
  /** The order written while loyalty was stopped, loyalty applying it after its return. */
  const duringStop = (): DrillSnapshot => {
    const placed = placedOrder();
    return {
      ...placed,
      stop: {
        ...placed.stop,
        stoppedAt: Date.parse(WRITTEN_AT) - 1_000,
        plannedRestartAt: Date.parse(WRITTEN_AT) + 1_000,
        restartedAt: Date.parse(WRITTEN_AT) + 1_500,
        awaited: 1,
      },
    };
  };

  it('passes a stop in which loyalty applied nothing, and caught up after', () => {
    expect(failures(duringStop())).toEqual([]);
    expect(invariant(duringStop(), 'the stopped subscriber')?.detail).toContain(
      'loyalty stopped 3 s (planned 2 s): 1 of its deliveries written meanwhile',
    );
  });

  it('catches a delivery loyalty applied while it was stopped', () => {
    const applied = withSubscriber(duringStop(), 'loyalty', {
      inbox: [{ ...(placedOrder().subscribers.loyalty.inbox[0] ?? {}), processedAt: WRITTEN_AT }],
    });
    expect(invariant(applied, 'the stopped subscriber')?.detail).toContain(
      'm-1#loyalty applied at 2030-01-01T00:00:00.000Z, while loyalty was stopped',
    );
  });

  it("accepts inventory's deliveries open at loyalty's return for a delay of their own, and catches one that waited", () => {
    const open = (ownDelay?: string) => ({
      ...duringStop(),
      stop: {
        ...duringStop().stop,
        openAtRestart: [
          { key: 'm-1#inventory', status: 'SENT', ...(ownDelay === undefined ? {} : { ownDelay }) },
        ],
      },
    });
    expect(invariant(open('its receipt lost'), 'the stop held none')).toMatchObject({
      ok: true,
      detail: expect.stringContaining(
        '1 open at its return, each for a delay of its own (1 its receipt lost)',
      ),
    });
    expect(invariant(open(), 'the stop held none')?.detail).toContain(
      'm-1#inventory was SENT, sent once and not retried, when loyalty started again',
    );
  });
});

describe('checkInvariants on a poisoned aggregate, at each subscriber', () => {
  /** Order o-1 created with its create alone poisoned, then cancelled: the cancel parked at inventory, held at loyalty. */
  const stalled = (): DrillSnapshot => {
    const cancelled = cancelledOrder();
    const poisoned = {
      status: 'FAILED',
      lastError: 'InvalidMessageContents: poisoned by the drill',
      outcome: undefined,
    };
    let snapshot = withRow(withRow(cancelled, 'm-1#inventory', poisoned), 'm-1#loyalty', poisoned);
    snapshot = withRow(withRow(snapshot, 'm-2#inventory', { status: 'SENT' }), 'm-2#loyalty', {
      status: 'PENDING',
    });
    snapshot = withSubscriber(snapshot, 'inventory', {
      inbox: [],
      cursors: [],
      parked: [{ messageId: 'parked#order#o-1#inventory#2', parkedMessageId: 'm-2', seq: 2 }],
    });
    snapshot = withSubscriber(snapshot, 'loyalty', { inbox: [], cursors: [] });
    return {
      ...snapshot,
      inventory: [{ sku: 'A', available: 10 }],
      points: [],
      awards: [],
      stalledOrders: new Set(['o-1']),
    };
  };

  it('accepts its cancel parked behind the FAILED create at one subscriber and held PENDING at the other', () => {
    expect(failures(stalled())).toEqual([]);
    expect(invariant(stalled(), 'no delivery lost')?.detail).toContain(
      'inventory: 0 CONFIRMED, 1 FAILED (poisoned), 0 CANCELLED (operator), 1 stalled behind a FAILED seq 1 as designed (1 parked, 0 held PENDING)',
    );
  });

  it('catches its cancel SENT but not parked at a subscriber, and its create confirmed', () => {
    const unparked = withSubscriber(stalled(), 'inventory', { parked: [] });
    expect(invariant(unparked, 'no delivery lost')?.detail).toContain(
      'm-2#inventory is SENT behind FAILED seq 1 but not parked',
    );
    const confirmed = withRow(stalled(), 'm-1#loyalty', { status: 'CONFIRMED' });
    expect(invariant(confirmed, 'no delivery lost')?.detail).toContain('poisoned m-1#loyalty was confirmed');
  });

  it('passes a gap skipped at inventory and the create replayed at loyalty: the cancel applied at both', () => {
    let snapshot = withRow(stalled(), 'm-1#inventory', { status: 'CANCELLED', skippedAt: WRITTEN_AT });
    snapshot = withRow(
      snapshot,
      'm-2#inventory',
      deliveryRow('inventory', {
        messageId: 'm-2',
        topic: 'order.cancelled',
        seq: 2,
        outcome: 'NOTHING_TO_RELEASE',
      }),
    );
    snapshot = withRow(snapshot, 'm-1#loyalty', placedOrder().outbox[1] ?? {});
    snapshot = withRow(snapshot, 'm-2#loyalty', cancelledOrder().outbox[3] ?? {});
    snapshot = withSubscriber(snapshot, 'inventory', {
      inbox: [
        inboxRow('inventory', {
          messageId: 'm-2',
          topic: 'order.cancelled',
          seq: 2,
          outcome: 'NOTHING_TO_RELEASE',
        }),
      ],
      cursors: [{ messageId: 'cursor#order#o-1#inventory', lastSeq: 2 }],
      parked: [],
    });
    snapshot = withSubscriber(snapshot, 'loyalty', cancelledOrder().subscribers.loyalty);
    const skippedAndReplayed: DrillSnapshot = {
      ...snapshot,
      points: cancelledOrder().points,
      awards: cancelledOrder().awards,
      operator: {
        ...NO_OPERATOR_ACTIONS,
        skipped: new Set(['o-1#inventory']),
        replayed: new Set(['m-1#loyalty']),
      },
    };

    expect(failures(skippedAndReplayed)).toEqual([]);
    expect(invariant(skippedAndReplayed, 'a skipped gap')?.detail).toBe(
      "1 gap(s) skipped (inventory), each order's cancel then applied",
    );
    const waiting = withRow(skippedAndReplayed, 'm-2#inventory', { status: 'PENDING' });
    expect(invariant(waiting, 'a skipped gap')?.detail).toContain(
      'order o-1 at inventory: its cancel is PENDING',
    );
  });
});

describe('checkInvariants on dead letters and operator actions', () => {
  it("catches a dead letter at a subscriber of an order that lost to contention, or that its queue's redrive policy moved", () => {
    const contention = deadLetter('o-1', {
      dead_letter_reason: 'MAX_RECEIVES',
      last_error: 'TransactionConflictError: transaction conflicted with a concurrent write; retry',
    });
    const lost = withSubscriber(placedOrder(), 'loyalty', { deadLetters: [contention] });
    expect(invariant(lost, 'contention dead-letters nothing')?.detail).toContain(
      'loyalty: order o-1 dead-lettered (MAX_RECEIVES: TransactionConflictError',
    );
    const redriven = { ...deadLetter('o-1', { message_id: 'm-9', topic: 'order.created' }), receiveCount: 6 };
    const moved = withSubscriber(placedOrder(), 'inventory', { deadLetters: [redriven] });
    expect(invariant(moved, 'contention dead-letters nothing')?.detail).toContain(
      "inventory: order o-1 moved to the DLQ by the queue's redrive policy after 6 receives (maxReceiveCount 5)",
    );
    expect(deadLetterCounts([redriven])).toEqual({ byConsumer: 0, byRedrivePolicy: 1 });
  });

  it('accepts a poisoned order in a dead-letter queue, and one dead-lettered after injected faults on every receive', () => {
    const snapshot = withSubscriber({ ...placedOrder(), poisonedOrders: new Set(['o-2']) }, 'inventory', {
      deadLetters: [
        deadLetter('o-2', { dead_letter_reason: 'POISON', last_error: 'PoisonMessageError: unreadable' }),
        deadLetter('o-1', {
          dead_letter_reason: 'MAX_RECEIVES',
          last_error: 'InjectedFault: injected consumerTransientError: downstream unavailable',
        }),
      ],
    });
    expect(invariant(snapshot, 'contention dead-letters nothing')).toMatchObject({
      ok: true,
      detail: expect.stringContaining('inventory: 2 dead letters, 1 after injected faults on every receive'),
    });
  });

  it('accepts a delivery withdrawn at one subscriber, and catches a CANCELLED one nobody cancelled', () => {
    const withdrawn = {
      ...withSubscriber(withRow(placedOrder(), 'm-1#inventory', { status: 'CANCELLED' }), 'inventory', {
        inbox: [],
        cursors: [],
      }),
      inventory: [{ sku: 'A', available: 10 }],
      reservations: [],
    };
    expect(
      failures({ ...withdrawn, operator: { ...NO_OPERATOR_ACTIONS, cancelled: new Set(['m-1#inventory']) } }),
    ).toEqual([]);
    expect(invariant(withdrawn, 'no delivery lost')?.detail).toContain('m-1#inventory is CANCELLED');
  });

  it('accepts an erased order whose erase each subscriber confirmed, and catches one still in the outbox, one without its inbox rows, an erase unanswered', () => {
    const erasedRows = placedOrder().outbox.filter((row) => row.aggregateId === 'o-1');
    const eraseRows = (['inventory', 'loyalty'] as const).map((subscriber) => ({
      ...deliveryRow(subscriber, { messageId: 'e-1', topic: 'outbox.erase', seq: 0, outcome: 'ERASED' }),
      orderKey: undefined,
      seq: undefined,
    }));
    let erased: DrillSnapshot = {
      ...placedOrder(),
      outbox: [...placedOrder().outbox, ...eraseRows],
      operator: {
        ...NO_OPERATOR_ACTIONS,
        erased: erasedRows,
        controls: [
          { messageId: 'e-1', subscriber: 'inventory', orderId: 'o-1', outcome: 'ERASED' },
          { messageId: 'e-1', subscriber: 'loyalty', orderId: 'o-1', outcome: 'ERASED' },
        ],
      },
    };
    for (const subscriber of ['inventory', 'loyalty'] as const) {
      erased = withSubscriber(erased, subscriber, {
        inbox: [
          ...erased.subscribers[subscriber].inbox,
          {
            messageId: `e-1#${subscriber}`,
            topic: 'outbox.erase',
            outcome: 'ERASED',
            processedAt: WRITTEN_AT,
          },
        ],
      });
    }
    const name = 'operator actions mid-run';
    expect(failures(erased)).toEqual([]);
    expect(invariant({ ...erased, erasedLeft: ['m-1#inventory'] }, name)?.detail).toContain(
      'erased m-1#inventory is still in the outbox',
    );
    expect(invariant(withSubscriber(erased, 'loyalty', { inbox: [] }), name)?.detail).toContain(
      'erased m-1#loyalty lost its inbox row at loyalty',
    );
    expect(invariant(withRow(erased, 'e-1#loyalty', { status: 'SENT' }), name)?.detail).toContain(
      "the operator's ERASED message e-1#loyalty is SENT",
    );
  });

  it('catches a replayed delivery that was not applied, and a problem the operator met', () => {
    const replayed = {
      ...placedOrder(),
      operator: { ...NO_OPERATOR_ACTIONS, replayed: new Set(['m-1#loyalty']) },
    };
    expect(failures(replayed)).toEqual([]);
    const unapplied = withRow(replayed, 'm-1#loyalty', { status: 'FAILED', lastError: 'x' });
    expect(invariant(unapplied, 'operator actions')?.detail).toContain(
      'replayed m-1#loyalty is FAILED, not CONFIRMED and applied',
    );
    const problem = {
      ...placedOrder(),
      operator: { ...NO_OPERATOR_ACTIONS, problems: ['skip of m-9 never became due'] },
    };
    expect(invariant(problem, 'operator actions')?.ok).toBe(false);
  });
});
