import { ConditionalCheckFailedException, TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import {
  DeleteCommand,
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  ScanCommand,
  TransactWriteCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { applyUpdate, compileCondition, type ExpressionContext, type Item } from './expressions.ts';

/** Key schema of an in-memory table and of its global secondary indexes. */
export interface MemoryTableSchema {
  readonly partitionKey: string;
  readonly globalIndexes?: readonly {
    readonly name: string;
    readonly partitionKey: string;
    readonly sortKey: string;
  }[];
}

/** A write that fails the way DynamoDB would, raised by {@link MemoryDocumentClient}. */
class ValidationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ValidationException';
  }
}

/** One committed write, as a stream would report it. */
export interface MemoryChange {
  readonly tableName: string;
  readonly eventName: 'INSERT' | 'MODIFY' | 'REMOVE';
  readonly oldImage: Item | undefined;
  readonly newImage: Item | undefined;
}

interface Table {
  readonly name: string;
  readonly schema: MemoryTableSchema;
  readonly items: Map<string, Item>;
  /** Per index: partition value → keys of the items in it (kept in step with every write: sparse). */
  readonly indexes: Map<string, Map<string, Set<string>>>;
}

type Write = { table: Table; key: string; item: Item | undefined };

/**
 * An in-memory stand-in for the DynamoDB Document client, for unit tests and the scale drill: the same
 * commands, conditions, transactions (all-or-nothing, CancellationReasons with ALL_OLD items) and sparse
 * GSIs as the real service, at memory speed. Only the commands and expression subset the outbox uses.
 * @example
 * const client = new MemoryDocumentClient({ outbox: { partitionKey: 'messageId' } }).asDocumentClient();
 */
export class MemoryDocumentClient {
  readonly #tables = new Map<string, Table>();
  readonly #listeners: ((change: MemoryChange) => void)[] = [];

