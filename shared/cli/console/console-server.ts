/**
 * The console's web server: on 127.0.0.1 only, its page and its JSON API behind the one-time sign-in
 * (`ConsoleAuth`), a bulk job's progress streamed to the page (server-sent events). Everything it serves is its
 * own: the page, its script and its style sheet come from the package, never from another host.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { monotonicFactory } from 'ulid';
import { ConfigError } from '../../errors.ts';
import { isActive, JobRegistry, type JobSnapshot } from './bulk-jobs.ts';
import { ConsoleApi, failure } from './console-api.ts';
import type { ConsoleAssets } from './console-assets.ts';
import { ConsoleAuth, type ConsoleSession, type Refusal } from './console-auth.ts';
import type { ConsoleContext } from './console-context.ts';
import { consoleJson } from './console-json.ts';

/** The only interface the console listens on. */
export const CONSOLE_HOST = '127.0.0.1';

/** The page paths: each view has its own URL, served the same page, which shows the view the path names. */
const PAGE_PATHS: readonly RegExp[] = [
  /^\/$/,
  /^\/failures$/,
  /^\/messages$/,
  /^\/messages\/[^/]+$/,
  /^\/aggregates\/[^/]+$/,
  /^\/dead-letters$/,
  /^\/audit$/,
];

/** Bytes of a request body read at most: a reason and a few fields. */
const MAX_BODY_BYTES = 64 * 1024;

/** How often a watched job's progress is sent at most (a job of ten thousand steps sends a few dozen events). */
const PROGRESS_EVERY_MS = 250;

/**
 * Every answer's headers: nothing cached, nothing framed or sniffed, no referrer (the sign-in URL never leaks),
 * and a content security policy that lets the page load and call nothing but the console itself.
 */
const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'cache-control': 'no-store',
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
    "base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  'referrer-policy': 'no-referrer',
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
};

/** Options of {@link startConsoleServer}. */
export interface ConsoleServerOptions {
  readonly context: ConsoleContext;
  readonly assets: ConsoleAssets;
  /** The port on 127.0.0.1; 0 picks a free one. */
  readonly port: number;
  /** @default a new one, random */
  readonly newSecret?: () => string;
}

/** A console that is serving. */
export interface RunningConsole {
  /** The sign-in URL to print: `http://127.0.0.1:<port>/?token=<one-time token>`. */
  readonly url: string;
  /** `http://127.0.0.1:<port>`. */
  readonly origin: string;
  readonly port: number;
  readonly jobs: JobRegistry;
  /** Stops the jobs after their current step, then the server. */
  close(): Promise<void>;
}

/**
 * Starts the console's server on 127.0.0.1:`port` (never another interface). Throws a `ConfigError` when the port
 * is taken.
 * @example
 * const running = await startConsoleServer({ context, assets, port: 4100 });
 * console.log(running.url);
 */
export async function startConsoleServer(options: ConsoleServerOptions): Promise<RunningConsole> {
  const { context, assets } = options;
  const nextId = monotonicFactory();
  const jobs = new JobRegistry({ clock: context.deps.clock, newId: () => nextId() });
  const api = new ConsoleApi(context, jobs);
  const streams = new Set<ServerResponse>();
  let auth: ConsoleAuth | undefined;
  const server = createServer((request, response) => {
    handle({ request, response, auth, api, jobs, assets, context, streams }).catch((error: unknown) => {
      if (!response.headersSent) send(response, failure(error).status, consoleJson(failure(error).body));
      else response.destroy();
    });
  });
  const port = await listen(server, options.port);
  auth = new ConsoleAuth({
    port,
    ...(options.newSecret === undefined ? {} : { newSecret: options.newSecret }),
  });
  const origin = `http://${CONSOLE_HOST}:${port}`;
  return {
    url: `${origin}/?token=${auth.loginToken}`,
    origin,
    port,
    jobs,
    close: async () => {
      await jobs.stopAll();
      for (const stream of streams) stream.end();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}

function listen(server: Server, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) => {
      reject(
        error.code === 'EADDRINUSE'
          ? new ConfigError(
              `port ${port} of ${CONSOLE_HOST} is taken: give another with --port (0 picks a free one)`,
            )
          : error,
      );
    });
    server.listen({ port, host: CONSOLE_HOST }, () => resolve((server.address() as AddressInfo).port));
  });
}

