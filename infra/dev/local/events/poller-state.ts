/**
 * What the pollers must remember across restarts, as Lambda remembers it for a mapping: each stream shard's
 * checkpoint, and the queue messages a poller had received but not yet settled. Against an emulator that
 * outlives the runtime it is kept in a small JSON file (under `.local/`), rewritten after every change, so a
 * restart — even after SIGKILL — resumes where the last run stopped: nothing in flight is lost; a batch
 * that was in flight is delivered again (consumers dedupe).
 */
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { LocalRuntimeError } from '../local-runtime-error.ts';
import { isRecord } from '../template/cloudformation-template.ts';

/** Poller state, keyed by {@link pollerStateKey}. */
export interface PollerStateStore {
  /** Where it is kept: a file path, or `memory`. */
  readonly location: string;
  /** Shard id → sequence number of the last record handled. */
  checkpoints(key: string): ReadonlyMap<string, string>;
  saveCheckpoint(key: string, shardId: string, sequenceNumber: string): void;
  /** Receipt handles of messages received but neither deleted nor handed back. */
  inFlight(key: string): readonly string[];
  saveInFlight(key: string, receiptHandles: readonly string[]): void;
}

interface StoredState {
  version: 1;
  streams: Record<string, Record<string, string>>;
  inFlight: Record<string, string[]>;
}

/**
 * The key of one mapping's state: the backend, the source and the function, so that another emulator, a
 * recreated table (a new stream ARN) or another function never picks up a checkpoint that is not its own.
 */
export function pollerStateKey(parts: {
  readonly endpoint: string;
  readonly sourceArn: string;
  readonly functionName: string;
}): string {
  return `${parts.endpoint} ${parts.sourceArn} ${parts.functionName}`;
}

/** State that lives as long as the process: for a fresh moto or the embedded backend, which start empty. */
export function memoryPollerState(): PollerStateStore {
  return stateStore(emptyState(), { location: 'memory', persist: () => {} });
}

/**
 * State kept in `file` (created on first write). A file that cannot be read as this state fails the start
 * rather than silently starting the streams over.
 * @example
 * const store = filePollerState('.local/poller-state.json');
 */
export function filePollerState(file: string): PollerStateStore {
  return stateStore(readState(file), {
    location: file,
    persist: (state) => {
      mkdirSync(dirname(file), { recursive: true });
      // Write then rename: a process killed mid-write leaves the previous file, never half of one.
      const temporary = `${file}.${process.pid}.tmp`;
      writeFileSync(temporary, `${JSON.stringify(state, null, 2)}\n`);
      renameSync(temporary, file);
    },
  });
}

function stateStore(
  state: StoredState,
  options: { readonly location: string; readonly persist: (state: StoredState) => void },
): PollerStateStore {
  return {
    location: options.location,
    checkpoints: (key) => new Map(Object.entries(state.streams[key] ?? {})),
    saveCheckpoint(key, shardId, sequenceNumber) {
      const shards = state.streams[key] ?? {};
      if (shards[shardId] === sequenceNumber) return;
      state.streams[key] = { ...shards, [shardId]: sequenceNumber };
      options.persist(state);
    },
    inFlight: (key) => [...(state.inFlight[key] ?? [])],
    saveInFlight(key, receiptHandles) {
      const before = state.inFlight[key] ?? [];
      if (before.length === 0 && receiptHandles.length === 0) return;
      if (receiptHandles.length === 0) delete state.inFlight[key];
      else state.inFlight[key] = [...receiptHandles];
      options.persist(state);
    },
  };
}

function readState(file: string): StoredState {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return emptyState();
  }
  try {
    const parsed: unknown = JSON.parse(text);
    if (isRecord(parsed) && parsed.version === 1 && isRecord(parsed.streams) && isRecord(parsed.inFlight)) {
      return parsed as unknown as StoredState;
    }
  } catch (cause) {
    throw new LocalRuntimeError(
      'INVALID_OPTION',
      `${file} is not JSON; delete it to start the streams over`,
      {
        cause,
      },
    );
  }
  throw new LocalRuntimeError(
    'INVALID_OPTION',
    `${file} is not poller state; delete it to start the streams over`,
  );
}

function emptyState(): StoredState {
  return { version: 1, streams: {}, inFlight: {} };
}
