import {
  cancelMessage,
  eraseAggregate,
  replayMessage,
  skipOrderGap,
  WrongStatusError,
} from '../../../shared/admin/index.ts';
import { MessageStatus, orderKeyOf } from '../../../shared/index.ts';
import { ORDER_SCOPE } from './invariants.ts';

/** What the operator's actions need: what each admin action it takes asks for (no queues: it redrives nothing). */
export type OperatorDeps = Parameters<typeof cancelMessage>[0] &
  Parameters<typeof replayMessage>[0] &
  Parameters<typeof skipOrderGap>[0] &
  Parameters<typeof eraseAggregate>[0];

/** What the operator did during a drill, for the invariants. */
export interface OperatorFacts {
  /** Messages cancelled while PENDING, right after their write (racing the relay): each must end CANCELLED. */
  readonly cancelled: ReadonlySet<string>;
  /** Cancels refused because a sender had already marked the message SENT (it is then delivered as usual). */
  readonly cancelsRefused: number;
  /**
   * FAILED messages of poisoned orders replayed once their cause was fixed (SQS takes them from then on): each must
   * end CONFIRMED, applied once.
   */
  readonly replayed: ReadonlySet<string>;
  /** Orders whose FAILED create (seq 1) was skipped: the order's cancel (seq 2) must then be applied. */
  readonly skippedOrders: ReadonlySet<string>;
  /** The outbox items of the orders erased once settled, as they were just before the erase. */
  readonly erased: readonly Record<string, unknown>[];
  /** Answers no operator should have had (anything but the documented refusals). */
  readonly problems: readonly string[];
}

/** The facts of a drill in which the operator did nothing. */
export const NO_OPERATOR_ACTIONS: OperatorFacts = {
  cancelled: new Set(),
  cancelsRefused: 0,
  replayed: new Set(),
  skippedOrders: new Set(),
  erased: [],
  problems: [],
};

/** One action the operator waits to take: on which message, once it is in which status. */
interface Intent {
  readonly kind: 'replay' | 'skip' | 'erase';
  readonly orderId: string;
  readonly messageId: string;
  /** The status that makes the action due. */
  readonly when: MessageStatus;
}

const ACTOR = 'drill-operator';

/**
 * An operator working on the outbox while the drill runs, through the admin core the CLI and the admin API use
 * (no write path of its own): cancels of PENDING messages right after their write, racing the relay and the
 * sweepers; a replay of FAILED messages of poisoned orders once their cause is fixed; a skip of a FAILED seq 1 that holds its order's
 * cancel back; and an erase of a settled order. The drill says which messages; {@link step} takes every action
 * that has become due, reading each target by its key (never a scan), and {@link done} says whether any is left.
 */
export class DrillOperator {
  readonly #deps: OperatorDeps;
  readonly #intents: Intent[] = [];
  readonly #cancelled = new Set<string>();
  readonly #replayed = new Set<string>();
  readonly #skippedOrders = new Set<string>();
  readonly #erased: Record<string, unknown>[] = [];
  readonly #problems: string[] = [];
  readonly #fix: (messageId: string) => void;
  #cancelsRefused = 0;

  /** `fix` removes the cause of a FAILED message before its replay (the drill stops poisoning it). */
  constructor(deps: OperatorDeps, fix: (messageId: string) => void) {
    this.#deps = deps;
    this.#fix = fix;
  }

  /**
   * Cancels a message the writer has just committed, PENDING, as an operator who withdraws it at once: the cancel
   * either lands before a sender's SENT mark (the message is then never sent) or is refused because the mark came
   * first (WrongStatusError, and the message is delivered as usual).
   */
  async cancelAfterWrite(messageId: string): Promise<void> {
    try {
      await cancelMessage(this.#deps, { messageId, reason: 'withdrawn during the drill', actor: ACTOR });
      this.#cancelled.add(messageId);
    } catch (error) {
      if (error instanceof WrongStatusError && error.status !== MessageStatus.CANCELLED) {
        this.#cancelsRefused += 1;
        return;
      }
      this.#problems.push(`cancel of ${messageId}: ${describe(error)}`);
    }
  }

  /** Fixes the message's cause and replays it, once it is FAILED. */
  replayWhenFailed(orderId: string, messageId: string): void {
    this.#intents.push({ kind: 'replay', orderId, messageId, when: MessageStatus.FAILED });
  }

  /** Skips seq 1 of the order once its message (the order's create) is FAILED. */
  skipWhenFailed(orderId: string, messageId: string): void {
    this.#intents.push({ kind: 'skip', orderId, messageId, when: MessageStatus.FAILED });
  }

  /** Erases the order's messages once its create is CONFIRMED (the order has no other message). */
  eraseWhenConfirmed(orderId: string, messageId: string): void {
    this.#intents.push({ kind: 'erase', orderId, messageId, when: MessageStatus.CONFIRMED });
  }

  /** Whether every action the drill asked for has been taken. */
  done(): boolean {
    return this.#intents.length === 0;
  }

  /** Takes each action whose message has reached its status. */
  async step(): Promise<void> {
    for (const intent of [...this.#intents]) {
      const item = await this.#read(intent.messageId);
      if (item === undefined || item.status !== intent.when) continue;
      this.#intents.splice(this.#intents.indexOf(intent), 1);
      try {
        await this.#take(intent, item);
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
      skippedOrders: this.#skippedOrders,
      erased: this.#erased,
      problems: [
        ...this.#problems,
        ...this.#intents.map((intent) => `${intent.kind} of ${intent.messageId} never became due`),
      ],
    };
  }

  async #take(intent: Intent, item: Record<string, unknown>): Promise<void> {
    const reason = `drill: ${intent.kind}`;
    switch (intent.kind) {
      case 'replay':
        this.#fix(intent.messageId);
        await replayMessage(this.#deps, { messageId: intent.messageId, reason, actor: ACTOR });
        this.#replayed.add(intent.messageId);
        return;
      case 'skip':
        await skipOrderGap(this.#deps, {
          orderKey: orderKeyOf(ORDER_SCOPE, intent.orderId),
          seq: 1,
          reason,
          actor: ACTOR,
        });
        this.#skippedOrders.add(intent.orderId);
        return;
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
        this.#erased.push(item);
        return;
      }
    }
  }

  async #read(messageId: string): Promise<Record<string, unknown> | undefined> {
    const item = await this.#deps.outbox.read(messageId);
    return item === undefined ? undefined : { ...item };
  }
}

function describe(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}
