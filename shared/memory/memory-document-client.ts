import {
  ConditionalCheckFailedException,
  IdempotentParameterMismatchException,
  ResourceInUseException,
  ResourceNotFoundException,
  TransactionCanceledException,
} from '@aws-sdk/client-dynamodb';
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
import { itemSizeBytes } from '../transaction/item-size.ts';
import { cloneDefined, cloneValue } from './clone-item.ts';
import { type DynamoNumber, isDynamoNumber, numberText } from './exact-numbers.ts';
import {
  applyUpdate,
  compareValues,
  compileCondition,
  compileKeyCondition,
  compileProjection,
  type ExpressionContext,
  type ExpressionKind,
  expressionPlaceholders,
  type Item,
  sameValue,
  updatedAttributeNames,
  validateExpression,
} from './expressions.ts';
import { ValidationError } from './validation-error.ts';

/** A secondary index of an in-memory table: its keys and which attributes it holds. */
export interface MemoryIndexSchema {
  readonly name: string;
  readonly partitionKey: string;
  /** Without one, the index orders a partition by the table's key. */
  readonly sortKey?: string;
  /** Attributes the index holds besides the keys. @default { type: 'ALL' } */
  readonly projection?: {
    readonly type: 'ALL' | 'KEYS_ONLY' | 'INCLUDE';
    readonly nonKeyAttributes?: readonly string[];
  };
}

/** Key schema of an in-memory table and of its secondary indexes. */
export interface MemoryTableSchema {
  readonly partitionKey: string;
  /** The table's sort key, when its key is composite. */
  readonly sortKey?: string;
  /** Global (or local) secondary indexes; sparse, like DynamoDB's. */
  readonly globalIndexes?: readonly MemoryIndexSchema[];
  /**
   * Scalar types of key attributes (the table's AttributeDefinitions): a write with a key of another type
   * fails as on DynamoDB. Unchecked when absent.
   */
  readonly attributeTypes?: Readonly<Record<string, 'S' | 'N' | 'B'>>;
}

/** Options of {@link MemoryDocumentClient}. */
export interface MemoryDocumentClientOptions {
  /** Time source for idempotency tokens of transactions. @default () => new Date() */
  readonly clock?: () => Date;
}

/** One committed write, as a stream would report it. */
export interface MemoryChange {
  readonly tableName: string;
  readonly eventName: 'INSERT' | 'MODIFY' | 'REMOVE';
  readonly oldImage: Item | undefined;
  readonly newImage: Item | undefined;
  /** The request that made the change: a transaction's writes cost twice a single write's capacity. */
  readonly operation: MemoryWriteOperation;
}

/** The DynamoDB request a committed write came from. */
export type MemoryWriteOperation = 'PutItem' | 'UpdateItem' | 'DeleteItem' | 'TransactWriteItems';

interface Table {
  readonly name: string;
  readonly schema: MemoryTableSchema;
  readonly items: Map<string, Item>;
  /** With a sort key: partition value → keys of its items. */
  readonly partitions: Map<string, Set<string>>;
  /** Per index: partition value → keys of the items in it (kept in step with every write: sparse). */
  readonly indexes: Map<string, Map<string, Set<string>>>;
  /** The table's keys in scan order, rebuilt after an insert or delete. */
  scanOrder: string[] | undefined;
}

type Write = { table: Table; key: string; item: Item | undefined; before: Item | undefined };

interface ExpressionInput {
  readonly TableName?: string | undefined;
  readonly ConditionExpression?: string | undefined;
  readonly UpdateExpression?: string | undefined;
  readonly KeyConditionExpression?: string | undefined;
  readonly FilterExpression?: string | undefined;
  readonly ProjectionExpression?: string | undefined;
  readonly ExpressionAttributeNames?: Record<string, string> | undefined;
  readonly ExpressionAttributeValues?: Record<string, unknown> | undefined;
  readonly ReturnValuesOnConditionCheckFailure?: string | undefined;
}

interface ReadInput extends ExpressionInput {
  readonly IndexName?: string | undefined;
  readonly Select?: string | undefined;
  readonly Limit?: number | undefined;
  readonly ExclusiveStartKey?: Item | undefined;
  readonly ConsistentRead?: boolean | undefined;
  readonly ScanIndexForward?: boolean | undefined;
  readonly Segment?: number | undefined;
  readonly TotalSegments?: number | undefined;
}

const LIMITS = {
  // A Query or Scan page stops after 1 MB of items read.
  pageBytes: 1024 * 1024,
  itemBytes: 400 * 1024,
  transactionActions: 100,
  // DynamoDB remembers a transaction's ClientRequestToken for 10 minutes.
  idempotencyMs: 10 * 60 * 1000,
} as const;

