/**
 * The embedded backend's SQS queues: names, URLs, ARNs and attributes (as CreateQueue and
 * SetQueueAttributes take them, checked as SQS checks them), turned into the settings of the in-memory
 * queues. Both the SQS API and the stack deployer create and change queues through it.
 */
import type { MemoryQueueSettings, MemoryQueues } from '../../../../../shared/memory/index.ts';
import { WireError } from './wire-error.ts';

/** Options of {@link QueueCatalog}. */
export interface QueueCatalogOptions {
  readonly queues: MemoryQueues;
  /** The endpoint queue URLs start with (known once the server listens). */
  readonly endpoint: () => string;
  readonly region: string;
  readonly accountId: string;
  readonly clock?: () => Date;
}

/** A queue of the catalog: name, URL, ARN, attributes and times. */
export interface QueueEntry {
  readonly name: string;
  readonly url: string;
  readonly arn: string;
  attributes: Record<string, string>;
  readonly createdAt: number;
  lastModifiedAt: number;
}

/** Attributes every queue has unless set, and the range SQS accepts for each number. */
const NUMBER_ATTRIBUTES: Readonly<
  Record<string, { readonly byDefault: number; readonly min: number; readonly max: number }>
> = {
  DelaySeconds: { byDefault: 0, min: 0, max: 900 },
  MaximumMessageSize: { byDefault: 1_048_576, min: 1_024, max: 1_048_576 },
  MessageRetentionPeriod: { byDefault: 345_600, min: 60, max: 1_209_600 },
  ReceiveMessageWaitTimeSeconds: { byDefault: 0, min: 0, max: 20 },
  VisibilityTimeout: { byDefault: 30, min: 0, max: 43_200 },
  KmsDataKeyReusePeriodSeconds: { byDefault: 300, min: 60, max: 86_400 },
};

const OTHER_ATTRIBUTES = new Set([
  'Policy',
  'RedrivePolicy',
  'RedriveAllowPolicy',
  'KmsMasterKeyId',
  'SqsManagedSseEnabled',
  'FifoQueue',
  'ContentBasedDeduplication',
  'DeduplicationScope',
  'FifoThroughputLimit',
]);

/** Attributes GetQueueAttributes computes. */
const COMPUTED_ATTRIBUTES = [
  'ApproximateNumberOfMessages',
  'ApproximateNumberOfMessagesNotVisible',
  'ApproximateNumberOfMessagesDelayed',
  'CreatedTimestamp',
  'LastModifiedTimestamp',
  'QueueArn',
] as const;

const QUEUE_NAME = /^[a-zA-Z0-9_-]{1,80}$/;
const FIFO_QUEUE_NAME = /^[a-zA-Z0-9_-]{1,75}\.fifo$/;

/** The queues of the embedded backend. */
export class QueueCatalog {
  readonly queues: MemoryQueues;
  readonly #entries = new Map<string, QueueEntry>();
  readonly #endpoint: () => string;
  readonly #region: string;
  readonly #accountId: string;
  readonly #clock: () => Date;

  constructor(options: QueueCatalogOptions) {
    this.queues = options.queues;
    this.#endpoint = options.endpoint;
    this.#region = options.region;
    this.#accountId = options.accountId;
    this.#clock = options.clock ?? (() => new Date());
  }

