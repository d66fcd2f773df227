import { describe, expect, it } from 'vitest';
import {
  checkInvariants,
  type DrillSnapshot,
  deadLetterCounts,
} from '../../../infra/dev/drill/invariants.ts';
import { NO_OPERATOR_ACTIONS } from '../../../infra/dev/drill/operator-actions.ts';

const rogueId = '01JROGUE00000000000000000A';
const created = {
  messageId: 'm-1',
  aggregateId: 'o-1',
  topic: 'order.created',
  orderKey: 'order#o-1',
  seq: 1,
  status: 'CONFIRMED',
};
const cancel = {
  messageId: 'm-2',
  aggregateId: 'o-1',
  topic: 'order.cancelled',
  orderKey: 'order#o-1',
  seq: 2,
  status: 'CONFIRMED',
};
const rogue = {
  messageId: rogueId,
  aggregateId: 'rogue-set',
  status: 'FAILED',
  lastError: 'cannot be sent as stored: InvalidMessageError: payload.tags: a Set is not plain JSON',
};
const createdRow = {
  messageId: 'm-1',
  topic: 'order.created',
  outcome: 'APPLIED',
  processedAt: '2030-01-01T00:00:01.000Z',
};
const cancelRow = {
  messageId: 'm-2',
  topic: 'order.cancelled',
  outcome: 'RELEASED',
  processedAt: '2030-01-01T00:00:02.000Z',
};

/** One order placed and applied: 2 units of A taken, its reservation held, its cursor at seq 1. */
const base: DrillSnapshot = {
  orders: [{ orderId: 'o-1', status: 'PLACED', items: [{ sku: 'A', quantity: 2 }] }],
  outbox: [created, rogue],
  inbox: [createdRow],
  cursors: [{ messageId: 'cursor#order#o-1', lastSeq: 1 }],
  parked: [],
  inventory: [{ sku: 'A', available: 8 }],
  reservations: [{ sku: 'reservation#o-1', orderId: 'o-1' }],
  initialStock: new Map([['A', 10]]),
  poisonedOrders: new Set<string>(),
  stalledOrders: new Set<string>(),
  acknowledgedOrders: new Set(['o-1']),
  cancelledOrders: new Set<string>(),
  hotOrders: new Set(['o-1']),
  rogueMessages: new Map([[rogueId, { kind: 'set', reason: /payload\.tags: a Set is not plain JSON/ }]]),
  deadLetters: [],
  maxReceiveCount: 5,
  erasedLeft: [],
  operator: NO_OPERATOR_ACTIONS,
};

/** The same order cancelled after it was applied: its stock back, its reservation gone, its cursor at seq 2. */
const cancelled: DrillSnapshot = {
  ...base,
  orders: [{ orderId: 'o-1', status: 'CANCELLED', items: [{ sku: 'A', quantity: 2 }] }],
  outbox: [created, cancel, rogue],
  inbox: [createdRow, cancelRow],
  cursors: [{ messageId: 'cursor#order#o-1', lastSeq: 2 }],
  inventory: [{ sku: 'A', available: 10 }],
  reservations: [],
  cancelledOrders: new Set(['o-1']),
};

const invariant = (snapshot: DrillSnapshot, prefix: string) =>
  checkInvariants(snapshot).find((result) => result.name.startsWith(prefix));
const failures = (snapshot: DrillSnapshot) =>
  checkInvariants(snapshot)
    .filter((result) => !result.ok)
    .map((result) => result.name);
const deadLetter = (orderId: string, attributes: Record<string, string>) => ({
  body: JSON.stringify({ messageId: 'm-9', aggregateId: orderId }),
  attributes,
});