/**
 * An in-memory stand-in for the DynamoDB Document client, for unit tests, the scale drill and the local
 * runtime's embedded backend: the same commands, conditions, transactions (all-or-nothing,
 * CancellationReasons with ALL_OLD items, idempotency tokens), composite keys, sparse secondary indexes,
 * paged Query and Scan as the real service, at memory speed. Only the expression subset the outbox uses. It
 * refuses what DynamoDB refuses, with its error names: undefined, unused or missing placeholders, reserved words,
 * empty key strings, update paths that overlap, items over 400 KB. The contract in test/shared/memory/contract
 * runs on this client and on moto, so the two cannot drift.
 * @example
 * const client = new MemoryDocumentClient({ outbox: { partitionKey: 'messageId' } }).asDocumentClient();
 */
export class MemoryDocumentClient {
  readonly #tables = new Map<string, Table>();
  readonly #listeners: ((change: MemoryChange) => void)[] = [];
  readonly #clock: () => Date;
  readonly #tokens = new Map<string, { fingerprint: string; at: number }>();
  /**
   * When the oldest remembered token was applied: until it is forgotten no token is, so a transaction pays for a
   * pass over the tokens only when one has expired (a pass per transaction made a long run quadratic).
   */
  #oldestTokenAt = Number.POSITIVE_INFINITY;

  constructor(
    tables: Readonly<Record<string, MemoryTableSchema>>,
    options: MemoryDocumentClientOptions = {},
  ) {
    this.#clock = options.clock ?? (() => new Date());
    for (const [name, schema] of Object.entries(tables)) this.createTable(name, schema);
  }

  /** This client typed as the Document client the library's adapters take. */
  asDocumentClient(): DynamoDBDocumentClient {
    return this as unknown as DynamoDBDocumentClient;
  }

  /** Calls `listener` after every committed write, like a NEW_AND_OLD_IMAGES stream of every table. */
  onChange(listener: (change: MemoryChange) => void): void {
    this.#listeners.push(listener);
  }

