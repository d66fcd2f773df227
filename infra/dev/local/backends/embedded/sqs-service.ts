/**
 * The SQS API (`AmazonSQS`, JSON 1.0 as the current SDK speaks it) of the embedded backend: queues,
 * sends, receives with long polling, deletes and visibility changes, single and batched, over the in-memory
 * queues, with SQS's errors (each with the `x-amzn-query-error` code the SDK reads).
 */
import {
  type MemoryMessageAttribute,
  MemoryQueueError,
  type MemoryReceivedMessage,
} from '../../../../../shared/memory/index.ts';
import type { QueueCatalog } from './queue-catalog.ts';
import { md5OfAttributes, md5OfBody } from './sqs-md5.ts';
import { WireError } from './wire-error.ts';
import type { OperationContext, WireService } from './wire-server.ts';

type Input = Record<string, unknown>;

const SQS = {
  // ReceiveMessage returns at most 10 messages and long-polls for at most 20 seconds; a batch has 1 to 10 entries.
  maxMessages: 10,
  maxWaitSeconds: 20,
  maxBatchEntries: 10,
  // While long polling, check for messages whose visibility timeout ran out this often.
  pollIntervalMs: 50,
  // What ReceiveMessage reports as SenderId: the caller's IAM user id, for which the backend has a placeholder.
  senderId: 'AIDAEMBEDDEDBACKEND00',
} as const;

const BATCH_ENTRY_ID = /^[A-Za-z0-9_-]{1,80}$/;

/** The query-protocol code the SDK reads from `x-amzn-query-error`, per exception. */
const QUERY_CODES: Readonly<Record<MemoryQueueError['code'], string>> = {
  QueueDoesNotExist: 'AWS.SimpleQueueService.NonExistentQueue',
  ReceiptHandleIsInvalid: 'ReceiptHandleIsInvalid',
  MessageNotInflight: 'AWS.SimpleQueueService.MessageNotInflight',
  InvalidParameterValue: 'InvalidParameterValue',
  MissingParameter: 'MissingParameter',
  InvalidMessageContents: 'InvalidMessageContents',
};

/**
 * The SQS service over `catalog`.
 * @example
 * await startWireServer({ services: [sqsService(catalog)], log });
 */
