import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { CfnOutput, Duration, RemovalPolicy, Stack, type StackProps } from 'aws-cdk-lib';
import * as apigateway from 'aws-cdk-lib/aws-apigateway';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as sources from 'aws-cdk-lib/aws-lambda-event-sources';
import type { Construct } from 'constructs';
import type { z } from 'zod';
import { stockRequestSchema } from '../../functions/inventory/put-stock/stock-request.ts';
import { orderRequestSchema } from '../../functions/orders/create-order/order-request.ts';
import { SCHEDULE_DEFAULTS, TABLE_DEFAULTS } from '../constructs/defaults.ts';
import { QueueWithDlq, type QueueWithDlqProps } from '../constructs/queue-with-dlq.ts';
import { ServiceFunction } from '../constructs/service-function.ts';
import { grantTableAccess } from '../constructs/table-access.ts';
import { TransactionalOutbox } from '../constructs/transactional-outbox.ts';
import {
  deadLetterQueueOutputName,
  type EnvValue,
  type FunctionKey,
  type FunctionSpec,
  type QueueKey,
  queueOutputName,
  queueVisibilityTimeoutSeconds,
  type StreamSourceSpec,
  type TableKey,
  type TableSpec,
  tableOutputName,
  topicQueues,
  topology,
} from '../topology.ts';
import { requestModelSchema } from './request-model-schema.ts';

/** The repository root: topology entries and the lock file are relative to it. */
const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** The body schema API Gateway checks for each function whose route has `validateBody`. */
const REQUEST_SCHEMAS: Readonly<Partial<Record<FunctionKey, z.ZodType>>> = {
  createOrder: orderRequestSchema,
  putStock: stockRequestSchema,
};

/** The topology's outbox sweeper: the TransactionalOutbox builds and schedules it. */
const SWEEPER_KEY = 'sweeper' satisfies FunctionKey;

/**
 * API Gateway's answer to a body that fails its model, in the handlers' 400 shape:
 * `{error, details: [{field, problem}]}` (shared/http/responses.ts).
 * A gateway response template is plain variable substitution, not VTL, so `$util.escapeJavaScript` is not
 * available and the message is inserted as is: typical messages such as
 * `[numeric instance is lower than the required minimum (minimum: 1, found: 0)]` keep the body valid JSON,
 * but validationErrorString may contain double quotes (property names in some messages are quoted), which
 * would break it. Not verified against real API Gateway.
 */
const BAD_REQUEST_BODY_TEMPLATE =
  '{"error":"invalid request body","details":[{"field":"(body)","problem":"$context.error.validationErrorString"}]}';

/** Props of the {@link OutboxExampleStack}. */
export interface OutboxExampleStackProps extends StackProps {
  /**
   * What happens to tables and log groups when they leave the stack.
   * @default RemovalPolicy.DESTROY - an example that `cdk destroy` removes completely
   */
  readonly removalPolicy?: RemovalPolicy;
}

/**
 * The example order and inventory services around a {@link TransactionalOutbox}, built entirely from
 * infra/topology.ts: every table, queue, function, event source, route and output comes from there.
 */
export class OutboxExampleStack extends Stack {
  /** The outbox: its table, relay, sweeper, topic queues and failure queue. */
  public readonly outbox: TransactionalOutbox;
  /** Every table of the topology (the outbox's included). */
  public readonly tables: Readonly<Record<TableKey, dynamodb.ITable>>;
  /** Every queue of the topology with its DLQ (the outbox's included). */
  public readonly queues: Readonly<Record<QueueKey, QueueWithDlq>>;
  /** Every function of the topology (the outbox relay and sweeper included). */
  public readonly functions: Readonly<Record<FunctionKey, lambda.Function>>;
  /** The REST API serving the topology's routes. */
  public readonly api: apigateway.RestApi;