  /**
   * Creates a queue and returns its URL; for an existing queue with the same attributes, just the URL
   * (CreateQueue is idempotent), and QueueNameExists when an attribute differs.
   */
  create(name: string, attributes: Readonly<Record<string, string>> = {}): string {
    const fifo = attributes.FifoQueue === 'true';
    if (!(fifo ? FIFO_QUEUE_NAME : QUEUE_NAME).test(name) || (!fifo && name.endsWith('.fifo'))) {
      throw invalidParameter(
        fifo
          ? 'The name of a FIFO queue can only include alphanumeric characters, hyphens, or underscores, must end with .fifo suffix and be 1 to 80 in length.'
          : 'Can only include alphanumeric characters, hyphens, or underscores. 1 to 80 in length',
      );
    }
    // SQS does not list FifoQueue among a standard queue's attributes.
    const { FifoQueue: _standard, ...rest } = attributes;
    const given = checkedAttributes(fifo ? attributes : rest, { fifo });
    const existing = this.#entries.get(name);
    if (existing) {
      const differing = Object.keys(given).find(
        (attribute) => existing.attributes[attribute] !== given[attribute],
      );
      if (differing !== undefined) {
        throw new WireError(
          'QueueNameExists',
          `A queue already exists with the same name and a different value for attribute ${differing}`,
          { queryCode: 'QueueAlreadyExists' },
        );
      }
      return existing.url;
    }
    const defaults: Record<string, string> = Object.fromEntries(
      Object.entries(NUMBER_ATTRIBUTES).map(([attribute, { byDefault }]) => [attribute, String(byDefault)]),
    );
    defaults.SqsManagedSseEnabled = 'true';
    if (fifo) {
      Object.assign(defaults, {
        ContentBasedDeduplication: 'false',
        DeduplicationScope: 'queue',
        FifoThroughputLimit: 'perQueue',
      });
    }
    const merged = { ...checkedAttributes(defaults, { fifo }), ...given };
    const now = this.#clock().getTime();
    const entry: QueueEntry = {
      name,
      url: `${this.#endpoint()}/${this.#accountId}/${name}`,
      arn: `arn:aws:sqs:${this.#region}:${this.#accountId}:${name}`,
      attributes: merged,
      createdAt: now,
      lastModifiedAt: now,
    };
    this.queues.createQueue(entry.url, this.#settings(entry));
    this.#entries.set(name, entry);
    return entry.url;
  }

  /** Changes attributes of a queue, as SetQueueAttributes does (FifoQueue cannot change). */
  setAttributes(queueUrl: string, attributes: Readonly<Record<string, string>>): void {
    const entry = this.#entry(queueUrl);
    const fifo = entry.attributes.FifoQueue === 'true';
    if (attributes.FifoQueue !== undefined && attributes.FifoQueue !== String(fifo)) {
      throw new WireError('InvalidAttributeName', 'FifoQueue cannot be changed after the queue is created');
    }
    const merged = checkedAttributes({ ...entry.attributes, ...attributes }, { fifo });
    // An empty RedrivePolicy removes it.
    if (attributes.RedrivePolicy === '') delete merged.RedrivePolicy;
    entry.attributes = merged;
    entry.lastModifiedAt = this.#clock().getTime();
    this.queues.createQueue(entry.url, this.#settings(entry));
  }

  /** Every queue's entry, for a copy kept on disk. */
  exportQueues(): QueueEntry[] {
    return [...this.#entries.values()].map((entry) => ({ ...entry, attributes: { ...entry.attributes } }));
  }

  /** Puts queues back as exported, empty, at this endpoint's URLs (the caller then restores their messages). */
  restoreQueues(entries: readonly QueueEntry[]): void {
    for (const entry of entries) {
      this.#entries.set(entry.name, {
        ...entry,
        url: `${this.#endpoint()}/${this.#accountId}/${entry.name}`,
        attributes: { ...entry.attributes },
      });
    }
    for (const entry of this.#entries.values()) this.queues.createQueue(entry.url, this.#settings(entry));
  }

  /** The URL and the dead-letter queue URL of the queue a URL names (any host), for who tracks changes. */
  touched(queueUrl: string): string[] {
    const entry = this.#entry(queueUrl);
    const redrive = this.#redrive(entry);
    return redrive === undefined ? [entry.url] : [entry.url, redrive.deadLetterQueueUrl];
  }

  /** Deletes a queue and its messages. */
  delete(queueUrl: string): void {
    const entry = this.entry(queueUrl);
    this.queues.deleteQueue(entry.url);
    this.#entries.delete(entry.name);
  }

  /** The URL of a queue by name; QueueDoesNotExist when there is none. */
  urlOf(name: string): string {
    const entry = this.#entries.get(name);
    if (entry === undefined) throw queueDoesNotExist(name);
    return entry.url;
  }

  /** Whether a queue of this name exists. */
  has(name: string): boolean {
    return this.#entries.has(name);
  }

  /** URLs of the queues whose names start with `prefix`, in name order. */
  list(prefix = ''): string[] {
    return [...this.#entries.values()]
      .filter((entry) => entry.name.startsWith(prefix))
      .sort((a, b) => (a.name < b.name ? -1 : 1))
      .map((entry) => entry.url);
  }

  /**
   * The queue a URL names. Any host is accepted (a client may say `localhost` for `127.0.0.1`); the account
   * and the name must match.
   */
  entry(queueUrl: string): Readonly<QueueEntry> {
    return this.#entry(queueUrl);
  }

  #entry(queueUrl: string): QueueEntry {
    const [account, name] = queueUrl.replace(/\/+$/, '').split('/').slice(-2);
    const entry = name === undefined ? undefined : this.#entries.get(name);
    if (entry === undefined || account !== this.#accountId) throw queueDoesNotExist(queueUrl);
    return entry;
  }

  /** GetQueueAttributes: `names` may hold `All`; an unknown name is refused with InvalidAttributeName. */
  attributes(queueUrl: string, names: readonly string[]): Record<string, string> {
    const entry = this.entry(queueUrl);
    const counts = this.queues.counts(entry.url);
    const all: Record<string, string> = {
      ...entry.attributes,
      ApproximateNumberOfMessages: String(counts.visible),
      ApproximateNumberOfMessagesNotVisible: String(counts.inFlight),
      ApproximateNumberOfMessagesDelayed: String(counts.delayed),
      CreatedTimestamp: String(Math.floor(entry.createdAt / 1000)),
      LastModifiedTimestamp: String(Math.floor(entry.lastModifiedAt / 1000)),
      QueueArn: entry.arn,
    };
    if (names.includes('All')) return all;
    const known = new Set<string>([
      ...Object.keys(NUMBER_ATTRIBUTES),
      ...OTHER_ATTRIBUTES,
      ...COMPUTED_ATTRIBUTES,
    ]);
    const unknown = names.find((name) => !known.has(name));
    if (unknown !== undefined) throw new WireError('InvalidAttributeName', `Unknown Attribute ${unknown}.`);
    return Object.fromEntries(
      names.filter((name) => all[name] !== undefined).map((name) => [name, all[name] ?? '']),
    );
  }

  /** The in-memory queue's settings for a queue's attributes. */
  #settings(entry: QueueEntry): MemoryQueueSettings {
    const number = (name: string): number =>
      Number(entry.attributes[name] ?? NUMBER_ATTRIBUTES[name]?.byDefault ?? 0);
    const redrive = this.#redrive(entry);
    return {
      visibilityTimeoutMs: number('VisibilityTimeout') * 1000,
      retentionMs: number('MessageRetentionPeriod') * 1000,
      delayMs: number('DelaySeconds') * 1000,
      maximumMessageBytes: number('MaximumMessageSize'),
      ...(entry.attributes.FifoQueue === 'true' ? { fifo: true } : {}),
      ...(entry.attributes.ContentBasedDeduplication === 'true' ? { contentBasedDeduplication: true } : {}),
      ...(redrive === undefined ? {} : redrive),
    };
  }

  /** The dead-letter queue and maxReceiveCount of a RedrivePolicy; the target must be a queue that exists. */
  #redrive(entry: QueueEntry): { deadLetterQueueUrl: string; maxReceiveCount: number } | undefined {
    const text = entry.attributes.RedrivePolicy;
    if (text === undefined || text === '') return undefined;
    const policy = parseRedrivePolicy(text);
    const target = [...this.#entries.values(), entry].find(
      (candidate) => candidate.arn === policy.deadLetterTargetArn,
    );
    if (target === undefined) {
      throw invalidParameter(
        `Value ${text} for parameter RedrivePolicy is invalid. Reason: Dead-letter target does not exist.`,
      );
    }
    if ((target.attributes.FifoQueue === 'true') !== (entry.attributes.FifoQueue === 'true')) {
      throw invalidParameter(
        `Value ${text} for parameter RedrivePolicy is invalid. Reason: Dead-letter queue must be same type of queue as the source.`,
      );
    }
    return { deadLetterQueueUrl: target.url, maxReceiveCount: policy.maxReceiveCount };
  }
}

/** A RedrivePolicy's JSON, checked: an ARN and a maxReceiveCount of 1 to 1000 (a number or its text). */
export function parseRedrivePolicy(text: string): { deadLetterTargetArn: string; maxReceiveCount: number } {
  let policy: { deadLetterTargetArn?: unknown; maxReceiveCount?: unknown };
  try {
    policy = JSON.parse(text) as typeof policy;
  } catch {
    throw invalidParameter(
      `Value ${text} for parameter RedrivePolicy is invalid. Reason: Redrive policy is not a valid JSON map.`,
    );
  }
  const maxReceiveCount = Number(policy.maxReceiveCount);
  if (
    typeof policy.deadLetterTargetArn !== 'string' ||
    !Number.isInteger(maxReceiveCount) ||
    maxReceiveCount < 1 ||
    maxReceiveCount > 1000
  ) {
    throw invalidParameter(
      `Value ${text} for parameter RedrivePolicy is invalid. Reason: Redrive policy does not contain mandatory attribute: deadLetterTargetArn, or maxReceiveCount is not between 1 and 1000.`,
    );
  }
  return { deadLetterTargetArn: policy.deadLetterTargetArn, maxReceiveCount };
}

function checkedAttributes(
  attributes: Record<string, string>,
  queue: { readonly fifo: boolean },
): Record<string, string> {
  const checked: Record<string, string> = {};
  for (const [name, value] of Object.entries(attributes)) {
    const range = NUMBER_ATTRIBUTES[name];
    if (range !== undefined) {
      const number = Number(value);
      if (!/^\d+$/.test(value) || number < range.min || number > range.max) {
        throw new WireError('InvalidAttributeValue', `Invalid value for the parameter ${name}.`);
      }
      checked[name] = String(number);
      continue;
    }
    if (!OTHER_ATTRIBUTES.has(name))
      throw new WireError('InvalidAttributeName', `Unknown Attribute ${name}.`);
    const fifoOnly =
      name === 'ContentBasedDeduplication' || name === 'DeduplicationScope' || name === 'FifoThroughputLimit';
    if (fifoOnly && !queue.fifo) {
      throw new WireError('InvalidAttributeName', `Unknown Attribute ${name}.`);
    }
    // SQS answers with the policy as compact JSON, whatever spacing it was given with.
    checked[name] =
      name === 'RedrivePolicy' && value !== '' ? JSON.stringify(parseRedrivePolicy(value)) : value;
  }
  return checked;
}

function queueDoesNotExist(what: string): WireError {
  return new WireError('QueueDoesNotExist', `The specified queue does not exist: ${what}`, {
    queryCode: 'AWS.SimpleQueueService.NonExistentQueue',
  });
}

function invalidParameter(message: string): WireError {
  return new WireError('InvalidParameterValue', message, { queryCode: 'InvalidParameterValue' });
}
