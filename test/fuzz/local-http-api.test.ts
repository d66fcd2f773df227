import { connect } from 'node:net';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_BODY_BYTES } from '../../infra/dev/local/api/http-api.ts';
import { type LocalRuntime, startLocalRuntime } from '../../infra/dev/local/host/runtime.ts';
import { contentTypeValue, jsonText, ODD_KEYS, rawBytes } from './adversarial-input.ts';
import { fuzzParameters, fuzzTimeoutMs } from './fuzz-runs.ts';
import { takePrototypePollution } from './prototype-pollution.ts';

const RUNS = fuzzParameters(100);
/**
 * The local REST API as `npm start` serves it (the example app on the embedded backend, its functions in this
 * process), sent raw HTTP over a socket: random methods, paths, header and query names, binary, chunked and
 * large bodies, and plain garbage. The server answers (or closes the connection) promptly, never with a 5xx,
 * and the next well-formed request still works.
 */

let runtime: LocalRuntime;
const runtimeLog: string[] = [];

beforeAll(async () => {
  runtime = await startLocalRuntime({
    backend: 'embedded',
    port: 0,
    log: (line) => runtimeLog.push(line),
    // Only the API is under test here; the relay and the consumer stay still.
    pollersPaused: true,
    logLevel: 'SILENT',
  });
}, 120_000);

afterAll(async () => {
  await runtime?.stop();
});

/** One raw request: its bytes, and whether it is framed as HTTP/1.1 says (so an answer is owed). */
interface RawRequest {
  readonly bytes: Buffer;
  readonly framed: boolean;
  readonly description: string;
}

const TOKEN_CHARS = "!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
const token = (maxLength: number) =>
  fc.string({ unit: fc.constantFrom(...TOKEN_CHARS), minLength: 1, maxLength });

