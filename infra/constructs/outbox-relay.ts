import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as sources from 'aws-cdk-lib/aws-lambda-event-sources';
import type * as nodejs from 'aws-cdk-lib/aws-lambda-nodejs';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { RELAY_SETTINGS } from '../../shared/settings/outbox-settings.ts';
import {
  FAILURE_QUEUE_DEFAULTS,
  OUTBOX_STREAM_DEFAULTS,
  QUEUE_DEFAULTS,
  RELAY_DEFAULTS,
} from './defaults.ts';
import { settingsEnvironment } from './function-settings.ts';
import { grantKeyUse } from './key-grants.ts';
import { OutboxFunction } from './outbox-function.ts';
import type { OutboxScope } from './outbox-scope.ts';
import { queueEncryption } from './queue-with-dlq.ts';
import { SHIPPED_ENTRIES } from './shipped-entries.ts';
import { grantOnTable, grantSendMessage, queueFailureDestination } from './table-grants.ts';
import { markOutboxRole, OutboxResourceRole } from './template-metadata.ts';
import type { OutboxStreamProps } from './transactional-outbox-props.ts';

/** What the relay is built from. */
export interface OutboxRelayOptions {
  /** The outbox table, with its stream. */
  readonly table: dynamodb.ITable;
  /** Every topic queue the relay sends to. */
  readonly queues: Iterable<sqs.IQueue>;
  /** Props merged over the relay function's defaults. */
  readonly functionProps?: Partial<nodejs.NodejsFunctionProps>;
  /** Settings of the stream mapping, over OUTBOX_STREAM_DEFAULTS. */
  readonly streamProps?: OutboxStreamProps;
}

/** The relay, as {@link addOutboxRelay} built it. */
export interface OutboxRelay {
  /** The stream → SQS relay (`Relay`). */
  readonly function: OutboxFunction;
  /** Its stream mapping. */
  readonly streamSource: sources.DynamoEventSource;
  /** Where the mapping sends the metadata of batches it gave up on (`RelayFailureQueue`). */
  readonly failureQueue: sqs.Queue;
}

/**
 * Adds the stream relay to the outbox: the shipped relay handler with `RELAY_SETTINGS`, reading the outbox
 * stream's INSERTs and sending each new message to its topic's queue, and the failure queue of its mapping. It
 * may update outbox items and send to the topic queues (and, through the mapping, to the failure queue); nothing
 * else.
 */
export function addOutboxRelay(outbox: OutboxScope, options: OutboxRelayOptions): OutboxRelay {
  const failureQueue = new sqs.Queue(outbox.scope, 'RelayFailureQueue', {
    ...queueEncryption(outbox.encryptionKey),
    enforceSSL: QUEUE_DEFAULTS.enforceSSL,
    retentionPeriod: FAILURE_QUEUE_DEFAULTS.retentionPeriod,
  });
  markOutboxRole(failureQueue, OutboxResourceRole.FAILURE_QUEUE);

  const relay = new OutboxFunction(outbox.scope, 'Relay', {
    timeout: RELAY_DEFAULTS.timeout,
    memorySize: RELAY_DEFAULTS.memorySize,
    logGroupRemovalPolicy: outbox.removalPolicy,
    description: 'Outbox stream → SQS: forwards new messages, marks them SENT or records the failure',
    ...options.functionProps,
    ...(outbox.senderRolePath === undefined ? {} : { rolePath: outbox.senderRolePath }),
    entry: SHIPPED_ENTRIES.relay,
    handler: 'handler',
    serviceName: 'outbox-relay',
    metricsNamespace: outbox.metricsNamespace,
    environment: {
      ...options.functionProps?.environment,
      ...settingsEnvironment(RELAY_SETTINGS, outbox.settings, outbox.report),
    },
  });
  markOutboxRole(relay, OutboxResourceRole.RELAY);
  // Marks messages SENT or records a failed attempt: UpdateItem on the table, nothing else.
  grantOnTable(options.table, relay, ['dynamodb:UpdateItem']);
  for (const queue of options.queues) grantSendMessage(queue, relay);

  const stream = { ...OUTBOX_STREAM_DEFAULTS, ...options.streamProps };
  const streamSource = new sources.DynamoEventSource(options.table, {
    // From the oldest record: messages written before the mapping existed are forwarded too.
    startingPosition: lambda.StartingPosition.TRIM_HORIZON,
    batchSize: stream.batchSize,
    maxBatchingWindow: stream.maxBatchingWindow,
    retryAttempts: stream.retryAttempts,
    maxRecordAge: stream.maxRecordAge,
    bisectBatchOnError: stream.bisectBatchOnError,
    parallelizationFactor: stream.parallelizationFactor,
    filters: OUTBOX_STREAM_DEFAULTS.filters.map((pattern) => lambda.FilterCriteria.filter(pattern)),
    // One failed record fails alone; the relay reports it instead of failing the batch.
    reportBatchItemFailures: true,
    // Lambda sends the metadata of a batch it gives up on with the relay's role: SendMessage only.
    onFailure: queueFailureDestination(failureQueue),
  });
  relay.addEventSource(streamSource);
  // Reads the stream, updates items and sends (the failure queue too, from the mapping).
  grantKeyUse(outbox.encryptionKey, relay, 'write');
  return { function: relay, streamSource, failureQueue };
}
