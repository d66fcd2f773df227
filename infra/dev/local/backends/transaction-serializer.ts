/**
 * An HTTP forwarder in front of an emulator that keeps DynamoDB transactions apart from every other DynamoDB
 * write. moto applies a TransactWriteItems to deep copies of the tables it touches and puts the copies back when
 * the transaction is cancelled, and its server answers requests on several threads: a write that lands on such a
 * table while a transaction runs is lost with the cancelled copy (an inbox row, a message marked SENT), and on a
 * table of a few thousand items the copy fails with HTTP 500 "dictionary changed size during iteration".
 * DynamoDB isolates transactions; this forwarder gets an emulator the same outcome with a readers–writer
 * discipline: plain writes run beside each other, a transaction runs alone, and both wait their turn in arrival
 * order so neither starves. Plain writes to one table run one at a time: moto's server is threaded and its items
 * unlocked, so two updates of one item at once each read it, and the last one written drops the other's change (20
 * `list_append` updates of one item at once, sent straight to moto on a busy machine, kept 15 to 19 of them in 3 of 10
 * rounds). An outbox message's `history` is such a list, appended by the consumer's confirmation and the sweepers'
 * claims alike. Reads and every other request pass straight through, streamed both ways, with their
 * headers (Host included), status and body bytes as they are.
 */
import {
  createServer,
  Agent as HttpAgent,
  request as httpRequest,
  type IncomingMessage,
  type ServerResponse,
} from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { AddressInfo } from 'node:net';
import { LocalRuntimeError } from '../local-runtime-error.ts';

/** The `X-Amz-Target` of the requests that the emulator answers alone. */
export const TRANSACT_WRITE_ITEMS_TARGET = 'DynamoDB_20120810.TransactWriteItems';

/** The `X-Amz-Target` of a PartiQL transaction. */
const EXECUTE_TRANSACTION_TARGET = 'DynamoDB_20120810.ExecuteTransaction';

/**
 * The `X-Amz-Target`s of the plain DynamoDB writes: they may run together, but never beside a transaction. The
 * PartiQL operations are counted among them because a statement may write.
 */
export const PLAIN_WRITE_TARGETS: ReadonlySet<string> = new Set(
  ['PutItem', 'UpdateItem', 'DeleteItem', 'BatchWriteItem', 'ExecuteStatement', 'BatchExecuteStatement'].map(
    (operation) => `DynamoDB_20120810.${operation}`,
  ),
);

/** Options of {@link startTransactionSerializer}. */
export interface TransactionSerializerOptions {
  /** Base URL of the emulator, e.g. `http://127.0.0.1:50123`. */
  readonly upstream: string;
  /** Port on 127.0.0.1; 0 picks a free one. @default 0 */
  readonly port?: number;
}

/** A running forwarder. */
export interface TransactionSerializer {
  /** Its base URL, e.g. `http://127.0.0.1:50124`: the endpoint SDK clients use instead of the emulator's. */
  readonly endpoint: string;
  /** The emulator it forwards to. */
  readonly upstream: string;
  /** Stops listening and closes its connections, open ones included; the emulator keeps running. */
  stop(): Promise<void>;
}

const DEFAULTS = { port: 0, host: '127.0.0.1' } as const;

/**
 * The most bytes read from a write's body before it queues: DynamoDB caps a TransactWriteItems at 4 MB of items;
 * a BatchWriteItem's request, the largest write, at 16 MB.
 */
const MAX_WRITE_BODY_BYTES = 16 * 1024 * 1024;

/**
 * Starts the forwarder on 127.0.0.1 and resolves once it listens.
 * @example
 * const serializer = await startTransactionSerializer({ upstream: moto.endpoint });
 * const dynamodb = new DynamoDBClient(emulatorClientConfig(serializer.endpoint));
 */
