import {
  cancelMessage,
  eraseAggregate,
  replayMessage,
  skipOrderGap,
  WrongStatusError,
} from '../../../shared/admin/index.ts';
import { MessageStatus, orderKeyOf } from '../../../shared/index.ts';
import { deliveryKey, SUBSCRIBERS, type Subscriber } from './drill-subscribers.ts';
import { CONTROL_OUTCOMES } from './inbox-outcomes.ts';
import { ORDER_SCOPE } from './order-factory.ts';

/** What the operator's actions need: what each admin action it takes asks for (no queues: it redrives nothing). */
export type OperatorDeps = Parameters<typeof cancelMessage>[0] &
  Parameters<typeof replayMessage>[0] &
  Parameters<typeof skipOrderGap>[0] &
  Parameters<typeof eraseAggregate>[0];

/** A message the operator's action sent one subscriber (an `outbox.skip` or `outbox.erase`), and what it must answer. */
export interface SentControlMessage {
  readonly messageId: string;
  readonly subscriber: string;
  readonly orderId: string;
  /** The outcome its receipt must confirm it with: `SKIPPED` or `ERASED`. */
  readonly outcome: string;
}

/** What the operator did during a drill, for the invariants. */
export interface OperatorFacts {
  /**
   * Deliveries (`<messageId>#<subscriber>`) cancelled while PENDING, right after their message's write (racing the
   * relay): each must end CANCELLED.
   */
  readonly cancelled: ReadonlySet<string>;
  /** Deliveries a cancel found marked SENT already (each is then delivered as usual). */
  readonly cancelsRefused: number;
  /**
   * FAILED deliveries of poisoned orders replayed at their subscriber once their cause was fixed (SQS takes them from
   * then on): each must end CONFIRMED, applied once.
   */
  readonly replayed: ReadonlySet<string>;
  /**
   * Orders whose FAILED create (seq 1) was skipped at a subscriber, as `<orderId>#<subscriber>`: the order's cancel
   * (seq 2) must then be applied there.
   */
  readonly skipped: ReadonlySet<string>;
  /** The outbox rows of the orders erased once settled (every delivery), as they were just before the erase. */
  readonly erased: readonly Record<string, unknown>[];
  /** The skips and erases the operator's actions sent the subscribers: each must be confirmed with its outcome. */
  readonly controls: readonly SentControlMessage[];
  /** Answers no operator should have had (anything but the documented refusals). */
  readonly problems: readonly string[];
}

/** The facts of a drill in which the operator did nothing. */
export const NO_OPERATOR_ACTIONS: OperatorFacts = {
  cancelled: new Set(),
  cancelsRefused: 0,
  replayed: new Set(),
  skipped: new Set(),
  erased: [],
  controls: [],
  problems: [],
};

/**
 * Where the operator replays the FAILED create of each of the first poisoned orders once its cause is fixed: at
 * inventory, at loyalty, at both (SQS takes each from then on).
 */
export const OPERATOR_REPLAYS: readonly (readonly Subscriber[])[] = [
  ['inventory'],
  ['loyalty'],
  ['inventory', 'loyalty'],
];

/** Of the orders neither cancelled by their client nor poisoned, the share whose create an operator cancels at once. */
export const OPERATOR_CANCEL_SHARE = 0.1;

/**
 * Which deliveries the operator's n-th withdrawal cancels: every delivery of the message, then inventory's only, then
 * loyalty's only, in turn (a drill withdraws at least the first three orders that stay as written).
 */
export function withdrawalTarget(n: number): Subscriber | undefined {
  const targets = [undefined, ...SUBSCRIBERS] as const;
  return targets[n % targets.length];
}

/** Withdrawals every drill makes whatever its size: one of each kind of {@link withdrawalTarget}. */
export const MIN_WITHDRAWALS = SUBSCRIBERS.length + 1;