export function sqsService(catalog: QueueCatalog): WireService {
  const waiters = new Map<string, Set<() => void>>();
  catalog.queues.onMessage((queueUrl) => {
    for (const wake of waiters.get(queueUrl) ?? []) wake();
  });
  const waitForMessage = (queueUrl: string, options: { ms: number; signal: AbortSignal }): Promise<void> =>
    new Promise((resolve) => {
      const set = waiters.get(queueUrl) ?? new Set<() => void>();
      waiters.set(queueUrl, set);
      const done = (): void => {
        clearTimeout(timer);
        set.delete(done);
        options.signal.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, options.ms);
      set.add(done);
      options.signal.addEventListener('abort', done, { once: true });
    });

  return {
    target: 'AmazonSQS',
    errorNamespace: 'com.amazonaws.sqs',
    queryCompatible: true,
    toWireError: sqsWireError,
    operations: {
      CreateQueue: (input) => ({
        QueueUrl: catalog.create(text(input, 'QueueName'), stringMap(input.Attributes)),
      }),
      GetQueueUrl: (input) => ({ QueueUrl: catalog.urlOf(text(input, 'QueueName')) }),
      ListQueues: (input) => {
        const urls = catalog.list(typeof input.QueueNamePrefix === 'string' ? input.QueueNamePrefix : '');
        const start = typeof input.NextToken === 'string' ? Number(input.NextToken) : 0;
        const size = typeof input.MaxResults === 'number' ? input.MaxResults : 1000;
        const page = urls.slice(start, start + size);
        return {
          ...(page.length === 0 ? {} : { QueueUrls: page }),
          ...(typeof input.MaxResults === 'number' && start + size < urls.length
            ? { NextToken: String(start + size) }
            : {}),
        };
      },
      DeleteQueue: (input) => {
        catalog.delete(text(input, 'QueueUrl'));
        return {};
      },
      GetQueueAttributes: (input) => {
        const names = Array.isArray(input.AttributeNames) ? (input.AttributeNames as string[]) : [];
        const attributes = catalog.attributes(text(input, 'QueueUrl'), names);
        return Object.keys(attributes).length === 0 ? {} : { Attributes: attributes };
      },
      SetQueueAttributes: (input) => {
        catalog.setAttributes(text(input, 'QueueUrl'), stringMap(input.Attributes));
        return {};
      },
      PurgeQueue: (input) => {
        catalog.queues.purge(catalog.entry(text(input, 'QueueUrl')).url);
        return {};
      },
      SendMessage: (input) => {
        const queueUrl = catalog.entry(text(input, 'QueueUrl')).url;
        return sendOne(catalog, { queueUrl, entry: input });
      },
      SendMessageBatch: (input) => {
        const queueUrl = catalog.entry(text(input, 'QueueUrl')).url;
        const entries = batchEntries(input);
        const totalBytes = entries.reduce(
          (total, entry) => total + Buffer.byteLength(String(entry.MessageBody ?? '')),
          0,
        );
        if (totalBytes > (catalog.queues.settings(queueUrl).maximumMessageBytes ?? 1_048_576)) {
          throw new WireError(
            'BatchRequestTooLong',
            'Batch requests cannot be longer than the maximum message size.',
            {
              queryCode: 'AWS.SimpleQueueService.BatchRequestTooLong',
            },
          );
        }
        return perEntry(entries, (entry) => sendOne(catalog, { queueUrl, entry }));
      },
      ReceiveMessage: (input, context) => receive(catalog, { input, context, waitForMessage }),
      DeleteMessage: (input) => {
        catalog.queues.deleteMessage(
          catalog.entry(text(input, 'QueueUrl')).url,
          text(input, 'ReceiptHandle'),
        );
        return {};
      },
      DeleteMessageBatch: (input) => {
        const queueUrl = catalog.entry(text(input, 'QueueUrl')).url;
        return perEntry(batchEntries(input), (entry) => {
          catalog.queues.deleteMessage(queueUrl, text(entry, 'ReceiptHandle'));
          return {};
        });
      },
      ChangeMessageVisibility: (input) => {
        catalog.queues.changeMessageVisibility(
          catalog.entry(text(input, 'QueueUrl')).url,
          text(input, 'ReceiptHandle'),
          integer(input, 'VisibilityTimeout'),
        );
        return {};
      },
      ChangeMessageVisibilityBatch: (input) => {
        const queueUrl = catalog.entry(text(input, 'QueueUrl')).url;
        return perEntry(batchEntries(input), (entry) => {
          catalog.queues.changeMessageVisibility(
            queueUrl,
            text(entry, 'ReceiptHandle'),
            integer(entry, 'VisibilityTimeout'),
          );
          return {};
        });
      },
    },
  };
}

/** SQS's answer for an error of the in-memory queues. */
export function sqsWireError(error: unknown): WireError | undefined {
  if (error instanceof WireError) return error;
  if (!(error instanceof MemoryQueueError)) return undefined;
  const message = error.message.replace(/^AWS\.SimpleQueueService\.NonExistentQueue: /, '');
  return new WireError(error.code, message, {
    queryCode: QUERY_CODES[error.code],
    ...(error.code === 'ReceiptHandleIsInvalid' ? { status: 404 } : {}),
  });
}

