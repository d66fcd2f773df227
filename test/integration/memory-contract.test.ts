import { CreateTableCommand, type CreateTableCommandInput, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, it } from 'vitest';
import { type MotoServer, startMotoServer } from '../../infra/dev/local/backends/moto-server.ts';
import { createDocumentClient } from '../../shared/aws/clients.ts';
import type { MemoryTableSchema } from '../../shared/memory/memory-document-client.ts';
import {
  CONTRACT_TABLE_SCHEMAS,
  type ContractTables,
  describeDocumentClientContract,
} from '../shared/memory/contract/document-client-contract.ts';
import { TEST_BACKEND } from './support/backend.ts';

/**
 * The DynamoDB contract of the in-memory DynamoDB, run on moto through the library's own Document client
 * (`createDocumentClient`), so the fake and a real DynamoDB API cannot drift. Each test gets fresh tables; one moto
 * serves the file.
 */

const CLIENT_CONFIG = {
  region: 'us-east-1',
  credentials: { accessKeyId: 'contract', secretAccessKey: 'contract' },
} as const;

let moto: MotoServer | undefined;
let clients: { dynamodb: DynamoDBClient; documents: DynamoDBDocumentClient } | undefined;
let tableSets = 0;

beforeAll(async () => {
  if (TEST_BACKEND !== 'moto') return;
  moto = await startMotoServer();
  const config = { ...CLIENT_CONFIG, endpoint: moto.endpoint };
  clients = { dynamodb: new DynamoDBClient(config), documents: createDocumentClient(config) };
});

afterAll(async () => {
  clients?.documents.destroy();
  clients?.dynamodb.destroy();
  await moto?.stop();
});

/** CreateTable for an in-memory table schema: on-demand, the same keys and indexes, every index projecting ALL. */
function createTableInput(tableName: string, schema: MemoryTableSchema): CreateTableCommandInput {
  const keySchema = (partitionKey: string, sortKey: string | undefined) => [
    { AttributeName: partitionKey, KeyType: 'HASH' as const },
    ...(sortKey === undefined ? [] : [{ AttributeName: sortKey, KeyType: 'RANGE' as const }]),
  ];
  const indexes = schema.globalIndexes ?? [];
  return {
    TableName: tableName,
    BillingMode: 'PAY_PER_REQUEST',
    KeySchema: keySchema(schema.partitionKey, schema.sortKey),
    AttributeDefinitions: Object.entries(schema.attributeTypes ?? {}).map(
      ([AttributeName, AttributeType]) => ({
        AttributeName,
        AttributeType,
      }),
    ),
    ...(indexes.length === 0
      ? {}
      : {
          GlobalSecondaryIndexes: indexes.map((index) => ({
            IndexName: index.name,
            KeySchema: keySchema(index.partitionKey, index.sortKey),
            // The projection the library defines for the index, so moto answers what DynamoDB would.
            Projection:
              index.projection === undefined || index.projection.type === 'ALL'
                ? { ProjectionType: 'ALL' as const }
                : {
                    ProjectionType: index.projection.type,
                    ...(index.projection.nonKeyAttributes === undefined
                      ? {}
                      : { NonKeyAttributes: [...index.projection.nonKeyAttributes] }),
                  },
          })),
        }),
  };
}

if (TEST_BACKEND !== 'moto') {
  // Reported as skipped, with the reason, rather than leaving the file without a word.
  it.skip('the DynamoDB contract on moto [skipped on the embedded backend, needs moto: it compares the in-memory DynamoDB with moto; the in-memory one runs the same contract in test/shared/memory]', () => {});
} else
  describeDocumentClientContract({
    name: 'moto',
    open: async () => {
      if (clients === undefined) throw new Error('moto did not start');
      const { dynamodb, documents } = clients;
      tableSets += 1;
      const suffix = `-${tableSets}`;
      const tables: ContractTables = {
        outbox: `outbox${suffix}`,
        inbox: `inbox${suffix}`,
        orders: `orders${suffix}`,
        inventory: `inventory${suffix}`,
      };
      await Promise.all(
        (Object.keys(tables) as (keyof ContractTables)[]).map((table) =>
          dynamodb.send(
            new CreateTableCommand(createTableInput(tables[table], CONTRACT_TABLE_SCHEMAS[table])),
          ),
        ),
      );
      return { client: documents, tables };
    },
  });