  constructor(scope: Construct, id: string, props: OutboxExampleStackProps = {}) {
    super(scope, id, props);
    const removalPolicy = props.removalPolicy ?? RemovalPolicy.DESTROY;
    const bundling = { projectRoot: REPO_ROOT, depsLockFilePath: path.join(REPO_ROOT, 'package-lock.json') };

    const [relayKey, relaySpec, stream] = outboxRelay();
    const sweeperSpec = topology.functions[SWEEPER_KEY];
    const relayQueues = relaySpec.sendsTo ?? [];
    // The construct lets the relay and the sweeper send to every topic queue; the topology must say so too.
    for (const [key, spec] of [
      [relayKey, relaySpec],
      [SWEEPER_KEY, sweeperSpec],
    ] as const) {
      for (const [topic, queue] of topicQueues()) {
        if (!(spec.sendsTo ?? []).includes(queue)) {
          throw new Error(
            `topology: topic '${topic}' routes to queue '${queue}', which ${key} does not send to`,
          );
        }
      }
    }
    if (sweeperSpec.schedule === undefined) {
      throw new Error(`topology: '${SWEEPER_KEY}' needs a schedule (the local runtime runs it from there)`);
    }

    // Business tables first: the outbox's sweeper reads the inboxes that prove delivery.
    const businessTables = new Map(
      entries(topology.tables)
        .filter(([key]) => key !== stream.table)
        .map(([key, spec]) => [key, tableFromSpec(this, `${key}Table`, spec, removalPolicy)] as const),
    );
    const deliveryInboxes: Record<string, dynamodb.ITable> = {};
    for (const [topic, spec] of Object.entries(topology.topics)) {
      if (spec.deliveryInbox === undefined) continue;
      const inbox = businessTables.get(spec.deliveryInbox);
      if (inbox === undefined) {
        throw new Error(`topology: topic '${topic}' has the outbox table as its delivery inbox`);
      }
      deliveryInboxes[topic] = inbox;
    }

    this.outbox = new TransactionalOutbox(this, 'Outbox', {
      topicQueues: Object.fromEntries(
        relayQueues.map((key) => [key, { ...queueProps(key), topics: topology.queues[key].topics }]),
      ),
      failureQueue: queueProps(stream.onFailureQueue),
      relay: {
        ...bundling,
        entry: path.join(REPO_ROOT, relaySpec.entry),
        serviceName: relayKey,
        description: relaySpec.description,
        timeout: Duration.seconds(relaySpec.timeoutSeconds),
        memorySize: relaySpec.memoryMb,
        logRemovalPolicy: removalPolicy,
      },
      sweeper: {
        ...bundling,
        entry: path.join(REPO_ROOT, sweeperSpec.entry),
        serviceName: SWEEPER_KEY,
        description: sweeperSpec.description,
        timeout: Duration.seconds(sweeperSpec.timeoutSeconds),
        memorySize: sweeperSpec.memoryMb,
        logRemovalPolicy: removalPolicy,
        schedule: scheduleOf(sweeperSpec.schedule),
        deliveryInboxes,
      },
      retryPolicies: Object.fromEntries(
        Object.entries(topology.topics).map(([topic, spec]) => [topic, spec.retry]),
      ),
      confirmDeadline: Duration.millis(topology.confirmDeadlineMs),
      stream: {
        batchSize: stream.batchSize,
        maxBatchingWindow: Duration.seconds(stream.maxBatchingWindowSeconds),
        retryAttempts: stream.retryAttempts,
        maxRecordAge: Duration.seconds(stream.maxRecordAgeSeconds),
        bisectBatchOnError: stream.bisectBatchOnError,
        parallelizationFactor: stream.parallelizationFactor,
        filters: stream.filters,
      },
      removalPolicy,
    });

    this.tables = mapEntries(topology.tables, (key) => businessTables.get(key) ?? this.outbox.table);
    this.queues = mapEntries(topology.queues, (key) => {
      if (key === stream.onFailureQueue) return this.outbox.failureQueue;
      return this.outbox.topicQueues[key] ?? new QueueWithDlq(this, `${key}Queue`, queueProps(key));
    });
    this.functions = mapEntries(topology.functions, (key, spec) => {
      if (key === relayKey) return this.outbox.relay;
      if (key === SWEEPER_KEY) return this.outbox.sweeper;
      return new ServiceFunction(this, key, {
        ...bundling,
        entry: path.join(REPO_ROOT, spec.entry),
        serviceName: key,
        description: spec.description,
        timeout: Duration.seconds(spec.timeoutSeconds),
        memorySize: spec.memoryMb,
        logRemovalPolicy: removalPolicy,
      }).function;
    });

    for (const [key, spec] of entries(topology.functions)) this.wireFunction(key, spec);
    this.api = this.restApi();
    this.addOutputs();
  }

