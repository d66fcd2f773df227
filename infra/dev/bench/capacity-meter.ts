import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import {
  DeleteCommand,
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  TransactWriteCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import {
  itemSizeBytes,
  type MemoryChange,
  type MemoryDocumentClient,
  type MemoryIndexSchema,
  type MemoryTableSchema,
} from '../../../shared/memory/index.ts';

/** DynamoDB bills writes per started KB and reads per started 4 KB (on demand: WRUs and RRUs, same rules). */
const WRITE_UNIT_BYTES = 1024;
const READ_UNIT_BYTES = 4096;
/** Every index entry carries 100 bytes of overhead besides its attributes (AWS's index sizing rule). */
const INDEX_ENTRY_OVERHEAD_BYTES = 100;

/** Units one actor spent on one table or index. */
export interface CapacityLine {
  readonly actor: string;
  /** `orders`, `outbox`, or `outbox/due` for an index. */
  readonly target: string;
  writeUnits: number;
  readUnits: number;
  /** Requests (table) or entry writes (index) that spent them. */
  operations: number;
}

type Item = Record<string, unknown>;

/**
 * Counts the DynamoDB capacity units a run spends, from the actual items it writes and reads, with DynamoDB's
 * rules: 1 KB write units (the larger of the old and new item), twice that inside a transaction, 4 KB read units
 * (half for eventually consistent reads), and per global secondary index one write of the projected entry when
 * it appears, changes or disappears, two when its key changes (a delete and a put). A write whose condition fails
 * costs the item's size as well; a GetItem costs the whole item's size whatever it projects. Query units are
 * counted from the entries a query returns (after its filter and projection): a lower bound. Each client made by
 * {@link CapacityMeter.client} names the actor its units are counted under.
 */
export class CapacityMeter {
  readonly #schemas: Readonly<Record<string, MemoryTableSchema>>;
  readonly #memory: MemoryDocumentClient;
  readonly #lines = new Map<string, CapacityLine>();
  #actor = 'unattributed';

  constructor(memory: MemoryDocumentClient, schemas: Readonly<Record<string, MemoryTableSchema>>) {
    this.#schemas = schemas;
    this.#memory = memory;
    memory.onChange((change) => this.#countWrite(change));
  }

  /**
   * `client` with its calls counted under `actor`. The in-memory client commits a write before its first
   * await, so the actor is known when the change is reported.
   */
  client(client: DynamoDBDocumentClient, actor: string): DynamoDBDocumentClient {
    const send = client.send.bind(client) as (command: unknown) => Promise<Record<string, unknown>>;
    return new Proxy(client, {
      get: (target, property, receiver) => {
        if (property !== 'send') return Reflect.get(target, property, receiver);
        return async (command: unknown) => {
          const previous = this.#actor;
          this.#actor = actor;
          let answer: Promise<Record<string, unknown>>;
          try {
            answer = send(command);
          } finally {
            this.#actor = previous;
          }
          // Settled at once, so a rejection is handled while the counting below awaits.
          const settled = answer.then(
            (result) => ({ result }),
            (error: unknown) => ({ error }),
          );
          await this.#countConditionChecks(command, actor);
          const outcome = await settled;
          if ('error' in outcome) {
            if (outcome.error instanceof ConditionalCheckFailedException)
              await this.#countFailedWrite(command, actor);
            throw outcome.error;
          }
          await this.#countRead(command, outcome.result, actor);
          return outcome.result;
        };
      },
    });
  }

  /**
   * Runs `operation` with the writes it commits before its first await counted under `actor`: for writes that do
   * not go through a {@link CapacityMeter.client} (a function reaching the tables over a wire endpoint). Its reads
   * and failed conditions are not counted.
   */
  attribute<T>(actor: string, operation: () => T): T {
    const previous = this.#actor;
    this.#actor = actor;
    try {
      return operation();
    } finally {
      this.#actor = previous;
    }
  }

  /** Forgets every line counted so far: what comes after is what a run measures (set-up before it is not). */
  reset(): void {
    this.#lines.clear();
  }

  /** Every line counted so far, by actor then target. */
  lines(): CapacityLine[] {
    return [...this.#lines.values()].sort(
      (a, b) => a.actor.localeCompare(b.actor) || a.target.localeCompare(b.target),
    );
  }

  /** Sum of the write units (and read units) of every line. */
  totals(): { writeUnits: number; readUnits: number } {
    let writeUnits = 0;
    let readUnits = 0;
    for (const line of this.#lines.values()) {
      writeUnits += line.writeUnits;
      readUnits += line.readUnits;
    }
    return { writeUnits, readUnits };
  }

  #line(actor: string, target: string): CapacityLine {
    const id = `${actor}\u0000${target}`;
    let line = this.#lines.get(id);
    if (line === undefined) {
      line = { actor, target, writeUnits: 0, readUnits: 0, operations: 0 };
      this.#lines.set(id, line);
    }
    return line;
  }

  #countWrite(change: MemoryChange): void {
    const schema = this.#schemas[change.tableName];
    const transactional = change.operation === 'TransactWriteItems' ? 2 : 1;
    const size = Math.max(sizeOf(change.oldImage), sizeOf(change.newImage));
    const table = this.#line(this.#actor, change.tableName);
    table.writeUnits += writeUnits(size) * transactional;
    table.operations += 1;
    for (const index of schema?.globalIndexes ?? []) {
      const entries = indexWrites(index, schema as MemoryTableSchema, change);
      if (entries.length === 0) continue;
      const line = this.#line(this.#actor, `${change.tableName}/${index.name}`);
      // Index entries are written after the table's commit, as single writes, even for a transaction.
      for (const bytes of entries) line.writeUnits += writeUnits(bytes);
      line.operations += entries.length;
    }
  }

  /** The stored item under `key`, read without being counted. */
  async #stored(tableName: string | undefined, key: Item | undefined): Promise<Item | undefined> {
    if (tableName === undefined || key === undefined) return undefined;
    const { Item } = await this.#memory.send(new GetCommand({ TableName: tableName, Key: key }));
    return Item as Item | undefined;
  }

  /** A transaction's condition checks cost their item's size as a transactional write does: twice per started KB. */
  async #countConditionChecks(command: unknown, actor: string): Promise<void> {
    if (!(command instanceof TransactWriteCommand)) return;
    for (const action of command.input.TransactItems ?? []) {
      const check = action.ConditionCheck;
      if (check === undefined) continue;
      const line = this.#line(actor, check.TableName ?? '?');
      line.writeUnits += 2 * writeUnits(sizeOf(await this.#stored(check.TableName, check.Key as Item)));
      line.operations += 1;
    }
  }

  /** A single write whose condition failed still costs the item's size in write units. */
  async #countFailedWrite(command: unknown, actor: string): Promise<void> {
    let tableName: string | undefined;
    let key: Item | undefined;
    if (command instanceof UpdateCommand || command instanceof DeleteCommand) {
      tableName = command.input.TableName;
      key = command.input.Key as Item | undefined;
    } else if (command instanceof PutCommand) {
      tableName = command.input.TableName;
      const schema = this.#schemas[tableName ?? ''];
      const item = (command.input.Item ?? {}) as Item;
      key =
        schema === undefined
          ? undefined
          : Object.fromEntries(
              [schema.partitionKey, schema.sortKey]
                .filter((name): name is string => name !== undefined)
                .map((name) => [name, item[name]]),
            );
    } else return;
    const line = this.#line(actor, tableName ?? '?');
    line.writeUnits += writeUnits(sizeOf(await this.#stored(tableName, key)));
    line.operations += 1;
  }

  async #countRead(command: unknown, result: Record<string, unknown>, actor: string): Promise<void> {
    if (command instanceof GetCommand) {
      const line = this.#line(actor, command.input.TableName ?? '?');
      // Charged by the whole item, whatever the projection returns.
      const item =
        command.input.ProjectionExpression === undefined
          ? (result.Item as Item | undefined)
          : await this.#stored(command.input.TableName, command.input.Key as Item);
      line.readUnits += readUnits(sizeOf(item), command.input.ConsistentRead === true);
      line.operations += 1;
    } else if (command instanceof QueryCommand) {
      const { TableName, IndexName, ConsistentRead } = command.input;
      const line = this.#line(actor, IndexName === undefined ? `${TableName}` : `${TableName}/${IndexName}`);
      const items = (result.Items ?? []) as Item[];
      const bytes = items.reduce((sum, item) => sum + sizeOf(item), 0);
      line.readUnits += readUnits(bytes, ConsistentRead === true);
      line.operations += 1;
    }
  }
}