describe('checkInvariants', () => {
  it('passes a ledger where the stock moved once and the rogue message failed with its reason', () => {
    expect(failures(base)).toEqual([]);
  });

  it('catches an effect applied twice', () => {
    expect(invariant({ ...base, inventory: [{ sku: 'A', available: 6 }] }, 'stock moved')?.ok).toBe(false);
  });

  it('catches a message left PENDING, and a FAILED one that was not poisoned', () => {
    const pending = { ...base, outbox: [{ ...created, status: 'PENDING' }, rogue] };
    expect(invariant(pending, 'no message lost')?.ok).toBe(false);
    const failed = {
      ...base,
      outbox: [{ ...created, status: 'FAILED', lastError: 'x' }, rogue],
      inbox: [],
      cursors: [],
      inventory: [{ sku: 'A', available: 10 }],
      reservations: [],
    };
    expect(invariant(failed, 'no message lost')?.ok).toBe(false);
  });

  it('catches an acknowledged order that was never written', () => {
    expect(checkInvariants({ ...base, acknowledgedOrders: new Set(['o-1', 'o-2']) })[0]?.ok).toBe(false);
  });

  it('counts a rogue message neither as an order message nor as a lost one', () => {
    expect(invariant(base, 'every acknowledged order')?.detail).toBe('1 orders (0 cancelled), 1 messages');
    expect(invariant(base, 'no message lost')?.ok).toBe(true);
  });

  it('catches a rogue message left PENDING, FAILED for another reason, or missing', () => {
    const withRogue = (changes: Record<string, unknown>) => ({
      ...base,
      outbox: [created, { ...rogue, ...changes }],
    });

    const pending = invariant(withRogue({ status: 'PENDING', lastError: undefined }), 'every rogue message');
    expect(pending).toMatchObject({ ok: false, detail: expect.stringContaining('is PENDING (no error)') });
    const otherReason = invariant(
      withRogue({ lastError: 'InternalError: injected sqsSendError' }),
      'every rogue',
    );
    expect(otherReason?.ok).toBe(false);
    const missing = invariant({ ...base, outbox: [created] }, 'every rogue message');
    expect(missing).toMatchObject({ ok: false, detail: expect.stringContaining('is missing') });
  });

  it('catches a dead letter of an order that was not poisoned, such as one that lost to contention', () => {
    const contention = deadLetter('o-1', {
      dead_letter_reason: 'MAX_RECEIVES',
      last_error: 'TransactionConflictError: transaction conflicted with a concurrent write; retry',
    });

    const result = invariant({ ...base, deadLetters: [contention] }, 'contention dead-letters nothing');

    expect(result).toMatchObject({
      ok: false,
      detail: expect.stringContaining('hot order o-1 dead-lettered (MAX_RECEIVES: TransactionConflictError'),
    });
  });

  it("names a dead letter SQS's redrive policy moved, without a reason, by its receives against maxReceiveCount", () => {
    // Five receives that each ended unacknowledged (the invocation stopped), then the drill's own read.
    const redriven = { ...deadLetter('o-1', { message_id: 'm-9', topic: 'order.created' }), receiveCount: 6 };

    const result = invariant({ ...base, deadLetters: [redriven] }, 'contention dead-letters nothing');

    expect(result).toMatchObject({
      ok: false,
      detail: expect.stringContaining(
        "hot order o-1 moved to the DLQ by the queue's redrive policy after 6 receives (maxReceiveCount 5), with no reason",
      ),
    });
    expect(deadLetterCounts([redriven])).toEqual({ byConsumer: 0, byRedrivePolicy: 1 });
  });

  it('accepts a poisoned order in the DLQ, and one dead-lettered after injected faults on every receive', () => {
    const snapshot = {
      ...base,
      poisonedOrders: new Set(['o-2']),
      deadLetters: [
        deadLetter('o-2', { dead_letter_reason: 'POISON', last_error: 'PoisonMessageError: unreadable' }),
        deadLetter('o-1', {
          dead_letter_reason: 'MAX_RECEIVES',
          last_error: 'InjectedFault: injected consumerTransientError: downstream unavailable',
        }),
      ],
    };

    expect(invariant(snapshot, 'contention dead-letters nothing')).toMatchObject({
      ok: true,
      detail:
        '2 dead letters, 1 after injected faults on every receive (1 of them hot-SKU orders), none moved by the ' +
        'redrive policy, none for contention',
    });
  });
});