  /** Environment, least-privilege grants, SQS event source and schedule of one function, as the topology says. */
  private wireFunction(key: FunctionKey, spec: FunctionSpec): void {
    // The relay and the sweeper already have what TransactionalOutbox gives them; the topology's identical
    // variables overwrite them and its identical grants merge into the same policy statements, so the
    // topology stays the source.
    const fn = this.functions[key];
    for (const [name, value] of Object.entries(spec.environment))
      fn.addEnvironment(name, this.envValue(value));
    for (const [table, access] of entries(spec.tables)) {
      if (access !== undefined) grantTableAccess(this.tables[table], fn, access);
    }
    for (const queue of spec.sendsTo ?? []) this.queues[queue].queue.grantSendMessages(fn);
    // A consumer that dead-letters a message itself (with its reason) rather than waiting for maxReceiveCount.
    for (const queue of spec.sendsToDeadLetter ?? [])
      this.queues[queue].deadLetterQueue.grantSendMessages(fn);
    if (spec.queueSource !== undefined) {
      fn.addEventSource(
        new sources.SqsEventSource(this.queues[spec.queueSource.queue].queue, {
          batchSize: spec.queueSource.batchSize,
          maxBatchingWindow: Duration.seconds(spec.queueSource.maxBatchingWindowSeconds),
          // A failed message is retried alone; the rest of the batch is deleted.
          reportBatchItemFailures: true,
        }),
      );
    }
    // The sweeper's schedule belongs to the TransactionalOutbox.
    if (spec.schedule !== undefined && key !== SWEEPER_KEY) {
      new events.Rule(this, `${key}Schedule`, {
        description: `Runs ${key}`,
        schedule: scheduleOf(spec.schedule),
        targets: [new targets.LambdaFunction(fn, SCHEDULE_DEFAULTS)],
      });
    }
  }

  /** The value of one environment variable. */
  private envValue(value: EnvValue): string {
    if ('tableName' in value) return this.tables[value.tableName].tableName;
    if ('queueUrl' in value) return this.queues[value.queueUrl].queue.queueUrl;
    if ('topicRoutes' in value) {
      const routes = [...topicQueues()].map(([topic, queue]) => [topic, this.queues[queue].queue.queueUrl]);
      return this.toJsonString(Object.fromEntries(routes));
    }
    if ('deadLetterQueueUrl' in value) return this.queues[value.deadLetterQueueUrl].deadLetterQueue.queueUrl;
    if ('tableNamesByTopic' in value) {
      const names = Object.entries(value.tableNamesByTopic).map(([topic, table]) => [
        topic,
        this.tables[table].tableName,
      ]);
      return this.toJsonString(Object.fromEntries(names));
    }
    return value.literal;
  }

  /** The REST API: a Lambda proxy method per route, bodies checked against the request models. */
  private restApi(): apigateway.RestApi {
    const api = new apigateway.RestApi(this, 'Api', {
      restApiName: `${this.stackName}-api`,
      description: 'Orders and inventory of the transactional outbox example',
      endpointConfiguration: { types: [apigateway.EndpointType.REGIONAL] },
      // No account-wide CloudWatch role: it is shared by every API in the account and region, so one
      // stack should not own it. Execution and access logging need it and are therefore left off.
      cloudWatchRole: false,
      deployOptions: { throttlingRateLimit: 100, throttlingBurstLimit: 200 },
    });
    const validator = api.addRequestValidator('BodyValidator', {
      validateRequestBody: true,
      validateRequestParameters: false,
    });
    const models = new Map<FunctionKey, apigateway.Model>();
    const modelFor = (key: FunctionKey): apigateway.Model => {
      const schema = REQUEST_SCHEMAS[key];
      if (schema === undefined)
        throw new Error(`topology: a route of '${key}' validates its body but has no schema`);
      const model =
        models.get(key) ??
        api.addModel(`${key}Request`, {
          contentType: 'application/json',
          modelName: `${key}Request`,
          schema: requestModelSchema(schema),
        });
      models.set(key, model);
      return model;
    };
    for (const route of topology.routes) {
      const validation: apigateway.MethodOptions =
        route.validateBody === true
          ? { requestValidator: validator, requestModels: { 'application/json': modelFor(route.function) } }
          : {};
      api.root
        .resourceForPath(route.path)
        .addMethod(
          route.method,
          new apigateway.LambdaIntegration(this.functions[route.function]),
          validation,
        );
    }
    api.addGatewayResponse('BadRequestBody', {
      type: apigateway.ResponseType.BAD_REQUEST_BODY,
      statusCode: '400',
      templates: { 'application/json': BAD_REQUEST_BODY_TEMPLATE },
    });
    return api;
  }

