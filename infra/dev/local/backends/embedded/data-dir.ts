/**
 * The embedded backend on disk (`npm start -- --data-dir <dir>`): tables with their items, streams with their
 * records, queues with their messages (in-flight ones with their receipt handles and visibility), and the
 * deployed stacks, kept in a folder so they survive a stop and a SIGKILL.
 *
 * Every change is appended to a journal before the request that made it is answered, in one write per request,
 * so whatever the backend acknowledged is on disk when the process dies (the operating system holds the write
 * even if the process is killed; a power cut may lose the last moments, as `fsync` is not called per request).
 * At each start the journal is replayed over the last snapshot, a new snapshot is written and the journal starts
 * over. Each journal line carries a checksum: a line cut short by a kill mid-write is the last one and was never
 * acknowledged, so it is dropped; any other damage, a folder of something else or a folder in use by another run
 * is refused with an error that says what to do — never a silent fresh start.
 */
import {
  closeSync,
  existsSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import type {
  MemoryDocumentClient,
  MemoryQueueState,
  MemoryStreamRecord,
  MemoryStreamState,
  MemoryStreams,
} from '../../../../../shared/memory/index.ts';
import { LocalRuntimeError } from '../../local-runtime-error.ts';
import { fromWireItem, toWireItem } from './attribute-values.ts';
import type { QueueCatalog, QueueEntry } from './queue-catalog.ts';
import type { StackDeployer, StackRecord } from './stack-deployer.ts';
import type { CatalogEntry, TableCatalog } from './table-catalog.ts';

/** What the folder's marker file says it is. */
const FORMAT = 'serverless-outbox embedded backend';
const VERSION = 1;
const FILES = {
  marker: 'embedded-backend.json',
  snapshot: 'snapshot.json',
  lock: 'lock',
  journalPrefix: 'journal-',
} as const;
/** Files the runtime keeps beside the backend's. */
const RUNTIME_FILES = new Set(['poller-state.json']);
/** Queue URLs name the endpoint, whose port changes with every start: on disk they name this token instead. */
const ENDPOINT_TOKEN = '$EMBEDDED_ENDPOINT$';
/** A journal past this size is folded into a new snapshot while the backend runs. */
const COMPACT_BYTES = 64 * 1024 * 1024;

/** The backend's parts a data folder keeps. */
export interface EmbeddedParts {
  readonly db: MemoryDocumentClient;
  readonly streams: MemoryStreams;
  readonly tables: TableCatalog;
  readonly queues: QueueCatalog;
  readonly deployer: StackDeployer;
}

interface Snapshot {
  readonly generation: number;
  readonly tables: readonly {
    readonly entry: CatalogEntry;
    readonly items: readonly Record<string, unknown>[];
  }[];
  readonly streams: readonly MemoryStreamState[];
  readonly queues: readonly QueueEntry[];
  readonly queueStates: Readonly<Record<string, MemoryQueueState>>;
  readonly stacks: readonly { readonly stackName: string; readonly record: SerializedStack }[];
}

type SerializedStack = Omit<StackRecord, 'resources'> & { readonly resources: readonly [string, unknown][] };

/** One journal entry: a change, as the state it leaves (so replaying an entry twice changes nothing). */
type Change =
  | { readonly k: 'tables'; readonly entries: readonly CatalogEntry[] }
  | {
      readonly k: 'item';
      readonly table: string;
      readonly key: string;
      readonly item: Record<string, unknown> | null;
    }
  | { readonly k: 'stream'; readonly state: MemoryStreamState }
  | { readonly k: 'record'; readonly arn: string; readonly record: MemoryStreamRecord }
  | { readonly k: 'queues'; readonly entries: readonly QueueEntry[] }
  | { readonly k: 'queue'; readonly name: string; readonly state: MemoryQueueState | null }
  | {
      readonly k: 'stacks';
      readonly stacks: readonly { readonly stackName: string; readonly record: SerializedStack }[];
    };

/** A data folder, open for one run. */
export class DataDir {
  readonly path: string;
  #journal: string;
  #fd: number;
  #generation: number;
  #bytes = 0;
  #pending: string[] = [];
  #parts: EmbeddedParts | undefined;
  #endpoint = '';
  /** What was last written of each piece of state that is written whole, to skip writing it again unchanged. */
  readonly #written = new Map<string, string>();
  readonly #dirtyQueues = new Set<string>();
  #catalogsDirty = false;
  #compacting = false;
  #restored: Snapshot | undefined;

  private constructor(path: string, generation: number, restored: Snapshot | undefined) {
    this.path = path;
    this.#generation = generation;
    this.#restored = restored;
    this.#journal = join(path, `${FILES.journalPrefix}${generation}.ndjson`);
    this.#fd = openSync(this.#journal, 'a');
  }

  /**
   * Opens (or creates) the folder and reads what it holds. Throws `DATA_DIR_INVALID` for a folder of other files,
   * of another format, damaged, or in use by another run.
   */
  static open(path: string): DataDir {
    mkdirSync(path, { recursive: true });
    const names = readdirSync(path);
    const marker = join(path, FILES.marker);
    if (!names.includes(FILES.marker)) {
      const foreign = names.filter((name) => !RUNTIME_FILES.has(name));
      if (foreign.length > 0) {
        throw invalid(
          path,
          `it holds files that are not the embedded backend's (${foreign.slice(0, 5).join(', ')}${foreign.length > 5 ? ', …' : ''}); give --data-dir an empty or new folder`,
        );
      }
      writeFileSync(
        marker,
        `${JSON.stringify({ format: FORMAT, version: VERSION, createdAt: new Date().toISOString() }, null, 2)}\n`,
      );
    } else {
      let parsed: { format?: unknown; version?: unknown };
      try {
        parsed = JSON.parse(readFileSync(marker, 'utf8')) as typeof parsed;
      } catch (cause) {
        throw invalid(
          path,
          `${FILES.marker} is not JSON (${String(cause)}); the folder is damaged: move it away to start fresh`,
        );
      }
      if (parsed.format !== FORMAT || parsed.version !== VERSION) {
        throw invalid(
          path,
          `${FILES.marker} says ${JSON.stringify(parsed.format)} version ${JSON.stringify(parsed.version)}, not ${FORMAT} version ${VERSION}; use another folder`,
        );
      }
    }
    lock(path);
    try {
      const snapshot = readSnapshot(path);
      const generation = snapshot?.generation ?? 0;
      const changes = readJournal(path, generation);
      const state = applyChanges(snapshot ?? emptySnapshot(generation), changes);
      // Fold the journal into a new snapshot now, so the journal stays short and a damaged line cannot linger.
      const next = generation + 1;
      writeSnapshot(path, { ...state, generation: next });
      for (const name of readdirSync(path)) {
        if (name.startsWith(FILES.journalPrefix) && name !== `${FILES.journalPrefix}${next}.ndjson`)
          rmSync(join(path, name));
      }
      const hasData = snapshot !== undefined || changes.length > 0;
      return new DataDir(path, next, hasData ? { ...state, generation: next } : undefined);
    } catch (error) {
      unlock(path);
      throw error;
    }
  }

  /** Whether the folder held a backend (else this run starts it). */
  get restoring(): boolean {
    return this.#restored !== undefined;
  }

  /**
   * Puts what the folder holds into the backend's parts (at `endpoint`, which queue URLs now name), then records
   * every change they make from now on.
   */
  async attach(parts: EmbeddedParts, endpoint: string): Promise<void> {
    this.#parts = parts;
    this.#endpoint = endpoint;
    const state = this.#restored;
    if (state !== undefined) await restore(parts, state, endpoint);
    this.#restored = undefined;
    parts.db.onChange((change) => {
      const entry = parts.tables.has(change.tableName)
        ? parts.tables.definition(change.tableName)
        : undefined;
      if (entry === undefined) return;
      const image = change.newImage ?? change.oldImage ?? {};
      const keys = entry.KeySchema.map((key) => toWireItem({ v: image[key.AttributeName ?? ''] }).v);
      this.#queue({
        k: 'item',
        table: change.tableName,
        key: JSON.stringify(keys),
        item: change.newImage === undefined ? null : toWireItem(change.newImage),
      });
    });
    parts.streams.onRecord((arn, record) => this.#queue({ k: 'record', arn, record: recordToDisk(record) }));
    // What the restore produced is the baseline: it is not written again.
    this.#writeWhole(true);
    this.flush();
  }

  /** The queues a request touched: their messages are written at the next flush. */
  touchQueues(urls: readonly string[]): void {
    for (const url of urls) this.#dirtyQueues.add(url);
  }

  /** Tables, streams, queues or stacks may have been created, changed or deleted. */
  touchCatalogs(): void {
    this.#catalogsDirty = true;
  }

  /** Appends what changed since the last flush, in one write: call it before a request is answered. */
  flush(): void {
    if (this.#parts === undefined) return;
    const changes = this.#pending;
    this.#pending = [];
    this.#writeWhole(false);
    // Catalogs first: an item or record of a table or stream created by this request comes after it on replay.
    const lines = [...this.#pending, ...changes];
    this.#pending = [];
    if (lines.length === 0) return;
    const text = lines.join('');
    const buffer = Buffer.from(text);
    let offset = 0;
    while (offset < buffer.length) offset += writeSync(this.#fd, buffer, offset);
    this.#bytes += buffer.length;
    if (this.#bytes > COMPACT_BYTES && !this.#compacting) this.compact();
  }

  /** Writes the whole state as a new snapshot and starts a new journal. */
  compact(): void {
    const parts = this.#parts;
    if (parts === undefined) return;
    this.#compacting = true;
    try {
      this.flush();
    } finally {
      this.#compacting = false;
    }
    const next = this.#generation + 1;
    writeSnapshot(this.path, { ...capture(parts, this.#endpoint), generation: next });
    closeSync(this.#fd);
    rmSync(this.#journal, { force: true });
    this.#generation = next;
    this.#journal = join(this.path, `${FILES.journalPrefix}${next}.ndjson`);
    this.#fd = openSync(this.#journal, 'a');
    this.#bytes = 0;
  }

  /** Flushes, folds the journal into a snapshot and releases the folder. */
  close(): void {
    try {
      this.compact();
    } finally {
      closeSync(this.#fd);
      unlock(this.path);
    }
  }

  #queue(change: Change): void {
    this.#pending.push(line(change, this.#endpoint));
  }

  /** Queues the pieces written whole (catalogs, stream descriptions, stacks, dirty queues) that changed. */
  #writeWhole(all: boolean): void {
    const parts = this.#parts;
    if (parts === undefined) return;
    const write = (key: string, change: Change): void => {
      const text = line(change, this.#endpoint);
      const body = text.slice(text.indexOf(' ') + 1);
      if (this.#written.get(key) === body) return;
      this.#written.set(key, body);
      if (!all) this.#pending.push(text);
    };
    if (all || this.#catalogsDirty) {
      this.#catalogsDirty = false;
      write('tables', { k: 'tables', entries: parts.tables.exportTables() });
      for (const stream of parts.streams.exportStreams()) {
        write(`stream ${stream.description.streamArn}`, {
          k: 'stream',
          state: { ...stream, records: [] },
        });
      }
      const entries = parts.queues.exportQueues();
      write('queues', { k: 'queues', entries });
      write('stacks', { k: 'stacks', stacks: serializeStacks(parts.deployer) });
      for (const entry of entries) this.#dirtyQueues.add(entry.url);
      for (const key of [...this.#written.keys()]) {
        if (key.startsWith('queue ') && !entries.some((entry) => `queue ${entry.name}` === key)) {
          this.#written.delete(key);
          if (!all) this.#pending.push(line({ k: 'queue', name: key.slice(6), state: null }, this.#endpoint));
        }
      }
    }
    for (const url of this.#dirtyQueues) {
      const name = url.split('/').pop() ?? url;
      if (!parts.queues.has(name)) continue;
      write(`queue ${name}`, {
        k: 'queue',
        name,
        state: queueToDisk(parts.queues.queues.exportQueue(parts.queues.urlOf(name))),
      });
    }
    this.#dirtyQueues.clear();
  }
}

/** A journal line: a CRC-32 of the JSON, a space, the JSON with the endpoint replaced by its token. */
function line(change: Change, endpoint: string): string {
  const json = JSON.stringify(change, replacer);
  const text = endpoint === '' ? json : json.replaceAll(endpoint, ENDPOINT_TOKEN);
  return `${crc32(text).toString(16).padStart(8, '0')} ${text}\n`;
}

/** JSON for what JSON lacks: bigints (sequence numbers) and binary values. */
function replacer(_key: string, value: unknown): unknown {
  if (typeof value === 'bigint') return value.toString();
  return value;
}

function readSnapshot(path: string): Snapshot | undefined {
  const file = join(path, FILES.snapshot);
  if (!existsSync(file)) return undefined;
  try {
    const parsed = JSON.parse(readFileSync(file, 'utf8')) as Snapshot;
    if (typeof parsed.generation !== 'number' || !Array.isArray(parsed.tables))
      throw new Error('not a snapshot');
    return parsed;
  } catch (cause) {
    throw invalid(
      path,
      `${FILES.snapshot} cannot be read (${String(cause)}); the folder is damaged: move it away to start fresh`,
    );
  }
}

function readJournal(path: string, generation: number): Change[] {
  const file = join(path, `${FILES.journalPrefix}${generation}.ndjson`);
  if (!existsSync(file)) return [];
  const text = readFileSync(file, 'utf8');
  const lines = text.split('\n');
  // The text after the last newline is a write the kill cut short: it was never acknowledged.
  lines.pop();
  return lines.map((entry, index) => {
    const space = entry.indexOf(' ');
    const json = entry.slice(space + 1);
    if (space !== 8 || entry.slice(0, 8) !== crc32(json).toString(16).padStart(8, '0')) {
      throw invalid(
        path,
        `${FILES.journalPrefix}${generation}.ndjson line ${index + 1} is damaged (its checksum does not match); move the folder away to start fresh`,
      );
    }
    return JSON.parse(json) as Change;
  });
}

function writeSnapshot(path: string, snapshot: Snapshot): void {
  const file = join(path, FILES.snapshot);
  const temporary = `${file}.tmp`;
  const fd = openSync(temporary, 'w');
  try {
    writeSync(fd, JSON.stringify(snapshot, replacer));
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(temporary, file);
}

function emptySnapshot(generation: number): Snapshot {
  return { generation, tables: [], streams: [], queues: [], queueStates: {}, stacks: [] };
}

/** The snapshot `changes` leave when applied in order to `snapshot`. */
function applyChanges(snapshot: Snapshot, changes: readonly Change[]): Snapshot {
  const tables = new Map(
    snapshot.tables.map(({ entry, items }) => [
      entry.definition.TableName,
      { entry, items: new Map(items.map((item) => [itemKey(entry, item), item])) },
    ]),
  );
  const streams = new Map(
    snapshot.streams.map((stream) => [
      stream.description.streamArn,
      { ...stream, records: [...stream.records] },
    ]),
  );
  let queues = [...snapshot.queues];
  const queueStates = new Map(Object.entries(snapshot.queueStates));
  let stacks = [...snapshot.stacks];
  for (const change of changes) {
    switch (change.k) {
      case 'tables': {
        const names = new Set(change.entries.map((entry) => entry.definition.TableName));
        for (const name of tables.keys()) if (!names.has(name)) tables.delete(name);
        for (const entry of change.entries) {
          const existing = tables.get(entry.definition.TableName);
          tables.set(entry.definition.TableName, { entry, items: existing?.items ?? new Map() });
        }
        break;
      }
      case 'item': {
        const table = tables.get(change.table);
        if (table === undefined) break;
        if (change.item === null) table.items.delete(change.key);
        else table.items.set(change.key, change.item);
        break;
      }
      case 'stream': {
        const existing = streams.get(change.state.description.streamArn);
        streams.set(change.state.description.streamArn, {
          ...change.state,
          records: existing?.records ?? [],
        });
        break;
      }
      case 'record': {
        const stream = streams.get(change.arn);
        if (stream === undefined) break;
        if (!stream.records.some((record) => record.sequenceNumber === change.record.sequenceNumber)) {
          stream.records.push(change.record);
        }
        const next = BigInt(change.record.sequenceNumber) + 1n;
        streams.set(change.arn, {
          ...stream,
          next: (next > BigInt(stream.next) ? next : BigInt(stream.next)).toString(),
        });
        break;
      }
      case 'queues':
        queues = [...change.entries];
        break;
      case 'queue':
        if (change.state === null) queueStates.delete(change.name);
        else queueStates.set(change.name, change.state);
        break;
      case 'stacks':
        stacks = [...change.stacks];
        break;
    }
  }
  return {
    generation: snapshot.generation,
    tables: [...tables.values()].map(({ entry, items }) => ({ entry, items: [...items.values()] })),
    streams: [...streams.values()],
    queues,
    queueStates: Object.fromEntries(queueStates),
    stacks,
  };
}

/** A stored item's key, as the journal's `item` entries name it. */
function itemKey(entry: CatalogEntry, item: Record<string, unknown>): string {
  return JSON.stringify(entry.definition.KeySchema.map((key) => item[key.AttributeName ?? '']));
}

/** The whole state of the parts, as a snapshot (generation filled in by the caller). */
function capture(parts: EmbeddedParts, endpoint: string): Omit<Snapshot, 'generation'> {
  const tables = parts.tables.exportTables().map((entry) => ({
    entry,
    items: parts.db.items(entry.definition.TableName).map((item) => toWireItem(item)),
  }));
  const queues = parts.queues.exportQueues();
  const state: Omit<Snapshot, 'generation'> = {
    tables,
    streams: parts.streams.exportStreams().map(streamToDisk),
    queues,
    queueStates: Object.fromEntries(
      queues.map((entry) => [entry.name, queueToDisk(parts.queues.queues.exportQueue(entry.url))]),
    ),
    stacks: serializeStacks(parts.deployer),
  };
  // Through JSON, as on disk: the endpoint becomes its token.
  return JSON.parse(JSON.stringify(state, replacer).replaceAll(endpoint, ENDPOINT_TOKEN)) as Omit<
    Snapshot,
    'generation'
  >;
}

function serializeStacks(deployer: StackDeployer): { stackName: string; record: SerializedStack }[] {
  return deployer.exportStacks().map(({ stackName, record }) => ({
    stackName,
    record: { ...record, resources: [...record.resources] },
  }));
}

/** Puts a snapshot into the parts: tables and items, then streams (so the items write no records), queues, stacks. */
async function restore(parts: EmbeddedParts, snapshot: Snapshot, endpoint: string): Promise<void> {
  const state = JSON.parse(JSON.stringify(snapshot).replaceAll(ENDPOINT_TOKEN, endpoint)) as Snapshot;
  for (const { entry, items } of state.tables) {
    parts.tables.restoreTable(entry);
    for (const item of items) {
      await parts.db.send(
        new PutCommand({ TableName: entry.definition.TableName, Item: fromWireItem(item, 'a stored item') }),
      );
    }
  }
  parts.streams.importStreams(state.streams.map(streamFromDisk));
  parts.queues.restoreQueues(state.queues);
  for (const [name, queueState] of Object.entries(state.queueStates)) {
    if (parts.queues.has(name))
      parts.queues.queues.importQueue(parts.queues.urlOf(name), queueFromDisk(queueState));
  }
  parts.deployer.restoreStacks(
    state.stacks.map(({ stackName, record }) => ({
      stackName,
      record: { ...record, resources: new Map(record.resources) } as unknown as StackRecord,
    })),
  );
}

function lock(path: string): void {
  const file = join(path, FILES.lock);
  if (existsSync(file)) {
    const pid = Number(readFileSync(file, 'utf8').trim());
    if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && isAlive(pid)) {
      throw invalid(
        path,
        `another run (pid ${pid}) is using it; stop that one first, or give another folder`,
      );
    }
  }
  writeFileSync(file, `${process.pid}\n`);
}

function unlock(path: string): void {
  rmSync(join(path, FILES.lock), { force: true });
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function invalid(path: string, problem: string): LocalRuntimeError {
  return new LocalRuntimeError('DATA_DIR_INVALID', `--data-dir ${path}: ${problem}`);
}

const CRC_TABLE = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n += 1) {
    let c = n;
    for (let k = 0; k < 8; k += 1) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

/** CRC-32 (the zlib polynomial) of a string's UTF-8 bytes. */
function crc32(text: string): number {
  let crc = 0xffffffff;
  for (const byte of Buffer.from(text)) crc = (CRC_TABLE[(crc ^ byte) & 0xff] as number) ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

/*
 * Stream records hold items (exact numbers, sets, binaries) and dates, and queue messages may hold binary
 * attributes: none survives JSON as it is, so on disk items take DynamoDB's wire form, dates ISO text and
 * binaries base64.
 */

function recordToDisk(record: MemoryStreamRecord): MemoryStreamRecord {
  return {
    ...record,
    createdAt: record.createdAt.toISOString() as unknown as Date,
    keys: toWireItem(record.keys),
    ...(record.newImage === undefined ? {} : { newImage: toWireItem(record.newImage) }),
    ...(record.oldImage === undefined ? {} : { oldImage: toWireItem(record.oldImage) }),
  };
}

function recordFromDisk(record: MemoryStreamRecord): MemoryStreamRecord {
  return {
    ...record,
    createdAt: new Date(record.createdAt),
    keys: fromWireItem(record.keys, 'a stored stream record'),
    ...(record.newImage === undefined
      ? {}
      : { newImage: fromWireItem(record.newImage, 'a stored stream record') }),
    ...(record.oldImage === undefined
      ? {}
      : { oldImage: fromWireItem(record.oldImage, 'a stored stream record') }),
  };
}

function streamToDisk(stream: MemoryStreamState): MemoryStreamState {
  return { ...stream, records: stream.records.map(recordToDisk) };
}

function streamFromDisk(stream: MemoryStreamState): MemoryStreamState {
  return { ...stream, records: stream.records.map(recordFromDisk) };
}

type Attributes = Readonly<
  Record<
    string,
    { readonly dataType: string; readonly stringValue?: string; readonly binaryValue?: Uint8Array }
  >
>;

/** A binary attribute value as the data dir keeps it: base64 text, which JSON carries. */
function binaryToDisk(value: Uint8Array): Uint8Array {
  return Buffer.from(value).toString('base64') as unknown as Uint8Array;
}

function binaryFromDisk(value: Uint8Array): Uint8Array {
  return new Uint8Array(Buffer.from(value as unknown as string, 'base64'));
}

/** `state` with the binary value of every message attribute, user and system, passed through `convert`. */
function queueWithBinaries(
  state: MemoryQueueState,
  convert: (value: Uint8Array) => Uint8Array,
): MemoryQueueState {
  const converted = (attributes: Attributes): Attributes =>
    Object.fromEntries(
      Object.entries(attributes).map(([name, value]) => [
        name,
        value.binaryValue === undefined ? value : { ...value, binaryValue: convert(value.binaryValue) },
      ]),
    );
  return {
    ...state,
    messages: state.messages.map((message) => ({
      ...message,
      attributes: converted(message.attributes),
      systemAttributes: converted(message.systemAttributes),
    })),
  };
}

function queueToDisk(state: MemoryQueueState): MemoryQueueState {
  return queueWithBinaries(state, binaryToDisk);
}

function queueFromDisk(state: MemoryQueueState): MemoryQueueState {
  return queueWithBinaries(state, binaryFromDisk);
}
