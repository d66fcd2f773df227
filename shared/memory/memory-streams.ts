/**
 * DynamoDB Streams over a {@link MemoryDocumentClient}: each table's committed writes become stream
 * records with increasing sequence numbers, in one shard per stream, read through shard iterators
 * (TRIM_HORIZON, LATEST, AT_ / AFTER_SEQUENCE_NUMBER) as the Streams API reads them. Records older than
 * 24 hours are trimmed and iterators expire after 15 minutes, as on AWS. Time comes from the injected clock.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { itemSizeBytes } from '../transaction/item-size.ts';
import { cloneValue } from './clone-item.ts';
import type { Item } from './expressions.ts';
import type { MemoryChange, MemoryDocumentClient, MemoryTableSchema } from './memory-document-client.ts';

/** What a stream record carries besides the keys. */
export type StreamViewType = 'KEYS_ONLY' | 'NEW_IMAGE' | 'OLD_IMAGE' | 'NEW_AND_OLD_IMAGES';

/** Where a new shard iterator starts. */
export type ShardIteratorType = 'TRIM_HORIZON' | 'LATEST' | 'AT_SEQUENCE_NUMBER' | 'AFTER_SEQUENCE_NUMBER';

/** One stream record. */
export interface MemoryStreamRecord {
  readonly eventId: string;
  readonly eventName: MemoryChange['eventName'];
  /** Decimal text, increasing within the shard. */
  readonly sequenceNumber: string;
  readonly createdAt: Date;
  readonly keys: Item;
  readonly newImage?: Item;
  readonly oldImage?: Item;
  readonly sizeBytes: number;
  readonly viewType: StreamViewType;
}

/** One shard of a stream. */
export interface MemoryShard {
  readonly shardId: string;
  readonly startingSequenceNumber: string;
  /** Set once the shard is closed (its stream disabled). */
  readonly endingSequenceNumber?: string;
}

/** A stream as DescribeStream reports it. */
export interface MemoryStreamDescription {
  readonly streamArn: string;
  readonly streamLabel: string;
  readonly status: 'ENABLED' | 'DISABLED';
  readonly viewType: StreamViewType;
  readonly tableName: string;
  readonly createdAt: Date;
  readonly keySchema: Pick<MemoryTableSchema, 'partitionKey' | 'sortKey'>;
  readonly shards: readonly MemoryShard[];
}

/** A Streams request the service would refuse; `code` is the Streams API's exception name. */
export class MemoryStreamError extends Error {
  readonly code:
    | 'ResourceNotFoundException'
    | 'ValidationException'
    | 'ExpiredIteratorException'
    | 'TrimmedDataAccessException';

  constructor(code: MemoryStreamError['code'], message: string) {
    super(message);
    this.name = code;
    this.code = code;
  }
}

/** A stream's whole state, as {@link MemoryStreams.exportStreams} gives it and `importStreams` takes it back. */
export interface MemoryStreamState {
  readonly description: Omit<MemoryStreamDescription, 'status' | 'shards'>;
  readonly shardId: string;
  readonly records: readonly MemoryStreamRecord[];
  /** The sequence number the next record gets. */
  readonly next: string;
  readonly trimmedBelow: string;
  readonly enabled: boolean;
  /** Whether it is its table's latest stream. */
  readonly latest: boolean;
}

/** Options of {@link MemoryStreams}. */
export interface MemoryStreamsOptions {
  /** @default () => new Date() */
  readonly clock?: () => Date;
  /** Region in stream ARNs. @default 'us-east-1' */
  readonly region?: string;
  /** Account in stream ARNs. @default '000000000000' */
  readonly accountId?: string;
}

const DEFAULTS = {
  region: 'us-east-1',
  accountId: '000000000000',
  // DynamoDB Streams keeps records for 24 hours; a shard iterator expires 15 minutes after it is issued.
  retentionMs: 24 * 60 * 60 * 1000,
  iteratorLifetimeMs: 15 * 60 * 1000,
  // Sequence numbers start high, as AWS's do, so every one has 21 digits and text order is numeric order.
  firstSequence: 10n ** 20n,
} as const;

interface Stream {
  readonly description: Omit<MemoryStreamDescription, 'status' | 'shards'>;
  readonly shardId: string;
  readonly records: (MemoryStreamRecord & { readonly sequence: bigint })[];
  /** The sequence number the next record gets. */
  next: bigint;
  /** Sequence numbers below this were trimmed (0 while nothing was). */
  trimmedBelow: bigint;
  enabled: boolean;
}

interface IteratorState {
  readonly a: string;
  readonly s: string;
  /** Sequence number of the next record to return. */
  readonly p: string;
  /** When the iterator was issued, epoch ms. */
  readonly t: number;
}