function sizeOf(item: Item | undefined): number {
  return item === undefined ? 0 : itemSizeBytes(item);
}

/** Write units of one write of `bytes` (a delete of nothing still costs one). */
export function writeUnits(bytes: number): number {
  return Math.max(1, Math.ceil(bytes / WRITE_UNIT_BYTES));
}

/** Read units of reading `bytes` (at least one unit per request, half that when eventually consistent). */
export function readUnits(bytes: number, consistent: boolean): number {
  const units = Math.max(1, Math.ceil(bytes / READ_UNIT_BYTES));
  return consistent ? units : units / 2;
}

/** The entry `item` has in `index` (keys, table keys, projected attributes), or undefined when it is not in it. */
function indexEntry(
  index: MemoryIndexSchema,
  table: MemoryTableSchema,
  item: Item | undefined,
): Item | undefined {
  if (item === undefined || item[index.partitionKey] === undefined) return undefined;
  if (index.sortKey !== undefined && item[index.sortKey] === undefined) return undefined;
  const keys = [index.partitionKey, index.sortKey, table.partitionKey, table.sortKey].filter(
    (name): name is string => name !== undefined,
  );
  const projection = index.projection ?? { type: 'ALL' };
  if (projection.type === 'ALL') return item;
  const names = new Set([
    ...keys,
    ...(projection.type === 'INCLUDE' ? (projection.nonKeyAttributes ?? []) : []),
  ]);
  return Object.fromEntries(Object.entries(item).filter(([name]) => names.has(name)));
}