function sendOne(
  catalog: QueueCatalog,
  { queueUrl, entry }: { queueUrl: string; entry: Input },
): Record<string, unknown> {
  const body = typeof entry.MessageBody === 'string' ? entry.MessageBody : '';
  const attributes = messageAttributes(entry.MessageAttributes, 'MessageAttributes');
  const systemAttributes = messageAttributes(entry.MessageSystemAttributes, 'MessageSystemAttributes');
  const unknownSystem = Object.keys(systemAttributes).find((name) => name !== 'AWSTraceHeader');
  if (unknownSystem !== undefined) {
    throw new WireError(
      'InvalidParameterValue',
      `Message system attribute name '${unknownSystem}' is invalid.`,
      {
        queryCode: 'InvalidParameterValue',
      },
    );
  }
  const delay = entry.DelaySeconds;
  if (
    delay !== undefined &&
    (typeof delay !== 'number' || !Number.isInteger(delay) || delay < 0 || delay > 900)
  ) {
    throw new WireError(
      'InvalidParameterValue',
      `Value ${String(delay)} for parameter DelaySeconds is invalid. Reason: must be between 0 and 900, if provided.`,
      {
        queryCode: 'InvalidParameterValue',
      },
    );
  }
  const sent = catalog.queues.send(queueUrl, {
    body,
    attributes,
    systemAttributes,
    ...(typeof delay === 'number' ? { delayMs: delay * 1000 } : {}),
    ...(typeof entry.MessageGroupId === 'string' ? { groupId: entry.MessageGroupId } : {}),
    ...(typeof entry.MessageDeduplicationId === 'string'
      ? { deduplicationId: entry.MessageDeduplicationId }
      : {}),
  });
  const attributesMd5 = md5OfAttributes(attributes);
  const systemMd5 = md5OfAttributes(systemAttributes);
  return {
    MessageId: sent.messageId,
    MD5OfMessageBody: md5OfBody(body),
    ...(attributesMd5 === undefined ? {} : { MD5OfMessageAttributes: attributesMd5 }),
    ...(systemMd5 === undefined ? {} : { MD5OfMessageSystemAttributes: systemMd5 }),
    ...(sent.sequenceNumber === undefined ? {} : { SequenceNumber: sent.sequenceNumber }),
  };
}

async function receive(
  catalog: QueueCatalog,
  request: {
    readonly input: Input;
    readonly context: OperationContext;
    readonly waitForMessage: (
      queueUrl: string,
      options: { ms: number; signal: AbortSignal },
    ) => Promise<void>;
  },
): Promise<Record<string, unknown>> {
  const { input, context } = request;
  const entry = catalog.entry(text(input, 'QueueUrl'));
  const max = input.MaxNumberOfMessages ?? 1;
  if (typeof max !== 'number' || !Number.isInteger(max) || max < 1 || max > SQS.maxMessages) {
    throw new WireError(
      'InvalidParameterValue',
      `Value ${String(max)} for parameter MaxNumberOfMessages is invalid. Reason: Must be between 1 and 10, if provided.`,
      {
        queryCode: 'InvalidParameterValue',
      },
    );
  }
  const wait = input.WaitTimeSeconds ?? Number(entry.attributes.ReceiveMessageWaitTimeSeconds ?? 0);
  if (typeof wait !== 'number' || !Number.isInteger(wait) || wait < 0 || wait > SQS.maxWaitSeconds) {
    throw new WireError(
      'InvalidParameterValue',
      `Value ${String(wait)} for parameter WaitTimeSeconds is invalid. Reason: Must be >= 0 and <= 20, if provided.`,
      {
        queryCode: 'InvalidParameterValue',
      },
    );
  }
  const visibility = input.VisibilityTimeout;
  if (visibility !== undefined && (typeof visibility !== 'number' || visibility < 0 || visibility > 43_200)) {
    throw new WireError(
      'InvalidParameterValue',
      `Value ${String(visibility)} for parameter VisibilityTimeout is invalid.`,
      {
        queryCode: 'InvalidParameterValue',
      },
    );
  }
  const systemNames = new Set([...names(input.AttributeNames), ...names(input.MessageSystemAttributeNames)]);
  const attributeNames = names(input.MessageAttributeNames);
  const deadline = Date.now() + wait * 1000;
  for (;;) {
    // A client that went away gets nothing: a message received for nobody would hide for its whole timeout.
    if (context.signal.aborted) return {};
    const messages = catalog.queues.receiveMessages(entry.url, {
      max,
      ...(typeof visibility === 'number' ? { visibilityTimeoutMs: visibility * 1000 } : {}),
    });
    if (messages.length > 0) {
      return {
        Messages: messages.map((message) => wireMessage(message, { catalog, systemNames, attributeNames })),
      };
    }
    const left = deadline - Date.now();
    if (left <= 0) return {};
    await request.waitForMessage(entry.url, {
      ms: Math.min(left, SQS.pollIntervalMs),
      signal: context.signal,
    });
  }
}

