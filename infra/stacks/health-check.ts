/**
 * The example's health hook for `outbox recover --health infra/stacks/health-check.ts`: before the runbook
 * replays anything to `order.created`, it checks that the downstream can take deliveries again. With subscribers
 * (the example's services), each subscriber's queue must answer: the producer holds nothing on a subscriber's
 * tables, so its queue accepting is all it can know of it, and each subscriber's own alarms watch the rest. In one
 * stack with a consumer of its own (`queues` + `addConsumer`), the inventory table (the stack's
 * `inventoryTableName` output) must be ACTIVE and answer a read, and the topic's queue exist. It does not check a
 * consumer function's event source mapping (that needs a Lambda client this project does not carry, and locally the
 * mapping is the runtime's poller) and says so in `detail`.
 */
import { DescribeTableCommand, DynamoDBClient, GetItemCommand } from '@aws-sdk/client-dynamodb';
import { GetQueueAttributesCommand, SQSClient } from '@aws-sdk/client-sqs';

/** The part of the CLI's hook context this hook reads. */
export interface ExampleHealthContext {
  readonly outbox: {
    readonly stackName: string;
    readonly topicQueues: Readonly<Record<string, string>>;
    /** Topic → subscriber → the URL of its queue (`SUBSCRIPTIONS`). */
    readonly subscriptions?: Readonly<Record<string, Readonly<Record<string, string>>>>;
    readonly outputs: Readonly<Record<string, string>>;
  };
  /** Endpoint, region and credentials of the CLI's own clients. */
  readonly clientConfig: {
    readonly endpoint?: string;
    readonly region?: string;
    readonly credentials?: {
      readonly accessKeyId: string;
      readonly secretAccessKey: string;
      readonly sessionToken?: string;
    };
  };
}

/** The topic whose consumer this hook knows. */
const INVENTORY_TOPIC = 'order.created';

/** The example stack's output naming the inventory table. */
const INVENTORY_TABLE_OUTPUT = 'inventoryTableName';

/** A key no SKU has: a read of it proves the table answers without touching real stock. */
const PROBE_KEY = { sku: { S: '__outbox-health-check__' } };

/**
 * Whether the inventory consumer's downstream is healthy for `topic`. A topic this hook does not know is not
 * declared healthy.
 * @example
 * const { healthy, detail } = await checkHealth('order.created', context);
 */
export async function checkHealth(
  topic: string,
  context: ExampleHealthContext,
): Promise<{ healthy: boolean; detail: string }> {
  if (topic !== INVENTORY_TOPIC) {
    return { healthy: false, detail: `this hook checks only ${INVENTORY_TOPIC}, not ${topic}` };
  }
  const subscribers = context.outbox.subscriptions?.[topic];
  if (subscribers !== undefined) return subscriberQueuesAnswer(topic, subscribers, context);
  const table = context.outbox.outputs[INVENTORY_TABLE_OUTPUT];
  if (table === undefined) {
    return {
      healthy: false,
      detail: `stack ${context.outbox.stackName} has no ${INVENTORY_TABLE_OUTPUT} output; is it the example stack?`,
    };
  }
  const queueUrl = context.outbox.topicQueues[topic];
  const dynamodb = new DynamoDBClient({ ...context.clientConfig });
  const sqs = new SQSClient({ ...context.clientConfig });
  try {
    const { Table } = await dynamodb.send(new DescribeTableCommand({ TableName: table }));
    if (Table?.TableStatus !== 'ACTIVE') {
      return { healthy: false, detail: `inventory table ${table} is ${Table?.TableStatus ?? 'unknown'}` };
    }
    await dynamodb.send(new GetItemCommand({ TableName: table, Key: PROBE_KEY }));
    if (queueUrl === undefined) return { healthy: false, detail: `the outbox routes no queue for ${topic}` };
    await sqs.send(new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['QueueArn'] }));
    return {
      healthy: true,
      detail: `inventory table ${table} is ACTIVE and answers reads; the ${topic} queue exists (the consumer's event source mapping is not checked)`,
    };
  } catch (error) {
    return {
      healthy: false,
      detail: `the inventory consumer's resources do not answer: ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}`,
    };
  } finally {
    dynamodb.destroy();
    sqs.destroy();
  }
}

/** Whether every subscriber's queue of `topic` answers: what the producer can know of a service of its own. */
async function subscriberQueuesAnswer(
  topic: string,
  subscribers: Readonly<Record<string, string>>,
  context: ExampleHealthContext,
): Promise<{ healthy: boolean; detail: string }> {
  const sqs = new SQSClient({ ...context.clientConfig });
  try {
    const answers = await Promise.all(
      Object.entries(subscribers).map(async ([subscriber, queueUrl]) => {
        try {
          await sqs.send(new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['QueueArn'] }));
          return { subscriber, problem: undefined };
        } catch (error) {
          return {
            subscriber,
            problem: error instanceof Error ? `${error.name}: ${error.message}` : String(error),
          };
        }
      }),
    );
    const failing = answers.filter((answer) => answer.problem !== undefined);
    return failing.length === 0
      ? {
          healthy: true,
          detail: `the ${topic} queues of ${answers.map((answer) => answer.subscriber).join(', ')} answer (each subscriber's consumer is its own stack's to watch)`,
        }
      : {
          healthy: false,
          detail: failing
            .map((answer) => `${answer.subscriber}'s queue does not answer: ${answer.problem}`)
            .join('; '),
        };
  } finally {
    sqs.destroy();
  }
}
