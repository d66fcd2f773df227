/**
 * The embedded backend's DynamoDB tables: what CreateTable was given (key schema, attribute definitions,
 * indexes, stream, time to live), kept beside the in-memory items and streams, and described the way
 * DescribeTable answers. Both the DynamoDB API and the stack deployer create and change tables through it.
 */
import { randomUUID } from 'node:crypto';
import type {
  AttributeDefinition,
  KeySchemaElement,
  Projection,
  StreamViewType,
} from '@aws-sdk/client-dynamodb';
import {
  itemSizeBytes,
  type MemoryDocumentClient,
  type MemoryIndexSchema,
  type MemoryStreams,
  type MemoryTableSchema,
} from '../../../../../shared/memory/index.ts';
import { WireError } from './wire-error.ts';

/** A secondary index as CreateTable takes it. */
export interface IndexDefinition {
  readonly IndexName: string;
  readonly KeySchema: readonly KeySchemaElement[];
  readonly Projection?: Projection;
}

/** A table as CreateTable (or a CloudFormation `AWS::DynamoDB::Table`) describes it. */
export interface TableDefinition {
  readonly TableName: string;
  readonly AttributeDefinitions: readonly AttributeDefinition[];
  readonly KeySchema: readonly KeySchemaElement[];
  readonly GlobalSecondaryIndexes?: readonly IndexDefinition[];
  readonly LocalSecondaryIndexes?: readonly IndexDefinition[];
  /** A stream of this view type, or none. */
  readonly StreamViewType?: StreamViewType;
  readonly TimeToLive?: { readonly AttributeName: string; readonly Enabled: boolean };
  readonly BillingMode?: string;
  readonly DeletionProtectionEnabled?: boolean;
  /** Encryption with a KMS key: the key's id or ARN. @default encrypted with an AWS-owned key */
  readonly KmsMasterKeyId?: string;
}

/** A table of the catalog: its definition and the identity DescribeTable reports. */
export interface CatalogEntry {
  definition: TableDefinition;
  readonly tableId: string;
  readonly createdAt: Date;
}

/** Options of {@link TableCatalog}. */
export interface TableCatalogOptions {
  readonly db: MemoryDocumentClient;
  readonly streams: MemoryStreams;
  readonly region: string;
  readonly accountId: string;
  readonly clock?: () => Date;
}

const TABLE_NAME = /^[a-zA-Z0-9_.-]{3,255}$/;
// DynamoDB allows 20 global and 5 local secondary indexes per table.
const LIMITS = { globalIndexes: 20, localIndexes: 5 } as const;

/** The tables of the embedded backend. */
export class TableCatalog {
  readonly db: MemoryDocumentClient;
  readonly streams: MemoryStreams;
  readonly #tables = new Map<string, CatalogEntry>();
  readonly #region: string;
  readonly #accountId: string;
  readonly #clock: () => Date;

  constructor(options: TableCatalogOptions) {
    this.db = options.db;
    this.streams = options.streams;
    this.#region = options.region;
    this.#accountId = options.accountId;
    this.#clock = options.clock ?? (() => new Date());
  }

  /** Creates a table; throws ResourceInUseException when it exists, ValidationException when malformed. */
  create(definition: TableDefinition): Record<string, unknown> {
    if (!TABLE_NAME.test(definition.TableName)) {
      throw validation(
        `TableName must be 3 to 255 characters of a-z, A-Z, 0-9, '_', '-' and '.': ${definition.TableName}`,
      );
    }
    if (this.#tables.has(definition.TableName)) {
      throw new WireError('ResourceInUseException', `Table already exists: ${definition.TableName}`);
    }
    const schema = memorySchema(definition);
    this.db.createTable(definition.TableName, schema);
    this.#tables.set(definition.TableName, { definition, tableId: randomUUID(), createdAt: this.#clock() });
    if (definition.StreamViewType !== undefined) {
      this.streams.enable(definition.TableName, definition.StreamViewType);
    }
    return this.describe(definition.TableName);
  }

  /**
   * Brings a table to `definition`: indexes added or removed (backfilled from the items), the stream turned
   * on, off or to another view type (a new stream), time to live. The key schema cannot change.
   */
  update(definition: TableDefinition): Record<string, unknown> {
    const entry = this.#entry(definition.TableName);
    const schema = memorySchema(definition);
    const before = entry.definition;
    if (!sameKeys(before.KeySchema, definition.KeySchema)) {
      throw validation(`Cannot change the key schema of table ${definition.TableName}`);
    }
    this.db.updateTable(definition.TableName, schema);
    if (before.StreamViewType !== definition.StreamViewType) {
      if (before.StreamViewType !== undefined) this.streams.disable(definition.TableName);
      if (definition.StreamViewType !== undefined) {
        this.streams.enable(definition.TableName, definition.StreamViewType);
      }
    }
    entry.definition = definition;
    return this.describe(definition.TableName);
  }

