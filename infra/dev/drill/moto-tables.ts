import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { ReceiveMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient, paginateScan } from '@aws-sdk/lib-dynamodb';
import type { LocalRuntime } from '../local/host/runtime.ts';
import type { DeadLetterCopy, DrillTable } from './drill-snapshot.ts';

/** The stack output that names each table the drill reads: the three services' outputs, unique across their stacks. */
const TABLE_OUTPUTS: Readonly<Record<DrillTable, string>> = {
  orders: 'ordersTableName',
  outbox: 'outboxTableName',
  inventory: 'inventoryTableName',
  loyalty: 'loyaltyTableName',
  inventoryInbox: 'inventoryInboxTableName',
  loyaltyInbox: 'loyaltyInboxTableName',
};

/** One of the example's stacks' named outputs. */
export function output(runtime: LocalRuntime, name: string): string {
  const value = runtime.outputs[name];
  if (value === undefined) throw new Error(`no stack of the app has an output ${name}`);
  return value;
}

/** Every item of one of the example's tables, read strongly consistently. */
export async function scanAll(runtime: LocalRuntime, table: DrillTable): Promise<Record<string, unknown>[]> {
  const client = DynamoDBDocumentClient.from(new DynamoDBClient(runtime.clientConfig), {
    // The rogue number (1e20) cannot be read as a JavaScript number: keep its text.
    unmarshallOptions: { wrapNumbers: (text: string) => (isReadable(text) ? Number(text) : text) },
  });
  const items: Record<string, unknown>[] = [];
  try {
    const pages = paginateScan(
      { client },
      { TableName: output(runtime, TABLE_OUTPUTS[table]), ConsistentRead: true },
    );
    for await (const page of pages) items.push(...(page.Items ?? []));
  } finally {
    client.destroy();
  }
  return items;
}

function isReadable(text: string): boolean {
  const value = Number(text);
  return Number.isFinite(value) && (!Number.isInteger(value) || Number.isSafeInteger(value));
}

/**
 * Everything in a dead-letter queue (named by its stack output), with its attributes (the reason it is there). The
 * drill is over: each receive hides what it returned, so the next one returns the rest.
 */
export async function readDeadLetters(runtime: LocalRuntime, queueOutput: string): Promise<DeadLetterCopy[]> {
  const sqs = new SQSClient(runtime.clientConfig);
  const letters: DeadLetterCopy[] = [];
  try {
    for (;;) {
      const { Messages = [] } = await sqs.send(
        new ReceiveMessageCommand({
          QueueUrl: output(runtime, queueOutput),
          MaxNumberOfMessages: 10,
          VisibilityTimeout: 600,
          WaitTimeSeconds: 0,
          MessageAttributeNames: ['All'],
          MessageSystemAttributeNames: ['ApproximateReceiveCount'],
        }),
      );
      if (Messages.length === 0) return letters;
      for (const message of Messages) {
        const receiveCount = Number(message.Attributes?.ApproximateReceiveCount);
        letters.push({
          body: message.Body ?? '',
          ...(Number.isInteger(receiveCount) ? { receiveCount } : {}),
          attributes: Object.fromEntries(
            Object.entries(message.MessageAttributes ?? {}).map(([name, value]) => [
              name,
              value.StringValue ?? '',
            ]),
          ),
        });
      }
    }
  } finally {
    sqs.destroy();
  }
}
