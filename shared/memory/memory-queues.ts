import { createHash, randomUUID } from 'node:crypto';
import type { SQSRecord } from 'aws-lambda';
import type { DeadLetter, QueueOperations } from '../consumer/failure-handling.ts';
import type { Envelope } from '../message/envelope.ts';
import type { MessagePublisher, PublishOptions, PublishResult } from '../relay/message-publisher.ts';
import { fifoFields, messageAttributes, messageBody } from '../relay/wire-format.ts';

/** Settings of an in-memory queue, as SQS has them. */
export interface MemoryQueueSettings {
  readonly visibilityTimeoutMs: number;
  /** With `deadLetterQueueUrl`: receives after which the message moves to the DLQ (redrive policy). */
  readonly maxReceiveCount?: number;
  readonly deadLetterQueueUrl?: string;
  /** How long SQS keeps a message. @default 4 days */
  readonly retentionMs?: number;
  /** Delay before a new message can be received. @default 0 */
  readonly delayMs?: number;
  /** Largest body plus attributes, in bytes. @default 1 MiB */
  readonly maximumMessageBytes?: number;
  /** FIFO: in order per message group, one group in flight at a time, 5-minute deduplication. @default false */
  readonly fifo?: boolean;
  /** FIFO: deduplicate on a SHA-256 of the body when a message has no deduplication id. @default false */
  readonly contentBasedDeduplication?: boolean;
}

/** A message attribute: `String`, `Number` or `Binary`, optionally with a custom suffix (`String.json`). */
export interface MemoryMessageAttribute {
  readonly dataType: string;
  readonly stringValue?: string;
  readonly binaryValue?: Uint8Array;
}

/** A message to send. */
export interface MemoryOutgoingMessage {
  readonly body: string;
  readonly attributes?: Readonly<Record<string, MemoryMessageAttribute>>;
  /** System attributes the sender sets (`AWSTraceHeader`). */
  readonly systemAttributes?: Readonly<Record<string, MemoryMessageAttribute>>;
  /** Overrides the queue's delay (standard queues only). */
  readonly delayMs?: number;
  /** FIFO: the message group (required). */
  readonly groupId?: string;
  /** FIFO: the deduplication id (required unless the queue deduplicates on content). */
  readonly deduplicationId?: string;
}

/** What SQS answers a send with. */
export interface MemorySentMessage {
  readonly messageId: string;
  /** FIFO: the message's sequence number. */
  readonly sequenceNumber?: string;
}

/** A received message, with what ReceiveMessage reports about it. */
export interface MemoryReceivedMessage {
  readonly messageId: string;
  readonly receiptHandle: string;
  readonly body: string;
  readonly attributes: Readonly<Record<string, MemoryMessageAttribute>>;
  readonly systemAttributes: Readonly<Record<string, MemoryMessageAttribute>>;
  /** ApproximateReceiveCount, this receive included. */
  readonly receiveCount: number;
  /** SentTimestamp, epoch ms. */
  readonly sentAt: number;
  /** ApproximateFirstReceiveTimestamp, epoch ms. */
  readonly firstReceivedAt: number;
  readonly groupId?: string;
  readonly deduplicationId?: string;
  readonly sequenceNumber?: string;
  /** Set on a message the redrive policy moved here: the queue it came from. */
  readonly deadLetterSourceQueueUrl?: string;
}

/** Counts behind GetQueueAttributes' ApproximateNumberOf… attributes. */
export interface MemoryQueueCounts {
  /** Messages that can be received now. */
  readonly visible: number;
  /** Received and not yet deleted nor visible again. */
  readonly inFlight: number;
  /** Sent with a delay that has not passed. */
  readonly delayed: number;
}

/** An SQS request the service would refuse; `code` is the exception name SQS answers with. */
export class MemoryQueueError extends Error {
  readonly code:
    | 'QueueDoesNotExist'
    | 'ReceiptHandleIsInvalid'
    | 'MessageNotInflight'
    | 'InvalidParameterValue'
    | 'MissingParameter'
    | 'InvalidMessageContents';

  constructor(code: MemoryQueueError['code'], message: string) {
    super(message);
    this.name = code;
    this.code = code;
  }
}

/** A queue's messages and FIFO bookkeeping, as {@link MemoryQueues.exportQueue} gives them. */
export interface MemoryQueueState {
  readonly messages: readonly StoredMessage[];
  readonly sentIds: readonly (readonly [string, { readonly sent: MemorySentMessage; readonly at: number }])[];
  readonly sequence: string;
}