/**
 * The streams of a {@link MemoryDocumentClient}'s tables.
 * @example
 * const streams = new MemoryStreams(db);
 * const { streamArn, shards } = streams.enable('outbox', 'NEW_AND_OLD_IMAGES');
 * const iterator = streams.shardIterator(streamArn, { shardId: shards[0].shardId, type: 'TRIM_HORIZON' });
 * const { records, nextIterator } = streams.records(iterator);
 */
export class MemoryStreams {
  readonly #tables: MemoryDocumentClient;
  readonly #clock: () => Date;
  readonly #region: string;
  readonly #accountId: string;
  readonly #streams = new Map<string, Stream>();
  /** Table name → its latest stream (enabled or not). */
  readonly #latest = new Map<string, Stream>();
  readonly #recordListeners: ((streamArn: string, record: MemoryStreamRecord) => void)[] = [];

  constructor(tables: MemoryDocumentClient, options: MemoryStreamsOptions = {}) {
    this.#tables = tables;
    this.#clock = options.clock ?? (() => new Date());
    this.#region = options.region ?? DEFAULTS.region;
    this.#accountId = options.accountId ?? DEFAULTS.accountId;
    tables.onChange((change) => this.#append(change));
  }

  /**
   * Turns on a table's stream: a new stream (new ARN and label) unless one with this view type is on.
   * Throws `ValidationException` when the table has an enabled stream of another view type.
   */
  enable(tableName: string, viewType: StreamViewType): MemoryStreamDescription {
    const schema = this.#tables.tableSchema(tableName);
    if (schema === undefined) {
      throw new MemoryStreamError(
        'ResourceNotFoundException',
        `Requested resource not found: Table: ${tableName} not found`,
      );
    }
    const current = this.#latest.get(tableName);
    if (current?.enabled) {
      if (current.description.viewType === viewType) return this.#describe(current);
      throw new MemoryStreamError(
        'ValidationException',
        `Table already has an enabled stream: ${current.description.streamArn}`,
      );
    }
    const createdAt = this.#clock();
    // Two streams of one table enabled in the same millisecond would share a label, hence an ARN.
    if (current !== undefined && current.description.createdAt.getTime() >= createdAt.getTime()) {
      createdAt.setTime(current.description.createdAt.getTime() + 1);
    }
    const streamLabel = createdAt.toISOString().replace(/Z$/, '');
    const streamArn = `arn:aws:dynamodb:${this.#region}:${this.#accountId}:table/${tableName}/stream/${streamLabel}`;
    const stream: Stream = {
      description: {
        streamArn,
        streamLabel,
        viewType,
        tableName,
        createdAt,
        keySchema: {
          partitionKey: schema.partitionKey,
          ...(schema.sortKey === undefined ? {} : { sortKey: schema.sortKey }),
        },
      },
      shardId: `shardId-${String(createdAt.getTime()).padStart(20, '0')}-${randomBytes(4).toString('hex')}`,
      records: [],
      next: DEFAULTS.firstSequence,
      trimmedBelow: 0n,
      enabled: true,
    };
    this.#streams.set(streamArn, stream);
    this.#latest.set(tableName, stream);
    return this.#describe(stream);
  }

  /** Every stream's state, for a copy kept on disk (records included; `importStreams` restores it). */
  exportStreams(): MemoryStreamState[] {
    return [...this.#streams.values()].map((stream) => this.#export(stream));
  }

  /** One stream's state without its records (those a caller keeps as they are appended). */
  exportStream(streamArn: string, options: { readonly records: boolean }): MemoryStreamState {
    const state = this.#export(this.#stream(streamArn));
    return options.records ? state : { ...state, records: [] };
  }

  /**
   * Puts streams back as they were exported: ARNs, shard ids, records and sequence numbers kept, so saved
   * checkpoints still point into them. A stream already here takes the state; records it has are not doubled.
   */
  importStreams(states: readonly MemoryStreamState[]): void {
    for (const state of states) {
      const existing = this.#streams.get(state.description.streamArn);
      const records = existing?.records ?? [];
      const known = new Set(records.map((record) => record.sequenceNumber));
      for (const record of state.records) {
        if (!known.has(record.sequenceNumber))
          records.push({ ...cloneValue(record), sequence: BigInt(record.sequenceNumber) });
      }
      records.sort((a, b) => (a.sequence < b.sequence ? -1 : a.sequence > b.sequence ? 1 : 0));
      const stream: Stream = {
        description: { ...state.description, createdAt: new Date(state.description.createdAt) },
        shardId: state.shardId,
        records,
        next: BigInt(state.next),
        trimmedBelow: BigInt(state.trimmedBelow),
        enabled: state.enabled,
      };
      this.#streams.set(stream.description.streamArn, stream);
      if (state.latest) this.#latest.set(stream.description.tableName, stream);
    }
  }

  /** Calls `listener` with each record appended to any stream, after it is appended. */
  onRecord(listener: (streamArn: string, record: MemoryStreamRecord) => void): void {
    this.#recordListeners.push(listener);
  }

  #export(stream: Stream): MemoryStreamState {
    return {
      description: { ...stream.description },
      shardId: stream.shardId,
      records: stream.records.map(({ sequence: _sequence, ...record }) => cloneValue(record)),
      next: stream.next.toString(),
      trimmedBelow: stream.trimmedBelow.toString(),
      enabled: stream.enabled,
      latest: this.#latest.get(stream.description.tableName) === stream,
    };
  }

  /** Turns off a table's stream: its shard closes, and its records stay readable until trimmed. */
  disable(tableName: string): void {
    const stream = this.#latest.get(tableName);
    if (stream) stream.enabled = false;
  }

  /** A table's latest stream (enabled or not), or `undefined` when it never had one. */
  latest(tableName: string): MemoryStreamDescription | undefined {
    const stream = this.#latest.get(tableName);
    return stream === undefined ? undefined : this.#describe(stream);
  }

  /** Every stream, or a table's, oldest first. */
  list(tableName?: string): MemoryStreamDescription[] {
    return [...this.#streams.values()]
      .filter((stream) => tableName === undefined || stream.description.tableName === tableName)
      .map((stream) => this.#describe(stream));
  }

  /** A stream by its ARN; throws `ResourceNotFoundException` for an unknown one. */
  describe(streamArn: string): MemoryStreamDescription {
    return this.#describe(this.#stream(streamArn));
  }

  /** A new iterator into a shard, starting where `type` says. */
  shardIterator(
    streamArn: string,
    position: {
      readonly shardId: string;
      readonly type: ShardIteratorType;
      readonly sequenceNumber?: string;
    },
  ): string {
    const stream = this.#stream(streamArn);
    if (position.shardId !== stream.shardId) {
      throw new MemoryStreamError(
        'ResourceNotFoundException',
        `Requested resource not found: Shard does not exist: ${position.shardId}`,
      );
    }
    this.#trim(stream);
    const start = this.#startOf(stream, position);
    return encodeIterator({
      a: streamArn,
      s: stream.shardId,
      p: start.toString(),
      t: this.#clock().getTime(),
    });
  }

  /**
   * Up to `limit` records from an iterator, and the iterator to continue with (`undefined` once a closed
   * shard is read to its end).
   */
  records(
    iterator: string,
    limit = 1000,
  ): { records: MemoryStreamRecord[]; nextIterator: string | undefined } {
    if (!Number.isInteger(limit) || limit < 1 || limit > 1000) {
      throw new MemoryStreamError('ValidationException', 'Limit must be between 1 and 1000');
    }
    const state = decodeIterator(iterator);
    const now = this.#clock().getTime();
    if (now - state.t > DEFAULTS.iteratorLifetimeMs) {
      throw new MemoryStreamError(
        'ExpiredIteratorException',
        'Iterator expired. The iterator was created more than 15 minutes ago.',
      );
    }
    const stream = this.#stream(state.a);
    this.#trim(stream);
    const from = BigInt(state.p);
    const first = firstAtOrAfter(stream.records, from);
    const picked = stream.records.slice(first, first + limit);
    const last = picked[picked.length - 1];
    const position = last === undefined ? from : last.sequence + 1n;
    const exhausted = !stream.enabled && position >= stream.next;
    return {
      records: picked.map(({ sequence: _sequence, ...record }) => cloneValue(record)),
      nextIterator: exhausted ? undefined : encodeIterator({ ...state, p: position.toString(), t: now }),
    };
  }

  #append(change: MemoryChange): void {
    const stream = this.#latest.get(change.tableName);
    if (!stream?.enabled) return;
    this.#trim(stream);
    const { viewType, keySchema } = stream.description;
    const image = change.newImage ?? change.oldImage ?? {};
    const keys = Object.fromEntries(
      [keySchema.partitionKey, keySchema.sortKey]
        .filter((name): name is string => name !== undefined && image[name] !== undefined)
        .map((name) => [name, image[name]]),
    );
    const newImage =
      viewType === 'NEW_IMAGE' || viewType === 'NEW_AND_OLD_IMAGES' ? change.newImage : undefined;
    const oldImage =
      viewType === 'OLD_IMAGE' || viewType === 'NEW_AND_OLD_IMAGES' ? change.oldImage : undefined;
    const sequence = stream.next;
    stream.next += 1n;
    stream.records.push({
      eventId: randomUUID().replaceAll('-', ''),
      eventName: change.eventName,
      sequence,
      sequenceNumber: sequence.toString(),
      createdAt: this.#clock(),
      keys: cloneValue(keys),
      ...(newImage === undefined ? {} : { newImage: cloneValue(newImage) }),
      ...(oldImage === undefined ? {} : { oldImage: cloneValue(oldImage) }),
      sizeBytes: itemSizeBytes(keys) + itemSizeBytes(newImage ?? {}) + itemSizeBytes(oldImage ?? {}),
      viewType,
    });
    if (this.#recordListeners.length > 0) {
      const { sequence: _sequence, ...record } = stream.records[
        stream.records.length - 1
      ] as Stream['records'][number];
      for (const listener of this.#recordListeners) listener(stream.description.streamArn, record);
    }
  }

  /** Drops records past the retention period. */
  #trim(stream: Stream): void {
    const oldest = this.#clock().getTime() - DEFAULTS.retentionMs;
    let count = 0;
    while (count < stream.records.length && (stream.records[count]?.createdAt.getTime() ?? 0) < oldest)
      count += 1;
    if (count === 0) return;
    stream.trimmedBelow = (stream.records[count - 1]?.sequence ?? 0n) + 1n;
    stream.records.splice(0, count);
  }

  #startOf(
    stream: Stream,
    position: { readonly type: ShardIteratorType; readonly sequenceNumber?: string },
  ): bigint {
    if (position.type === 'TRIM_HORIZON') return DEFAULTS.firstSequence;
    if (position.type === 'LATEST') return stream.next;
    if (position.type !== 'AT_SEQUENCE_NUMBER' && position.type !== 'AFTER_SEQUENCE_NUMBER') {
      throw new MemoryStreamError(
        'ValidationException',
        `Invalid ShardIteratorType: ${String(position.type)}`,
      );
    }
    const text = position.sequenceNumber ?? '';
    if (!/^\d{1,40}$/.test(text)) {
      throw new MemoryStreamError(
        'ValidationException',
        `Invalid SequenceNumber for ${position.type}: ${text}`,
      );
    }
    const sequence = BigInt(text);
    if (sequence < DEFAULTS.firstSequence || sequence >= stream.next) {
      throw new MemoryStreamError(
        'ValidationException',
        `Invalid SequenceNumber ${text} for shard ${stream.shardId}`,
      );
    }
    if (sequence < stream.trimmedBelow) {
      throw new MemoryStreamError(
        'TrimmedDataAccessException',
        `Attempted to access data older than the trim point: ${text}`,
      );
    }
    return position.type === 'AT_SEQUENCE_NUMBER' ? sequence : sequence + 1n;
  }

  #stream(streamArn: string): Stream {
    const stream = this.#streams.get(streamArn);
    if (!stream)
      throw new MemoryStreamError(
        'ResourceNotFoundException',
        `Requested resource not found: Stream: ${streamArn} not found`,
      );
    return stream;
  }