const method = fc.oneof(
  { arbitrary: fc.constantFrom('GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'HEAD'), weight: 6 },
  { arbitrary: fc.constantFrom('get', 'Post', 'TRACE', 'PROPFIND', 'M-SEARCH', 'PURGE'), weight: 1 },
  { arbitrary: token(12), weight: 1 },
);

/** A path segment: an id, percent-encoded bytes (valid or not), dot segments, odd keys. */
const segment = fc.oneof(
  fc.constantFrom(
    'orders',
    'inventory',
    'SKU-1',
    'order-1',
    '..',
    '.',
    '',
    '%2F',
    '%00',
    '%zz',
    '%',
    '%E2%82',
    '%F0%9F%98%80',
  ),
  fc.constantFrom(...ODD_KEYS).map((key) => encodeURIComponent(key)),
  fc.string({ unit: 'binary', maxLength: 12 }).map((text) => encodeURIComponent(text)),
  token(20),
);

const path = fc.oneof(
  {
    arbitrary: fc.constantFrom(
      '/orders',
      '/orders/order-1',
      '/inventory/SKU-1',
      '/inventory/SKU-2',
      '/',
      '*',
    ),
    weight: 4,
  },
  {
    arbitrary: fc
      .tuple(
        fc.constantFrom('/orders/', '/inventory/', '/', '//', '/orders//'),
        fc.array(segment, { maxLength: 4 }),
      )
      .map(([prefix, segments]) => `${prefix}${segments.join('/')}`),
    weight: 4,
  },
  {
    arbitrary: fc.constantFrom(
      'http://127.0.0.1/orders',
      'http://[::1/orders',
      '//[/orders',
      'http://x:99999/orders',
      '/inventory/%',
      `/inventory/${'x'.repeat(4_000)}`,
      `/${'a/'.repeat(500)}`,
    ),
    weight: 1,
  },
);

/** A query string with random and odd names, malformed escapes, and repeats. */
const query = fc.option(
  fc
    .array(
      fc.tuple(
        fc.oneof(fc.constantFrom(...ODD_KEYS).map(encodeURIComponent), segment, fc.constant('a[b]')),
        fc.oneof(segment, fc.constant('')),
      ),
      { maxLength: 5 },
    )
    .map((pairs) => `?${pairs.map(([name, value]) => `${name}=${value}`).join('&')}`),
  { freq: 2 },
);

/** Header lines Node's parser accepts, with random names (odd casing, JavaScript keys) and latin1 values. */
const headerLines = fc.array(
  fc.tuple(
    fc.oneof(
      fc.constantFrom(
        'Content-Type',
        'content-type',
        'CONTENT-TYPE',
        'traceparent',
        'Accept',
        'X-Forwarded-For',
      ),
      fc.constantFrom('__proto__', 'constructor', 'toString', 'hasOwnProperty', 'prototype'),
      token(30),
    ),
    fc.oneof(
      contentTypeValue.map((value) => value.replace(/[^\t\x20-\x7e]/g, '')),
      fc.string({
        unit: fc.integer({ min: 0x20, max: 0xff }).map((code) => String.fromCharCode(code)),
        maxLength: 40,
      }),
    ),
  ),
  { maxLength: 6 },
);

/** A body: JSON (maybe adversarial), raw bytes, or a large run of bytes. */
const body = fc.oneof(
  { arbitrary: jsonText.map((text) => Buffer.from(text)), weight: 4 },
  { arbitrary: rawBytes.map((bytes) => Buffer.from(bytes)), weight: 2 },
  {
    arbitrary: fc
      .constantFrom(
        '{"customerId":"c-1","items":[{"sku":"SKU-1","quantity":1}]}',
        '{"available":5}',
        '{"available":1e400}',
        '{"__proto__":{"available":1},"available":2}',
      )
      .map((text) => Buffer.from(text)),
    weight: 2,
  },
  {
    arbitrary: fc.constantFrom(0, 64 * 1024, 1024 * 1024).map((length) => Buffer.alloc(length, 0x7b)),
    weight: 1,
  },
);

/** The body framed by Content-Length, or chunked in random pieces. */
function framedBody(bytes: Buffer, chunks: readonly number[] | null): { headers: string; payload: Buffer } {
  if (chunks === null) return { headers: `Content-Length: ${bytes.length}\r\n`, payload: bytes };
  const parts: Buffer[] = [];
  let at = 0;
  for (const size of chunks) {
    if (at >= bytes.length) break;
    const piece = bytes.subarray(at, at + Math.max(1, size));
    at += piece.length;
    parts.push(Buffer.from(`${piece.length.toString(16)}\r\n`), piece, Buffer.from('\r\n'));
  }
  if (at < bytes.length) {
    const rest = bytes.subarray(at);
    parts.push(Buffer.from(`${rest.length.toString(16)}\r\n`), rest, Buffer.from('\r\n'));
  }
  parts.push(Buffer.from('0\r\n\r\n'));
  return { headers: 'Transfer-Encoding: chunked\r\n', payload: Buffer.concat(parts) };
}

const framedRequest: fc.Arbitrary<RawRequest> = fc
  .record({
    method,
    path,
    query,
    headers: headerLines,
    body: fc.option(body, { freq: 4 }),
    chunks: fc.option(fc.array(fc.integer({ min: 1, max: 70_000 }), { minLength: 1, maxLength: 6 })),
  })
  .map((parts) => {
    const framing =
      parts.body === null ? { headers: '', payload: Buffer.alloc(0) } : framedBody(parts.body, parts.chunks);
    const headers = parts.headers
      .filter(([name]) => !/^(content-length|transfer-encoding|connection|host|expect|upgrade)$/i.test(name))
      .map(([name, value]) => `${name}: ${value}\r\n`)
      .join('');
    const head =
      `${parts.method} ${parts.path}${parts.query ?? ''} HTTP/1.1\r\nHost: localhost\r\n` +
      `${headers}${framing.headers}Connection: close\r\n\r\n`;
    return {
      bytes: Buffer.concat([Buffer.from(head, 'latin1'), framing.payload]),
      framed: true,
      description: `${head.slice(0, 300)}… (${framing.payload.length} body bytes)`,
    };
  });

/** Bytes that are not HTTP, or HTTP broken in one place (bad framing, smuggling attempts, bad versions). */
const garbage: fc.Arbitrary<RawRequest> = fc
  .oneof(
    fc.uint8Array({ maxLength: 300 }).map((bytes) => Buffer.from(bytes)),
    fc
      .constantFrom(
        'GET / HTTP/1.1\r\n\r\n',
        'GET /orders HTTP/9.9\r\nHost: x\r\n\r\n',
        'POST /orders HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
        'POST /orders HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd',
        'POST /orders HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n',
        'POST /orders HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n',
        'PUT /inventory/SKU-1 HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{"available":',
        'GET /orders/order-1 HTTP/1.1\r\nHo st: x\r\n\r\n',
        `GET /orders/order-1 HTTP/1.1\r\nHost: x\r\nX-Big: ${'x'.repeat(20_000)}\r\n\r\n`,
        'GET /orders/order-1 HTTP/1.1\r\nHost: x\r\nX: a\u0000b\r\n\r\n',
        'CONNECT 127.0.0.1:1 HTTP/1.1\r\nHost: x\r\n\r\n',
        'GET / HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n',
        '\r\n\r\n\r\n',
      )
      .map((text) => Buffer.from(text, 'latin1')),
  )
  .map((bytes) => ({
    bytes,
    framed: false,
    description: JSON.stringify(bytes.toString('latin1').slice(0, 300)),
  }));

/** Requests a client means: sent in random pieces, so that the hostile ones meet a server that did real work. */
const meantRequest: fc.Arbitrary<RawRequest> = fc
  .tuple(
    fc.constantFrom(
      ['PUT', '/inventory/SKU-1', '{"available":7}'],
      ['GET', '/inventory/SKU-1', ''],
      ['POST', '/orders', '{"customerId":"c-1","items":[{"sku":"SKU-1","quantity":1}]}'],
      ['GET', '/orders/order-1', ''],
    ),
    fc.option(fc.array(fc.integer({ min: 1, max: 16 }), { minLength: 1, maxLength: 6 })),
  )
  .map(([[verb, target, text], chunks]) => {
    const framing = framedBody(Buffer.from(text), text === '' ? null : chunks);
    const head =
      `${verb} ${target} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n` +
      `${framing.headers}Connection: close\r\n\r\n`;
    return { bytes: Buffer.concat([Buffer.from(head), framing.payload]), framed: true, description: head };
  });

const rawRequests = fc.oneof(
  { arbitrary: framedRequest, weight: 4 },
  { arbitrary: meantRequest, weight: 1 },
  { arbitrary: garbage, weight: 1 },
);

/** What came back on one connection: the status of the first response, if any, and how long it took. */
interface Exchange {
  readonly status: number | undefined;
  readonly head: string;
  readonly closed: boolean;
}

const ANSWER_WITHIN_MS = 10_000;

/**
 * Sends `request` on a fresh connection and reads until the server closes it. A framed request is sent whole
 * (it says `Connection: close`); garbage is followed by a half-close, so the server is never left waiting for
 * bytes that will not come.
 */
function exchange(request: RawRequest): Promise<Exchange> {
  return new Promise((resolve, reject) => {
    const socket = connect(Number(new URL(runtime.apiUrl).port), '127.0.0.1');
    const received: Buffer[] = [];
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no answer within ${ANSWER_WITHIN_MS} ms to ${request.description}`));
    }, ANSWER_WITHIN_MS);
    socket.on('data', (chunk: Buffer) => received.push(chunk));
    // The server may close while a large body is still being written: what it answered so far counts.
    socket.on('error', () => {});
    socket.on('close', () => {
      clearTimeout(timer);
      const head = Buffer.concat(received).toString('latin1').split('\r\n')[0] ?? '';
      const status = /^HTTP\/1\.[01] (\d{3})/.exec(head)?.[1];
      resolve({ status: status === undefined ? undefined : Number(status), head, closed: true });
    });
    socket.write(request.bytes, () => {
      if (!request.framed) socket.end();
    });
  });
}

let probes = 0;

/** A well-formed PUT and GET of one SKU: both succeed, and the GET reads what the PUT wrote. */
async function expectWellFormedRequestsWork(): Promise<void> {
  probes += 1;
  const put = await fetch(`${runtime.apiUrl}/inventory/FUZZ-PROBE`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ available: probes }),
  });
  expect(put.status).toBe(200);
  const get = await fetch(`${runtime.apiUrl}/inventory/FUZZ-PROBE`);
  expect(await get.json()).toEqual({ sku: 'FUZZ-PROBE', available: probes });
}

describe('the local API, fuzzed over raw sockets', () => {
  it(
    'answers every request promptly, never with a 5xx, and keeps serving well-formed requests',
    async () => {
      const statuses = new Map<string, number>();
      await fc.assert(
        fc.asyncProperty(rawRequests, async (request) => {
          const answer = await exchange(request);
          const key = `${request.framed ? 'framed' : 'garbage'} ${answer.status ?? 'closed'}`;
          statuses.set(key, (statuses.get(key) ?? 0) + 1);

          if (answer.status !== undefined) {
            expect(answer.status, `${answer.head} for ${request.description}`).toBeLessThan(500);
          } else {
            // Only a request the server cannot read as HTTP may go unanswered (CONNECT has no handler at all).
            expect(request.framed && !request.description.startsWith('CONNECT'), request.description).toBe(
              false,
            );
          }
          expect(takePrototypePollution(), 'keys added to Object.prototype').toEqual([]);
          await expectWellFormedRequestsWork();
        }),
        RUNS,
      );
      expect(runtimeLog.filter((line) => line.startsWith('[api]') && !line.includes('not enforced'))).toEqual(
        [],
      );
      for (const kind of ['framed 2', 'framed 4']) {
        expect(
          [...statuses.keys()].some((key) => key.startsWith(kind)),
          JSON.stringify([...statuses]),
        ).toBe(true);
      }
    },
    fuzzTimeoutMs(RUNS, 200),
  );

  it('answers 413 to a chunked body over 10 MB, then serves the next request', async () => {
    const bytes = Buffer.alloc(MAX_BODY_BYTES + 1, 0x20);
    const { headers, payload } = framedBody(bytes, [1024 * 1024]);
    const head = `POST /orders HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n${headers}Connection: close\r\n\r\n`;

    const answer = await exchange({
      bytes: Buffer.concat([Buffer.from(head), payload]),
      framed: true,
      description: head,
    });

    expect(answer.status).toBe(413);
    await expectWellFormedRequestsWork();
  }, 60_000);
});
