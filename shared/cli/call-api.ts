import { Hash } from '@smithy/hash-node';
import { SignatureV4 } from '@smithy/signature-v4';
import { ConfigError, describeError } from '../errors.ts';

/** The service name IAM-authorised REST APIs are signed for. */
export const EXECUTE_API_SERVICE = 'execute-api';

/** Credentials as the signer takes them: fixed ones, or a provider such as the default chain. */
export type SigningCredentials = ConstructorParameters<typeof SignatureV4>[0]['credentials'];

/** A request to an API, as `outbox call` takes it. */
export interface ApiCall {
  /** The API's base URL, stage included (`https://abc123.execute-api.eu-west-1.amazonaws.com/prod/`). */
  readonly baseUrl: string;
  /** `GET`, `POST`… */
  readonly method: string;
  /** The path below the base URL, with an optional query string (`/orders/o-1?verbose=1`). */
  readonly path: string;
  /** The body, sent byte for byte as given. */
  readonly body?: string;
  /** Extra headers (signed with the rest). */
  readonly headers?: Readonly<Record<string, string>>;
}

/** How to sign and send: the region to sign for, credentials, and the transport (a test's, or `fetch`). */
export interface ApiCallDeps {
  readonly region: string;
  readonly credentials: SigningCredentials;
  readonly fetch?: typeof fetch;
}

/** What the API answered. */
export interface ApiAnswer {
  readonly status: number;
  readonly statusText: string;
  /** API Gateway's request id (`x-amzn-requestid`), to find the request in the access log. */
  readonly requestId?: string;
  readonly contentType?: string;
  readonly body: string;
}

/** An `execute-api` host: `<api id>.execute-api.<region>.amazonaws.com` (or `.amazonaws.com.cn`). */
const EXECUTE_API_HOST = /^[a-z0-9]+\.execute-api\.([a-z0-9-]+)\.amazonaws\.com(\.cn)?$/;

/** The region a local API (`npm start`'s, on a loopback address) is signed for when AWS_REGION says none. */
export const LOCAL_SIGNING_REGION = 'us-east-1';

/** Dummy credentials for a local API when the machine has none: the local runtime checks no signature. */
export const LOCAL_SIGNING_CREDENTIALS = { accessKeyId: 'local', secretAccessKey: 'local' } as const;

/** Whether the API is served on this machine (127.0.0.1, localhost, ::1): the local runtime's. */
export function isLocalApi(baseUrl: string): boolean {
  const host = parseUrl(baseUrl).hostname.replace(/^\[|\]$/g, '');
  return host === 'localhost' || host === '::1' || /^127(\.\d{1,3}){3}$/.test(host);
}

/**
 * The region to sign for: the one in an `execute-api` URL, else `AWS_REGION` (or `AWS_DEFAULT_REGION`); for a
 * local API, {@link LOCAL_SIGNING_REGION} when neither is set. A {@link ConfigError} when nothing says.
 */
export function signingRegion(baseUrl: string, env: Readonly<Record<string, string | undefined>>): string {
  const fromUrl = EXECUTE_API_HOST.exec(parseUrl(baseUrl).hostname)?.[1];
  const region =
    fromUrl ??
    (env.AWS_REGION || env.AWS_DEFAULT_REGION || (isLocalApi(baseUrl) ? LOCAL_SIGNING_REGION : undefined));
  if (region === undefined || region === '') {
    throw new ConfigError(
      `no region to sign for: ${baseUrl} is not an execute-api URL, and AWS_REGION is not set`,
    );
  }
  return region;
}

/**
 * Sends `call` signed with SigV4 for `execute-api` and resolves with the answer, whatever its status.
 * @example
 * const answer = await callApi(
 *   { baseUrl: apiUrl, method: 'POST', path: '/orders', body: '{"customerId":"c-1","items":[]}' },
 *   { region: 'eu-west-1', credentials: defaultProvider() },
 * );
 */
export async function callApi(call: ApiCall, deps: ApiCallDeps): Promise<ApiAnswer> {
  const url = requestUrl(call.baseUrl, call.path);
  const signer = new SignatureV4({
    service: EXECUTE_API_SERVICE,
    region: deps.region,
    credentials: deps.credentials,
    sha256: Hash.bind(null, 'sha256'),
  });
  const headers: Record<string, string> = {
    // The host as the server sees it (with a port other than the scheme's default), which is signed.
    host: url.host,
    ...(call.body === undefined ? {} : { 'content-type': 'application/json' }),
    ...lowerCaseKeys(call.headers ?? {}),
  };
  let signed: Awaited<ReturnType<SignatureV4['sign']>>;
  try {
    signed = await signer.sign({
      method: call.method.toUpperCase(),
      protocol: url.protocol,
      hostname: url.hostname,
      ...(url.port === '' ? {} : { port: Number(url.port) }),
      path: url.pathname,
      query: queryOf(url),
      headers,
      ...(call.body === undefined ? {} : { body: call.body }),
    });
  } catch (cause) {
    throw new ConfigError(`cannot sign the request: no usable AWS credentials (${describeError(cause)})`, {
      cause,
    });
  }
  // fetch sets Host itself, from the same URL.
  const { host: _host, ...sent } = signed.headers;
  const response = await (deps.fetch ?? fetch)(url, {
    method: call.method.toUpperCase(),
    headers: sent,
    ...(call.body === undefined ? {} : { body: call.body }),
  });
  const requestId = response.headers.get('x-amzn-requestid') ?? undefined;
  const contentType = response.headers.get('content-type') ?? undefined;
  return {
    status: response.status,
    statusText: response.statusText,
    ...(requestId === undefined ? {} : { requestId }),
    ...(contentType === undefined ? {} : { contentType }),
    body: await response.text(),
  };
}

/** The request's URL: the base URL's path (the stage) followed by `path`, as given. */
export function requestUrl(baseUrl: string, path: string): URL {
  const base = parseUrl(baseUrl);
  if (!path.startsWith('/')) throw new ConfigError(`the path must start with /, got ${path}`);
  const [pathname = '', search] = splitOnce(path, '?');
  const url = new URL(base.href);
  url.pathname = `${base.pathname.replace(/\/+$/, '')}${pathname}`;
  url.search = search === undefined ? '' : `?${search}`;
  return url;
}

function parseUrl(value: string): URL {
  let url: URL;
  try {
    url = new URL(value);
  } catch (cause) {
    throw new ConfigError(`not a URL: ${value}`, { cause });
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new ConfigError(`the API URL must be http(s), got ${value}`);
  }
  return url;
}

/** The query as the signer takes it: each name with its value, or its values when repeated. */
function queryOf(url: URL): Record<string, string | string[]> {
  const query: Record<string, string | string[]> = {};
  for (const name of new Set(url.searchParams.keys())) {
    const values = url.searchParams.getAll(name);
    query[name] = values.length === 1 ? (values[0] ?? '') : values;
  }
  return query;
}

function lowerCaseKeys(headers: Readonly<Record<string, string>>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value]));
}

function splitOnce(text: string, separator: string): [string, string | undefined] {
  const at = text.indexOf(separator);
  return at === -1 ? [text, undefined] : [text.slice(0, at), text.slice(at + 1)];
}