  /** Creates an empty table; throws `ResourceInUseException` when one of that name exists. */
  createTable(name: string, schema: MemoryTableSchema): void {
    if (this.#tables.has(name)) {
      throw new ResourceInUseException({ message: `Table already exists: ${name}`, $metadata: {} });
    }
    this.#tables.set(name, {
      name,
      schema,
      items: new Map(),
      partitions: new Map(),
      indexes: new Map(),
      scanOrder: undefined,
    });
    this.#rebuildIndexes(this.#table(name));
  }

  /**
   * Changes a table's secondary indexes (and key attribute types), rebuilding them from the items, as an
   * index added to a live table is backfilled. The table's own key cannot change.
   */
  updateTable(name: string, schema: MemoryTableSchema): void {
    const table = this.#table(name);
    if (table.schema.partitionKey !== schema.partitionKey || table.schema.sortKey !== schema.sortKey) {
      throw new ValidationError(`Cannot change the key schema of table ${name}`);
    }
    const updated: Table = { ...table, schema, indexes: new Map() };
    this.#tables.set(name, updated);
    this.#rebuildIndexes(updated);
  }

  /** Deletes a table and its items (no stream records, as on DynamoDB). */
  deleteTable(name: string): void {
    this.#table(name);
    this.#tables.delete(name);
  }

  /** The schema of a table, or `undefined` when there is no such table. */
  tableSchema(name: string): MemoryTableSchema | undefined {
    return this.#tables.get(name)?.schema;
  }

  /** Names of the tables, in creation order. */
  tableNames(): string[] {
    return [...this.#tables.keys()];
  }

  /** How many items a table holds. */
  itemCount(tableName: string): number {
    return this.#table(tableName).items.size;
  }

  /** Every item of a table (copies), for drills that check invariants. */
  items(tableName: string): Item[] {
    return [...this.#table(tableName).items.values()].map((item) => cloneValue(item));
  }

  /** Runs one Document-client command. */
  async send(command: unknown): Promise<Record<string, unknown>> {
    if (command instanceof GetCommand) return this.#get(command.input);
    if (command instanceof PutCommand) return this.#put(command.input);
    if (command instanceof UpdateCommand) return this.#update(command.input);
    if (command instanceof DeleteCommand) return this.#delete(command.input);
    if (command instanceof TransactWriteCommand) return this.#transact(command);
    if (command instanceof QueryCommand) return this.#query(command.input);
    if (command instanceof ScanCommand) return this.#scan(command.input);
    throw new ValidationError(
      `MemoryDocumentClient does not support ${(command as object).constructor.name}`,
    );
  }

  #get(input: GetCommand['input']): Record<string, unknown> {
    checkExpressionAttributes(input);
    const table = this.#table(input.TableName);
    const item = table.items.get(this.#keyOf(table, input.Key, 'key'));
    if (item === undefined) return {};
    const project = projectionOf(input);
    return { Item: project ? project(item) : cloneValue(item) };
  }

  #put(input: PutCommand['input']): Record<string, unknown> {
    checkExpressionAttributes(input);
    const item = input.Item ?? {};
    const write = this.#checked(input, {
      keySource: item,
      keyKind: 'item',
      next: () => cloneDefined(item),
    });
    this.#commit([write], 'PutItem');
    return input.ReturnValues === 'ALL_OLD' && write.before ? { Attributes: cloneValue(write.before) } : {};
  }

  #update(input: UpdateCommand['input']): Record<string, unknown> {
    checkExpressionAttributes(input);
    const key = input.Key ?? {};
    const write = this.#checked(input, {
      keySource: key,
      keyKind: 'key',
      next: (current) => updated(current, key, input),
    });
    this.#commit([write], 'UpdateItem');
    return returnedAttributes(input, write);
  }

  #delete(input: DeleteCommand['input']): Record<string, unknown> {
    checkExpressionAttributes(input);
    const write = this.#checked(input, { keySource: input.Key ?? {}, keyKind: 'key', next: () => undefined });
    this.#commit([write], 'DeleteItem');
    return input.ReturnValues === 'ALL_OLD' && write.before ? { Attributes: cloneValue(write.before) } : {};
  }

  #transact(command: TransactWriteCommand): Record<string, unknown> {
    const actions = command.input.TransactItems ?? [];
    if (actions.length === 0 || actions.length > LIMITS.transactionActions) {
      throw new ValidationError(
        `1 validation error detected: Value at 'transactItems' failed to satisfy constraint: ` +
          `Member must have length less than or equal to ${LIMITS.transactionActions} and greater than or equal to 1`,
      );
    }
    const token = command.input.ClientRequestToken;
    const fingerprint = token === undefined ? '' : JSON.stringify(actions, stableJson);
    if (token !== undefined && this.#alreadyApplied(token, fingerprint)) return {};
    const seen = new Set<string>();
    const outcomes = actions.map((action) => {
      const input = action.Put ?? action.Update ?? action.Delete ?? action.ConditionCheck;
      if (!input)
        throw new ValidationError('TransactItems can only contain one of Check, Put, Update or Delete');
      checkExpressionAttributes(input);
      const table = this.#table(input.TableName);
      const keySource = action.Put ? (action.Put.Item ?? {}) : ((input as { Key?: Item }).Key ?? {});
      const id = `${table.name}/${this.#keyOf(table, keySource, action.Put ? 'item' : 'key')}`;
      if (seen.has(id))
        throw new ValidationError('Transaction request cannot include multiple operations on one item');
      seen.add(id);
      try {
        if (action.Put) {
          const item = action.Put.Item ?? {};
          return this.#checked(input, { keySource, keyKind: 'item', next: () => cloneDefined(item) });
        }
        if (action.Update) {
          const update = action.Update;
          return this.#checked(input, {
            keySource,
            keyKind: 'key',
            next: (current) => updated(current, keySource, update),
          });
        }
        if (action.Delete) return this.#checked(input, { keySource, keyKind: 'key', next: () => undefined });
        this.#checked(input, { keySource, keyKind: 'key', next: (current) => current });
        return undefined;
      } catch (error) {
        if (error instanceof ConditionalCheckFailedException) return error;
        throw error;
      }
    });
    if (outcomes.some((outcome) => outcome instanceof ConditionalCheckFailedException)) {
      const codes = outcomes.map((outcome) =>
        outcome instanceof ConditionalCheckFailedException ? 'ConditionalCheckFailed' : 'None',
      );
      throw new TransactionCanceledException({
        message: `Transaction cancelled, please refer cancellation reasons for specific reasons [${codes.join(', ')}]`,
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
      'TransactWriteItems',
    );
    if (token !== undefined) {
      const at = this.#clock().getTime();
      this.#tokens.set(token, { fingerprint, at });
      this.#oldestTokenAt = Math.min(this.#oldestTokenAt, at);
    }
    return {};
  }

  /** Whether a transaction with this token already committed (then it is not applied again). */
  #alreadyApplied(token: string, fingerprint: string): boolean {
    const now = this.#clock().getTime();
    if (now - this.#oldestTokenAt >= LIMITS.idempotencyMs) {
      let oldest = Number.POSITIVE_INFINITY;
      for (const [key, { at }] of this.#tokens) {
        if (now - at >= LIMITS.idempotencyMs) this.#tokens.delete(key);
        else oldest = Math.min(oldest, at);
      }
      this.#oldestTokenAt = oldest;
    }
    const previous = this.#tokens.get(token);
    if (previous === undefined) return false;
    if (previous.fingerprint !== fingerprint) {
      throw new IdempotentParameterMismatchException({
        message: 'Request with same client request token but different parameters was already processed',
        $metadata: {},
      });
    }
    return true;
  }

  #query(input: QueryCommand['input']): Record<string, unknown> {
    checkExpressionAttributes(input);
    const table = this.#table(input.TableName);
    const index = this.#index(table, input);
    const keys = index ?? table.schema;
    if (input.KeyConditionExpression === undefined) {
      throw new ValidationError(
        'Either the KeyConditions or KeyConditionExpression parameter must be specified',
      );
    }
    const terms = compileKeyCondition(input.KeyConditionExpression, contextOf(input));
    for (const term of terms) {
      if (term.values.some(isEmptyScalar)) throw emptyKeyValue(term.attribute, term.values);
    }
    const partitionTerm = terms.find((term) => term.attribute === keys.partitionKey);
    if (partitionTerm?.operator !== '=') {
      throw new ValidationError(`Query condition missed key schema element: ${keys.partitionKey}`);
    }
    const others = terms.filter((term) => term !== partitionTerm);
    if (others.length > 1 || others.some((term) => term.attribute !== keys.sortKey)) {
      throw new ValidationError('Query key condition not supported');
    }
    const partition = valueKey(partitionTerm.values[0]);
    let candidates: Item[];
    if (index !== undefined) {
      const members = table.indexes.get(index.name)?.get(partition) ?? new Set<string>();
      candidates = itemsOf(table, members);
    } else if (table.schema.sortKey === undefined) {
      const item = table.items.get(partition);
      candidates = item ? [item] : [];
    } else {
      const members = table.partitions.get(partition) ?? new Set<string>();
      candidates = itemsOf(table, members);
    }
    const sortTest = others[0]?.test;
    const matching = sortTest ? candidates.filter(sortTest) : candidates;
    const order = queryOrder(table.schema, index);
    matching.sort(order);
    if (input.ScanIndexForward === false) matching.reverse();
    const start = input.ExclusiveStartKey;
    const after =
      start === undefined
        ? matching
        : matching.filter((item) => (input.ScanIndexForward === false ? -1 : 1) * order(item, start) > 0);
    return this.#page(after, { table, index, input });
  }

  #scan(input: ScanCommand['input']): Record<string, unknown> {
    checkExpressionAttributes(input);
    const table = this.#table(input.TableName);
    const index = this.#index(table, input);
    table.scanOrder ??= [...table.items.keys()].sort((a, b) =>
      scanOrder(table.schema)(table.items.get(a) ?? {}, table.items.get(b) ?? {}),
    );
    const order = scanOrder(table.schema);
    const start = input.ExclusiveStartKey;
    let position = 0;
    if (start !== undefined) {
      // Binary search for the first key after the start key, so each page costs only its own items.
      let high = table.scanOrder.length;
      while (position < high) {
        const middle = (position + high) >>> 1;
        const key = table.scanOrder[middle] ?? '';
        if (order(table.items.get(key) ?? {}, start) <= 0) position = middle + 1;
        else high = middle;
      }
    }
    const segment = segmentFilter(input);
    const inIndex = index === undefined ? undefined : indexMembership(index);
    const items: Item[] = [];
    for (const key of table.scanOrder.slice(position)) {
      const item = table.items.get(key);
      if (item === undefined || (segment && !segment(key)) || (inIndex && !inIndex(item))) continue;
      items.push(item);
    }
    return this.#page(items, { table, index, input });
  }

  /** One page of a Query or Scan: Limit and the 1 MB cap, then the filter, projection and Select. */
  #page(
    candidates: readonly Item[],
    { table, index, input }: { table: Table; index: MemoryIndexSchema | undefined; input: ReadInput },
  ): Record<string, unknown> {
    if (input.Limit !== undefined && input.Limit < 1) {
      throw new ValidationError(
        `1 validation error detected: Value '${input.Limit}' at 'limit' failed to satisfy constraint: Member must have value greater than or equal to 1`,
      );
    }
    const limit = input.Limit ?? Number.POSITIVE_INFINITY;
    const read: Item[] = [];
    let bytes = 0;
    for (const item of candidates) {
      if (read.length >= limit || bytes >= LIMITS.pageBytes) break;
      read.push(item);
      bytes += itemSizeBytes(item);
    }
    // DynamoDB answers a LastEvaluatedKey whenever a page stopped at its Limit, even with nothing left to read.
    const stoppedEarly = read.length < candidates.length || read.length === input.Limit;
    const filter =
      input.FilterExpression === undefined
        ? undefined
        : compileCondition(input.FilterExpression, contextOf(input));
    // A query of an index sees the index's entries: a filter on an attribute it does not project matches nothing.
    const shaped = index === undefined ? undefined : indexProjection(index, table.schema);
    const matched = filter ? read.filter((item) => filter(shaped ? shaped(item) : item)) : read;
    const last = read[read.length - 1];
    const page: Record<string, unknown> = { Count: matched.length, ScannedCount: read.length };
    if (stoppedEarly && last !== undefined)
      page.LastEvaluatedKey = lastEvaluatedKey(last, table.schema, index);
    if (input.Select === 'COUNT') return page;
    if (input.Select === 'SPECIFIC_ATTRIBUTES' && input.ProjectionExpression === undefined) {
      throw new ValidationError('SPECIFIC_ATTRIBUTES requires a ProjectionExpression');
    }
    if (
      index?.projection !== undefined &&
      index.projection.type !== 'ALL' &&
      input.Select === 'ALL_ATTRIBUTES'
    ) {
      throw new ValidationError(
        `One or more parameter values were invalid: Select type ALL_ATTRIBUTES is not supported for global secondary index ${index.name} because its projection type is not ALL`,
      );
    }
    const project = projectionOf(input);
    const items = matched.map((item) => {
      const visible = shaped ? shaped(item) : item;
      return project ? project(visible) : cloneValue(visible);
    });
    return { Items: items, ...page };
  }

  #index(table: Table, input: ReadInput): MemoryIndexSchema | undefined {
    if (input.IndexName === undefined) return undefined;
    const index = table.schema.globalIndexes?.find((candidate) => candidate.name === input.IndexName);
    if (!index) throw new ValidationError(`The table does not have the specified index: ${input.IndexName}`);
    // A global secondary index is updated asynchronously, so DynamoDB offers no consistent read of one.
    if (input.ConsistentRead === true) {
      throw new ValidationError('Consistent reads are not supported on global secondary indexes');
    }
    return index;
  }

  /** Checks an action's condition against the current item and computes the item after it. */
  #checked(
    input: ExpressionInput,
    action: {
      keySource: Item;
      keyKind: 'item' | 'key';
      next: (current: Item | undefined) => Item | undefined;
    },
  ): Write {
    const table = this.#table(input.TableName);
    const key = this.#keyOf(table, action.keySource, action.keyKind);
    const current = table.items.get(key);
    if (input.ConditionExpression !== undefined) {
      const holds = compileCondition(input.ConditionExpression, contextOf(input))(current ?? {});
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
    const item = action.next(current === undefined ? undefined : cloneValue(current));
    // Only an update names its item by key and writes a new one (a Delete writes none, a check the same one).
    if (item !== undefined && item !== current)
      this.#checkItem(table, { item, updated: action.keyKind === 'key' });
    return { table, key, item, before: current };
  }

  /** Refuses an item DynamoDB would refuse: too large, or an index key of the wrong type or empty. */
  #checkItem(table: Table, { item, updated }: { item: Item; updated: boolean }): void {
    if (itemSizeBytes(item) > LIMITS.itemBytes) {
      throw new ValidationError(
        updated
          ? 'Item size to update has exceeded the maximum allowed size'
          : 'Item size has exceeded the maximum allowed size',
      );
    }
    for (const index of table.schema.globalIndexes ?? []) {
      for (const attribute of [index.partitionKey, index.sortKey]) {
        const value = attribute === undefined ? undefined : item[attribute];
        if (attribute === undefined || value === undefined) continue;
        const expected = table.schema.attributeTypes?.[attribute];
        const actual = scalarType(value);
        if (expected !== undefined && actual !== expected) {
          throw new ValidationError(
            `One or more parameter values were invalid: Type mismatch for Index Key ${attribute} ` +
              `Expected: ${expected} Actual: ${actual ?? 'other'} IndexName: ${index.name}`,
          );
        }
        if (isEmptyScalar(value)) {
          throw new ValidationError(
            'One or more parameter values are not valid. A value specified for a secondary index key is not supported. ' +
              `The AttributeValue for a key attribute cannot contain an empty string value. IndexName: ${index.name}, IndexKey: ${attribute}`,
          );
        }
      }
    }
  }

  #commit(writes: readonly Write[], operation: MemoryWriteOperation): void {
    for (const { table, key, item } of writes) {
      const before = table.items.get(key);
      this.#removeFromIndexes(table, key, before);
      if (item === undefined) table.items.delete(key);
      else table.items.set(key, item);
      this.#addToIndexes(table, key, item);
      if ((before === undefined) !== (item === undefined)) table.scanOrder = undefined;
      if (before === undefined && item === undefined) continue;
      const eventName = before === undefined ? 'INSERT' : item === undefined ? 'REMOVE' : 'MODIFY';
      for (const listener of this.#listeners) {
        listener({ tableName: table.name, eventName, oldImage: before, newImage: item, operation });
      }
    }
  }

  #removeFromIndexes(table: Table, key: string, item: Item | undefined): void {
    if (item === undefined) return;
    const { sortKey, partitionKey } = table.schema;
    if (sortKey !== undefined) table.partitions.get(valueKey(item[partitionKey]))?.delete(key);
    for (const index of table.schema.globalIndexes ?? []) {
      const partition = item[index.partitionKey];
      if (partition !== undefined) table.indexes.get(index.name)?.get(valueKey(partition))?.delete(key);
    }
  }

  #addToIndexes(table: Table, key: string, item: Item | undefined): void {
    if (item === undefined) return;
    const { sortKey, partitionKey } = table.schema;
    if (sortKey !== undefined) addMember(table.partitions, valueKey(item[partitionKey]), key);
    for (const index of table.schema.globalIndexes ?? []) {
      const partitions = table.indexes.get(index.name);
      // Sparse, like a GSI: an item without every index key is not in the index.
      if (partitions && indexMembership(index)(item))
        addMember(partitions, valueKey(item[index.partitionKey]), key);
    }
  }

  #rebuildIndexes(table: Table): void {
    table.partitions.clear();
    table.indexes.clear();
    for (const index of table.schema.globalIndexes ?? []) table.indexes.set(index.name, new Map());
    for (const [key, item] of table.items) this.#addToIndexes(table, key, item);
  }

  #table(name: string | undefined): Table {
    const table = name === undefined ? undefined : this.#tables.get(name);
    if (!table) {
      throw new ResourceNotFoundException({
        message: `Requested resource not found: Table: ${name} not found`,
        $metadata: {},
      });
    }
    return table;
  }

  /**
   * The internal key of an item (`kind: 'item'`, any other attributes allowed) or of a request's Key
   * (`kind: 'key'`, exactly the key attributes), checked as DynamoDB checks it.
   */
  #keyOf(table: Table, source: Item | undefined, kind: 'item' | 'key'): string {
    const { partitionKey, sortKey, attributeTypes } = table.schema;
    const names = sortKey === undefined ? [partitionKey] : [partitionKey, sortKey];
    if (kind === 'key' && Object.keys(source ?? {}).length !== names.length) {
      throw new ValidationError('The provided key element does not match the schema');
    }
    const parts = names.map((name) => {
      const value = source?.[name];
      if (value === undefined) {
        throw new ValidationError(
          kind === 'item'
            ? `One or more parameter values were invalid: Missing the key ${name} in the item`
            : 'The provided key element does not match the schema',
        );
      }
      const expected = attributeTypes?.[name];
      const actual = scalarType(value);
      if (actual === undefined || (expected !== undefined && actual !== expected)) {
        throw new ValidationError(
          `One or more parameter values were invalid: Type mismatch for key ${name} expected: ${expected ?? 'S, N or B'} actual: ${actual ?? 'other'}`,
        );
      }
      if (isEmptyScalar(value)) throw emptyKeyValue(name, [value]);
      return valueKey(value);
    });
    const [first, second] = parts;
    return second === undefined ? (first ?? '') : `${first?.length}:${first}${second}`;
  }
}

