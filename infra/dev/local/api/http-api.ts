/**
 * The REST API on a loopback port: each request on a template route becomes an API Gateway proxy event for
 * that route's function, and the function's proxy result becomes the response.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { userInfo } from 'node:os';
import type { Invocation } from '../host/local-function.ts';
import { LocalRuntimeError } from '../local-runtime-error.ts';
import type { RouteDefinition } from '../template/read-routes.ts';
import {
  type ApiResponse,
  badGateway,
  fromProxyResult,
  jsonResponse,
  requestTarget,
  toProxyEvent,
} from './api-gateway-event.ts';
import { matchRoute } from './api-routes.ts';

/** API Gateway's payload limit: 10 MB. */
export const MAX_BODY_BYTES = 10 * 1024 * 1024;

/** A route as the API serves it: the template's route, and what differs per stack. */
export interface ServedRoute extends RouteDefinition {
  /** The account in this route's events' request context. @default {@link HttpApiOptions.accountId} */
  readonly accountId?: string;
}

/** Options of {@link startHttpApi}. */
export interface HttpApiOptions {
  /** Every route, of every stack: one port serves them all. */
  readonly routes: readonly ServedRoute[];
  /** Invokes a route's function (by local name) with a proxy event. */
  readonly invoke: (functionName: string, event: unknown) => Promise<Invocation>;
  /** Port on 127.0.0.1; 0 picks a free one. @default 3000 */
  readonly port?: number;
  /** @default 'local' */
  readonly stage?: string;
  /** The account in the events' request context, for a route that names none. @default '123456789012' */
  readonly accountId?: string;
  /**
   * Who calls a route that requires authorisation (AWS_IAM and the like), which the local API does not enforce:
   * the event's `requestContext.identity.user`. @default the operating-system user
   */
  readonly localUser?: string;
  readonly log?: (line: string) => void;
}

/** A running local API. */
export interface HttpApi {
  /** Base URL, e.g. `http://127.0.0.1:3000`. */
  readonly url: string;
  readonly port: number;
  /** Stops accepting requests and resolves when the open ones are answered. */
  close(): Promise<void>;
}

const DEFAULTS = { port: 3000, host: '127.0.0.1', stage: 'local', closeGraceMs: 5_000 } as const;

/**
 * Serves the routes on 127.0.0.1 as API Gateway would: unknown route → 404, wrong method → 405, body over
 * 10 MB → 413, handler error or malformed result → 502 `{"message":"Internal server error"}`.
 * @example
 * const api = await startHttpApi({ routes: app.routes, invoke: (name, event) => functions[name].invoke(event) });
 */
