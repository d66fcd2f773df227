/**
 * The DynamoDB API (`DynamoDB_20120810`) of the embedded backend: each operation reads its JSON input,
 * runs the matching command on the in-memory table (conditions, transactions, indexes, paging) and writes
 * the answer, with DynamoDB's exceptions (ConditionalCheckFailedException with the old item,
 * TransactionCanceledException with CancellationReasons, ValidationException, ResourceNotFoundException…).
 */
import type { AttributeValue, StreamViewType } from '@aws-sdk/client-dynamodb';
import {
  DeleteCommand,
  GetCommand,
  PutCommand,
  QueryCommand,
  ScanCommand,
  TransactWriteCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import {
  InvalidNumberError,
  type Item,
  UnsupportedExpressionError,
} from '../../../../../shared/memory/index.ts';
import {
  fromWireItem,
  fromWireItemOrUndefined,
  fromWireValues,
  toWireAttributeValues,
  toWireItem,
} from './attribute-values.ts';
import type { IndexDefinition, TableCatalog, TableDefinition } from './table-catalog.ts';
import { WireError } from './wire-error.ts';
import type { Operation, WireService } from './wire-server.ts';

type Input = Record<string, unknown>;

/** Parameters of the pre-expression API, which the in-memory table does not evaluate. */
const LEGACY_PARAMETERS = [
  'Expected',
  'AttributeUpdates',
  'KeyConditions',
  'QueryFilter',
  'ScanFilter',
  'AttributesToGet',
  'ConditionalOperator',
] as const;

// BatchGetItem reads at most 100 keys, BatchWriteItem writes at most 25 items, TransactGetItems 100 gets.
const LIMITS = { batchGet: 100, batchWrite: 25, transactGet: 100 } as const;

/** DynamoDB's exceptions that pass through under their own name. */
const NAMED_EXCEPTIONS = new Set([
  'ResourceNotFoundException',
  'ResourceInUseException',
  'IdempotentParameterMismatchException',
  'ValidationException',
]);

/**
 * The DynamoDB service over `tables`.
 * @example
 * await startWireServer({ services: [dynamoDbService(tables)], log });
 */
export function dynamoDbService(tables: TableCatalog): WireService {
  const { db } = tables;
  const run = async (command: unknown): Promise<Record<string, unknown>> => db.send(command);
  const operations: Record<string, Operation> = {
    CreateTable: (input) => ({ TableDescription: tables.create(tableDefinition(input)) }),
    DescribeTable: (input) => ({ Table: tables.describe(text(input, 'TableName')) }),
    DeleteTable: (input) => ({ TableDescription: tables.delete(text(input, 'TableName')) }),
    ListTables: (input) => listTables(tables, input),
    UpdateTable: (input) => ({ TableDescription: tables.update(updatedDefinition(tables, input)) }),
    DescribeTimeToLive: (input) => {
      const ttl = tables.definition(text(input, 'TableName')).TimeToLive;
      return {
        TimeToLiveDescription:
          ttl?.Enabled === true
            ? { TimeToLiveStatus: 'ENABLED', AttributeName: ttl.AttributeName }
            : { TimeToLiveStatus: 'DISABLED' },
      };
    },
    UpdateTimeToLive: (input) => {
      const specification = input.TimeToLiveSpecification as { AttributeName?: string; Enabled?: boolean };
      if (typeof specification?.AttributeName !== 'string' || typeof specification.Enabled !== 'boolean') {
        throw validation('TimeToLiveSpecification needs AttributeName and Enabled');
      }
      const ttl = { AttributeName: specification.AttributeName, Enabled: specification.Enabled };
      tables.setTimeToLive(text(input, 'TableName'), ttl);
      return { TimeToLiveSpecification: ttl };
    },
    GetItem: async (input) => {
      refuseLegacy(input);
      const output = await run(new GetCommand({ ...expressionInput(input), Key: key(input) }));
      return itemOutput(output, 'Item');
    },
    PutItem: async (input) => {
      refuseLegacy(input);
      const output = await run(
        new PutCommand({ ...expressionInput(input), Item: fromWireItem(input.Item, 'Item') }),
      );
      return itemOutput(output, 'Attributes');
    },
    UpdateItem: async (input) => {
      refuseLegacy(input);
      const output = await run(new UpdateCommand({ ...expressionInput(input), Key: key(input) }));
      return itemOutput(output, 'Attributes');
    },
    DeleteItem: async (input) => {
      refuseLegacy(input);
      const output = await run(new DeleteCommand({ ...expressionInput(input), Key: key(input) }));
      return itemOutput(output, 'Attributes');
    },
    Query: async (input) => {
      refuseLegacy(input);
      return pageOutput(await run(new QueryCommand(readInput(input))));
    },
    Scan: async (input) => {
      refuseLegacy(input);
      return pageOutput(await run(new ScanCommand(readInput(input))));
    },
    TransactWriteItems: async (input) => {
      const actions = list(input, 'TransactItems').map(transactAction);
      await run(
        new TransactWriteCommand({
          TransactItems: actions,
          ...(typeof input.ClientRequestToken === 'string'
            ? { ClientRequestToken: input.ClientRequestToken }
            : {}),
        }),
      );
      return {};
    },
    TransactGetItems: async (input) => {
      const gets = list(input, 'TransactItems');
      if (gets.length === 0 || gets.length > LIMITS.transactGet) {
        throw validation(`TransactItems must hold 1 to ${LIMITS.transactGet} actions`);
      }
      const responses = [];
      for (const action of gets) {
        const get = (action as Input).Get as Input | undefined;
        if (get === undefined) throw validation('Each TransactGetItems action must be a Get');
        const output = await run(new GetCommand({ ...expressionInput(get), Key: key(get) }));
        responses.push(output.Item === undefined ? {} : { Item: toWireItem(output.Item as Item) });
      }
      return { Responses: responses };
    },
    BatchGetItem: async (input) => batchGet(run, input),
    BatchWriteItem: async (input) => batchWrite(run, input),
  };
  return {
    target: 'DynamoDB_20120810',
    errorNamespace: 'com.amazonaws.dynamodb.v20120810',
    operations,
    toWireError: dynamoDbWireError,
  };
}

/** DynamoDB's answer for an error of the in-memory table. */
export function dynamoDbWireError(error: unknown): WireError | undefined {
  if (error instanceof WireError) return error;
  if (error instanceof UnsupportedExpressionError) {
    return validation(`Invalid expression (or one the embedded backend does not evaluate): ${error.message}`);
  }
  if (error instanceof InvalidNumberError) return validation(error.message);
  if (!(error instanceof Error)) return undefined;
  const details = error as Error & {
    Item?: Record<string, AttributeValue>;
    CancellationReasons?: { Code?: string; Message?: string; Item?: Record<string, AttributeValue> }[];
  };
  if (error.name === 'ConditionalCheckFailedException') {
    return new WireError(error.name, error.message, {
      fields: details.Item === undefined ? {} : { Item: toWireAttributeValues(details.Item) },
    });
  }
  if (error.name === 'TransactionCanceledException') {
    return new WireError(error.name, error.message, {
      fields: {
        CancellationReasons: (details.CancellationReasons ?? []).map((reason) => ({
          ...reason,
          ...(reason.Item === undefined ? {} : { Item: toWireAttributeValues(reason.Item) }),
        })),
      },
    });
  }
  if (NAMED_EXCEPTIONS.has(error.name)) return new WireError(error.name, error.message);
  return undefined;
}

function listTables(tables: TableCatalog, input: Input): Record<string, unknown> {
  const start = input.ExclusiveStartTableName;
  const limit = typeof input.Limit === 'number' ? input.Limit : 100;
  const names = tables.names().filter((name) => typeof start !== 'string' || name > start);
  const page = names.slice(0, limit);
  const last = page[page.length - 1];
  return {
    TableNames: page,
    ...(names.length > page.length && last !== undefined ? { LastEvaluatedTableName: last } : {}),
  };
}

function tableDefinition(input: Input): TableDefinition {
  const stream = input.StreamSpecification as
    | { StreamEnabled?: boolean; StreamViewType?: StreamViewType }
    | undefined;
  if (stream?.StreamEnabled === true && stream.StreamViewType === undefined) {
    throw validation('StreamSpecification: StreamViewType is required when the stream is enabled');
  }
  return {
    TableName: text(input, 'TableName'),
    AttributeDefinitions: list(input, 'AttributeDefinitions') as TableDefinition['AttributeDefinitions'],
    KeySchema: list(input, 'KeySchema') as TableDefinition['KeySchema'],
    ...(Array.isArray(input.GlobalSecondaryIndexes)
      ? { GlobalSecondaryIndexes: input.GlobalSecondaryIndexes as IndexDefinition[] }
      : {}),
    ...(Array.isArray(input.LocalSecondaryIndexes)
      ? { LocalSecondaryIndexes: input.LocalSecondaryIndexes as IndexDefinition[] }
      : {}),
    ...(stream?.StreamEnabled === true && stream.StreamViewType !== undefined
      ? { StreamViewType: stream.StreamViewType }
      : {}),
    ...(typeof input.BillingMode === 'string' ? { BillingMode: input.BillingMode } : {}),
    ...(input.DeletionProtectionEnabled === true ? { DeletionProtectionEnabled: true } : {}),
  };
}

/** UpdateTable: new attribute definitions, indexes created or deleted, the stream turned on or off. */
function updatedDefinition(tables: TableCatalog, input: Input): TableDefinition {
  const current = tables.definition(text(input, 'TableName'));
  let indexes = [...(current.GlobalSecondaryIndexes ?? [])];
  for (const update of (input.GlobalSecondaryIndexUpdates ?? []) as {
    Create?: IndexDefinition;
    Delete?: { IndexName: string };
  }[]) {
    if (update.Create) indexes.push(update.Create);
    if (update.Delete) {
      const name = update.Delete.IndexName;
      if (!indexes.some((index) => index.IndexName === name)) {
        throw new WireError(
          'ResourceNotFoundException',
          `Requested resource not found: Index: ${name} not found`,
        );
      }
      indexes = indexes.filter((index) => index.IndexName !== name);
    }
  }
  const stream = input.StreamSpecification as
    | { StreamEnabled?: boolean; StreamViewType?: StreamViewType }
    | undefined;
  if (stream?.StreamEnabled === true && current.StreamViewType !== undefined) {
    throw validation(
      `Table already has an enabled stream: ${tables.streams.latest(current.TableName)?.streamArn}`,
    );
  }
  const definitions = [...current.AttributeDefinitions];
  for (const definition of (input.AttributeDefinitions ?? []) as TableDefinition['AttributeDefinitions']) {
    if (!definitions.some((known) => known.AttributeName === definition.AttributeName))
      definitions.push(definition);
  }
  // Definitions no key uses any more go, as DynamoDB keeps only those of the table's and indexes' keys.
  const used = new Set(
    [
      current.KeySchema,
      ...indexes.map((index) => index.KeySchema),
      ...(current.LocalSecondaryIndexes ?? []).map((index) => index.KeySchema),
    ]
      .flat()
      .map((key) => key.AttributeName),
  );
  const { StreamViewType: _stream, ...rest } = current;
  return {
    ...rest,
    AttributeDefinitions: definitions.filter((definition) => used.has(definition.AttributeName)),
    GlobalSecondaryIndexes: indexes,
    ...(stream === undefined
      ? current.StreamViewType === undefined
        ? {}
        : { StreamViewType: current.StreamViewType }
      : stream.StreamEnabled === true && stream.StreamViewType !== undefined
        ? { StreamViewType: stream.StreamViewType }
        : {}),
  };
}

function refuseLegacy(input: Input): void {
  const legacy = LEGACY_PARAMETERS.find((name) => input[name] !== undefined);
  if (legacy !== undefined) {
    throw validation(
      `The embedded backend does not evaluate the legacy parameter ${legacy}; use an expression instead`,
    );
  }
}

/** The fields every item operation shares, with expression values converted from the wire. */
function expressionInput(input: Input) {
  const values = fromWireValues(input.ExpressionAttributeValues);
  return {
    TableName: text(input, 'TableName'),
    ...optionalText(input, 'ConditionExpression'),
    ...optionalText(input, 'UpdateExpression'),
    ...optionalText(input, 'ProjectionExpression'),
    ...optionalText(input, 'ReturnValues'),
    ...optionalText(input, 'ReturnValuesOnConditionCheckFailure'),
    ...(input.ExpressionAttributeNames === undefined ? {} : { ExpressionAttributeNames: names(input) }),
    ...(values === undefined ? {} : { ExpressionAttributeValues: values }),
  };
}

function readInput(input: Input) {
  const start = fromWireItemOrUndefined(input.ExclusiveStartKey, 'ExclusiveStartKey');
  return {
    ...expressionInput(input),
    ...optionalText(input, 'IndexName'),
    ...optionalText(input, 'KeyConditionExpression'),
    ...optionalText(input, 'FilterExpression'),
    ...optionalText(input, 'Select'),
    ...(typeof input.Limit === 'number' ? { Limit: input.Limit } : {}),
    ...(typeof input.ScanIndexForward === 'boolean' ? { ScanIndexForward: input.ScanIndexForward } : {}),
    ...(typeof input.ConsistentRead === 'boolean' ? { ConsistentRead: input.ConsistentRead } : {}),
    ...(typeof input.Segment === 'number' ? { Segment: input.Segment } : {}),
    ...(typeof input.TotalSegments === 'number' ? { TotalSegments: input.TotalSegments } : {}),
    ...(start === undefined ? {} : { ExclusiveStartKey: start }),
  };
}

function transactAction(action: unknown) {
  const entry = (action ?? {}) as Input;
  const kinds = (['Put', 'Update', 'Delete', 'ConditionCheck'] as const).filter(
    (kind) => entry[kind] !== undefined,
  );
  const [kind] = kinds;
  if (kinds.length !== 1 || kind === undefined) {
    throw validation('TransactItems can only contain one of Check, Put, Update or Delete');
  }
  const body = entry[kind] as Input;
  if (kind === 'Put') return { Put: { ...expressionInput(body), Item: fromWireItem(body.Item, 'Item') } };
  return { [kind]: { ...expressionInput(body), Key: key(body) } };
}

async function batchGet(run: (command: unknown) => Promise<Record<string, unknown>>, input: Input) {
  const requests = Object.entries((input.RequestItems ?? {}) as Record<string, Input>);
  const count = requests.reduce((total, [, request]) => total + list(request, 'Keys').length, 0);
  if (count === 0 || count > LIMITS.batchGet)
    throw validation(`RequestItems must hold 1 to ${LIMITS.batchGet} keys`);
  const responses: Record<string, unknown[]> = {};
  for (const [tableName, request] of requests) {
    const items: unknown[] = [];
    for (const wireKey of list(request, 'Keys')) {
      const output = await run(
        new GetCommand({
          ...expressionInput({ ...request, TableName: tableName }),
          Key: fromWireItem(wireKey, 'Key'),
        }),
      );
      if (output.Item !== undefined) items.push(toWireItem(output.Item as Item));
    }
    responses[tableName] = items;
  }
  return { Responses: responses, UnprocessedKeys: {} };
}

async function batchWrite(run: (command: unknown) => Promise<Record<string, unknown>>, input: Input) {
  const requests = Object.entries((input.RequestItems ?? {}) as Record<string, unknown[]>);
  const count = requests.reduce(
    (total, [, writes]) => total + (Array.isArray(writes) ? writes.length : 0),
    0,
  );
  if (count === 0 || count > LIMITS.batchWrite) {
    throw validation(`RequestItems must hold 1 to ${LIMITS.batchWrite} write requests`);
  }
  for (const [tableName, writes] of requests) {
    for (const write of writes as { PutRequest?: { Item: unknown }; DeleteRequest?: { Key: unknown } }[]) {
      if (write.PutRequest) {
        await run(
          new PutCommand({ TableName: tableName, Item: fromWireItem(write.PutRequest.Item, 'Item') }),
        );
      } else if (write.DeleteRequest) {
        await run(
          new DeleteCommand({ TableName: tableName, Key: fromWireItem(write.DeleteRequest.Key, 'Key') }),
        );
      } else {
        throw validation('Each write request must be a PutRequest or a DeleteRequest');
      }
    }
  }
  return { UnprocessedItems: {} };
}

function itemOutput(output: Record<string, unknown>, field: 'Item' | 'Attributes'): Record<string, unknown> {
  const item = output[field] as Item | undefined;
  return item === undefined ? {} : { [field]: toWireItem(item) };
}

function pageOutput(output: Record<string, unknown>): Record<string, unknown> {
  const items = output.Items as Item[] | undefined;
  const last = output.LastEvaluatedKey as Item | undefined;
  return {
    ...(items === undefined ? {} : { Items: items.map(toWireItem) }),
    Count: output.Count,
    ScannedCount: output.ScannedCount,
    ...(last === undefined ? {} : { LastEvaluatedKey: toWireItem(last) }),
  };
}

function key(input: Input): Item {
  return fromWireItem(input.Key, 'Key');
}

function names(input: Input): Record<string, string> {
  const value = input.ExpressionAttributeNames;
  if (
    typeof value !== 'object' ||
    value === null ||
    Object.values(value).some((name) => typeof name !== 'string')
  ) {
    throw validation('ExpressionAttributeNames must map placeholders to attribute names');
  }
  return value as Record<string, string>;
}

function text(input: Input, field: string): string {
  const value = input[field];
  if (typeof value !== 'string' || value === '') throw validation(`${field} is required`);
  return value;
}

function optionalText(input: Input, field: string): Record<string, string> {
  const value = input[field];
  return typeof value === 'string' ? { [field]: value } : {};
}

function list(input: Input, field: string): unknown[] {
  const value = input[field];
  if (!Array.isArray(value)) throw validation(`${field} must be a list`);
  return value;
}

function validation(message: string): WireError {
  return new WireError('ValidationException', message);
}