/** A message as a queue holds it. */
export interface StoredMessage {
  readonly id: string;
  readonly body: string;
  readonly attributes: Readonly<Record<string, MemoryMessageAttribute>>;
  readonly systemAttributes: Readonly<Record<string, MemoryMessageAttribute>>;
  readonly sentAt: number;
  readonly groupId: string | undefined;
  readonly deduplicationId: string | undefined;
  readonly sequenceNumber: string | undefined;
  receiveCount: number;
  visibleAt: number;
  firstReceivedAt: number | undefined;
  receiptHandle: string | undefined;
  deadLetterSourceQueueUrl: string | undefined;
}

interface Queue {
  settings: MemoryQueueSettings;
  readonly messages: Map<string, StoredMessage>;
  /** FIFO: deduplication id → the message it sent, for 5 minutes. */
  readonly sentIds: Map<string, { readonly sent: MemorySentMessage; readonly at: number }>;
  sequence: bigint;
}

const SQS = {
  retentionMs: 4 * 24 * 60 * 60 * 1000,
  maximumMessageBytes: 1024 * 1024,
  // FIFO queues drop a message whose deduplication id was sent in the last 5 minutes.
  deduplicationMs: 5 * 60 * 1000,
  // A message's visibility timeout may reach at most 12 hours past its first receive.
  maxVisibilityMs: 12 * 60 * 60 * 1000,
  // The characters SQS accepts in a body: #x9 | #xA | #xD | #x20-#xD7FF | #xE000-#xFFFD | #x10000-#x10FFFF.
  invalidCharacters: /[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/u,
} as const;

/**
 * In-memory SQS queues for tests, the scale drill and the local runtime's embedded backend: delays,
 * batches, visibility timeouts, receive counts, redrive to a DLQ after maxReceiveCount, retention,
 * ChangeMessageVisibility, FIFO groups with deduplication, and dead-lettering with a reason.
 * Time comes from the injected clock, so a drill can run hours of backoff in seconds.
 */
export class MemoryQueues implements MessagePublisher, QueueOperations {
  readonly #queues = new Map<string, Queue>();
  readonly #clock: () => Date;
  readonly #listeners: ((queueUrl: string) => void)[] = [];

  constructor(queues: Readonly<Record<string, MemoryQueueSettings>>, clock: () => Date) {
    this.#clock = clock;
    for (const [url, settings] of Object.entries(queues)) this.createQueue(url, settings);
  }

  /** Adds an empty queue (or replaces the settings of an existing one, keeping its messages). */
  createQueue(url: string, settings: MemoryQueueSettings): void {
    const existing = this.#queues.get(url);
    if (existing) {
      existing.settings = settings;
      return;
    }
    this.#queues.set(url, { settings, messages: new Map(), sentIds: new Map(), sequence: 0n });
  }

  /** A queue's messages (visible, in flight, delayed) and FIFO bookkeeping, for a copy kept on disk. */
  exportQueue(url: string): MemoryQueueState {
    const queue = this.#queue(url);
    return {
      messages: [...queue.messages.values()].map((message) => ({ ...message })),
      sentIds: [...queue.sentIds],
      sequence: queue.sequence.toString(),
    };
  }

  /** Puts a queue's messages back as exported (receipt handles and visibility included); the queue must exist. */
  importQueue(url: string, state: MemoryQueueState): void {
    const queue = this.#queue(url);
    queue.messages.clear();
    for (const message of state.messages) queue.messages.set(message.id, { ...message });
    queue.sentIds.clear();
    for (const [id, sent] of state.sentIds) queue.sentIds.set(id, sent);
    queue.sequence = BigInt(state.sequence);
  }

  /** Removes a queue and its messages. */
  deleteQueue(url: string): void {
    this.#queue(url);
    this.#queues.delete(url);
  }

  /** Whether a queue exists. */
  hasQueue(url: string): boolean {
    return this.#queues.has(url);
  }

  /** A queue's settings. */
  settings(url: string): MemoryQueueSettings {
    return this.#queue(url).settings;
  }

  /** Calls `listener` with the queue's URL whenever a message is sent or moved to a queue (for long polls). */
  onMessage(listener: (queueUrl: string) => void): void {
    this.#listeners.push(listener);
  }

  /**
   * Sends one message, as SendMessage does: checked against SQS's rules, deduplicated on a FIFO queue
   * (a duplicate answers with the first message's id and is not queued again).
   */
  send(queueUrl: string, message: MemoryOutgoingMessage): MemorySentMessage {
    const queue = this.#queue(queueUrl);
    const now = this.#clock().getTime();
    checkMessage(queue.settings, message);
    const fifo = queue.settings.fifo === true;
    const deduplicationId = fifo
      ? (message.deduplicationId ?? createHash('sha256').update(message.body).digest('hex'))
      : undefined;
    if (deduplicationId !== undefined) {
      for (const [id, { at }] of queue.sentIds) if (now - at >= SQS.deduplicationMs) queue.sentIds.delete(id);
      const duplicate = queue.sentIds.get(deduplicationId);
      if (duplicate) return duplicate.sent;
    }
    const id = randomUUID();
    let sequenceNumber: string | undefined;
    if (fifo) {
      queue.sequence += 1n;
      sequenceNumber = (10n ** 19n + queue.sequence).toString();
    }
    queue.messages.set(id, {
      id,
      body: message.body,
      attributes: { ...(message.attributes ?? {}) },
      systemAttributes: { ...(message.systemAttributes ?? {}) },
      sentAt: now,
      groupId: message.groupId,
      deduplicationId,
      sequenceNumber,
      receiveCount: 0,
      visibleAt: now + (message.delayMs ?? queue.settings.delayMs ?? 0),
      firstReceivedAt: undefined,
      receiptHandle: undefined,
      deadLetterSourceQueueUrl: undefined,
    });
    const sent = { messageId: id, ...(sequenceNumber === undefined ? {} : { sequenceNumber }) };
    if (deduplicationId !== undefined) queue.sentIds.set(deduplicationId, { sent, at: now });
    this.#notify(queueUrl);
    return sent;
  }

  /**
   * Receives up to `max` visible messages, as ReceiveMessage does: each one's receive count goes up and it
   * is hidden for the visibility timeout; a message past the redrive policy's maxReceiveCount moves to the
   * DLQ instead; on a FIFO queue, a group with a message in flight gives nothing more.
   */
  receiveMessages(
    queueUrl: string,
    options: { readonly max: number; readonly visibilityTimeoutMs?: number },
  ): MemoryReceivedMessage[] {
    const queue = this.#queue(queueUrl);
    const now = this.#clock().getTime();
    this.#expire(queue, now);
    const busyGroups = new Set<string>();
    if (queue.settings.fifo === true) {
      for (const message of queue.messages.values()) {
        if (message.groupId !== undefined && message.receiptHandle !== undefined && message.visibleAt > now) {
          busyGroups.add(message.groupId);
        }
      }
    }
    const visibilityMs = options.visibilityTimeoutMs ?? queue.settings.visibilityTimeoutMs;
    const received: MemoryReceivedMessage[] = [];
    for (const message of [...queue.messages.values()]) {
      if (received.length >= options.max) break;
      if (message.visibleAt > now) continue;
      if (message.groupId !== undefined && busyGroups.has(message.groupId)) continue;
      if (this.#redrive(queueUrl, message)) continue;
      message.receiveCount += 1;
      message.firstReceivedAt ??= now;
      message.visibleAt = now + visibilityMs;
      message.receiptHandle = encodeReceipt(message);
      received.push(toReceived(message));
    }
    return received;
  }

  /**
   * Deletes a received message. A stale receipt handle (from an earlier receive) deletes nothing, as SQS
   * documents; one SQS never issued throws `ReceiptHandleIsInvalid`.
   */
  deleteMessage(queueUrl: string, receiptHandle: string): void {
    const queue = this.#queue(queueUrl);
    const id = decodeReceipt(receiptHandle);
    if (queue.messages.get(id)?.receiptHandle === receiptHandle) queue.messages.delete(id);
  }

  /**
   * Changes how long a received message stays hidden, from now, as ChangeMessageVisibility does: throws
   * `MessageNotInflight` when it is visible again, and `InvalidParameterValue` for a deleted message, a stale
   * receipt handle or a timeout past 12 hours.
   */
  changeMessageVisibility(queueUrl: string, receiptHandle: string, seconds: number): void {
    const queue = this.#queue(queueUrl);
    const message = queue.messages.get(decodeReceipt(receiptHandle));
    const now = this.#clock().getTime();
    if (message === undefined || message.receiptHandle !== receiptHandle) {
      throw new MemoryQueueError(
        'InvalidParameterValue',
        `Value ${receiptHandle} for parameter ReceiptHandle is invalid. Reason: Message does not exist or is not available for visibility timeout change.`,
      );
    }
    if (message.visibleAt <= now)
      throw new MemoryQueueError('MessageNotInflight', 'Message is not in flight');
    if (
      !Number.isInteger(seconds) ||
      seconds < 0 ||
      now + seconds * 1000 - (message.firstReceivedAt ?? now) > SQS.maxVisibilityMs
    ) {
      throw new MemoryQueueError(
        'InvalidParameterValue',
        `Value ${seconds} for parameter VisibilityTimeout is invalid. Reason: Total VisibilityTimeout for the message is beyond the limit [43200 seconds]`,
      );
    }
    message.visibleAt = now + seconds * 1000;
    if (seconds === 0) this.#notify(queueUrl);
  }

  /** How many messages are visible, in flight and delayed. */
  counts(queueUrl: string): MemoryQueueCounts {
    const queue = this.#queue(queueUrl);
    const now = this.#clock().getTime();
    this.#expire(queue, now);
    let visible = 0;
    let inFlight = 0;
    let delayed = 0;
    for (const message of queue.messages.values()) {
      if (message.visibleAt <= now) visible += 1;
      else if (message.receiptHandle === undefined) delayed += 1;
      else inFlight += 1;
    }
    return { visible, inFlight, delayed };
  }

  /** Deletes every message of a queue. */
  purge(queueUrl: string): void {
    this.#queue(queueUrl).messages.clear();
  }

  /** @inheritdoc */
  async publishBatch(
    queueUrl: string,
    messages: readonly Envelope[],
    options: PublishOptions = {},
  ): Promise<PublishResult> {
    const fifo = this.#queue(queueUrl).settings.fifo === true;
    const sent: string[] = [];
    const failed: { messageId: string; error: string }[] = [];
    for (const message of messages) {
      const attributes = Object.fromEntries(
        Object.entries(messageAttributes(message)).map(([name, value]) => [
          name,
          { dataType: value.DataType ?? 'String', stringValue: value.StringValue ?? '' },
        ]),
      );
      try {
        this.send(queueUrl, {
          body: messageBody(message),
          attributes,
          ...(fifo ? memoryFifoFields(message, options.deliveryRounds?.get(message.messageId) ?? 0) : {}),
        });
        sent.push(message.messageId);
      } catch (error) {
        if (!(error instanceof MemoryQueueError)) throw error;
        failed.push({ messageId: message.messageId, error: `${error.code}: ${error.message}` });
      }
    }
    return { sent, failed };
  }

  /** Receives up to `max` visible messages as Lambda SQS records, applying the redrive policy first. */
  receive(queueUrl: string, max: number): SQSRecord[] {
    return this.receiveMessages(queueUrl, { max }).map((message) => toRecord(queueUrl, message));
  }

  /** Deletes a received message; a stale receipt handle is ignored, as SQS does. */
  delete(queueUrl: string, receiptHandle: string): void {
    this.deleteMessage(queueUrl, receiptHandle);
  }

  /** @inheritdoc */
  async changeVisibility(queueUrl: string, receiptHandle: string, seconds: number): Promise<void> {
    try {
      this.changeMessageVisibility(queueUrl, receiptHandle, seconds);
    } catch (error) {
      // The consumer's own calls never need to fail: a message it no longer holds is someone else's now.
      if (!(error instanceof MemoryQueueError) || error.code === 'QueueDoesNotExist') throw error;
    }
  }

  /** @inheritdoc */
  async deadLetter({ queueUrl, record, reason, lastError }: DeadLetter): Promise<void> {
    this.send(queueUrl, {
      body: record.body,
      attributes: {
        ...stringAttributes(record),
        dead_letter_reason: { dataType: 'String', stringValue: reason },
        // SQS refuses an empty attribute value; the SQS adapter writes '-' for an empty error too.
        last_error: { dataType: 'String', stringValue: lastError || '-' },
      },
    });
  }

  /** @inheritdoc */
  async requeue(queueUrl: string, record: SQSRecord, delaySeconds: number): Promise<void> {
    const fifo = this.#queue(queueUrl).settings.fifo === true;
    this.send(queueUrl, {
      body: record.body,
      attributes: stringAttributes(record),
      // FIFO queues take no per-message delay; the copy keeps its group and dedupes on this receive.
      ...(fifo
        ? { groupId: record.attributes.MessageGroupId ?? record.messageId, deduplicationId: record.messageId }
        : { delayMs: delaySeconds * 1000 }),
    });
  }

  /** Messages currently in a queue (visible or not), with their receive count. */
  depth(queueUrl: string): number {
    return this.#queue(queueUrl).messages.size;
  }

  /** Bodies and attributes (string values) of a queue's messages, for inspection. */
  peek(queueUrl: string): { body: string; attributes: Record<string, string>; receiveCount: number }[] {
    return [...this.#queue(queueUrl).messages.values()].map(({ body, attributes, receiveCount }) => ({
      body,
      attributes: Object.fromEntries(
        Object.entries(attributes).map(([name, value]) => [name, value.stringValue ?? '']),
      ),
      receiveCount,
    }));
  }

  /** Moves a message past the redrive policy's maxReceiveCount to the DLQ; true when it moved. */
  #redrive(queueUrl: string, message: StoredMessage): boolean {
    const { maxReceiveCount, deadLetterQueueUrl } = this.#queue(queueUrl).settings;
    if (maxReceiveCount === undefined || deadLetterQueueUrl === undefined) return false;
    if (message.receiveCount < maxReceiveCount) return false;
    const deadLetters = this.#queues.get(deadLetterQueueUrl);
    if (deadLetters === undefined) return false;
    this.#queue(queueUrl).messages.delete(message.id);
    // SQS moves the message itself: same id, body, attributes, sent time and receive count.
    deadLetters.messages.set(message.id, {
      ...message,
      visibleAt: this.#clock().getTime(),
      receiptHandle: undefined,
      deadLetterSourceQueueUrl: queueUrl,
    });
    this.#notify(deadLetterQueueUrl);
    return true;
  }

  /** Drops messages older than the queue's retention period. */
  #expire(queue: Queue, now: number): void {
    const retention = queue.settings.retentionMs ?? SQS.retentionMs;
    for (const message of queue.messages.values()) {
      if (now - message.sentAt >= retention) queue.messages.delete(message.id);
    }
  }

  #notify(queueUrl: string): void {
    for (const listener of this.#listeners) listener(queueUrl);
  }

  #queue(url: string): Queue {
    const queue = this.#queues.get(url);
    if (!queue) {
      throw new MemoryQueueError(
        'QueueDoesNotExist',
        `AWS.SimpleQueueService.NonExistentQueue: The specified queue does not exist: ${url}`,
      );
    }
    return queue;
  }
}

