/**
 * An HTTP forwarder in front of an emulator that sends it DynamoDB transactions one at a time. moto applies a
 * TransactWriteItems to deep copies of the tables it touches and puts the copies back when the transaction is
 * cancelled, and its server answers requests on several threads: two transactions at once lose each other's
 * writes (an inbox row written beside a cancelled transaction disappears, so its message is applied twice), and
 * on a table of a few thousand items they fail with HTTP 500 "dictionary changed size during iteration".
 * DynamoDB isolates transactions; sending them one after another is how an emulator gets the same outcome.
 * Every other request passes straight through, streamed both ways, with its headers (Host included), status
 * and body bytes as they are.
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
import { LocalRuntimeError } from './local-runtime-error.ts';

/** The `X-Amz-Target` of the requests that are sent one at a time. */
export const TRANSACT_WRITE_ITEMS_TARGET = 'DynamoDB_20120810.TransactWriteItems';

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
  // Each transaction waits for the previous one's answer: a chain of promises is a FIFO queue.
  let last: Promise<unknown> = Promise.resolve();
  const oneAtATime = (task: () => Promise<void>): Promise<void> => {
    const turn = last.then(task);
    last = turn.catch(() => {});
    return turn;
  };

  const server = createServer((request, response) => {
    if (request.headers['x-amz-target'] !== TRANSACT_WRITE_ITEMS_TARGET) {
      void forward({ request, response, target, body: request });
      return;
    }
    // The body is read before the transaction queues, so a transaction holds the emulator only while the
    // emulator works on it. DynamoDB caps a transaction's request at 4 MB.
    let clientGone = false;
    response.once('close', () => {
      clientGone = true;
    });
    void readBody(request).then(
      (body) =>
        oneAtATime(async () => {
          // A client that gave up while queued has nobody to answer; its retry is queued on its own.
          if (clientGone) return;
          await forward({ request, response, target, body });
        }),
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

/** Sends `request` to the emulator and its answer back; resolves when the exchange is over, however it ended. */
function forward(exchange: Exchange): Promise<void> {
  const { request, response, target, body } = exchange;
  return new Promise<void>((resolve) => {
    response.once('close', () => resolve());
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
        response.writeHead(answer.statusCode ?? 502, answer.statusMessage, answer.rawHeaders);
        answer.pipe(response);
        answer.once('error', () => response.destroy());
      },
    );
    outgoing.once('error', (error) => {
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
    // A client that hangs up ends the exchange upstream too.
    response.once('close', () => {
      if (!response.writableFinished) outgoing.destroy();
    });
    if (Buffer.isBuffer(body)) outgoing.end(body);
    else body.pipe(outgoing);
  });
}

function readBody(request: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.once('end', () => resolve(Buffer.concat(chunks)));
    request.once('error', reject);
    request.once('close', () => {
      if (!request.complete) reject(new Error('the client hung up before sending the whole request'));
    });
  });
}