/** The item an update produces: the expression applied to the current item (or to the key alone). */
function updated(current: Item | undefined, key: Item, input: ExpressionInput): Item {
  const result = applyUpdate(current ?? { ...key }, input.UpdateExpression ?? '', contextOf(input));
  for (const [name, value] of Object.entries(key)) {
    if (!sameValue(result[name], value)) {
      throw new ValidationError(
        `One or more parameter values were invalid: Cannot update attribute ${name}. This attribute is part of the key`,
      );
    }
  }
  return result;
}

/** What an UpdateItem returns for its ReturnValues. */
function returnedAttributes(input: UpdateCommand['input'], write: Write): { Attributes?: Item } {
  const { before, item } = write;
  const pick = (source: Item | undefined): Item | undefined => {
    if (source === undefined) return undefined;
    const names = updatedAttributeNames(input.UpdateExpression ?? '', contextOf(input));
    const picked = Object.fromEntries(
      names.filter((name) => name in source).map((name) => [name, source[name]]),
    );
    return Object.keys(picked).length === 0 ? undefined : cloneValue(picked);
  };
  const attributes: Record<string, () => Item | undefined> = {
    ALL_OLD: () => (before ? cloneValue(before) : undefined),
    ALL_NEW: () => (item ? cloneValue(item) : undefined),
    UPDATED_OLD: () => pick(before),
    UPDATED_NEW: () => pick(item),
  };
  const chosen = input.ReturnValues === undefined ? undefined : attributes[input.ReturnValues]?.();
  return chosen === undefined ? {} : { Attributes: chosen };
}