/** Refuses a message SQS would refuse. */
function checkMessage(settings: MemoryQueueSettings, message: MemoryOutgoingMessage): void {
  if (message.body.length === 0) {
    throw new MemoryQueueError('MissingParameter', 'The request must contain the parameter MessageBody.');
  }
  if (SQS.invalidCharacters.test(message.body)) {
    throw new MemoryQueueError('InvalidMessageContents', 'Invalid characters found in the message body.');
  }
  const attributes = Object.entries(message.attributes ?? {});
  if (attributes.length > 10) {
    throw new MemoryQueueError(
      'InvalidParameterValue',
      `Number of message attributes [${attributes.length}] exceeds the allowed maximum [10].`,
    );
  }
  let bytes = Buffer.byteLength(message.body);
  for (const [name, attribute] of attributes) {
    const type = attribute.dataType.split('.')[0];
    const hasValue =
      type === 'Binary' ? attribute.binaryValue !== undefined : (attribute.stringValue ?? '') !== '';
    if ((type !== 'String' && type !== 'Number' && type !== 'Binary') || !hasValue) {
      throw new MemoryQueueError(
        'InvalidParameterValue',
        `The message attribute '${name}' must contain non-empty message attribute value for message attribute type '${attribute.dataType}'.`,
      );
    }
    bytes += Buffer.byteLength(name) + Buffer.byteLength(attribute.dataType);
    bytes += attribute.binaryValue?.byteLength ?? Buffer.byteLength(attribute.stringValue ?? '');
  }
  const maximum = settings.maximumMessageBytes ?? SQS.maximumMessageBytes;
  if (bytes > maximum) {
    throw new MemoryQueueError(
      'InvalidParameterValue',
      `One or more parameters are invalid. Reason: Message must be shorter than ${maximum} bytes.`,
    );
  }
  if (settings.fifo === true) {
    if (message.groupId === undefined || message.groupId === '') {
      throw new MemoryQueueError(
        'MissingParameter',
        'The request must contain the parameter MessageGroupId.',
      );
    }
    if (message.deduplicationId === undefined && settings.contentBasedDeduplication !== true) {
      throw new MemoryQueueError(
        'InvalidParameterValue',
        'The queue should either have ContentBasedDeduplication enabled or MessageDeduplicationId provided explicitly',
      );
    }
    if (message.delayMs !== undefined && message.delayMs !== 0) {
      throw new MemoryQueueError(
        'InvalidParameterValue',
        'Value for parameter DelaySeconds is invalid. Reason: The request include parameter that is not valid for this queue type.',
      );
    }
  }
}