describe('checkInvariants on the ordered order topics', () => {
  it('passes an order cancelled after it was applied: stock back, reservation gone, cursor at 2', () => {
    expect(failures(cancelled)).toEqual([]);
    expect(invariant(cancelled, 'applied in order')?.detail).toBe(
      '1 RELEASED after APPLIED, 0 NOTHING_TO_RELEASE after out of stock',
    );
  });

  it('passes a cancel of an order rejected for stock: nothing to release, nothing moved', () => {
    const rejected = {
      ...cancelled,
      inbox: [
        { ...createdRow, outcome: 'REJECTED_OUT_OF_STOCK' },
        { ...cancelRow, outcome: 'NOTHING_TO_RELEASE' },
      ],
    };

    expect(failures(rejected)).toEqual([]);
  });

  it('catches a cancel applied before its create: NOTHING_TO_RELEASE beside an APPLIED create', () => {
    // The cancel found no reservation, then the create took the stock and reserved it: the order keeps its stock.
    const reversed = {
      ...cancelled,
      inbox: [
        { ...createdRow, processedAt: '2030-01-01T00:00:03.000Z' },
        { ...cancelRow, outcome: 'NOTHING_TO_RELEASE' },
      ],
      inventory: [{ sku: 'A', available: 8 }],
      reservations: [{ sku: 'reservation#o-1', orderId: 'o-1' }],
    };

    expect(invariant(reversed, 'applied in order')).toMatchObject({
      ok: false,
      detail: expect.stringContaining('order o-1: cancel NOTHING_TO_RELEASE beside a APPLIED create'),
    });
  });

  it('catches a cancel processed before its create, and one applied without its create', () => {
    const early = {
      ...cancelled,
      inbox: [createdRow, { ...cancelRow, processedAt: '2030-01-01T00:00:00.000Z' }],
    };
    expect(invariant(early, 'applied in order')?.detail).toContain('before its create');
    const alone = { ...cancelled, inbox: [cancelRow] };
    expect(invariant(alone, 'applied in order')?.detail).toContain(
      'cancel RELEASED with its create undefined',
    );
  });

  it('catches a message numbered out of its sequence, a missing cancel, and an order row not CANCELLED', () => {
    const swapped = { ...cancelled, outbox: [{ ...created, seq: 2 }, { ...cancel, seq: 1 }, rogue] };
    expect(invariant(swapped, 'every acknowledged order')?.detail).toContain(
      "order o-1's order.created is seq 2 of order#o-1, not 1 of order#o-1",
    );
    const noCancel = { ...cancelled, outbox: [created, rogue] };
    expect(invariant(noCancel, 'every acknowledged order')?.detail).toContain('has no order.cancelled');
    const placed = { ...cancelled, orders: base.orders };
    expect(invariant(placed, 'every acknowledged order')?.detail).toContain('is PLACED, not CANCELLED');
  });

  it("catches a cursor that is not at its key's last processed message, and one of no order", () => {
    const behind = { ...cancelled, cursors: [{ messageId: 'cursor#order#o-1', lastSeq: 1 }] };
    expect(invariant(behind, 'each order key')?.detail).toContain('cursor#order#o-1: lastSeq 1, 2 processed');
    const stray = {
      ...cancelled,
      cursors: [...cancelled.cursors, { messageId: 'cursor#order#o-9', lastSeq: 1 }],
    };
    expect(invariant(stray, 'each order key')?.detail).toContain('cursor#order#o-9 belongs to no order');
  });

  it('catches a reservation left after its release, and one missing for an applied create', () => {
    const leftOver = { ...cancelled, reservations: base.reservations };
    expect(invariant(leftOver, 'reservation rows')?.detail).toContain('reservation#o-1 left over');
    expect(invariant({ ...base, reservations: [] }, 'reservation rows')?.detail).toContain(
      'reservation#o-1 missing',
    );
  });

  it('catches a parked row whose message was never applied, and counts a stale one apart', () => {
    const parkedRow = { messageId: 'parked#order#o-1#2', parkedMessageId: 'm-2', seq: 2 };
    const stale = invariant({ ...cancelled, parked: [parkedRow] }, 'no parked row left');
    expect(stale).toMatchObject({ ok: true, detail: expect.stringContaining('1 stale') });
    // The cancel is still SENT and parked although its create was applied: nothing will drain it.
    const stuck = {
      ...base,
      orders: cancelled.orders,
      outbox: [created, { ...cancel, status: 'SENT' }, rogue],
      parked: [parkedRow],
      cancelledOrders: cancelled.cancelledOrders,
    };
    expect(invariant(stuck, 'no parked row left')).toMatchObject({
      ok: false,
      detail: expect.stringContaining('parked#order#o-1#2 left parked (its message SENT, inbox none'),
    });
  });

  describe('a poisoned aggregate stalls alone', () => {
    const poisonedCreate = {
      ...created,
      messageId: 'm-3',
      aggregateId: 'o-2',
      orderKey: 'order#o-2',
      status: 'FAILED',
      lastError: 'InvalidMessageContents: poisoned by the drill',
    };
    const stalledCancel = {
      ...cancel,
      messageId: 'm-4',
      aggregateId: 'o-2',
      orderKey: 'order#o-2',
      status: 'SENT',
    };
    const parkedCancel = { messageId: 'parked#order#o-2#2', parkedMessageId: 'm-4', seq: 2 };
    const stalled: DrillSnapshot = {
      ...base,
      orders: [...base.orders, { orderId: 'o-2', status: 'CANCELLED', items: [{ sku: 'A', quantity: 1 }] }],
      outbox: [created, poisonedCreate, stalledCancel, rogue],
      parked: [parkedCancel],
      stalledOrders: new Set(['o-2']),
      acknowledgedOrders: new Set(['o-1', 'o-2']),
      cancelledOrders: new Set(['o-2']),
    };

    it('accepts its cancel delivered and parked behind the FAILED create, or held PENDING, and says so', () => {
      expect(failures(stalled)).toEqual([]);
      expect(invariant(stalled, 'no message lost')?.detail).toBe(
        'all settled but 1 stalled behind FAILED seq 1, as designed (1 delivered and parked, 0 held PENDING)',
      );
      const held = {
        ...stalled,
        outbox: [created, poisonedCreate, { ...stalledCancel, status: 'PENDING' }, rogue],
      };
      expect(failures({ ...held, parked: [] })).toEqual([]);
    });

    it('catches its cancel SENT but not parked, or applied although its create FAILED', () => {
      expect(invariant({ ...stalled, parked: [] }, 'no message lost')?.detail).toContain(
        'm-4 is SENT behind FAILED seq 1 but not parked',
      );
      const applied = {
        ...stalled,
        outbox: [created, poisonedCreate, { ...stalledCancel, status: 'CONFIRMED' }, rogue],
        inbox: [createdRow, { ...cancelRow, messageId: 'm-4' }],
        parked: [],
      };
      expect(invariant(applied, 'a poisoned aggregate stalls alone')?.detail).toContain(
        'cancel of stalled order o-2 is CONFIRMED, not stalled',
      );
    });

    it('catches its create confirmed, as any poisoned message', () => {
      const confirmed = { ...stalled, outbox: [created, { ...poisonedCreate, status: 'CONFIRMED' }, rogue] };
      expect(invariant(confirmed, 'no message lost')?.detail).toContain('poisoned order o-2 was confirmed');
    });
  });
});