/** The request parameters that may hold an expression. */
const EXPRESSION_KINDS: readonly ExpressionKind[] = [
  'KeyConditionExpression',
  'ConditionExpression',
  'UpdateExpression',
  'FilterExpression',
  'ProjectionExpression',
];

/**
 * Refuses expression attributes as DynamoDB does: an empty map, a map without an expression, a placeholder an
 * expression uses but the request does not define (an `undefined` value included: the Document client drops it),
 * a reserved word as an attribute name, and a placeholder the request defines but no expression uses.
 */
function checkExpressionAttributes(input: ExpressionInput): void {
  const context = contextOf(input);
  const provided = [
    ['ExpressionAttributeNames', input.ExpressionAttributeNames, context.names, 'names'],
    ['ExpressionAttributeValues', input.ExpressionAttributeValues, context.values, 'values'],
  ] as const;
  const expressions = EXPRESSION_KINDS.flatMap((kind) => {
    const expression = input[kind];
    return expression === undefined ? [] : [{ kind, expression }];
  });
  for (const [field, given, defined] of provided) {
    if (given === undefined) continue;
    if (defined === undefined || Object.keys(defined).length === 0) {
      throw new ValidationError(`${field} must not be empty`);
    }
    if (expressions.length === 0) {
      throw new ValidationError(`${field} can only be specified when using expressions`);
    }
  }
  for (const { kind, expression } of expressions) validateExpression(expression, { kind, context });
  const used = expressions.map(({ expression }) => expressionPlaceholders(expression));
  for (const [field, , defined, kind] of provided) {
    const unused = Object.keys(defined ?? {}).filter(
      (placeholder) => !used.some((set) => set[kind].has(placeholder)),
    );
    if (unused.length > 0) {
      throw new ValidationError(
        `Value provided in ${field} unused in expressions: keys: {${unused.join(', ')}}`,
      );
    }
  }
}