  constructor(tables: Readonly<Record<string, MemoryTableSchema>>) {
    for (const [name, schema] of Object.entries(tables)) {
      this.#tables.set(name, {
        name,
        schema,
        items: new Map(),
        indexes: new Map((schema.globalIndexes ?? []).map((index) => [index.name, new Map()])),
      });
    }
  }

  /** This client typed as the Document client the library's adapters take. */
  asDocumentClient(): DynamoDBDocumentClient {
    return this as unknown as DynamoDBDocumentClient;
  }

  /** Calls `listener` after every committed write, like a NEW_AND_OLD_IMAGES stream of every table. */
  onChange(listener: (change: MemoryChange) => void): void {
    this.#listeners.push(listener);
  }

  /** Every item of a table (copies), for drills that check invariants. */
  items(tableName: string): Item[] {
    return [...this.#table(tableName).items.values()].map((item) => structuredClone(item));
  }

  /** Runs one Document-client command. */
  async send(command: unknown): Promise<Record<string, unknown>> {
    if (command instanceof GetCommand) {
      const item = this.#table(command.input.TableName).items.get(
        this.#keyOf(command.input.TableName, command.input.Key),
      );
      return item === undefined ? {} : { Item: structuredClone(item) };
    }
    if (command instanceof PutCommand) {
      const input = command.input;
      const item = input.Item ?? {};
      this.#commit([this.#checked(input.TableName, item, input, () => structuredClone(item))]);
      return {};
    }
    if (command instanceof UpdateCommand) {
      const input = command.input;
      const write = this.#checked(input.TableName, input.Key ?? {}, input, (current) =>
        applyUpdate(current ?? { ...(input.Key ?? {}) }, input.UpdateExpression ?? '', this.#context(input)),
      );
      this.#commit([write]);
      return input.ReturnValues === 'ALL_NEW' && write.item
        ? { Attributes: structuredClone(write.item) }
        : {};
    }
    if (command instanceof DeleteCommand) {
      const input = command.input;
      this.#commit([this.#checked(input.TableName, input.Key ?? {}, input, () => undefined)]);
      return {};
    }
    if (command instanceof TransactWriteCommand) return this.#transact(command);
    if (command instanceof QueryCommand) return this.#query(command);
    if (command instanceof ScanCommand) {
      const items = this.items(command.input.TableName ?? '');
      return command.input.Select === 'COUNT'
        ? { Count: items.length }
        : { Items: items, Count: items.length };
    }
    throw new ValidationError(
      `MemoryDocumentClient does not support ${(command as object).constructor.name}`,
    );
  }

  #transact(command: TransactWriteCommand): Record<string, unknown> {
    const actions = command.input.TransactItems ?? [];
    const seen = new Set<string>();
    const outcomes = actions.map((action) => {
      const input = action.Put ?? action.Update ?? action.Delete ?? action.ConditionCheck;
      if (!input) throw new ValidationError('empty transaction action');
      const keySource = action.Put ? (action.Put.Item ?? {}) : ((input as { Key?: Item }).Key ?? {});
      const id = `${input.TableName}/${this.#keyOf(input.TableName, keySource)}`;
      if (seen.has(id))
        throw new ValidationError('Transaction request cannot include multiple operations on one item');
      seen.add(id);
      try {
        if (action.Put)
          return this.#checked(input.TableName, keySource, input, () =>
            structuredClone(action.Put?.Item ?? {}),
          );
        if (action.Update) {
          const update = action.Update;
          return this.#checked(input.TableName, keySource, input, (current) =>
            applyUpdate(current ?? { ...keySource }, update.UpdateExpression ?? '', this.#context(update)),
          );
        }
        if (action.Delete) return this.#checked(input.TableName, keySource, input, () => undefined);
        this.#checked(input.TableName, keySource, input, (current) => current);
        return undefined;
      } catch (error) {
        if (error instanceof ConditionalCheckFailedException) return error;
        throw error;
      }
    });
    if (outcomes.some((outcome) => outcome instanceof ConditionalCheckFailedException)) {
      throw new TransactionCanceledException({
        message: 'Transaction cancelled, please refer cancellation reasons for specific reasons',
        $metadata: {},
        CancellationReasons: outcomes.map((outcome) =>
          outcome instanceof ConditionalCheckFailedException
            ? {
                Code: 'ConditionalCheckFailed',
                Message: 'The conditional request failed',
                ...(outcome.Item ? { Item: outcome.Item } : {}),
              }
            : { Code: 'None' },
        ),
      });
    }
    this.#commit(
      outcomes.filter((outcome): outcome is Write => outcome !== undefined && !(outcome instanceof Error)),
    );
    return {};
  }

  #query(command: QueryCommand): Record<string, unknown> {
    const input = command.input;
    const table = this.#table(input.TableName);
    const matches = compileCondition(input.KeyConditionExpression ?? '', this.#context(input));
    let candidates: Item[];
    let sortKey: string | undefined;
    if (input.IndexName !== undefined) {
      const index = table.schema.globalIndexes?.find((gsi) => gsi.name === input.IndexName);
      const partitions = table.indexes.get(input.IndexName);
      if (!index || !partitions) throw new ValidationError(`no index ${input.IndexName}`);
      sortKey = index.sortKey;
      // A key condition starts with the partition key's equality: read only that partition.
      const partition = partitionValue(
        input.KeyConditionExpression ?? '',
        this.#context(input),
        index.partitionKey,
      );
      const keys = partition === undefined ? [] : [...(partitions.get(partition) ?? [])];
      candidates = keys.flatMap((key) => {
        const item = table.items.get(key);
        return item && matches(item) ? [item] : [];
      });
    } else {
      candidates = [...table.items.values()].filter(matches);
    }
    if (sortKey !== undefined) {
      const by = sortKey;
      candidates.sort((a, b) => compareKeyValues(a[by], b[by]));
    }
    const limited = input.Limit === undefined ? candidates : candidates.slice(0, input.Limit);
    return { Items: limited.map((item) => structuredClone(item)), Count: limited.length };
  }

  /** Checks an action's condition against the current item and computes the item after it. */
  #checked(
    tableName: string | undefined,
    keySource: Item,
    input: ExpressionContextInput,
    next: (current: Item | undefined) => Item | undefined,
  ): Write {
    const table = this.#table(tableName);
    const key = this.#keyOf(tableName, keySource);
    const current = table.items.get(key);
    if (input.ConditionExpression !== undefined) {
      const holds = compileCondition(input.ConditionExpression, this.#context(input))(current ?? {});
      if (!holds) {
        throw new ConditionalCheckFailedException({
          message: 'The conditional request failed',
          $metadata: {},
          ...(input.ReturnValuesOnConditionCheckFailure === 'ALL_OLD' && current
            ? { Item: marshall(current, { removeUndefinedValues: true }) }
            : {}),
        });
      }
    }
    const item = next(current === undefined ? undefined : structuredClone(current));
    return { table, key, item };
  }

  #commit(writes: readonly Write[]): void {
    for (const { table, key, item } of writes) {
      const before = table.items.get(key);
      for (const index of table.schema.globalIndexes ?? []) {
        const partitions = table.indexes.get(index.name);
        if (!partitions) continue;
        const oldPartition = before?.[index.partitionKey];
        if (oldPartition !== undefined) partitions.get(String(oldPartition))?.delete(key);
        const newPartition = item?.[index.partitionKey];
        // Sparse, like a GSI: an item without both index keys is not in the index.
        if (newPartition !== undefined && item?.[index.sortKey] !== undefined) {
          const members = partitions.get(String(newPartition)) ?? new Set<string>();
          members.add(key);
          partitions.set(String(newPartition), members);
        }
      }
      if (item === undefined) table.items.delete(key);
      else table.items.set(key, item);
      const eventName = before === undefined ? 'INSERT' : item === undefined ? 'REMOVE' : 'MODIFY';
      if (before === undefined && item === undefined) continue;
      for (const listener of this.#listeners) {
        listener({ tableName: table.name, eventName, oldImage: before, newImage: item });
      }
    }
  }

  #table(name: string | undefined): Table {
    const table = name === undefined ? undefined : this.#tables.get(name);
    if (!table) throw new ValidationError(`Requested resource not found: table ${name}`);
    return table;
  }

  #keyOf(tableName: string | undefined, source: Item | undefined): string {
    const { partitionKey } = this.#table(tableName).schema;
    const value = source?.[partitionKey];
    if (value === undefined) throw new ValidationError(`missing key ${partitionKey}`);
    return String(value);
  }

  #context(input: ExpressionContextInput): ExpressionContext {
    return {
      ...(input.ExpressionAttributeNames ? { names: input.ExpressionAttributeNames } : {}),
      ...(input.ExpressionAttributeValues ? { values: input.ExpressionAttributeValues } : {}),
    };
  }
}

/**
 * DynamoDB's order of key values: numbers by value, strings by character code (not by locale, which
 * would put `a` before `B` and `10` before `9`).
 */
function compareKeyValues(a: unknown, b: unknown): number {
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  const left = String(a);
  const right = String(b);
  return left < right ? -1 : left > right ? 1 : 0;
}

/** The partition value of a key condition `#pk = :value AND …`, when its first term names `partitionKey`. */
function partitionValue(
  expression: string,
  context: ExpressionContext,
  partitionKey: string,
): string | undefined {
  const match = /^\s*(#?\w+)\s*=\s*(:\w+)/.exec(expression);
  if (!match?.[1] || !match[2]) return undefined;
  const name = match[1].startsWith('#') ? context.names?.[match[1]] : match[1];
  if (name !== partitionKey) return undefined;
  const value = context.values?.[match[2]];
  return value === undefined ? undefined : String(value);
}

interface ExpressionContextInput {
  readonly TableName?: string | undefined;
  readonly ConditionExpression?: string | undefined;
  readonly ExpressionAttributeNames?: Record<string, string> | undefined;
  readonly ExpressionAttributeValues?: Record<string, unknown> | undefined;
  readonly ReturnValuesOnConditionCheckFailure?: string | undefined;
}