describe('checkInvariants with operator actions mid-run', () => {
  const withdrawn = { ...created, status: 'CANCELLED' };
  const untouched: DrillSnapshot = {
    ...base,
    outbox: [withdrawn, rogue],
    inbox: [],
    cursors: [],
    inventory: [{ sku: 'A', available: 10 }],
    reservations: [],
  };

  it('accepts a create the operator cancelled while PENDING, and catches a CANCELLED one nobody cancelled', () => {
    const operator = { ...NO_OPERATOR_ACTIONS, cancelled: new Set(['m-1']) };
    expect(failures({ ...untouched, operator })).toEqual([]);
    expect(failures(untouched)).toEqual([
      'no message lost: each is CONFIRMED, FAILED with its reason only if poisoned, or stalled behind a FAILED seq 1',
    ]);
  });

  it('counts a cancelled message applied from a copy sent before the cancel, and its stock moved once', () => {
    const operator = { ...NO_OPERATOR_ACTIONS, cancelled: new Set(['m-1']) };
    const applied = { ...base, outbox: [withdrawn, rogue], operator };
    expect(failures(applied)).toEqual([]);
    expect(invariant(applied, 'every CONFIRMED message')?.detail).toBe(
      '1 inbox rows (1 of messages cancelled after an earlier copy was sent)',
    );
    expect(invariant({ ...applied, inventory: [{ sku: 'A', available: 6 }] }, 'stock moved')?.ok).toBe(false);
  });

  describe('a skipped gap', () => {
    const skippedCreate = {
      ...created,
      status: 'CANCELLED',
      skippedAt: '2030-01-01T00:01:00.000Z',
      lastError: 'InvalidMessageContents: poisoned by the drill',
    };
    const releasedNothing = { ...cancelRow, outcome: 'NOTHING_TO_RELEASE' };
    const skipped: DrillSnapshot = {
      ...cancelled,
      outbox: [skippedCreate, { ...cancel, status: 'CONFIRMED' }, rogue],
      inbox: [releasedNothing],
      cursors: [{ messageId: 'cursor#order#o-1', lastSeq: 2 }],
      reservations: [],
      stalledOrders: new Set(['o-1']),
      operator: { ...NO_OPERATOR_ACTIONS, skippedOrders: new Set(['o-1']) },
    };

    it("passes a skipped FAILED create whose order's cancel was then applied, the cursor past both", () => {
      expect(failures(skipped)).toEqual([]);
    });

    it('catches the cancel still waiting after the skip, and a create that was not marked skipped', () => {
      const waiting = {
        ...skipped,
        outbox: [skippedCreate, { ...cancel, status: 'PENDING' }, rogue],
        inbox: [],
      };
      expect(invariant(waiting, 'a skipped gap')?.detail).toContain(
        'order o-1: its cancel is PENDING (no inbox row), not applied with nothing to release',
      );
      const unmarked = {
        ...skipped,
        outbox: [{ ...skippedCreate, skippedAt: undefined }, { ...cancel, status: 'CONFIRMED' }, rogue],
      };
      expect(invariant(unmarked, 'a skipped gap')?.detail).toContain(
        'its create is CANCELLED, not CANCELLED and skipped',
      );
    });
  });

  it('catches an erased message still in the outbox, or gone with its inbox row, and a replay that was not applied', () => {
    const erased = { ...base, operator: { ...NO_OPERATOR_ACTIONS, erased: [created] } };
    expect(failures(erased)).toEqual([]);
    const name = 'operator actions mid-run';
    expect(invariant({ ...erased, erasedLeft: ['m-1'] }, name)?.detail).toContain(
      'erased m-1 is still in the outbox',
    );
    expect(invariant({ ...erased, inbox: [] }, name)?.detail).toContain('erased m-1 lost its inbox row');
    const replayed = { ...base, operator: { ...NO_OPERATOR_ACTIONS, replayed: new Set(['m-1']) } };
    expect(failures(replayed)).toEqual([]);
    const unapplied = {
      ...replayed,
      outbox: [{ ...created, status: 'FAILED', lastError: 'x' }, rogue],
      inbox: [],
    };
    expect(invariant(unapplied, name)?.detail).toContain('replayed m-1 is FAILED, not CONFIRMED and applied');
    const problem = {
      ...base,
      operator: { ...NO_OPERATOR_ACTIONS, problems: ['skip of m-9 never became due'] },
    };
    expect(invariant(problem, name)?.ok).toBe(false);
  });
});