/** A receipt handle names its message and receive, so a stale one is told apart from a made-up one. */
function encodeReceipt(message: StoredMessage): string {
  return Buffer.from(`${message.id}:${message.receiveCount}:${randomUUID()}`).toString('base64url');
}

function decodeReceipt(receiptHandle: string): string {
  const [id, count, nonce] = Buffer.from(receiptHandle, 'base64url').toString('utf8').split(':');
  if (id === undefined || count === undefined || nonce === undefined || !/^\d+$/.test(count)) {
    throw new MemoryQueueError(
      'ReceiptHandleIsInvalid',
      `The input receipt handle "${receiptHandle}" is not a valid receipt handle.`,
    );
  }
  return id;
}

function toReceived(message: StoredMessage): MemoryReceivedMessage {
  return {
    messageId: message.id,
    receiptHandle: message.receiptHandle ?? '',
    body: message.body,
    attributes: message.attributes,
    systemAttributes: message.systemAttributes,
    receiveCount: message.receiveCount,
    sentAt: message.sentAt,
    firstReceivedAt: message.firstReceivedAt ?? message.sentAt,
    ...(message.groupId === undefined ? {} : { groupId: message.groupId }),
    ...(message.deduplicationId === undefined ? {} : { deduplicationId: message.deduplicationId }),
    ...(message.sequenceNumber === undefined ? {} : { sequenceNumber: message.sequenceNumber }),
    ...(message.deadLetterSourceQueueUrl === undefined
      ? {}
      : { deadLetterSourceQueueUrl: message.deadLetterSourceQueueUrl }),
  };
}

