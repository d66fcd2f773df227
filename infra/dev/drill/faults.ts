import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { type DynamoDBDocumentClient, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import type { ConsumeDeps, Envelope } from '../../../shared/index.ts';
import type {
  MessagePublisher,
  PublishOptions,
  PublishResult,
  SweepStore,
} from '../../../shared/memory/index.ts';
import { transactionItemKeys } from './contention.ts';
import type { UnreportedCommits } from './unreported-commits.ts';

/** The faults injected at every hop of the pipeline, all at the drill's fault rate. */
export const HOP_FAULT_KINDS = [
  'sqsSendError',
  'sqsTimeout',
  'relayCrashAfterSend',
  'dynamoThrottle',
  'droppedStreamRecord',
  'consumerCrashAfterCommit',
  'consumerTransientError',
  'sweeperCrash',
  'receiptLost',
  'receiptDuplicated',
  'receiptDelayed',
] as const;

/**
 * Every fault the drill injects, each at its own rate (0–1): the hop faults, and TransactionConflict
 * cancellations of the consumer's transactions on the hot SKU (the memory drill's stand-in for contention).
 */
export const FAULT_KINDS = [...HOP_FAULT_KINDS, 'hotSkuConflict'] as const;

/** One kind of fault injected at a hop. */
export type HopFaultKind = (typeof HOP_FAULT_KINDS)[number];

/** One kind of injected fault. */
export type FaultKind = (typeof FAULT_KINDS)[number];

/** Rate of each hop fault. */
export type HopFaultRates = Readonly<Record<HopFaultKind, number>>;

/** Rate of each fault. */
export type FaultRates = Readonly<Record<FaultKind, number>>;

/** The same rate for every hop fault (the CLI's `--fault-rate`, 10 % unless told otherwise). */
export function uniformRates(rate: number): HopFaultRates {
  return Object.fromEntries(HOP_FAULT_KINDS.map((kind) => [kind, rate])) as Record<HopFaultKind, number>;
}

/** A small seeded PRNG (mulberry32), so a failing drill can be replayed with its seed. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/** Decides faults and counts the ones it injected. */
export class FaultInjector {
  readonly injected: Record<FaultKind, number> = Object.fromEntries(FAULT_KINDS.map((k) => [k, 0])) as Record<
    FaultKind,
    number
  >;
  readonly #rates: FaultRates;
  readonly #random: () => number;
  #enabled = true;

  constructor(rates: FaultRates, random: () => number) {
    this.#rates = rates;
    this.#random = random;
  }

  /** Whether to inject `kind` now (and counts it when so). */
  roll(kind: FaultKind): boolean {
    if (!this.#enabled || this.#random() >= this.#rates[kind]) return false;
    this.injected[kind] += 1;
    return true;
  }

  /** Stops injecting, so the system can settle and be checked. */
  disable(): void {
    this.#enabled = false;
  }
}

/** An error the drill throws on purpose, named after its fault. */
export class InjectedFault extends Error {
  constructor(kind: FaultKind, detail: string) {
    super(`injected ${kind}: ${detail}`);
    this.name = kind === 'dynamoThrottle' ? 'ProvisionedThroughputExceededException' : 'InjectedFault';
  }
}

/** A property of `target`; methods bound to it, so classes with private fields keep working behind a proxy. */
function bound(target: object, property: string | symbol, receiver: unknown): unknown {
  const value: unknown = Reflect.get(target, property, receiver);
  return typeof value === 'function' ? value.bind(target) : value;
}

/** What a faulty publisher rejects forever, and whom it tells of the messages of a call that timed out. */
export interface PublisherFaults {
  /** Poison messages SQS rejects forever, by the queue they are sent to (a subscriber's). */
  readonly poisoned: (message: Envelope, queueUrl: string) => boolean;
  /** The messages of a call that timed out: marked SENT, sent nowhere, they wait for reconciliation. */
  readonly timedOut?: (queueUrl: string, messages: readonly Envelope[]) => void;
}

/** SQS send errors per entry, whole-call timeouts, and poison messages that SQS rejects forever. */
export function faultyPublisher(
  publisher: MessagePublisher,
  faults: FaultInjector,
  { poisoned, timedOut = () => {} }: PublisherFaults,
): MessagePublisher {
  return {
    async publishBatch(
      queueUrl: string,
      messages: readonly Envelope[],
      options?: PublishOptions,
    ): Promise<PublishResult> {
      if (faults.roll('sqsTimeout')) {
        timedOut(queueUrl, messages);
        throw new InjectedFault('sqsTimeout', 'SendMessageBatch timed out');
      }
      const failed: { messageId: string; error: string }[] = [];
      const deliverable: Envelope[] = [];
      for (const message of messages) {
        if (poisoned(message, queueUrl)) {
          failed.push({
            messageId: message.messageId,
            error: 'InvalidMessageContents: poisoned by the drill',
          });
        } else if (faults.roll('sqsSendError')) {
          failed.push({ messageId: message.messageId, error: 'InternalError: injected sqsSendError' });
        } else deliverable.push(message);
      }
      if (deliverable.length === 0) return { sent: [], failed };
      const result = await publisher.publishBatch(queueUrl, deliverable, options);
      return { sent: result.sent, failed: [...failed, ...result.failed] };
    },
  };
}

/** DynamoDB throttling on any call, before it reaches the table (so nothing is half-written). */
export function faultyDocumentClient(
  client: DynamoDBDocumentClient,
  faults: FaultInjector,
): DynamoDBDocumentClient {
  return new Proxy(client, {
    get(target, property, receiver) {
      if (property !== 'send') return bound(target, property, receiver);
      return (command: Parameters<DynamoDBDocumentClient['send']>[0]) => {
        if (faults.roll('dynamoThrottle')) {
          return Promise.reject(
            new InjectedFault('dynamoThrottle', 'Rate of requests exceeds the allowed throughput'),
          );
        }
        return target.send(command);
      };
    },
  });
}

/**
 * The relay (or a sweeper) crashing between its SENT mark and its send: the message is left SENT although nobody
 * sent it, and a retried stream record finds it marked already, so only reconciliation (after the confirmation
 * deadline) sends it. `crashed` hears of each message (its row's key) left so.
 */
export function crashingAfterSend<T extends Pick<SweepStore, 'markSent'>>(
  store: T,
  faults: FaultInjector,
  crashed: (messageId: string) => void = () => {},
): T {
  return new Proxy(store, {
    get(target, property, receiver) {
      if (property !== 'markSent') return bound(target, property, receiver);
      return async (mark: Parameters<SweepStore['markSent']>[0]) => {
        const outcome = await target.markSent(mark);
        if (outcome === 'SENT' && faults.roll('relayCrashAfterSend')) {
          crashed(mark.messageId);
          throw new InjectedFault(
            'relayCrashAfterSend',
            `after marking ${mark.messageId} SENT, before its send`,
          );
        }
        return outcome;
      };
    },
  });
}

/**
 * A sweeper run that dies part-way (after its n-th store call: a claim taken, a send done, a mark not
 * written), decided once per run so that a run either finishes or crashes, as a real Lambda would.
 */
export function crashingSweeperStore(
  store: SweepStore,
  faults: FaultInjector,
  random: () => number,
): SweepStore {
  const crashAt = faults.roll('sweeperCrash') ? 1 + Math.floor(random() * 40) : Number.POSITIVE_INFINITY;
  let calls = 0;
  return new Proxy(store, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      if (typeof value !== 'function') return value;
      return async (...args: unknown[]) => {
        calls += 1;
        if (calls >= crashAt) throw new InjectedFault('sweeperCrash', `sweeper died at store call ${calls}`);
        return (value as (...a: unknown[]) => Promise<unknown>).apply(target, args);
      };
    },
  });
}