export async function startTransactionSerializer(
  options: TransactionSerializerOptions,
): Promise<TransactionSerializer> {
  const upstream = new URL(options.upstream);
  const secure = upstream.protocol === 'https:';
  const agent = secure ? new HttpsAgent({ keepAlive: true }) : new HttpAgent({ keepAlive: true });
  const target: UpstreamTarget = {
    upstream,
    basePath: upstream.pathname.replace(/\/+$/, ''),
    agent,
    send: secure ? httpsRequest : httpRequest,
  };
  const turns = createWriteTurns();
  const tables = createTableTurns();

  const server = createServer((request, response) => {
    const kind = writeKind(request.headers['x-amz-target']);
    if (kind === undefined) {
      void forward({ request, response, target, body: request });
      return;
    }
    // The body is read before the write queues, so a write holds its turn only while the emulator works on it.
    let clientGone = false;
    response.once('close', () => {
      clientGone = true;
    });
    void readBody(request).then(
      (body) => {
        if (body === 'TOO_LARGE') {
          response.writeHead(413, { 'content-type': 'application/json', connection: 'close' });
          response.end(
            JSON.stringify({ message: `a DynamoDB write request is at most ${MAX_WRITE_BODY_BYTES} bytes` }),
          );
          return;
        }
        return turns.run(kind, async () => {
          // A client that gave up while queued has nobody to answer; its retry is queued on its own.
          if (clientGone) return;
          if (kind === 'transaction') return forward({ request, response, target, body });
          await tables.run(writtenTables(body), () => forward({ request, response, target, body }));
        });
      },
      () => response.destroy(),
    );
  });
  const port = await new Promise<number>((resolve, reject) => {
    server.once('error', (cause: unknown) =>
      reject(
        new LocalRuntimeError('BACKEND_UNAVAILABLE', `the transaction serializer could not listen`, {
          cause,
        }),
      ),
    );
    server.listen(options.port ?? DEFAULTS.port, DEFAULTS.host, () =>
      resolve((server.address() as AddressInfo).port),
    );
  });
  let stopping: Promise<void> | undefined;
  return {
    endpoint: `http://${DEFAULTS.host}:${port}`,
    upstream: options.upstream,
    stop: () => {
      stopping ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
        agent.destroy();
      });
      return stopping;
    },
  };
}

interface UpstreamTarget {
  readonly upstream: URL;
  /** The upstream URL's path, without a trailing slash, put before each request's path. */
  readonly basePath: string;
  readonly agent: HttpAgent;
  readonly send: typeof httpRequest;
}

interface Exchange {
  readonly request: IncomingMessage;
  readonly response: ServerResponse;
  readonly target: UpstreamTarget;
  /** The request body: streamed from the client, or already read. */
  readonly body: IncomingMessage | Buffer;
}

/**
 * Sends `request` to the emulator and its answer back. A read resolves when the exchange is over, however it ended;
 * a write (a buffered body) only once the emulator has answered or dropped it: a client that hangs up does not stop
 * the emulator, and the next write must not reach it while this one still runs.
 */
function forward(exchange: Exchange): Promise<void> {
  const { request, response, target, body } = exchange;
  const isWrite = Buffer.isBuffer(body);
  return new Promise<void>((resolve) => {
    if (!isWrite) response.once('close', () => resolve());
    let upstreamAnswer: IncomingMessage | undefined;
    const outgoing = target.send(
      {
        protocol: target.upstream.protocol,
        hostname: target.upstream.hostname,
        port: target.upstream.port,
        method: request.method,
        path: `${target.basePath}${request.url ?? '/'}`,
        // The raw list keeps every header as the client wrote it (names, order, repeats, Host): signatures and
        // the URLs the emulator builds from Host stay those of the endpoint the client called.
        headers: request.rawHeaders,
        agent: target.agent,
      },
      (answer) => {
        upstreamAnswer = answer;
        if (isWrite) answer.once('close', () => resolve());
        if (response.destroyed) {
          // The client is gone: drain the answer so the emulator's side completes.
          answer.resume();
          return;
        }
        response.writeHead(answer.statusCode ?? 502, answer.statusMessage, answer.rawHeaders);
        answer.pipe(response);
        answer.once('error', () => response.destroy());
      },
    );
    outgoing.once('error', (error) => {
      if (isWrite) resolve();
      if (response.destroyed) return;
      if (response.headersSent) {
        response.destroy();
        return;
      }
      response.writeHead(502, { 'content-type': 'application/json' });
      response.end(
        JSON.stringify({
          message: `the emulator at ${target.upstream.origin} did not answer: ${error.message}`,
        }),
      );
    });
    // A client that hangs up ends a read upstream too; a write is left to finish with the emulator.
    response.once('close', () => {
      if (response.writableFinished) return;
      if (isWrite) upstreamAnswer?.resume();
      else outgoing.destroy();
    });
    if (Buffer.isBuffer(body)) outgoing.end(body);
    else body.pipe(outgoing);
  });
}

/** How a request takes its turn with the emulator: beside other plain writes, or alone. */
type WriteKind = 'plain' | 'transaction';

