/**
 * Builds API Gateway REST (v1) proxy events from HTTP requests and turns proxy results back into HTTP
 * responses, the way API Gateway's Lambda proxy integration does. Pure.
 */
import type { APIGatewayProxyEvent } from 'aws-lambda';

/** An HTTP request as the local API received it. */
export interface ApiRequest {
  readonly method: string;
  /** Path without the query string, as sent. */
  readonly path: string;
  /** The raw query string, without `?`. */
  readonly query: string;
  /** Header names and values in the order received, names in their original case (Node's `rawHeaders`). */
  readonly rawHeaders: readonly string[];
  readonly body: Buffer;
  readonly sourceIp: string;
}

/** The API Gateway context the event is built in. */
export interface ApiEventContext {
  /** The route's path template, e.g. `/orders/{orderId}` (the event's `resource`). */
  readonly resource: string;
  readonly pathParameters: Readonly<Record<string, string>>;
  readonly requestId: string;
  readonly stage: string;
  readonly accountId: string;
  readonly apiId: string;
  readonly domainName: string;
  readonly now: Date;
  /**
   * The caller's principal as the identity's `user`, for a route that requires authorisation: the local API
   * enforces none, so the handler learns who calls from this (the local user) instead of an IAM ARN.
   * @default null, as for an open route
   */
  readonly user?: string;
}

/** An HTTP response to write. */
export interface ApiResponse {
  readonly statusCode: number;
  /** Header name → values (several for a repeated header). */
  readonly headers: Readonly<Record<string, readonly string[]>>;
  readonly body: Buffer;
}

/**
 * The path and raw query of an HTTP request target: an origin-form target (`/orders?x=1`) is split as sent, an
 * absolute-form one (`http://host/orders`) is read for its path; `undefined` for anything else (`*`, a
 * malformed URL). A path that starts with `//` stays a path: it does not name a host.
 * @example
 * requestTarget('/orders/o-1?dry=1'); // { path: '/orders/o-1', query: 'dry=1' }
 */
export function requestTarget(target: string): { readonly path: string; readonly query: string } | undefined {
  if (target.startsWith('/')) {
    const separator = target.indexOf('?');
    return separator < 0
      ? { path: target, query: '' }
      : { path: target.slice(0, separator), query: target.slice(separator + 1) };
  }
  if (!URL.canParse(target) || !/^https?:/i.test(target)) return undefined;
  const url = new URL(target);
  return { path: url.pathname, query: url.search.slice(1) };
}

/** The proxy event API Gateway would send for `request` on the matched route. */
export function toProxyEvent(request: ApiRequest, context: ApiEventContext): APIGatewayProxyEvent {
  const multiValueHeaders = groupPairs(pairs(request.rawHeaders));
  const multiValueQuery = groupPairs([...new URLSearchParams(request.query).entries()]);
  const userAgent = lastValue(multiValueHeaders, 'user-agent');
  return {
    resource: context.resource,
    path: request.path,
    httpMethod: request.method.toUpperCase(),
    // API Gateway keeps the last value of a repeated header or query parameter in the single-value maps.
    headers: lastValues(multiValueHeaders),
    multiValueHeaders,
    queryStringParameters: orNull(lastValues(multiValueQuery)),
    multiValueQueryStringParameters: orNull(multiValueQuery),
    pathParameters: orNull({ ...context.pathParameters }),
    stageVariables: null,
    // No binary media types are configured on the API, so bodies arrive as text.
    ...proxyBody(request.body),
    requestContext: {
      accountId: context.accountId,
      apiId: context.apiId,
      authorizer: undefined,
      domainName: context.domainName,
      domainPrefix: context.domainName.split('.')[0] ?? context.domainName,
      extendedRequestId: context.requestId,
      httpMethod: request.method.toUpperCase(),
      identity: {
        accessKey: null,
        accountId: null,
        apiKey: null,
        apiKeyId: null,
        caller: null,
        clientCert: null,
        cognitoAuthenticationProvider: null,
        cognitoAuthenticationType: null,
        cognitoIdentityId: null,
        cognitoIdentityPoolId: null,
        principalOrgId: null,
        sourceIp: request.sourceIp,
        user: context.user ?? null,
        userAgent: userAgent ?? null,
        userArn: null,
      },
      path: `/${context.stage}${request.path}`,
      protocol: 'HTTP/1.1',
      requestId: context.requestId,
      requestTime: requestTime(context.now),
      requestTimeEpoch: context.now.getTime(),
      resourceId: context.resource,
      resourcePath: context.resource,
      stage: context.stage,
    },
  };
}