interface Exchange {
  readonly request: IncomingMessage;
  readonly response: ServerResponse;
  readonly auth: ConsoleAuth | undefined;
  readonly api: ConsoleApi;
  readonly jobs: JobRegistry;
  readonly assets: ConsoleAssets;
  readonly context: ConsoleContext;
  readonly streams: Set<ServerResponse>;
}

async function handle(exchange: Exchange): Promise<void> {
  const { request, response, auth } = exchange;
  if (auth === undefined) {
    send(response, 503, { body: 'starting', type: 'text/plain; charset=utf-8' });
    return;
  }
  const url = new URL(request.url ?? '/', 'http://console.invalid');
  const method = request.method ?? 'GET';
  const token = url.searchParams.get('token');
  if (method === 'GET' && token !== null) {
    const signedIn = auth.signIn(request, token);
    if ('status' in signedIn) {
      refuse(response, signedIn, { page: true });
      return;
    }
    url.searchParams.delete('token');
    response.writeHead(303, {
      ...SECURITY_HEADERS,
      'set-cookie': signedIn.setCookie,
      location: `${url.pathname}${url.search}`,
    });
    response.end();
    return;
  }
  const isPage = method === 'GET' && PAGE_PATHS.some((path) => path.test(url.pathname));
  const session = method === 'POST' ? auth.checkAction(request) : auth.checkRead(request);
  if ('status' in session) {
    refuse(response, session, { page: isPage, recheck: isPage ? url : undefined });
    return;
  }
  if (isPage) {
    if (url.searchParams.has(RECHECK)) {
      url.searchParams.delete(RECHECK);
      response.writeHead(303, { ...SECURITY_HEADERS, location: `${url.pathname}${url.search}` });
      response.end();
      return;
    }
    send(response, 200, { body: pageHtml(exchange.context, session), type: 'text/html; charset=utf-8' });
    return;
  }
  if (method === 'GET' && url.pathname === '/assets/console.js') {
    send(response, 200, { body: exchange.assets.script, type: 'text/javascript; charset=utf-8' });
    return;
  }
  if (method === 'GET' && url.pathname === '/assets/console.css') {
    send(response, 200, { body: exchange.assets.style, type: 'text/css; charset=utf-8' });
    return;
  }
  const events = /^\/api\/jobs\/([^/]+)\/events$/.exec(url.pathname);
  if (method === 'GET' && events !== null) {
    streamJob(exchange, decodeURIComponent(events[1] ?? ''));
    return;
  }
  if (url.pathname.startsWith('/api/')) {
    const read = method === 'POST' ? await readJson(request) : { body: {} };
    if (!('body' in read)) {
      send(response, read.status, consoleJson({ error: { code: 'BAD_REQUEST', message: read.message } }));
      return;
    }
    const answer = await exchange.api.handle({
      method,
      path: url.pathname.slice('/api'.length),
      query: url.searchParams,
      body: read.body,
    });
    if (answer !== undefined) {
      send(response, answer.status, consoleJson(answer.body));
      return;
    }
  }
  send(response, 404, consoleJson({ error: { code: 'NOT_FOUND', message: `no ${method} ${url.pathname}` } }));
}

/** The query parameter a page refused for want of its cookie adds when it asks again from the console's own page. */
const RECHECK = 'recheck';

/**
 * A refusal: JSON for the API; for a page, a short HTML page saying what to do. A page opened from a link in
 * another site (a chat) comes without the SameSite=Strict cookie: that page asks once more from the console's own
 * origin, which the browser sends the cookie with.
 */
function refuse(
  response: ServerResponse,
  refusal: Refusal,
  how: { readonly page: boolean; readonly recheck?: URL | undefined },
): void {
  if (!how.page) {
    send(
      response,
      refusal.status,
      consoleJson({
        error: { code: refusal.status === 401 ? 'UNAUTHORIZED' : 'FORBIDDEN', message: refusal.reason },
      }),
    );
    return;
  }
  const again =
    refusal.status === 401 && how.recheck !== undefined && !how.recheck.searchParams.has(RECHECK)
      ? (() => {
          const url = new URL(how.recheck.href);
          url.searchParams.set(RECHECK, '1');
          return `${url.pathname}${url.search}`;
        })()
      : undefined;
  const html = [
    '<!doctype html><html lang="en"><head><meta charset="utf-8">',
    again === undefined ? '' : `<meta http-equiv="refresh" content="0; url=${escapeHtml(again)}">`,
    '<title>outbox console: sign in</title></head><body>',
    `<h1>${refusal.status === 401 ? 'Not signed in' : 'Refused'}</h1><p>${escapeHtml(refusal.reason)}</p>`,
    '</body></html>',
  ].join('');
  send(response, refusal.status, { body: html, type: 'text/html; charset=utf-8' });
}