function writeKind(amzTarget: string | string[] | undefined): WriteKind | undefined {
  // A PartiQL transaction is applied as TransactWriteItems is: alone.
  if (amzTarget === TRANSACT_WRITE_ITEMS_TARGET || amzTarget === EXECUTE_TRANSACTION_TARGET)
    return 'transaction';
  if (typeof amzTarget === 'string' && PLAIN_WRITE_TARGETS.has(amzTarget)) return 'plain';
  return undefined;
}

/** Turns with the emulator, given in arrival order: plain writes together, each transaction alone. */
interface WriteTurns {
  /** Runs `task` once its turn comes and holds the turn until the task settles. */
  run(kind: WriteKind, task: () => Promise<void>): Promise<void>;
}

/**
 * A first-come first-served readers–writer lock. A plain write starts at once when nothing is queued and no
 * transaction runs; a transaction starts once no write of either kind runs. Whoever arrives while another waits
 * queues behind it, so a transaction waiting for plain writes keeps later plain writes from starting, and a run of
 * plain writes cannot keep a transaction waiting forever.
 */
function createWriteTurns(): WriteTurns {
  let plainRunning = 0;
  let transactionRunning = false;
  const waiting: { readonly kind: WriteKind; readonly start: () => void }[] = [];

  const canStart = (kind: WriteKind): boolean =>
    !transactionRunning && (kind === 'plain' || plainRunning === 0);
  const take = (kind: WriteKind): void => {
    if (kind === 'plain') plainRunning += 1;
    else transactionRunning = true;
  };
  const release = (kind: WriteKind): void => {
    if (kind === 'plain') plainRunning -= 1;
    else transactionRunning = false;
    for (let next = waiting[0]; next !== undefined && canStart(next.kind); next = waiting[0]) {
      waiting.shift();
      take(next.kind);
      next.start();
    }
  };
  const acquire = (kind: WriteKind): Promise<void> => {
    if (waiting.length === 0 && canStart(kind)) {
      take(kind);
      return Promise.resolve();
    }
    return new Promise<void>((start) => {
      waiting.push({ kind, start });
    });
  };

  return {
    run: async (kind, task) => {
      await acquire(kind);
      try {
        await task();
      } finally {
        release(kind);
      }
    },
  };
}

/** Turns per table: a task runs once every earlier task on one of its tables has settled. */
interface TableTurns {
  run(tables: readonly string[], task: () => Promise<void>): Promise<void>;
}

/** {@link TableTurns} as a chain of settled tasks per table, in arrival order. */
function createTableTurns(): TableTurns {
  const last = new Map<string, Promise<void>>();
  return {
    run: async (tables, task) => {
      const earlier = tables.map((table) => last.get(table) ?? Promise.resolve());
      const done = Promise.all(earlier).then(task);
      const settled = done.then(
        () => {},
        () => {},
      );
      for (const table of tables) last.set(table, settled);
      try {
        await done;
      } finally {
        for (const table of tables) if (last.get(table) === settled) last.delete(table);
      }
    },
  };
}

/**
 * The tables a plain write's body names (`TableName`, or BatchWriteItem's `RequestItems`); none for a body that is
 * not such JSON (a PartiQL statement names its table in text), which then runs beside the others.
 */
export function writtenTables(body: Buffer): string[] {
  try {
    const parsed: unknown = JSON.parse(body.toString('utf8'));
    if (typeof parsed !== 'object' || parsed === null) return [];
    const { TableName, RequestItems } = parsed as { TableName?: unknown; RequestItems?: unknown };
    if (typeof TableName === 'string') return [TableName];
    if (typeof RequestItems === 'object' && RequestItems !== null) return Object.keys(RequestItems).sort();
    return [];
  } catch {
    return [];
  }
}

/** Reads a write's whole body; resolves `'TOO_LARGE'`, with the rest discarded, past {@link MAX_WRITE_BODY_BYTES}. */
function readBody(request: IncomingMessage): Promise<Buffer | 'TOO_LARGE'> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const collect = (chunk: Buffer): void => {
      size += chunk.length;
      if (size <= MAX_WRITE_BODY_BYTES) {
        chunks.push(chunk);
        return;
      }
      chunks.length = 0;
      request.off('data', collect);
      request.resume();
      resolve('TOO_LARGE');
    };
    request.on('data', collect);
    request.once('end', () => resolve(Buffer.concat(chunks)));
    request.once('error', reject);
    request.once('close', () => {
      if (!request.complete) reject(new Error('the client hung up before sending the whole request'));
    });
  });
}
