/**
 * The embedded backend's HTTP endpoint: one server on 127.0.0.1 that answers the AWS JSON protocols
 * (`X-Amz-Target: <service>.<Operation>`, `application/x-amz-json-1.0`) of the services it is given, and
 * writes errors the way each service does, so the SDK raises its named exceptions.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { escapeXml, type QueryService } from './cloudformation-service.ts';
import { WireError } from './wire-error.ts';

/** What an operation gets besides its input. */
export interface OperationContext {
  /** Aborted when the client goes away or the server stops (a long poll then ends without messages). */
  readonly signal: AbortSignal;
}

/** One operation: the request's JSON body in, the response's JSON body out. */
export type Operation = (input: Record<string, unknown>, context: OperationContext) => unknown;

/** A service the server answers for. */
export interface WireService {
  /** The `X-Amz-Target` prefix, e.g. `DynamoDB_20120810`. */
  readonly target: string;
  /** The namespace of its error shapes, e.g. `com.amazonaws.dynamodb.v20120810`. */
  readonly errorNamespace: string;
  /** SQS: errors also carry `x-amzn-query-error`, from which the SDK reads the error code. */
  readonly queryCompatible?: boolean;
  readonly operations: Readonly<Record<string, Operation>>;
  /** Turns an error an operation threw into the service's answer; undefined for an internal error. */
  readonly toWireError: (error: unknown) => WireError | undefined;
}

/** A running server. */
export interface WireServer {
  /** `http://127.0.0.1:<port>`. */
  readonly endpoint: string;
  /** Stops accepting requests, ends long polls and closes every connection. */
  close(): Promise<void>;
}

/** Options of {@link startWireServer}. */
export interface WireServerOptions {
  readonly services: readonly WireService[];
  /** Services of the query protocol (form-encoded `Action=…&Version=…`, XML answers): CloudFormation. */
  readonly queryServices?: readonly QueryService[];
  /** Receives internal errors (a bug here, not a refused request). */
  readonly log: (line: string) => void;
  /** @default 0: a free port */
  readonly port?: number;
  /**
   * Called after an operation ran (or failed) and before it is answered: a data folder writes what the request
   * changed here, so whatever was acknowledged is on disk. If it throws, the request is answered 500.
   */
  readonly beforeAnswer?: (target: string, input: Record<string, unknown>) => void;
}

// Loopback only: the endpoint accepts any credentials, so it must not be reachable from the network.
const HOST = '127.0.0.1';
const CONTENT_TYPE = 'application/x-amz-json-1.0';

/**
 * Listens on a free loopback port and answers the services' operations.
 * @example
 * const server = await startWireServer({ services: [dynamodb, streams, sqs], log: console.error });
 * new DynamoDBClient({ endpoint: server.endpoint, region: 'us-east-1', credentials });
 */