/** The placeholders of a request, without `undefined` values (the Document client drops them). */
function contextOf(input: ExpressionInput): ExpressionContext {
  const values =
    input.ExpressionAttributeValues === undefined
      ? undefined
      : Object.fromEntries(
          Object.entries(input.ExpressionAttributeValues)
            .filter(([, value]) => value !== undefined)
            .map(([placeholder, value]) => [placeholder, cloneDefined(value)]),
        );
  return {
    ...(input.ExpressionAttributeNames ? { names: input.ExpressionAttributeNames } : {}),
    ...(values ? { values } : {}),
  };
}

function projectionOf(input: ExpressionInput): ((item: Item) => Item) | undefined {
  return input.ProjectionExpression === undefined
    ? undefined
    : compileProjection(input.ProjectionExpression, contextOf(input));
}

/** `S`, `N` or `B` for a scalar that can be a key; `undefined` for anything else. */
function scalarType(value: unknown): 'S' | 'N' | 'B' | undefined {
  if (typeof value === 'string') return 'S';
  if (isDynamoNumber(value)) return 'N';
  if (value instanceof Uint8Array) return 'B';
  return undefined;
}

function isEmptyScalar(value: unknown): boolean {
  return value === '' || (value instanceof Uint8Array && value.byteLength === 0);
}

