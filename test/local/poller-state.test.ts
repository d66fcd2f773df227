import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  filePollerState,
  memoryPollerState,
  pollerStateKey,
} from '../../infra/dev/local/events/poller-state.ts';

let directory: string;
let file: string;

beforeEach(() => {
  directory = mkdtempSync(join(tmpdir(), 'poller-state-'));
  file = join(directory, '.local', 'poller-state.json');
});

afterEach(() => {
  rmSync(directory, { recursive: true, force: true });
});

const key = pollerStateKey({
  endpoint: 'http://localhost:4566',
  sourceArn: 'arn:aws:dynamodb:us-east-1:000000000000:table/Outbox/stream/2024',
  functionName: 'Outbox/Relay',
});

describe('filePollerState', () => {
  it('writes every checkpoint to the file at once, and a new store on the file reads them back', () => {
    const store = filePollerState(file);
    store.saveCheckpoint(key, 'shard-1', '100');
    store.saveCheckpoint(key, 'shard-2', '7');
    store.saveCheckpoint(key, 'shard-1', '250');
    expect(JSON.parse(readFileSync(file, 'utf8')).streams[key]).toEqual({ 'shard-1': '250', 'shard-2': '7' });
    expect(new Map(filePollerState(file).checkpoints(key))).toEqual(
      new Map([
        ['shard-1', '250'],
        ['shard-2', '7'],
      ]),
    );
  });

  it('keeps the receipts of messages in flight until they are settled', () => {
    const store = filePollerState(file);
    store.saveInFlight('queue', ['r-1', 'r-2']);
    expect(filePollerState(file).inFlight('queue')).toEqual(['r-1', 'r-2']);
    store.saveInFlight('queue', []);
    expect(filePollerState(file).inFlight('queue')).toEqual([]);
  });

  it('keeps checkpoints of other streams, functions and emulators apart', () => {
    const store = filePollerState(file);
    store.saveCheckpoint(key, 'shard-1', '100');
    const other = pollerStateKey({
      endpoint: 'http://127.0.0.1:5000',
      sourceArn: 'x',
      functionName: 'Outbox/Relay',
    });
    expect(store.checkpoints(other).size).toBe(0);
  });

  it('starts empty without a file, and refuses a file that is not its state instead of starting over', () => {
    expect(filePollerState(file).checkpoints(key).size).toBe(0);
    writeFileSync(join(directory, 'broken.json'), '{"streams":');
    expect(() => filePollerState(join(directory, 'broken.json'))).toThrow(
      /delete it to start the streams over/,
    );
    writeFileSync(join(directory, 'other.json'), '{"something":"else"}');
    expect(() => filePollerState(join(directory, 'other.json'))).toThrow(/is not poller state/);
  });
});

describe('memoryPollerState', () => {
  it('remembers within the process only', () => {
    const store = memoryPollerState();
    store.saveCheckpoint(key, 'shard-1', '5');
    expect(store.checkpoints(key).get('shard-1')).toBe('5');
    expect(store.location).toBe('memory');
    expect(memoryPollerState().checkpoints(key).size).toBe(0);
  });
});