/** One action the operator waits to take: on which message, once its deliveries are in which status. */
interface Intent {
  readonly kind: 'replay' | 'skip' | 'erase';
  readonly orderId: string;
  readonly messageId: string;
  /** The subscribers whose deliveries make the action due, and whose the action is. */
  readonly subscribers: readonly Subscriber[];
  /** The status each of those deliveries must be in. */
  readonly when: MessageStatus;
}

const ACTOR = 'drill-operator';

/**
 * An operator working on the outbox while the drill runs, through the admin core the CLI and the admin API use
 * (no write path of its own), per subscriber as the admin takes `subscriber` (`--subscriber`): cancels of PENDING
 * messages right after their write, racing the relay and the sweepers (a whole message, or one subscriber's
 * delivery); a replay of a FAILED delivery of a poisoned order once its cause is fixed; a skip of a subscriber's
 * FAILED seq 1 that holds its order's cancel back there; and an erase of a settled order, which reaches each
 * subscriber as an `outbox.erase` message. The drill says which messages; {@link step} takes every action that has
 * become due, reading each delivery by its key (never a scan), and {@link done} says whether any is left.
 */
export class DrillOperator {
  readonly #deps: OperatorDeps;
  readonly #intents: Intent[] = [];
  readonly #cancelled = new Set<string>();
  readonly #replayed = new Set<string>();
  readonly #skipped = new Set<string>();
  readonly #erased: Record<string, unknown>[] = [];
  readonly #controls: SentControlMessage[] = [];
  readonly #problems: string[] = [];
  readonly #fix: (deliveryKey: string) => void;
  #cancelsRefused = 0;

  /** `fix` removes the cause of a FAILED delivery before its replay (the drill stops poisoning it). */
  constructor(deps: OperatorDeps, fix: (deliveryKey: string) => void) {
    this.#deps = deps;
    this.#fix = fix;
  }