/** DynamoDB's refusal of an empty string or binary as a key value. */
function emptyKeyValue(name: string, values: readonly unknown[]): ValidationError {
  const binary = values.some((value) => value instanceof Uint8Array && value.byteLength === 0);
  return new ValidationError(
    `One or more parameter values are not valid. The AttributeValue for a key attribute cannot contain an empty ${binary ? 'binary' : 'string'} value. Key: ${name}`,
  );
}

/** A key value as text: strings as they are, numbers canonical (1.0 and 1 are one key), binaries in base64. */
function valueKey(value: unknown): string {
  if (typeof value === 'string') return value;
  if (isDynamoNumber(value)) return numberText(value);
  if (value instanceof Uint8Array) return Buffer.from(value).toString('base64');
  return String(value);
}

function itemsOf(table: Table, keys: Iterable<string>): Item[] {
  const items: Item[] = [];
  for (const key of keys) {
    const item = table.items.get(key);
    if (item !== undefined) items.push(item);
  }
  return items;
}

function addMember(partitions: Map<string, Set<string>>, partition: string, key: string): void {
  const members = partitions.get(partition) ?? new Set<string>();
  members.add(key);
  partitions.set(partition, members);
}

/** Whether an item is in an index: it has every key attribute of the index. */
function indexMembership(index: MemoryIndexSchema): (item: Item) => boolean {
  return (item) =>
    item[index.partitionKey] !== undefined &&
    (index.sortKey === undefined || item[index.sortKey] !== undefined);
}

