import {
  DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  TransactWriteCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { MemoryDocumentClient } from 'serverless-outbox/testing';
import { MEMORY_TABLE_SCHEMAS } from '../support/factories.ts';

/** The example's tables in memory, under the names the fuzzed functions' environments give them. */
export const TABLES = {
  orders: 'orders',
  outbox: 'outbox',
  inventory: 'inventory',
  inbox: 'inbox',
} as const;

/** Every table's items, to compare before and after a request. */
export type TableSnapshot = Readonly<Record<keyof typeof TABLES, readonly Record<string, unknown>[]>>;

/**
 * An in-memory DynamoDB holding the example's tables, and every Document client the functions build routed
 * to it, so a handler under test sees real table semantics (conditions, key checks, item limits).
 */
export function memoryTables(): {
  readonly memory: MemoryDocumentClient;
  snapshot(): TableSnapshot;
  /** Empties every table. */
  reset(): void;
  restore(): void;
} {
  const schemas = {
    [TABLES.orders]: MEMORY_TABLE_SCHEMAS.orders,
    [TABLES.outbox]: MEMORY_TABLE_SCHEMAS.outbox,
    [TABLES.inventory]: MEMORY_TABLE_SCHEMAS.inventory,
    [TABLES.inbox]: MEMORY_TABLE_SCHEMAS.inbox,
  };
  const memory = new MemoryDocumentClient(schemas);
  const ddb = mockClient(DynamoDBDocumentClient);
  ddb.on(GetCommand).callsFake((input) => memory.send(new GetCommand(input)));
  ddb.on(PutCommand).callsFake((input) => memory.send(new PutCommand(input)));
  ddb.on(UpdateCommand).callsFake((input) => memory.send(new UpdateCommand(input)));
  ddb.on(QueryCommand).callsFake((input) => memory.send(new QueryCommand(input)));
  ddb.on(TransactWriteCommand).callsFake((input) => memory.send(new TransactWriteCommand(input)));
  return {
    memory,
    snapshot: () => ({
      orders: memory.items(TABLES.orders),
      outbox: memory.items(TABLES.outbox),
      inventory: memory.items(TABLES.inventory),
      inbox: memory.items(TABLES.inbox),
    }),
    reset: () => {
      for (const [name, schema] of Object.entries(schemas)) {
        memory.deleteTable(name);
        memory.createTable(name, schema);
      }
    },
    restore: () => ddb.restore(),
  };
}