  /** Deletes a table with its items; its stream is disabled (and stays readable until trimmed). */
  delete(tableName: string): Record<string, unknown> {
    const entry = this.#entry(tableName);
    if (entry.definition.DeletionProtectionEnabled === true) {
      throw validation(
        `Resource cannot be deleted as it is currently protected against deletion: ${tableName}`,
      );
    }
    const description = this.describe(tableName);
    this.db.deleteTable(tableName);
    this.streams.disable(tableName);
    this.#tables.delete(tableName);
    return { ...description, TableStatus: 'DELETING' };
  }

  /** Every table's entry, for a copy kept on disk. */
  exportTables(): CatalogEntry[] {
    return [...this.#tables.values()].map((entry) => ({ ...entry }));
  }

  /**
   * Puts a table back as exported, empty and without its stream (the caller restores its items first, then the
   * streams, so restoring writes no stream records).
   */
  restoreTable(entry: CatalogEntry): void {
    this.db.createTable(entry.definition.TableName, memorySchema(entry.definition));
    this.#tables.set(entry.definition.TableName, {
      definition: entry.definition,
      tableId: entry.tableId,
      createdAt: new Date(entry.createdAt),
    });
  }

  /** Whether a table exists. */
  has(tableName: string): boolean {
    return this.#tables.has(tableName);
  }

  /** The definition a table was created (or last updated) with. */
  definition(tableName: string): TableDefinition {
    return this.#entry(tableName).definition;
  }

  /** Table names in alphabetical order, as ListTables returns them. */
  names(): string[] {
    return [...this.#tables.keys()].sort();
  }

  /** The table's ARN. */
  arn(tableName: string): string {
    return `arn:aws:dynamodb:${this.#region}:${this.#accountId}:table/${tableName}`;
  }

  /** Sets a table's time-to-live attribute, as UpdateTimeToLive does. */
  setTimeToLive(tableName: string, timeToLive: { AttributeName: string; Enabled: boolean }): void {
    const entry = this.#entry(tableName);
    entry.definition = { ...entry.definition, TimeToLive: timeToLive };
  }

  /** The TableDescription DescribeTable returns. */
  describe(tableName: string): Record<string, unknown> {
    const { definition, tableId, createdAt } = this.#entry(tableName);
    const items = this.db.items(tableName);
    const arn = this.arn(tableName);
    const stream = this.streams.latest(tableName);
    const indexDescription = (index: IndexDefinition) => {
      const members = items.filter((item) =>
        index.KeySchema.every(
          (key) => key.AttributeName !== undefined && item[key.AttributeName] !== undefined,
        ),
      );
      return {
        IndexName: index.IndexName,
        KeySchema: index.KeySchema,
        Projection: index.Projection ?? { ProjectionType: 'ALL' },
        IndexStatus: 'ACTIVE',
        IndexArn: `${arn}/index/${index.IndexName}`,
        ItemCount: members.length,
        IndexSizeBytes: members.reduce((total, item) => total + itemSizeBytes(item), 0),
        ProvisionedThroughput: { NumberOfDecreasesToday: 0, ReadCapacityUnits: 0, WriteCapacityUnits: 0 },
      };
    };
    const created = createdAt.getTime() / 1000;
    return {
      TableName: tableName,
      TableArn: arn,
      TableId: tableId,
      TableStatus: 'ACTIVE',
      CreationDateTime: created,
      AttributeDefinitions: definition.AttributeDefinitions,
      KeySchema: definition.KeySchema,
      ItemCount: items.length,
      TableSizeBytes: items.reduce((total, item) => total + itemSizeBytes(item), 0),
      ProvisionedThroughput: { NumberOfDecreasesToday: 0, ReadCapacityUnits: 0, WriteCapacityUnits: 0 },
      BillingModeSummary: {
        BillingMode: definition.BillingMode ?? 'PAY_PER_REQUEST',
        LastUpdateToPayPerRequestDateTime: created,
      },
      DeletionProtectionEnabled: definition.DeletionProtectionEnabled === true,
      ...(definition.KmsMasterKeyId === undefined
        ? {}
        : {
            SSEDescription: {
              Status: 'ENABLED',
              SSEType: 'KMS',
              KMSMasterKeyArn: definition.KmsMasterKeyId.startsWith('arn:')
                ? definition.KmsMasterKeyId
                : `arn:aws:kms:${this.#region}:${this.#accountId}:key/${definition.KmsMasterKeyId}`,
            },
          }),
      ...(definition.GlobalSecondaryIndexes?.length
        ? { GlobalSecondaryIndexes: definition.GlobalSecondaryIndexes.map(indexDescription) }
        : {}),
      ...(definition.LocalSecondaryIndexes?.length
        ? { LocalSecondaryIndexes: definition.LocalSecondaryIndexes.map(indexDescription) }
        : {}),
      ...(definition.StreamViewType === undefined
        ? {}
        : { StreamSpecification: { StreamEnabled: true, StreamViewType: definition.StreamViewType } }),
      ...(stream === undefined
        ? {}
        : { LatestStreamArn: stream.streamArn, LatestStreamLabel: stream.streamLabel }),
    };
  }

  #entry(tableName: string): CatalogEntry {
    const entry = this.#tables.get(tableName);
    if (entry === undefined) {
      throw new WireError(
        'ResourceNotFoundException',
        `Requested resource not found: Table: ${tableName} not found`,
      );
    }
    return entry;
  }
}