  /**
   * Cancels a message the writer has just committed, as an operator who withdraws it at once: every delivery of it,
   * or `subscriber`'s only. Each delivery's cancel either lands before a sender's SENT mark (it is then never sent)
   * or is refused because the mark came first (it is then delivered as usual).
   */
  async cancelAfterWrite(messageId: string, subscriber?: Subscriber): Promise<void> {
    try {
      const result = await cancelMessage(this.#deps, {
        messageId,
        ...(subscriber === undefined ? {} : { subscriber }),
        reason: 'withdrawn during the drill',
        actor: ACTOR,
      });
      if (subscriber !== undefined) {
        this.#cancelled.add(deliveryKey(messageId, subscriber));
        return;
      }
      for (const delivery of result.deliveries ?? []) {
        if (delivery.to === MessageStatus.CANCELLED)
          this.#cancelled.add(deliveryKey(messageId, delivery.subscriber));
        else this.#cancelsRefused += 1;
      }
    } catch (error) {
      if (error instanceof WrongStatusError && error.status !== MessageStatus.CANCELLED) {
        this.#cancelsRefused += subscriber === undefined ? SUBSCRIBERS.length : 1;
        return;
      }
      this.#problems.push(`cancel of ${messageId}: ${describe(error)}`);
    }
  }

  /** Fixes the cause of `subscriber`'s delivery of the message and replays it there, once it is FAILED. */
  replayWhenFailed(orderId: string, messageId: string, subscriber: Subscriber): void {
    this.#intents.push({
      kind: 'replay',
      orderId,
      messageId,
      subscribers: [subscriber],
      when: MessageStatus.FAILED,
    });
  }

  /** Skips seq 1 of the order in `subscriber`'s sequence once its delivery of the order's create is FAILED. */
  skipWhenFailed(orderId: string, messageId: string, subscriber: Subscriber): void {
    this.#intents.push({
      kind: 'skip',
      orderId,
      messageId,
      subscribers: [subscriber],
      when: MessageStatus.FAILED,
    });
  }

  /** Erases the order's messages once every subscriber confirmed its create (the order has no other message). */
  eraseWhenConfirmed(orderId: string, messageId: string): void {
    this.#intents.push({
      kind: 'erase',
      orderId,
      messageId,
      subscribers: [...SUBSCRIBERS],
      when: MessageStatus.CONFIRMED,
    });
  }

  /** Whether every action the drill asked for has been taken. */
  done(): boolean {
    return this.#intents.length === 0;
  }

  /** Takes each action whose deliveries have reached their status. */
  async step(): Promise<void> {
    for (const intent of [...this.#intents]) {
      const rows = await Promise.all(
        intent.subscribers.map((subscriber) => this.#read(deliveryKey(intent.messageId, subscriber))),
      );
      if (rows.some((row) => row?.status !== intent.when)) continue;
      this.#intents.splice(this.#intents.indexOf(intent), 1);
      try {
        await this.#take(intent, rows as Record<string, unknown>[]);
      } catch (error) {
        this.#problems.push(`${intent.kind} of ${intent.messageId}: ${describe(error)}`);
      }
    }
  }

  facts(): OperatorFacts {
    return {
      cancelled: this.#cancelled,
      cancelsRefused: this.#cancelsRefused,
      replayed: this.#replayed,
      skipped: this.#skipped,
      erased: this.#erased,
      controls: this.#controls,
      problems: [
        ...this.#problems,
        ...this.#intents.map(
          (intent) =>
            `${intent.kind} of ${intent.messageId} (${intent.subscribers.join(', ')}) never became due`,
        ),
      ],
    };
  }

  async #take(intent: Intent, rows: readonly Record<string, unknown>[]): Promise<void> {
    const reason = `drill: ${intent.kind}`;
    const [subscriber] = intent.subscribers;
    switch (intent.kind) {
      case 'replay':
        if (subscriber === undefined) return;
        this.#fix(deliveryKey(intent.messageId, subscriber));
        await replayMessage(this.#deps, { messageId: intent.messageId, subscriber, reason, actor: ACTOR });
        this.#replayed.add(deliveryKey(intent.messageId, subscriber));
        return;
      case 'skip': {
        if (subscriber === undefined) return;
        const result = await skipOrderGap(this.#deps, {
          orderKey: orderKeyOf(ORDER_SCOPE, intent.orderId),
          seq: 1,
          subscriber,
          reason,
          actor: ACTOR,
        });
        this.#skipped.add(`${intent.orderId}#${subscriber}`);
        if (result.skipSent === undefined)
          this.#problems.push(`skip of ${intent.messageId} sent no outbox.skip`);
        else
          this.#controls.push({
            ...result.skipSent,
            orderId: intent.orderId,
            outcome: CONTROL_OUTCOMES.skipped,
          });
        return;
      }
      case 'erase': {
        const result = await eraseAggregate(this.#deps, {
          aggregateId: intent.orderId,
          reason,
          actor: ACTOR,
        });
        if (result.messagesDeleted !== 1 || result.skippedInFlight.length > 0) {
          this.#problems.push(
            `erase of order ${intent.orderId} deleted ${result.messagesDeleted} message(s), kept ${result.skippedInFlight.length} in flight`,
          );
        }
        const reached = new Set(result.erasesSent.map((sent) => sent.subscriber));
        for (const missing of SUBSCRIBERS.filter((name) => !reached.has(name))) {
          this.#problems.push(`erase of order ${intent.orderId} sent no outbox.erase to ${missing}`);
        }
        this.#erased.push(...rows);
        for (const sent of result.erasesSent) {
          this.#controls.push({ ...sent, orderId: intent.orderId, outcome: CONTROL_OUTCOMES.erased });
        }
        return;
      }
    }
  }

  async #read(key: string): Promise<Record<string, unknown> | undefined> {
    const item = await this.#deps.outbox.read(key);
    return item === undefined ? undefined : { ...item };
  }
}

function describe(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}
