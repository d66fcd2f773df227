/**
 * `outbox call`: a SigV4-signed request to an IAM-authorised REST API. A local HTTP server stands in for API
 * Gateway and records what arrives; each test recomputes the signature by hand from what arrived, with the same
 * fixed test credentials, so a request that was changed after signing (or signed wrongly) fails.
 */
import { createHash, createHmac } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CloudFormationClient, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { isLocalApi, signingRegion } from '../../../shared/cli/call-api.ts';
import { run, STACK } from './cli-fixture.ts';

const CREDENTIALS = {
  accessKeyId: 'AKIDEXAMPLE',
  secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY',
} as const;
const REGION = 'eu-west-1';

/** One request as the server received it. */
interface Received {
  readonly method: string;
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

let server: Server;
let baseUrl: string;
let received: Received[] = [];
let answer: { status: number; body: string } = { status: 200, body: '{}' };
let directory: string;

beforeAll(async () => {
  server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const headers: Record<string, string> = {};
      for (const [name, value] of Object.entries(request.headers)) {
        if (typeof value === 'string') headers[name] = value;
      }
      received.push({
        method: request.method ?? '',
        url: request.url ?? '',
        headers,
        body: Buffer.concat(chunks).toString('utf8'),
      });
      response.writeHead(answer.status, {
        'content-type': 'application/json',
        'x-amzn-requestid': 'req-1234',
      });
      response.end(answer.body);
    });
  });
  await new Promise<void>((resolveListen) => server.listen(0, '127.0.0.1', resolveListen));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/prod/`;
  directory = mkdtempSync(join(tmpdir(), 'outbox-call-'));
});

afterAll(async () => {
  rmSync(directory, { recursive: true, force: true });
  await new Promise((resolveClose) => server.close(resolveClose));
});

beforeEach(() => {
  received = [];
  answer = { status: 200, body: '{}' };
});

afterEach(() => {
  vi.unstubAllEnvs();
});

const ENV = {
  AWS_REGION: REGION,
  AWS_ACCESS_KEY_ID: CREDENTIALS.accessKeyId,
  AWS_SECRET_ACCESS_KEY: CREDENTIALS.secretAccessKey,
};

/** The only request the server received. */
function only(): Received {
  expect(received).toHaveLength(1);
  const [request] = received;
  if (request === undefined) throw new Error('no request');
  return request;
}

const sha256 = (text: string | Buffer): string => createHash('sha256').update(text).digest('hex');
const hmac = (key: string | Buffer, text: string): Buffer => createHmac('sha256', key).update(text).digest();
/** RFC 3986 encoding, as SigV4 wants it. */
const encode = (text: string): string =>
  encodeURIComponent(text).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

/**
 * The Authorization header SigV4 gives `request` for `execute-api` in `region` with `secret`, recomputed by hand
 * from what the server received: canonical request, string to sign, signing key chain.
 */
function expectedAuthorization(request: Received, secret: string, region: string): string {
  const authorization = request.headers.authorization ?? '';
  const signedHeaders = /SignedHeaders=([^,]+)/.exec(authorization)?.[1] ?? '';
  const amzDate = request.headers['x-amz-date'] ?? '';
  const date = amzDate.slice(0, 8);
  const url = new URL(request.url, 'http://placeholder');
  // Paths of services other than S3 are encoded once more, segment by segment.
  const canonicalPath = url.pathname
    .split('/')
    .map((segment) => encode(segment))
    .join('/');
  const canonicalQuery = [...url.searchParams.entries()]
    .map(([name, value]) => [encode(name), encode(value)] as const)
    .sort(([a, av], [b, bv]) => (a === b ? (av < bv ? -1 : 1) : a < b ? -1 : 1))
    .map(([name, value]) => `${name}=${value}`)
    .join('&');
  const canonicalHeaders = signedHeaders
    .split(';')
    .map((name) => `${name}:${(request.headers[name] ?? '').trim().replace(/\s+/g, ' ')}\n`)
    .join('');
  const canonicalRequest = [
    request.method,
    canonicalPath,
    canonicalQuery,
    canonicalHeaders,
    signedHeaders,
    sha256(request.body),
  ].join('\n');
  const scope = `${date}/${region}/execute-api/aws4_request`;
  const stringToSign = ['AWS4-HMAC-SHA256', amzDate, scope, sha256(canonicalRequest)].join('\n');
  const key = hmac(hmac(hmac(hmac(`AWS4${secret}`, date), region), 'execute-api'), 'aws4_request');
  const signature = createHmac('sha256', key).update(stringToSign).digest('hex');
  return `AWS4-HMAC-SHA256 Credential=${CREDENTIALS.accessKeyId}/${scope}, SignedHeaders=${signedHeaders}, Signature=${signature}`;
}

describe('outbox call', () => {
  it('POSTs the body unchanged to the path below the API URL, signed with SigV4 for execute-api', async () => {
    answer = { status: 201, body: '{"orderId":"o-1"}' };
    const body =
      '{ "customerId": "c-1",\n  "items": [{"sku":"SKU-APPLE","quantity":2}], "note": "ü \\"x\\"" }';
    const result = await run(['call', 'POST', '/orders', '--data', body, '--url', baseUrl], { env: ENV });

    const request = only();
    expect(request.method).toBe('POST');
    expect(request.url).toBe('/prod/orders');
    expect(request.body).toBe(body);
    expect(request.headers['content-type']).toBe('application/json');
    const signed = (/SignedHeaders=([^,]+)/.exec(request.headers.authorization ?? '')?.[1] ?? '').split(';');
    expect(signed).toEqual(expect.arrayContaining(['host', 'x-amz-date', 'content-type']));
    expect(request.headers.authorization).toBe(
      expectedAuthorization(request, CREDENTIALS.secretAccessKey, REGION),
    );

    expect(result).toEqual({
      code: 0,
      stdout: '{"orderId":"o-1"}\n',
      stderr: 'HTTP 201 Created (request id req-1234)\n',
    });
  });

  it('signs the query string and extra headers, and sends the path as given', async () => {
    await run(
      ['call', 'get', '/inventory/SKU-APPLE?verbose=1&b=x%20y&a=2', '--url', baseUrl, '-H', 'X-Trace: abc'],
      { env: ENV },
    );
    const request = only();
    expect(request.method).toBe('GET');
    expect(request.url).toBe('/prod/inventory/SKU-APPLE?verbose=1&b=x%20y&a=2');
    expect(request.headers['x-trace']).toBe('abc');
    expect(request.headers.authorization).toContain('x-trace');
    expect(request.headers.authorization).toBe(
      expectedAuthorization(request, CREDENTIALS.secretAccessKey, REGION),
    );
  });

  it('sends and signs the session token of temporary credentials', async () => {
    await run(['call', 'GET', '/orders/o-1', '--url', baseUrl], {
      env: { ...ENV, AWS_SESSION_TOKEN: 'session-token-1' },
    });
    const request = only();
    expect(request.headers['x-amz-security-token']).toBe('session-token-1');
    expect(request.headers.authorization).toContain('x-amz-security-token');
    expect(request.headers.authorization).toBe(
      expectedAuthorization(request, CREDENTIALS.secretAccessKey, REGION),
    );
  });

  it('finds credentials through the default chain when the CLI is given none', async () => {
    vi.stubEnv('AWS_ACCESS_KEY_ID', CREDENTIALS.accessKeyId);
    vi.stubEnv('AWS_SECRET_ACCESS_KEY', 'chain-secret');
    vi.stubEnv('AWS_SESSION_TOKEN', '');
    const result = await run(['call', 'GET', '/orders/o-1', '--url', baseUrl], {
      env: { AWS_REGION: REGION },
    });
    expect(result.code).toBe(0);
    const request = only();
    expect(request.headers.authorization).toBe(expectedAuthorization(request, 'chain-secret', REGION));
  });

  it('reads the body from a file with --data @file, byte for byte', async () => {
    const body = '{"available": 12}\n';
    writeFileSync(join(directory, 'stock.json'), body);
    await run(
      ['call', 'PUT', '/inventory/SKU-1', '--data', `@${join(directory, 'stock.json')}`, '--url', baseUrl],
      { env: ENV },
    );
    expect(only().body).toBe(body);
  });

  it('takes the URL from the stack’s apiUrl output', async () => {
    const cloudFormation = mockClient(CloudFormationClient);
    cloudFormation.on(DescribeStacksCommand, { StackName: STACK }).resolves({
      Stacks: [
        {
          StackName: STACK,
          StackStatus: 'CREATE_COMPLETE',
          CreationTime: new Date(0),
          Outputs: [{ OutputKey: 'apiUrl', OutputValue: baseUrl }],
        },
      ],
    });
    try {
      const result = await run(['--stack', STACK, 'call', 'GET', '/inventory/SKU-1'], {
        env: ENV,
        clients: { cloudFormation: new CloudFormationClient({ region: REGION }) },
      });
      expect(result.code).toBe(0);
      expect(only().url).toBe('/prod/inventory/SKU-1');
    } finally {
      cloudFormation.restore();
    }
  });

  it.each([
    [
      'the one <service>ApiUrl output of a service stack',
      [{ OutputKey: 'inventoryApiUrl', OutputValue: 'BASE' }],
      0,
    ],
    [
      'none when two outputs could be it',
      [
        { OutputKey: 'ordersApiUrl', OutputValue: 'BASE' },
        { OutputKey: 'inventoryApiUrl', OutputValue: 'BASE' },
      ],
      2,
    ],
  ])('takes %s', async (_, outputs, code) => {
    const cloudFormation = mockClient(CloudFormationClient);
    cloudFormation.on(DescribeStacksCommand, { StackName: STACK }).resolves({
      Stacks: [
        {
          StackName: STACK,
          StackStatus: 'CREATE_COMPLETE',
          CreationTime: new Date(0),
          Outputs: outputs.map((output) => ({ ...output, OutputValue: baseUrl })),
        },
      ],
    });
    try {
      const result = await run(['--stack', STACK, 'call', 'GET', '/inventory/SKU-1'], {
        env: ENV,
        clients: { cloudFormation: new CloudFormationClient({ region: REGION }) },
      });
      expect(result.code).toBe(code);
      if (code === 0) expect(only().url).toBe('/prod/inventory/SKU-1');
      else expect(result.stderr).toContain('has several API URL outputs (ordersApiUrl, inventoryApiUrl)');
    } finally {
      cloudFormation.restore();
    }
  });

  it('prints the status and the parsed body as one JSON document with --json', async () => {
    answer = { status: 200, body: '{"sku":"SKU-1","available":3}' };
    const result = await run(['--json', 'call', 'GET', '/inventory/SKU-1', '--url', baseUrl], { env: ENV });
    expect(JSON.parse(result.stdout)).toMatchObject({
      status: 200,
      requestId: 'req-1234',
      body: { sku: 'SKU-1', available: 3 },
    });
  });

  it.each([
    [400, 2],
    [403, 1],
    [404, 4],
    [409, 4],
    [429, 1],
    [500, 1],
    [502, 1],
  ])('exits non-zero on a %i answer (exit %i), printing its body', async (status, code) => {
    answer = { status, body: '{"error":"refused","details":[]}' };
    const result = await run(['call', 'GET', '/orders/o-1', '--url', baseUrl], { env: ENV });
    expect(result.code).toBe(code);
    expect(result.stdout).toBe('{"error":"refused","details":[]}\n');
    expect(result.stderr).toMatch(new RegExp(`^HTTP ${status} `));
  });

  it('asks for --url against an emulator, whose stack does not know the local API', async () => {
    const result = await run(['call', 'GET', '/orders/o-1'], {
      env: { ...ENV, AWS_ENDPOINT_URL: 'http://127.0.0.1:1' },
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--url is required with AWS_ENDPOINT_URL');
    expect(received).toEqual([]);
  });

  it('refuses a malformed header, method or path before sending anything', async () => {
    for (const argv of [
      ['call', 'GET', '/orders', '--url', baseUrl, '-H', 'no colon'],
      ['call', 'GE T', '/orders', '--url', baseUrl],
      ['call', 'GET', 'orders', '--url', baseUrl],
    ]) {
      const result = await run(argv, { env: ENV });
      expect(result.code, argv.join(' ')).toBe(2);
    }
    expect(received).toEqual([]);
  });
});

describe('signingRegion', () => {
  it('signs for the region of an execute-api URL, whatever AWS_REGION says', () => {
    expect(
      signingRegion('https://abc123def4.execute-api.ap-southeast-2.amazonaws.com/prod/', {
        AWS_REGION: REGION,
      }),
    ).toBe('ap-southeast-2');
  });

  it('signs for AWS_REGION when the URL does not say, and asks for one when nothing does', () => {
    expect(signingRegion('http://127.0.0.1:3000/', { AWS_REGION: REGION })).toBe(REGION);
    expect(() => signingRegion('https://api.example.com/prod/', {})).toThrow(/AWS_REGION is not set/);
  });

  it('signs a local API (npm start) for us-east-1 when AWS_REGION is not set: there is no region to guess', () => {
    expect(signingRegion('http://127.0.0.1:3000/', {})).toBe('us-east-1');
    expect(signingRegion('http://localhost:3000/', {})).toBe('us-east-1');
    expect(signingRegion('http://[::1]:3000/', {})).toBe('us-east-1');
    expect(isLocalApi('http://10.0.0.1:3000/')).toBe(false);
  });
});