export async function startWireServer(options: WireServerOptions): Promise<WireServer> {
  const services = new Map(options.services.map((service) => [service.target, service]));
  const queryServices = new Map((options.queryServices ?? []).map((service) => [service.version, service]));
  const stopping = new AbortController();
  const server = createServer((request, response) => {
    handle(request, response, {
      services,
      queryServices,
      log: options.log,
      stopping: stopping.signal,
      beforeAnswer: options.beforeAnswer,
    }).catch((error: unknown) => {
      options.log(`[embedded] could not answer a request: ${String(error)}`);
      if (!response.headersSent) response.writeHead(500);
      response.end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, HOST, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  let closing: Promise<void> | undefined;
  return {
    endpoint: `http://${HOST}:${port}`,
    close() {
      closing ??= new Promise<void>((resolve) => {
        stopping.abort();
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return closing;
    },
  };
}

interface Handling {
  readonly services: ReadonlyMap<string, WireService>;
  readonly queryServices: ReadonlyMap<string, QueryService>;
  readonly log: (line: string) => void;
  readonly stopping: AbortSignal;
  readonly beforeAnswer: ((target: string, input: Record<string, unknown>) => void) | undefined;
}

async function handle(request: IncomingMessage, response: ServerResponse, handling: Handling): Promise<void> {
  const requestId = randomUUID();
  const body = await readBody(request);
  const target = request.headers['x-amz-target'];
  if (request.method === 'POST' && isFormEncoded(request)) {
    answerQuery(response, { requestId, body, services: handling.queryServices, log: handling.log });
    return;
  }
  if (request.method !== 'POST' || typeof target !== 'string') {
    // A plain GET is a health check (the runtime's "does it answer HTTP?").
    send(response, {
      status: 200,
      requestId,
      body: { status: 'running', services: [...handling.services.keys()] },
    });
    return;
  }
  const [prefix = '', operationName = ''] = target.split('.');
  const service = handling.services.get(prefix);
  const operation = service?.operations[operationName];
  if (service === undefined || operation === undefined) {
    send(response, {
      status: 400,
      requestId,
      body: {
        __type: 'UnknownOperationException',
        message: `The embedded backend does not implement ${target}`,
      },
    });
    return;
  }
  const gone = new AbortController();
  response.on('close', () => {
    if (!response.writableFinished) gone.abort();
  });
  const signal = AbortSignal.any([gone.signal, handling.stopping]);
  let input: Record<string, unknown> = {};
  try {
    input = parseInput(body);
    const output = await operation(input, { signal });
    handling.beforeAnswer?.(target, input);
    send(response, { status: 200, requestId, body: output ?? {} });
  } catch (error) {
    try {
      handling.beforeAnswer?.(target, input);
    } catch (persisting) {
      handling.log(`[embedded] could not keep the changes of ${target}: ${String(persisting)}`);
      sendError(response, { service, requestId, error: internalError(persisting) });
      return;
    }
    const wire = error instanceof WireError ? error : service.toWireError(error);
    if (wire === undefined) {
      handling.log(
        `[embedded] ${target} failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`,
      );
    }
    sendError(response, { service, requestId, error: wire ?? internalError(error) });
  }
}

function isFormEncoded(request: IncomingMessage): boolean {
  return (request.headers['content-type'] ?? '').startsWith('application/x-www-form-urlencoded');
}

/** Answers a query-protocol request (CloudFormation) in XML, errors in its `ErrorResponse` shape. */
function answerQuery(
  response: ServerResponse,
  request: {
    readonly requestId: string;
    readonly body: string;
    readonly services: ReadonlyMap<string, QueryService>;
    readonly log: (line: string) => void;
  },
): void {
  const params = new URLSearchParams(request.body);
  const action = params.get('Action') ?? '';
  const version = params.get('Version') ?? '';
  const service = request.services.get(version);
  const operation = service?.operations[action];
  const metadata = `<ResponseMetadata><RequestId>${request.requestId}</RequestId></ResponseMetadata>`;
  const sendXml = (status: number, xml: string): void => {
    if (response.destroyed) return;
    const payload = `<?xml version="1.0" encoding="UTF-8"?>\n${xml}`;
    response.writeHead(status, {
      'content-type': 'text/xml',
      'content-length': Buffer.byteLength(payload),
      'x-amzn-requestid': request.requestId,
    });
    response.end(payload);
  };
  const sendFault = (status: number, code: string, message: string): void =>
    sendXml(
      status,
      `<ErrorResponse><Error><Type>${status >= 500 ? 'Receiver' : 'Sender'}</Type><Code>${code}</Code>` +
        `<Message>${escapeXml(message)}</Message></Error><RequestId>${request.requestId}</RequestId></ErrorResponse>`,
    );
  if (service === undefined || operation === undefined) {
    sendFault(
      400,
      'InvalidAction',
      `The embedded backend does not implement ${action || 'this action'} (version ${version || 'none'}); ` +
        'it answers CloudFormation reads (ListStacks, DescribeStacks, GetTemplate, ListStackResources, DescribeStackResources)',
    );
    return;
  }
  try {
    const result = operation(params);
    sendXml(
      200,
      `<${action}Response xmlns="${service.namespace}"><${action}Result>${result}</${action}Result>${metadata}</${action}Response>`,
    );
  } catch (error) {
    if (error instanceof WireError) {
      sendFault(error.status, error.type, error.message);
      return;
    }
    request.log(
      `[embedded] ${action} failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`,
    );
    sendFault(500, 'InternalFailure', `The embedded backend failed: ${String(error)}`);
  }
}

function parseInput(body: string): Record<string, unknown> {
  if (body.trim() === '') return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch (cause) {
    throw new WireError('SerializationException', 'The request body is not valid JSON', { cause });
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new WireError('SerializationException', 'The request body must be a JSON object');
  }
  return parsed as Record<string, unknown>;
}

function internalError(cause: unknown): WireError {
  return new WireError('InternalFailure', `The embedded backend failed: ${String(cause)}`, {
    status: 500,
    cause,
  });
}

function sendError(
  response: ServerResponse,
  answer: { readonly service: WireService; readonly requestId: string; readonly error: WireError },
): void {
  const { service, error, requestId } = answer;
  // DynamoDB reports request validation in coral's namespace; the SDK reads the name after `#` either way.
  const namespace =
    error.type === 'ValidationException' && !service.queryCompatible
      ? 'com.amazon.coral.validate'
      : service.errorNamespace;
  send(response, {
    status: error.status,
    requestId,
    body: { __type: `${namespace}#${error.type}`, message: error.message, ...error.fields },
    headers: service.queryCompatible
      ? {
          'x-amzn-query-error': `${error.queryCode ?? error.type};${error.status >= 500 ? 'Receiver' : 'Sender'}`,
        }
      : {},
  });
}

function send(
  response: ServerResponse,
  answer: {
    readonly status: number;
    readonly requestId: string;
    readonly body: unknown;
    readonly headers?: Readonly<Record<string, string>>;
  },
): void {
  if (response.destroyed) return;
  const payload = JSON.stringify(answer.body);
  response.writeHead(answer.status, {
    'content-type': CONTENT_TYPE,
    'content-length': Buffer.byteLength(payload),
    'x-amzn-requestid': answer.requestId,
    ...answer.headers,
  });
  response.end(payload);
}

async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}