/** The page: the console's own style sheet and script, and the session's CSRF token for its actions. */
function pageHtml(context: ConsoleContext, session: ConsoleSession): string {
  return [
    '<!doctype html><html lang="en"><head><meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    `<meta name="csrf-token" content="${escapeHtml(session.csrfToken)}">`,
    `<meta name="outbox-stack" content="${escapeHtml(context.stackName)}">`,
    `<title>outbox console · ${escapeHtml(context.stackName)}</title>`,
    '<link rel="stylesheet" href="/assets/console.css">',
    '<script type="module" src="/assets/console.js"></script>',
    '</head><body><div id="app"><p class="loading">Loading the console…</p></div></body></html>',
  ].join('');
}

/**
 * A job's snapshots as server-sent events: the current one at once, then each change (at most every
 * {@link PROGRESS_EVERY_MS}), until it ends.
 */
function streamJob(exchange: Exchange, jobId: string): void {
  const { response, jobs, streams, request } = exchange;
  const first = jobs.get(jobId);
  if (first === undefined) {
    send(
      response,
      404,
      consoleJson({ error: { code: 'NO_SUCH_JOB', message: `no job ${jobId} in this console` } }),
    );
    return;
  }
  response.writeHead(200, {
    ...SECURITY_HEADERS,
    'content-type': 'text/event-stream; charset=utf-8',
    connection: 'keep-alive',
  });
  streams.add(response);
  let pending: JobSnapshot | undefined;
  let timer: NodeJS.Timeout | undefined;
  const write = (snapshot: JobSnapshot) => {
    response.write(`data: ${JSON.stringify(snapshot)}\n\n`);
    if (!isActive(snapshot.state)) stop();
  };
  const flush = () => {
    timer = undefined;
    if (pending !== undefined) write(pending);
    pending = undefined;
  };
  const unwatch = jobs.watch(jobId, (snapshot) => {
    pending = snapshot;
    if (!isActive(snapshot.state)) {
      if (timer !== undefined) clearTimeout(timer);
      flush();
    } else timer ??= setTimeout(flush, PROGRESS_EVERY_MS);
  });
  const stop = () => {
    unwatch();
    if (timer !== undefined) clearTimeout(timer);
    streams.delete(response);
    response.end();
  };
  request.on('close', stop);
  write(first);
}

/** A POST's JSON body: an object, or why it cannot be one. */
async function readJson(
  request: IncomingMessage,
): Promise<
  { readonly body: Readonly<Record<string, unknown>> } | { readonly status: number; readonly message: string }
> {
  const type = request.headers['content-type'] ?? '';
  if (!type.startsWith('application/json')) {
    return { status: 415, message: 'an action sends JSON (content-type: application/json)' };
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES)
      return { status: 413, message: `a request body is at most ${MAX_BODY_BYTES} bytes` };
    chunks.push(chunk as Buffer);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  if (text.trim() === '') return { body: {} };
  try {
    const parsed: unknown = JSON.parse(text);
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
      return { status: 400, message: 'the body must be a JSON object' };
    }
    return { body: parsed as Record<string, unknown> };
  } catch {
    return { status: 400, message: 'the body is not JSON' };
  }
}

/** Answers with `body`, JSON unless `type` says otherwise, with the security headers. */
function send(
  response: ServerResponse,
  status: number,
  content: string | { readonly body: string; readonly type: string },
): void {
  const { body, type } =
    typeof content === 'string' ? { body: content, type: 'application/json; charset=utf-8' } : content;
  response.writeHead(status, { ...SECURITY_HEADERS, 'content-type': type });
  response.end(body);
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (character) => `&#${character.charCodeAt(0)};`);
}
