import {
  SendMessageBatchCommand,
  type SendMessageBatchCommandOutput,
  type SendMessageBatchRequestEntry,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import type { ReceiptQueue } from '../../../shared/memory/index.ts';
import { deliveryKey } from './drill-subscribers.ts';
import type { FaultInjector } from './faults.ts';

/** What became of one receipt body on its way to the producer's receipt queue. */
export type ReceiptFate =
  | { readonly kind: 'delivered' }
  /** SQS took it and it never arrived: the subscriber sees a receipt sent. */
  | { readonly kind: 'lost' }
  /** It arrives twice. */
  | { readonly kind: 'duplicated' }
  /** It arrives after `delayMs`. */
  | { readonly kind: 'delayed'; readonly delayMs: number };

/** The receipts the drill's faults touched, by delivery (`<messageId>#<subscriber>`), and how many were sent. */
export interface ReceiptFacts {
  /** Receipts the consumers sent, and the bodies (SQS messages) that carried them. */
  readonly sent: number;
  readonly bodies: number;
  readonly lost: ReadonlyMap<string, number>;
  readonly duplicated: ReadonlyMap<string, number>;
  readonly delayed: ReadonlyMap<string, number>;
}

/** The facts of a run whose receipts all arrived once. */
export const NO_RECEIPT_FAULTS: ReceiptFacts = {
  sent: 0,
  bodies: 0,
  lost: new Map(),
  duplicated: new Map(),
  delayed: new Map(),
};

/** A receipt the way a body names it (the library's wire format: `{ schemaVersion, receipts: [...] }`). */
interface ReceiptNames {
  readonly messageId: string;
  readonly subscriber: string;
}

/**
 * The receipts of one body, as far as the drill reads them (message and subscriber); none from a body it cannot
 * read. The producer reads the body with its own parser: this is bookkeeping only.
 */
export function receiptsOf(body: string): ReceiptNames[] {
  try {
    const parsed: unknown = JSON.parse(body);
    const receipts = (parsed as { receipts?: unknown } | null)?.receipts;
    if (!Array.isArray(receipts)) return [];
    return receipts.flatMap((entry: unknown) => {
      const { messageId, subscriber } = (entry ?? {}) as Record<string, unknown>;
      return typeof messageId === 'string' && typeof subscriber === 'string'
        ? [{ messageId, subscriber }]
        : [];
    });
  } catch {
    return [];
  }
}

/**
 * Decides, at the fault rates, what becomes of each receipt body a consumer sends — lost, duplicated, delayed (by 1 s
 * to `maxDelayMs`), or delivered — and keeps count per delivery, for the invariants: a lost receipt must cost a
 * redelivery of its message, never the delivery, and no receipt may confirm a delivery twice.
 * @example
 * const receipts = new ReceiptFaults(faults, random, 45_000);
 * const fate = receipts.fate(body);
 */
export class ReceiptFaults {
  readonly #faults: FaultInjector;
  readonly #random: () => number;
  readonly #maxDelayMs: number;
  readonly #lost = new Map<string, number>();
  readonly #duplicated = new Map<string, number>();
  readonly #delayed = new Map<string, number>();
  #sent = 0;
  #bodies = 0;

  constructor(faults: FaultInjector, random: () => number, maxDelayMs: number) {
    this.#faults = faults;
    this.#random = random;
    this.#maxDelayMs = Math.max(1_000, maxDelayMs);
  }

  /** What becomes of `body`, counted for each receipt it carries. */
  fate(body: string): ReceiptFate {
    const receipts = receiptsOf(body);
    this.#bodies += 1;
    this.#sent += receipts.length;
    const count = (into: Map<string, number>) => {
      for (const { messageId, subscriber } of receipts) {
        const key = deliveryKey(messageId, subscriber);
        into.set(key, (into.get(key) ?? 0) + 1);
      }
    };
    if (this.#faults.roll('receiptLost')) {
      count(this.#lost);
      return { kind: 'lost' };
    }
    if (this.#faults.roll('receiptDuplicated')) {
      count(this.#duplicated);
      return { kind: 'duplicated' };
    }
    if (this.#faults.roll('receiptDelayed')) {
      count(this.#delayed);
      return { kind: 'delayed', delayMs: 1_000 + Math.floor(this.#random() * (this.#maxDelayMs - 1_000)) };
    }
    return { kind: 'delivered' };
  }

  /** What the faults did to the receipts of the delivery `key`, if anything: lost, or delayed. */
  troubleOf(key: string): string | undefined {
    if (this.#lost.has(key)) return 'its receipt lost';
    if (this.#delayed.has(key)) return 'its receipt delayed';
    return undefined;
  }

  facts(): ReceiptFacts {
    return {
      sent: this.#sent,
      bodies: this.#bodies,
      lost: new Map(this.#lost),
      duplicated: new Map(this.#duplicated),
      delayed: new Map(this.#delayed),
    };
  }
}

/**
 * A receipt queue over `send` (one body, after a delay) with the receipts' faults: every body is reported sent, as
 * SQS reports a message it accepted, whatever then becomes of it.
 */
export function faultyReceiptQueue(
  send: (body: string, delayMs: number) => void,
  receipts: ReceiptFaults,
): ReceiptQueue {
  return {
    sendBodies: async (bodies) => {
      for (const body of bodies) {
        const fate = receipts.fate(body);
        if (fate.kind === 'lost') continue;
        send(body, fate.kind === 'delayed' ? fate.delayMs : 0);
        if (fate.kind === 'duplicated') send(body, 0);
      }
      return bodies.map(() => undefined);
    },
  };
}

/** SQS's longest per-message delay. */
const MAX_DELAY_SECONDS = 900;
/** What a copy's entry id is suffixed with, so that its result is told from its original's. */
const COPY_SUFFIX = '-copy';

/**
 * `client`, with the receipts' faults on every SendMessageBatch to `receiptQueueUrl`: a lost entry is answered
 * successful and not sent, a duplicated one is sent twice, a delayed one with DelaySeconds; every other call as is.
 */
export function faultyReceiptClient(
  client: SQSClient,
  receiptQueueUrl: string,
  receipts: ReceiptFaults,
): SQSClient {
  const send = async (command: unknown): Promise<unknown> => {
    if (!(command instanceof SendMessageBatchCommand) || command.input.QueueUrl !== receiptQueueUrl) {
      return client.send(command as never);
    }
    const lost: string[] = [];
    const entries: SendMessageBatchRequestEntry[] = [];
    for (const entry of command.input.Entries ?? []) {
      const fate = receipts.fate(entry.MessageBody ?? '');
      if (fate.kind === 'lost') lost.push(entry.Id ?? '');
      else if (fate.kind === 'delayed') {
        entries.push({
          ...entry,
          DelaySeconds: Math.min(MAX_DELAY_SECONDS, Math.ceil(fate.delayMs / 1_000)),
        });
      } else {
        entries.push(entry);
        if (fate.kind === 'duplicated') entries.push({ ...entry, Id: `${entry.Id ?? ''}${COPY_SUFFIX}` });
      }
    }
    const answered = (id: string | undefined) => !id?.endsWith(COPY_SUFFIX);
    const response: Partial<SendMessageBatchCommandOutput> =
      entries.length === 0
        ? { Successful: [], Failed: [], $metadata: {} }
        : await client.send(new SendMessageBatchCommand({ ...command.input, Entries: entries }));
    return {
      ...response,
      Successful: [
        ...(response.Successful ?? []).filter(({ Id }) => answered(Id)),
        ...lost.map((Id) => ({ Id, MessageId: `lost-${Id}`, MD5OfMessageBody: '' })),
      ],
      Failed: (response.Failed ?? []).filter(({ Id }) => answered(Id)),
    };
  };
  return new Proxy(client, {
    get: (target, property) => {
      if (property === 'send') return send;
      const value: unknown = Reflect.get(target, property);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}