function wireMessage(
  message: MemoryReceivedMessage,
  wanted: { catalog: QueueCatalog; systemNames: ReadonlySet<string>; attributeNames: readonly string[] },
): Record<string, unknown> {
  const all = wanted.systemNames.has('All');
  const system: Record<string, string | undefined> = {
    SenderId: SQS.senderId,
    SentTimestamp: String(message.sentAt),
    ApproximateReceiveCount: String(message.receiveCount),
    ApproximateFirstReceiveTimestamp: String(message.firstReceivedAt),
    MessageGroupId: message.groupId,
    MessageDeduplicationId: message.deduplicationId,
    SequenceNumber: message.sequenceNumber,
    AWSTraceHeader: message.systemAttributes.AWSTraceHeader?.stringValue,
    DeadLetterQueueSourceArn:
      message.deadLetterSourceQueueUrl === undefined
        ? undefined
        : wanted.catalog.entry(message.deadLetterSourceQueueUrl).arn,
  };
  const attributes = Object.fromEntries(
    Object.entries(system).filter(
      (entry): entry is [string, string] =>
        entry[1] !== undefined && (all || wanted.systemNames.has(entry[0])),
    ),
  );
  const messageAttributes = Object.fromEntries(
    Object.entries(message.attributes).filter(([name]) => wantedAttribute(name, wanted.attributeNames)),
  );
  const attributesMd5 = md5OfAttributes(messageAttributes);
  return {
    MessageId: message.messageId,
    ReceiptHandle: message.receiptHandle,
    MD5OfBody: md5OfBody(message.body),
    Body: message.body,
    ...(Object.keys(attributes).length === 0 ? {} : { Attributes: attributes }),
    ...(attributesMd5 === undefined
      ? {}
      : {
          MD5OfMessageAttributes: attributesMd5,
          MessageAttributes: Object.fromEntries(
            Object.entries(messageAttributes).map(([name, value]) => [name, wireAttribute(value)]),
          ),
        }),
  };
}

/** Whether ReceiveMessage's MessageAttributeNames (`All`, `.*`, `prefix.*` or exact names) asks for `name`. */
function wantedAttribute(name: string, wanted: readonly string[]): boolean {
  return wanted.some(
    (pattern) =>
      pattern === 'All' ||
      pattern === '.*' ||
      pattern === name ||
      (pattern.endsWith('.*') && name.startsWith(pattern.slice(0, -1))),
  );
}

function wireAttribute(attribute: MemoryMessageAttribute): Record<string, unknown> {
  return {
    DataType: attribute.dataType,
    ...(attribute.stringValue === undefined ? {} : { StringValue: attribute.stringValue }),
    ...(attribute.binaryValue === undefined
      ? {}
      : { BinaryValue: Buffer.from(attribute.binaryValue).toString('base64') }),
  };
}

function messageAttributes(value: unknown, field: string): Record<string, MemoryMessageAttribute> {
  if (value === undefined || value === null) return {};
  if (typeof value !== 'object' || Array.isArray(value)) {
    throw new WireError('InvalidParameterValue', `${field} must be a map`, {
      queryCode: 'InvalidParameterValue',
    });
  }
  return Object.fromEntries(
    Object.entries(value as Record<string, Record<string, unknown>>).map(([name, attribute]) => {
      if (typeof attribute?.DataType !== 'string') {
        throw new WireError(
          'InvalidParameterValue',
          `The message attribute '${name}' must contain a non-empty attribute type.`,
          {
            queryCode: 'InvalidParameterValue',
          },
        );
      }
      return [
        name,
        {
          dataType: attribute.DataType,
          ...(typeof attribute.StringValue === 'string' ? { stringValue: attribute.StringValue } : {}),
          ...(typeof attribute.BinaryValue === 'string'
            ? { binaryValue: new Uint8Array(Buffer.from(attribute.BinaryValue, 'base64')) }
            : {}),
        },
      ];
    }),
  );
}