/**
 * A consumer that fails transiently before its effect, or crashes after the effect committed and before its receipt
 * is sent (the confirmation is the last step of a message before the ack, so failing it leaves the effect applied
 * and the message redelivered). With `commits`, every inbox row committed is noted there, so that those of
 * deliveries that then failed are counted: no metric counts them.
 */
export function faultyConsumerDeps(
  deps: ConsumeDeps,
  faults: FaultInjector,
  commits?: UnreportedCommits,
): ConsumeDeps {
  const confirmer = deps.confirmer;
  return {
    ...deps,
    client: new Proxy(deps.client, {
      get(target, property, receiver) {
        if (property !== 'send') return bound(target, property, receiver);
        return (command: Parameters<DynamoDBDocumentClient['send']>[0]) => {
          if (faults.roll('consumerTransientError')) {
            return Promise.reject(new InjectedFault('consumerTransientError', 'downstream unavailable'));
          }
          const sent = target.send(command);
          if (commits === undefined) return sent;
          return sent.then((output) => {
            commits.committed(command, deps.inboxTable);
            return output;
          });
        };
      },
    }),
    ...(confirmer === undefined
      ? {}
      : {
          confirmer: {
            confirm: async (messageId: string, now: Date, outcome?: string) => {
              if (faults.roll('consumerCrashAfterCommit')) {
                throw new InjectedFault(
                  'consumerCrashAfterCommit',
                  `effect of ${messageId} committed, no receipt, no ack`,
                );
              }
              return confirmer.confirm(messageId, now, outcome);
            },
          },
        }),
  };
}

/**
 * DynamoDB's answer to contention on a hot item, injected: a transaction that touches one of `hotItems` (keys as
 * {@link transactionItemKeys} spells them) is cancelled with `TransactionConflict` at the `hotSkuConflict` rate,
 * per try, before it reaches the table (a cancelled transaction writes nothing).
 */
export function conflictingDocumentClient(
  client: DynamoDBDocumentClient,
  faults: FaultInjector,
  hotItems: ReadonlySet<string>,
): DynamoDBDocumentClient {
  return new Proxy(client, {
    get(target, property, receiver) {
      if (property !== 'send') return bound(target, property, receiver);
      return (command: Parameters<DynamoDBDocumentClient['send']>[0]) => {
        if (command instanceof TransactWriteCommand) {
          const keys = transactionItemKeys(command.input);
          if (keys.some((key) => hotItems.has(key)) && faults.roll('hotSkuConflict')) {
            return Promise.reject(
              new TransactionCanceledException({
                message: 'Transaction cancelled, please refer cancellation reasons for specific reasons',
                $metadata: {},
                CancellationReasons: keys.map((key) => ({
                  Code: hotItems.has(key) ? 'TransactionConflict' : 'None',
                })),
              }),
            );
          }
        }
        return target.send(command);
      };
    },
  });
}

/** DynamoDB throttling on every call of a store, before it reaches the table. */
export function throttledStore<T extends object>(store: T, faults: FaultInjector): T {
  return new Proxy(store, {
    get(target, property, receiver) {
      const value = bound(target, property, receiver);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        if (faults.roll('dynamoThrottle')) {
          return Promise.reject(
            new InjectedFault('dynamoThrottle', 'Rate of requests exceeds the allowed throughput'),
          );
        }
        return (value as (...a: unknown[]) => unknown)(...args);
      };
    },
  });
}