export async function startHttpApi(options: HttpApiOptions): Promise<HttpApi> {
  const stage = options.stage ?? DEFAULTS.stage;
  const log = options.log ?? (() => {});
  let port = options.port ?? DEFAULTS.port;
  const localUser = options.localUser ?? operatingSystemUser();
  const authorised = options.routes.filter((route) => route.authorization !== undefined);
  if (authorised.length > 0) {
    const kinds = [...new Set(authorised.map((route) => route.authorization))].join(', ');
    log(
      `[api] ${kinds} authorisation is not enforced locally: ${authorised.length} route(s) ` +
        `(${[...new Set(authorised.map((route) => route.path))].join(', ')}) answer unsigned requests, ` +
        `as the local user ${localUser}`,
    );
  }
  const server = createServer((request, response) => {
    void handle(request, port).then(
      (answer) => send(response, answer),
      (error: unknown) => {
        // A client that hung up before its body arrived has nobody left to answer, and failed nothing here.
        if (request.readableAborted) return;
        // The path only: a query string may carry a signature or a token (a presigned URL's X-Amz-Signature).
        log(`[api] ${request.method} ${(request.url ?? '').split('?')[0]}: ${String(error)}`);
        send(response, badGateway());
      },
    );
  });

  async function handle(request: IncomingMessage, listeningOn: number): Promise<ApiResponse> {
    // Read as sent, not resolved against a base URL: `//x/orders` is a path, and a malformed target is the
    // client's error (400), not the server's.
    const target = requestTarget(request.url ?? '/');
    if (target === undefined) return jsonResponse(400, { error: 'the request target is not a path' });
    const method = request.method ?? 'GET';
    const match = matchRoute(options.routes, method, target.path);
    if (match.kind === 'not-found')
      return jsonResponse(404, { error: `no route for ${method} ${target.path}` });
    if (match.kind === 'method-not-allowed') {
      return jsonResponse(
        405,
        { error: `${method} is not allowed on ${target.path}` },
        { allow: match.allowed.join(', ') },
      );
    }
    const body = await readBody(request, MAX_BODY_BYTES);
    if (body === undefined) {
      return jsonResponse(413, {
        error: `request body exceeds ${MAX_BODY_BYTES} bytes (the API Gateway limit)`,
      });
    }
    const requestId = randomUUID();
    const event = toProxyEvent(
      {
        method,
        path: target.path,
        query: target.query,
        rawHeaders: request.rawHeaders,
        body,
        sourceIp: request.socket.remoteAddress ?? '127.0.0.1',
      },
      {
        resource: match.route.path,
        pathParameters: match.pathParameters,
        requestId,
        stage,
        accountId: match.route.accountId ?? options.accountId ?? '123456789012',
        apiId: 'local',
        domainName: `localhost:${listeningOn}`,
        now: new Date(),
        ...(match.route.authorization === undefined ? {} : { user: localUser }),
      },
    );
    const invocation = await options.invoke(match.route.functionName, event);
    if (!invocation.ok) {
      log(
        `[api] ${method} ${target.path} → ${match.route.functionName} failed: ${describe(invocation.error)}`,
      );
      return badGateway();
    }
    return fromProxyResult(invocation.result);
  }

  await new Promise<void>((resolveListen, reject) => {
    server.once('error', (cause) =>
      reject(
        new LocalRuntimeError(
          'API_START_FAILED',
          `cannot listen on ${DEFAULTS.host}:${port} (set PORT to another port)`,
          {
            cause,
          },
        ),
      ),
    );
    server.listen(port, DEFAULTS.host, () => resolveListen());
  });
  port = (server.address() as AddressInfo).port;
  let closing: Promise<void> | undefined;
  return {
    url: `http://${DEFAULTS.host}:${port}`,
    port,
    close: () => {
      closing ??= new Promise<void>((resolveClose) => {
        server.close(() => resolveClose());
        // Idle keep-alive sockets would hold close() open; busy ones get a grace period to finish.
        server.closeIdleConnections();
        setTimeout(() => server.closeAllConnections(), DEFAULTS.closeGraceMs).unref();
      });
      return closing;
    },
  };
}

/** The request body; `undefined` when it is larger than `limit`. */
function readBody(request: IncomingMessage, limit: number): Promise<Buffer | undefined> {
  return new Promise((resolveBody, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    // Past the limit the rest is drained, not kept: destroying the request would also lose the 413 answer.
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= limit) chunks.push(chunk);
    });
    request.once('end', () => resolveBody(size > limit ? undefined : Buffer.concat(chunks)));
    request.once('error', reject);
  });
}

function send(response: ServerResponse, answer: ApiResponse): void {
  if (response.headersSent) return;
  for (const [name, values] of Object.entries(answer.headers)) response.setHeader(name, [...values]);
  response.setHeader('content-length', answer.body.length);
  response.statusCode = answer.statusCode;
  response.end(answer.body);
}

/** The user this process runs as; `unknown` where the system has no name for it (a container without one). */
function operatingSystemUser(): string {
  try {
    return userInfo().username || 'unknown';
  } catch {
    return 'unknown';
  }
}

function describe(error: Error): string {
  return error.stack ?? `${error.name}: ${error.message}`;
}