/**
 * The HTTP response for a handler's proxy result, or API Gateway's 502 when the result is not a valid proxy
 * result (API Gateway answers "Internal server error" for a malformed Lambda response).
 */
export function fromProxyResult(result: unknown): ApiResponse {
  if (typeof result !== 'object' || result === null) return badGateway();
  const { statusCode, headers, multiValueHeaders, body, isBase64Encoded } = result as Record<string, unknown>;
  if (
    typeof statusCode !== 'number' ||
    !Number.isInteger(statusCode) ||
    statusCode < 100 ||
    statusCode > 599
  ) {
    return badGateway();
  }
  if (body !== undefined && body !== null && typeof body !== 'string') return badGateway();
  const merged = emptyMap<string[]>();
  for (const [name, values] of Object.entries(asRecord(multiValueHeaders))) {
    if (Array.isArray(values)) merged[name] = values.map(String);
  }
  for (const [name, value] of Object.entries(asRecord(headers))) {
    if (value !== undefined && value !== null) merged[name] = [String(value)];
  }
  const text = typeof body === 'string' ? body : '';
  return {
    statusCode,
    headers: merged,
    body: isBase64Encoded === true ? Buffer.from(text, 'base64') : Buffer.from(text, 'utf8'),
  };
}

/** A JSON response, e.g. `jsonResponse(404, { error: 'no route' })`. */
export function jsonResponse(
  statusCode: number,
  payload: unknown,
  extraHeaders: Record<string, string> = {},
): ApiResponse {
  const headers: Record<string, string[]> = { 'content-type': ['application/json'] };
  for (const [name, value] of Object.entries(extraHeaders)) headers[name] = [value];
  return { statusCode, headers, body: Buffer.from(JSON.stringify(payload), 'utf8') };
}

/** API Gateway's answer when the integration fails or returns a malformed result. */
export function badGateway(): ApiResponse {
  return jsonResponse(502, { message: 'Internal server error' });
}

/** `09/Apr/2015:12:34:56 +0000`, API Gateway's `requestTime` format. */
export function requestTime(now: Date): string {
  const months = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
  const two = (value: number): string => String(value).padStart(2, '0');
  return (
    `${two(now.getUTCDate())}/${months[now.getUTCMonth()]}/${now.getUTCFullYear()}:` +
    `${two(now.getUTCHours())}:${two(now.getUTCMinutes())}:${two(now.getUTCSeconds())} +0000`
  );
}

function pairs(flat: readonly string[]): [string, string][] {
  const result: [string, string][] = [];
  for (let index = 0; index + 1 < flat.length; index += 2)
    result.push([flat[index] ?? '', flat[index + 1] ?? '']);
  return result;
}

/**
 * The body as API Gateway hands it to a proxy integration: text when it is valid UTF-8, otherwise base64 with
 * `isBase64Encoded`, so the handler sees the bytes that were sent instead of replacement characters.
 */
function proxyBody(body: Buffer): { body: string | null; isBase64Encoded: boolean } {
  if (body.length === 0) return { body: null, isBase64Encoded: false };
  try {
    return { body: new TextDecoder('utf-8', { fatal: true }).decode(body), isBase64Encoded: false };
  } catch {
    return { body: body.toString('base64'), isBase64Encoded: true };
  }
}

/**
 * Request data becomes keys here, so every map has no prototype: a query parameter or header named
 * `__proto__`, `constructor` or `toString` is just a name, never an inherited member.
 */
function emptyMap<T>(): Record<string, T> {
  return Object.create(null) as Record<string, T>;
}

function groupPairs(entries: readonly [string, string][]): Record<string, string[]> {
  const grouped = emptyMap<string[]>();
  for (const [name, value] of entries) grouped[name] = [...(grouped[name] ?? []), value];
  return grouped;
}

function lastValues(grouped: Readonly<Record<string, readonly string[]>>): Record<string, string> {
  const single = emptyMap<string>();
  for (const [name, values] of Object.entries(grouped)) {
    const last = values[values.length - 1];
    if (last !== undefined) single[name] = last;
  }
  return single;
}

function lastValue(grouped: Readonly<Record<string, readonly string[]>>, name: string): string | undefined {
  const key = Object.keys(grouped).find((candidate) => candidate.toLowerCase() === name);
  const values = key === undefined ? undefined : grouped[key];
  return values?.[values.length - 1];
}

function orNull<T extends object>(value: T): T | null {
  return Object.keys(value).length === 0 ? null : value;
}

function asRecord(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : {};
}
