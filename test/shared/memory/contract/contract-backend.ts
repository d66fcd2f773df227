import { type DynamoDBDocumentClient, GetCommand, type GetCommandInput } from '@aws-sdk/lib-dynamodb';
import { expect, it } from 'vitest';
import type { MemoryTableSchema } from '../../../../shared/memory/memory-document-client.ts';
import { MEMORY_TABLE_SCHEMAS } from '../../../support/factories.ts';

/** Names of the four tables the contract uses. */
export interface ContractTables {
  readonly outbox: string;
  readonly inbox: string;
  readonly orders: string;
  readonly inventory: string;
}

/** A Document client on fresh, empty tables. */
export interface ContractSession {
  readonly client: DynamoDBDocumentClient;
  readonly tables: ContractTables;
  /**
   * Moves the backend's clock on (DynamoDB forgets a transaction's ClientRequestToken after 10 minutes). Only
   * the in-memory backend has one to move.
   */
  readonly elapse?: (ms: number) => void;
}

/** What the contract runs against: the in-memory DynamoDB or a real Document client on moto. */
export interface ContractBackend {
  /** `moto` skips the cases where moto is known to differ from DynamoDB (each says how). */
  readonly name: 'memory' | 'moto';
  /** Fresh, empty tables with the keys of {@link CONTRACT_TABLE_SCHEMAS}, and a client for them. */
  readonly open: () => Promise<ContractSession>;
}

/**
 * The contract's tables: the example's keys and indexes, with the key attributes' types (CreateTable's
 * AttributeDefinitions), so the in-memory tables check key types as DynamoDB does.
 */
export const CONTRACT_TABLE_SCHEMAS = {
  outbox: {
    ...MEMORY_TABLE_SCHEMAS.outbox,
    attributeTypes: {
      messageId: 'S',
      dueShard: 'S',
      nextAttemptAt: 'S',
      aggregateId: 'S',
      orderKey: 'S',
      seq: 'N',
      attentionKey: 'S',
      createdAt: 'S',
    },
  },
  inbox: { ...MEMORY_TABLE_SCHEMAS.inbox, attributeTypes: { messageId: 'S' } },
  orders: { ...MEMORY_TABLE_SCHEMAS.orders, attributeTypes: { orderId: 'S' } },
  inventory: { ...MEMORY_TABLE_SCHEMAS.inventory, attributeTypes: { sku: 'S' } },
} as const satisfies Record<keyof ContractTables, MemoryTableSchema>;

/**
 * `it` for a case where moto differs from DynamoDB: run on the in-memory backend (which must do what DynamoDB
 * does), skipped on moto with the known gap in the test's title, never silently.
 */
export function itUnlessMoto(
  backend: ContractBackend,
  gap: string,
): (title: string, body: () => Promise<void>) => void {
  return (title, body) => it.skipIf(backend.name === 'moto')(`${title} [moto gap: ${gap}]`, body);
}

/** The error a request fails with; fails the test when it succeeds. */
export async function rejectionOf(request: Promise<unknown>): Promise<Error & Record<string, unknown>> {
  try {
    await request;
  } catch (error) {
    expect(error).toBeInstanceOf(Error);
    return error as Error & Record<string, unknown>;
  }
  throw new Error('expected DynamoDB to refuse the request');
}

/** The item stored under `key`, read consistently, or `undefined`. */
export async function storedItem(
  session: ContractSession,
  read: Pick<GetCommandInput, 'TableName' | 'Key'>,
): Promise<Record<string, unknown> | undefined> {
  const { Item } = await session.client.send(new GetCommand({ ...read, ConsistentRead: true }));
  return Item;
}