/** The attributes of an item an index holds, by its projection. */
function indexProjection(
  index: MemoryIndexSchema,
  schema: MemoryTableSchema,
): ((item: Item) => Item) | undefined {
  const projection = index.projection;
  if (projection === undefined || projection.type === 'ALL') return undefined;
  const names = new Set(
    [
      schema.partitionKey,
      schema.sortKey,
      index.partitionKey,
      index.sortKey,
      ...(projection.nonKeyAttributes ?? []),
    ].filter((name): name is string => name !== undefined),
  );
  return (item) => Object.fromEntries(Object.entries(item).filter(([name]) => names.has(name)));
}

/** Compares two items (or an item and a start key) by an ordered list of attributes. */
function byAttributes(names: readonly (string | undefined)[]): (a: Item, b: Item) => number {
  const attributes = names.filter((name): name is string => name !== undefined);
  return (a, b) => {
    for (const name of attributes) {
      const order = compareValues(a[name], b[name]) ?? 0;
      if (order !== 0) return order;
    }
    return 0;
  };
}

/** A query's order: the sort key (the index's when reading one), then the table's key for a stable order. */
function queryOrder(
  schema: MemoryTableSchema,
  index: MemoryIndexSchema | undefined,
): (a: Item, b: Item) => number {
  return index === undefined
    ? byAttributes([schema.sortKey])
    : byAttributes([index.sortKey, schema.partitionKey, schema.sortKey]);
}

/** A scan's order: by partition key, then sort key. */
function scanOrder(schema: MemoryTableSchema): (a: Item, b: Item) => number {
  return byAttributes([schema.partitionKey, schema.sortKey]);
}

/** A parallel scan's share of the keys: a stable hash of the key, modulo TotalSegments. */
function segmentFilter(input: ReadInput): ((key: string) => boolean) | undefined {
  const { Segment: segment, TotalSegments: total } = input;
  if (segment === undefined && total === undefined) return undefined;
  if (segment === undefined || total === undefined || total < 1 || segment < 0 || segment >= total) {
    throw new ValidationError(
      'Segment and TotalSegments must be given together, with 0 <= Segment < TotalSegments',
    );
  }
  return (key) => {
    let hash = 0;
    for (let index = 0; index < key.length; index += 1) hash = (hash * 31 + key.charCodeAt(index)) >>> 0;
    return hash % total === segment;
  };
}

/** The key DynamoDB returns as LastEvaluatedKey: the table's key, plus the index's keys when reading one. */
function lastEvaluatedKey(item: Item, schema: MemoryTableSchema, index: MemoryIndexSchema | undefined): Item {
  const names = [schema.partitionKey, schema.sortKey, index?.partitionKey, index?.sortKey];
  return Object.fromEntries(
    names
      .filter((name): name is string => name !== undefined && item[name] !== undefined)
      .map((name) => [name, cloneValue(item[name])]),
  );
}

/** JSON.stringify replacer that writes every item value distinctly (sets, binaries, exact numbers). */
function stableJson(_key: string, value: unknown): unknown {
  if (value instanceof Set)
    return { $set: [...value].map((member) => JSON.stringify(member, stableJson)).sort() };
  if (value instanceof Uint8Array) return { $binary: Buffer.from(value).toString('base64') };
  if (typeof value === 'bigint' || (typeof value === 'object' && value !== null && isDynamoNumber(value))) {
    return { $number: numberText(value as DynamoNumber) };
  }
  return value;
}