/** The in-memory table's schema for a definition, after checking it as CreateTable does. */
function memorySchema(definition: TableDefinition): MemoryTableSchema {
  const types = new Map<string, 'S' | 'N' | 'B'>();
  for (const { AttributeName: name, AttributeType: type } of definition.AttributeDefinitions) {
    if (name === undefined || (type !== 'S' && type !== 'N' && type !== 'B')) {
      throw validation(
        `AttributeDefinitions: ${JSON.stringify({ name, type })} is not a name with type S, N or B`,
      );
    }
    types.set(name, type);
  }
  const table = keysOf(definition.KeySchema, `table ${definition.TableName}`);
  const globals = definition.GlobalSecondaryIndexes ?? [];
  const locals = definition.LocalSecondaryIndexes ?? [];
  if (globals.length > LIMITS.globalIndexes || locals.length > LIMITS.localIndexes) {
    throw validation(
      `A table may have at most ${LIMITS.globalIndexes} global and ${LIMITS.localIndexes} local secondary indexes`,
    );
  }
  const indexes: MemoryIndexSchema[] = [];
  for (const index of [...globals, ...locals]) {
    const keys = keysOf(index.KeySchema, `index ${index.IndexName}`);
    if (locals.includes(index) && (keys.partitionKey !== table.partitionKey || keys.sortKey === undefined)) {
      throw validation(
        `Local secondary index ${index.IndexName} must have the table's hash key and a range key`,
      );
    }
    if (indexes.some((other) => other.name === index.IndexName)) {
      throw validation(`Duplicate index name: ${index.IndexName}`);
    }
    indexes.push({ name: index.IndexName, ...keys, projection: projectionOf(index) });
  }
  const used = new Set(
    [table, ...indexes]
      .flatMap((keys) => [keys.partitionKey, keys.sortKey])
      .filter((name) => name !== undefined),
  );
  if (used.size !== types.size || [...used].some((name) => !types.has(name))) {
    throw validation(
      'One or more parameter values were invalid: Number of attributes in KeySchema does not exactly match number of attributes defined in AttributeDefinitions',
    );
  }
  return {
    ...table,
    ...(indexes.length === 0 ? {} : { globalIndexes: indexes }),
    attributeTypes: Object.fromEntries(types),
  };
}

function keysOf(
  keySchema: readonly KeySchemaElement[],
  what: string,
): { partitionKey: string; sortKey?: string } {
  const hash = keySchema.filter((key) => key.KeyType === 'HASH');
  const range = keySchema.filter((key) => key.KeyType === 'RANGE');
  const partitionKey = hash[0]?.AttributeName;
  const sortKey = range[0]?.AttributeName;
  if (
    hash.length !== 1 ||
    range.length > 1 ||
    keySchema.length !== hash.length + range.length ||
    partitionKey === undefined
  ) {
    throw validation(`Invalid KeySchema of ${what}: one HASH key and at most one RANGE key`);
  }
  return { partitionKey, ...(sortKey === undefined ? {} : { sortKey }) };
}

function projectionOf(index: IndexDefinition): NonNullable<MemoryIndexSchema['projection']> {
  const type = index.Projection?.ProjectionType ?? 'ALL';
  if (type !== 'ALL' && type !== 'KEYS_ONLY' && type !== 'INCLUDE') {
    throw validation(`Unknown ProjectionType of index ${index.IndexName}: ${type}`);
  }
  return {
    type,
    ...(type === 'INCLUDE' ? { nonKeyAttributes: index.Projection?.NonKeyAttributes ?? [] } : {}),
  };
}

function sameKeys(a: readonly KeySchemaElement[], b: readonly KeySchemaElement[]): boolean {
  return (
    JSON.stringify(a.map((key) => [key.AttributeName, key.KeyType])) ===
    JSON.stringify(b.map((key) => [key.AttributeName, key.KeyType]))
  );
}

function validation(message: string): WireError {
  return new WireError('ValidationException', message);
}