  /** The outputs the local runtime and the integration tests read, named by the topology's helpers. */
  private addOutputs(): void {
    // Created on the stack itself so that each logical id is exactly the name, without a path hash.
    for (const [key, table] of entries(this.tables)) {
      new CfnOutput(this, tableOutputName(key), { value: table.tableName });
    }
    for (const [key, queue] of entries(this.queues)) {
      new CfnOutput(this, queueOutputName(key), { value: queue.queue.queueUrl });
      new CfnOutput(this, deadLetterQueueOutputName(key), { value: queue.deadLetterQueue.queueUrl });
    }
    new CfnOutput(this, 'outboxStreamArn', { value: this.outbox.streamArn });
    new CfnOutput(this, 'apiUrl', { value: this.api.url });
  }
}

/** The one function that reads a stream (the outbox relay), with its stream settings. */
function outboxRelay(): [FunctionKey, FunctionSpec, StreamSourceSpec] {
  const readers = entries(topology.functions).filter(([, spec]) => spec.streamSource !== undefined);
  const [reader, ...others] = readers;
  if (reader === undefined || others.length > 0 || reader[1].streamSource === undefined) {
    throw new Error(
      `topology: exactly one function (the outbox relay) must have a streamSource, found ${readers.length}`,
    );
  }
  return [reader[0], reader[1], reader[1].streamSource];
}

/** An EventBridge rate schedule from a topology schedule. */
function scheduleOf(schedule: NonNullable<FunctionSpec['schedule']>): events.Schedule {
  return events.Schedule.rate(Duration.minutes(schedule.rateMinutes));
}

/** A queue's settings from the topology; its visibility timeout covers 6 × its consumer's timeout. */
function queueProps(key: QueueKey): QueueWithDlqProps {
  return {
    maxReceiveCount: topology.queues[key].maxReceiveCount,
    visibilityTimeout: Duration.seconds(queueVisibilityTimeoutSeconds(key)),
  };
}

/** A business table as its spec describes it, with the table defaults. */
function tableFromSpec(
  scope: Construct,
  id: string,
  spec: TableSpec,
  removalPolicy: RemovalPolicy,
): dynamodb.Table {
  const table = new dynamodb.Table(scope, id, {
    partitionKey: { name: spec.partitionKey, type: dynamodb.AttributeType.STRING },
    billingMode: TABLE_DEFAULTS.billingMode,
    stream: spec.stream === true ? dynamodb.StreamViewType.NEW_AND_OLD_IMAGES : undefined,
    timeToLiveAttribute: spec.ttlAttribute,
    pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: TABLE_DEFAULTS.pointInTimeRecovery },
    removalPolicy,
  });
  for (const index of spec.globalIndexes ?? []) {
    table.addGlobalSecondaryIndex({
      indexName: index.name,
      partitionKey: { name: index.partitionKey, type: dynamodb.AttributeType.STRING },
      sortKey: { name: index.sortKey, type: dynamodb.AttributeType.STRING },
    });
  }
  return table;
}

/** The entries of a record keyed by a string union, typed by that union. */
function entries<K extends string, V>(record: Readonly<Partial<Record<K, V>>>): [K, V][] {
  return Object.entries(record) as [K, V][];
}

/** A record with the same keys as `record` and each value mapped by `map`. */
function mapEntries<K extends string, V, R>(
  record: Readonly<Record<K, V>>,
  map: (key: K, value: V) => R,
): Record<K, R> {
  return Object.fromEntries(entries<K, V>(record).map(([key, value]) => [key, map(key, value)])) as Record<
    K,
    R
  >;
}