/** The sizes of the index entries a change writes: none, one (appear, change, disappear) or two (key change). */
function indexWrites(index: MemoryIndexSchema, table: MemoryTableSchema, change: MemoryChange): number[] {
  const before = indexEntry(index, table, change.oldImage);
  const after = indexEntry(index, table, change.newImage);
  const entryBytes = (entry: Item) => itemSizeBytes(entry) + INDEX_ENTRY_OVERHEAD_BYTES;
  if (before === undefined && after === undefined) return [];
  if (before === undefined) return [entryBytes(after as Item)];
  if (after === undefined) return [entryBytes(before)];
  const keyOf = (entry: Item) =>
    JSON.stringify([entry[index.partitionKey], index.sortKey === undefined ? null : entry[index.sortKey]]);
  if (keyOf(before) !== keyOf(after)) return [entryBytes(before), entryBytes(after)];
  if (stableJson(before) === stableJson(after)) return [];
  return [Math.max(entryBytes(before), entryBytes(after))];
}

/** JSON with object keys sorted, so two equal items compare equal whatever order their attributes were set in. */
function stableJson(value: unknown): string {
  return JSON.stringify(value, (_key, element: unknown) =>
    element !== null && typeof element === 'object' && !Array.isArray(element)
      ? Object.fromEntries(Object.entries(element as Item).sort(([a], [b]) => a.localeCompare(b)))
      : element,
  );
}