function toRecord(queueUrl: string, message: MemoryReceivedMessage): SQSRecord {
  return {
    messageId: message.messageId,
    receiptHandle: message.receiptHandle,
    body: message.body,
    attributes: {
      ApproximateReceiveCount: String(message.receiveCount),
      SentTimestamp: String(message.sentAt),
      SenderId: 'memory',
      ApproximateFirstReceiveTimestamp: String(message.firstReceivedAt),
      ...(message.groupId === undefined ? {} : { MessageGroupId: message.groupId }),
      ...(message.deduplicationId === undefined ? {} : { MessageDeduplicationId: message.deduplicationId }),
      ...(message.sequenceNumber === undefined ? {} : { SequenceNumber: message.sequenceNumber }),
    },
    messageAttributes: Object.fromEntries(
      Object.entries(message.attributes).map(([name, value]) => [
        name,
        {
          dataType: value.dataType,
          ...(value.stringValue === undefined ? {} : { stringValue: value.stringValue }),
          ...(value.binaryValue === undefined
            ? {}
            : { binaryValue: Buffer.from(value.binaryValue).toString('base64') }),
          stringListValues: [],
          binaryListValues: [],
        },
      ]),
    ),
    md5OfBody: createHash('md5').update(message.body).digest('hex'),
    eventSource: 'aws:sqs',
    eventSourceARN: `arn:aws:sqs:memory:000000000000:${queueUrl.split('/').pop() ?? queueUrl}`,
    awsRegion: 'memory',
  };
}

/** A received record's string attributes, as a send takes them (SQS refuses empty values). */
function stringAttributes(record: SQSRecord): Record<string, MemoryMessageAttribute> {
  return Object.fromEntries(
    Object.entries(record.messageAttributes)
      .filter(([, value]) => value.stringValue !== undefined && value.stringValue !== '')
      .map(([name, value]) => [name, { dataType: value.dataType, stringValue: value.stringValue }]),
  );
}

/** The FIFO fields the SQS publisher sets, in the in-memory queues' terms. */
function memoryFifoFields(
  message: Envelope,
  round: number,
): Pick<MemoryOutgoingMessage, 'groupId' | 'deduplicationId'> {
  const fields = fifoFields(message, round);
  return { groupId: fields.MessageGroupId, deduplicationId: fields.MessageDeduplicationId };
}