  #describe(stream: Stream): MemoryStreamDescription {
    const closed = !stream.enabled;
    const last = stream.next - 1n;
    return {
      ...stream.description,
      status: closed ? 'DISABLED' : 'ENABLED',
      shards: [
        {
          shardId: stream.shardId,
          startingSequenceNumber: DEFAULTS.firstSequence.toString(),
          ...(closed
            ? {
                endingSequenceNumber: (last < DEFAULTS.firstSequence
                  ? DEFAULTS.firstSequence
                  : last
                ).toString(),
              }
            : {}),
        },
      ],
    };
  }
}

/** Index of the first record with a sequence number at or after `from` (records are in order). */
function firstAtOrAfter(records: readonly { readonly sequence: bigint }[], from: bigint): number {
  let low = 0;
  let high = records.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if ((records[middle]?.sequence ?? 0n) < from) low = middle + 1;
    else high = middle;
  }
  return low;
}

function encodeIterator(state: IteratorState): string {
  return Buffer.from(JSON.stringify(state)).toString('base64url');
}

function decodeIterator(iterator: string): IteratorState {
  try {
    const state = JSON.parse(Buffer.from(iterator, 'base64url').toString('utf8')) as Partial<IteratorState>;
    if (
      typeof state.a === 'string' &&
      typeof state.s === 'string' &&
      typeof state.p === 'string' &&
      typeof state.t === 'number'
    ) {
      return { a: state.a, s: state.s, p: state.p, t: state.t };
    }
  } catch {
    // Not an iterator this class issued: answered below.
  }
  throw new MemoryStreamError('ValidationException', 'Invalid ShardIterator');
}