/** A batch's entries, checked as SQS checks them: 1 to 10, distinct ids of letters, digits, `-` and `_`. */
function batchEntries(input: Input): Input[] {
  const entries = Array.isArray(input.Entries) ? (input.Entries as Input[]) : [];
  if (entries.length === 0) {
    throw new WireError(
      'EmptyBatchRequest',
      'There should be at least one SendMessageBatchRequestEntry in the request.',
      {
        queryCode: 'AWS.SimpleQueueService.EmptyBatchRequest',
      },
    );
  }
  if (entries.length > SQS.maxBatchEntries) {
    throw new WireError(
      'TooManyEntriesInBatchRequest',
      `Maximum number of entries per request are 10. You have sent ${entries.length}.`,
      {
        queryCode: 'AWS.SimpleQueueService.TooManyEntriesInBatchRequest',
      },
    );
  }
  const ids = entries.map((entry) => entry.Id);
  const invalid = ids.find((id) => typeof id !== 'string' || !BATCH_ENTRY_ID.test(id));
  if (invalid !== undefined) {
    throw new WireError(
      'InvalidBatchEntryId',
      'A batch entry id can only contain alphanumeric characters, hyphens and underscores. It can be at most 80 letters long.',
      {
        queryCode: 'AWS.SimpleQueueService.InvalidBatchEntryId',
      },
    );
  }
  if (new Set(ids).size !== ids.length) {
    throw new WireError(
      'BatchEntryIdsNotDistinct',
      'Two or more batch entries in the request have the same Id.',
      {
        queryCode: 'AWS.SimpleQueueService.BatchEntryIdsNotDistinct',
      },
    );
  }
  return entries;
}

/** Runs a batch entry by entry: SQS reports each entry's failure instead of failing the call. */
function perEntry(
  entries: readonly Input[],
  action: (entry: Input) => Record<string, unknown>,
): Record<string, unknown> {
  const successful: Record<string, unknown>[] = [];
  const failed: Record<string, unknown>[] = [];
  for (const entry of entries) {
    try {
      successful.push({ Id: entry.Id, ...action(entry) });
    } catch (error) {
      const wire = sqsWireError(error);
      if (wire === undefined) throw error;
      failed.push({
        Id: entry.Id,
        SenderFault: wire.status < 500,
        Code: wire.queryCode ?? wire.type,
        Message: wire.message,
      });
    }
  }
  return { Successful: successful, Failed: failed };
}

function names(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((name): name is string => typeof name === 'string') : [];
}

function stringMap(value: unknown): Record<string, string> {
  if (value === undefined || value === null) return {};
  if (typeof value !== 'object' || Array.isArray(value)) {
    throw new WireError('InvalidParameterValue', 'Attributes must be a map', {
      queryCode: 'InvalidParameterValue',
    });
  }
  return Object.fromEntries(Object.entries(value).map(([name, item]) => [name, String(item)]));
}

function text(input: Input, field: string): string {
  const value = input[field];
  if (typeof value !== 'string' || value === '') {
    throw new WireError('MissingParameter', `The request must contain the parameter ${field}.`, {
      queryCode: 'MissingParameter',
    });
  }
  return value;
}

function integer(input: Input, field: string): number {
  const value = input[field];
  if (typeof value !== 'number' || !Number.isInteger(value)) {
    throw new WireError(
      'InvalidParameterValue',
      `Value ${String(value)} for parameter ${field} is invalid.`,
      {
        queryCode: 'InvalidParameterValue',
      },
    );
  }
  return value;
}
