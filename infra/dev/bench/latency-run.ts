/**
 * One latency run: the example app (every stack) on the local runtime's embedded backend, orders POSTed at a steady
 * pace, each watched through `GET /orders/{id}` until its message is CONFIRMED: every delivery confirmed, by each
 * subscriber's receipt. The timestamps the relay and the receipts write (`sentAt`, `confirmedAt` of each delivery)
 * mark the hops, so how often the watcher looks does not matter.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { type LocalRuntime, startLocalRuntime } from '../local/host/runtime.ts';
import {
  type CloudFormationTemplate,
  ResourceType,
  type TemplateResource,
} from '../local/template/cloudformation-template.ts';
import { readApp } from '../local/template/read-app.ts';
import type { BatchingWindows } from './latency-model.ts';

/** What one run does. */
export interface LatencyRunOptions {
  /** The app's stacks, in the order they deploy. */
  readonly stacks: readonly { readonly stackName: string; readonly template: CloudFormationTemplate }[];
  readonly projectDir: string;
  readonly orders: number;
  /** Time between two POSTs; each is sent without waiting for the one before (open loop). */
  readonly arrivalIntervalMs: number;
  /** Pause between the local pollers' idle polls. */
  readonly pollIntervalMs: number;
  /** How long to wait for the last confirmations after the last POST. */
  readonly settleTimeoutMs: number;
}

/** One order's way, in milliseconds from just before its POST. */
export interface OrderTiming {
  readonly orderId: string;
  readonly answeredMs: number;
  /** When the relay marked the message SENT (its last delivery); `undefined` when it never was. */
  readonly sentMs: number | undefined;
  /** When its last delivery was confirmed; `undefined` when one never was. */
  readonly confirmedMs: number | undefined;
  /** What the inventory recorded (`APPLIED`…), once CONFIRMED. */
  readonly outcome: string | undefined;
}

/** What a run measured. */
export interface LatencyRunResult {
  readonly orders: readonly OrderTiming[];
  /** Function invocations by the relay's and the consumer's pollers. */
  readonly invocations: { readonly relay: number; readonly consumer: number };
  /** Stock taken by the consumer: one unit per order when every message was applied exactly once. */
  readonly stockTaken: number;
  /** The runtime's own log lines (failed batches, handler errors). */
  readonly log: readonly string[];
}

/** The example API refused an order the bench sent: the run cannot measure what it was asked to. */
export class OrderRejectedError extends Error {
  readonly code = 'ORDER_REJECTED';
  override readonly name = 'OrderRejectedError';
  readonly status: number;

  constructor(status: number, body: unknown) {
    super(`POST /orders answered ${status}: ${JSON.stringify(body)}`);
    this.status = status;
  }
}

const SKU = 'SKU-LATENCY-BENCH';
const WATCH_INTERVAL_MS = 100;

/** `template` with the relay's (stream) and the consumer's (queue) batching windows replaced. */
export function withBatchingWindows(
  template: CloudFormationTemplate,
  windows: BatchingWindows,
): CloudFormationTemplate {
  const resources: Record<string, TemplateResource> = { ...template.Resources };
  for (const mapping of readApp(template).mappings) {
    const resource = resources[mapping.logicalId];
    if (resource?.Type !== ResourceType.EVENT_SOURCE_MAPPING) continue;
    const seconds = mapping.source.kind === 'stream' ? windows.relaySeconds : windows.consumerSeconds;
    resources[mapping.logicalId] = {
      ...resource,
      Properties: { ...resource.Properties, MaximumBatchingWindowInSeconds: seconds },
    };
  }
  return { ...template, Resources: resources };
}

/** The batching windows `template` gives the stream (relay) and queue (consumer) mappings. */
export function batchingWindowsOf(template: CloudFormationTemplate): BatchingWindows {
  const mappings = readApp(template).mappings;
  const windowOf = (kind: 'stream' | 'queue'): number =>
    mappings.find((mapping) => mapping.source.kind === kind)?.maxBatchingWindowSeconds ?? 0;
  return { relaySeconds: windowOf('stream'), consumerSeconds: windowOf('queue') };
}

/** Starts the runtime, runs the orders through it, and stops everything, whatever happened. */
export async function runLatency(options: LatencyRunOptions): Promise<LatencyRunResult> {
  const log: string[] = [];
  const runtime = await startLocalRuntime({
    backend: 'embedded',
    port: 0,
    templates: options.stacks,
    projectDir: options.projectDir,
    pollIntervalMs: options.pollIntervalMs,
    log: (line) => log.push(line),
  });
  try {
    const api = apiClient(runtime);
    const stock = options.orders;
    await api.send('PUT', `/inventory/${SKU}`, { available: stock });
    const orders = await postAndWatch(api, options);
    const left = (await api.send('GET', `/inventory/${SKU}`)).body.available;
    return {
      orders,
      invocations: invocationsOf(runtime),
      stockTaken: stock - Number(left),
      log,
    };
  } finally {
    await runtime.stop();
  }
}

interface ApiClient {
  send(
    method: string,
    path: string,
    body?: unknown,
  ): Promise<{ status: number; body: Record<string, unknown> }>;
}

function apiClient(runtime: LocalRuntime): ApiClient {
  return {
    async send(method, path, body) {
      const response = await fetch(`${runtime.apiUrl}${path}`, {
        method,
        ...(body === undefined
          ? {}
          : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
      });
      return { status: response.status, body: (await response.json()) as Record<string, unknown> };
    },
  };
}

interface Posted {
  readonly orderId: string;
  readonly startedAt: number;
  readonly answeredMs: number;
}

interface Watched {
  sentAt?: number;
  confirmedAt?: number;
  outcome?: string;
}

/** POSTs the orders at a steady pace while a watcher reads each pending order until it is CONFIRMED. */
async function postAndWatch(api: ApiClient, options: LatencyRunOptions): Promise<OrderTiming[]> {
  const posted: Posted[] = [];
  const watched = new Map<string, Watched>();
  let posting = true;
  const watcher = (async () => {
    let deadline = Number.POSITIVE_INFINITY;
    for (;;) {
      const pending = posted.filter((order) => watched.get(order.orderId)?.confirmedAt === undefined);
      if (!posting && pending.length === 0) return;
      if (!posting && deadline === Number.POSITIVE_INFINITY) deadline = Date.now() + options.settleTimeoutMs;
      if (Date.now() > deadline) return;
      for (const order of pending) watched.set(order.orderId, await readMessage(api, order.orderId));
      await sleep(WATCH_INTERVAL_MS);
    }
  })();
  // Awaited below; until then a failed read must not surface as an unhandled rejection.
  watcher.catch(() => {});

  const started = Date.now();
  const posts: Promise<void>[] = [];
  for (let index = 0; index < options.orders; index += 1) {
    const due = started + index * options.arrivalIntervalMs;
    if (due > Date.now()) await sleep(due - Date.now());
    posts.push(postOrder(api, index).then((order) => void posted.push(order)));
  }
  try {
    await Promise.all(posts);
  } finally {
    posting = false;
    await watcher;
  }

  return posted.map((order) => {
    const state = watched.get(order.orderId) ?? {};
    const since = (at: number | undefined): number | undefined =>
      at === undefined ? undefined : at - order.startedAt;
    return {
      orderId: order.orderId,
      answeredMs: order.answeredMs,
      sentMs: since(state.sentAt),
      confirmedMs: since(state.confirmedAt),
      outcome: state.outcome,
    };
  });
}

async function postOrder(api: ApiClient, index: number): Promise<Posted> {
  const startedAt = Date.now();
  const { status, body } = await api.send('POST', '/orders', {
    customerId: `latency-${index}`,
    items: [{ sku: SKU, quantity: 1 }],
  });
  if (status !== 201 || typeof body.orderId !== 'string') {
    throw new OrderRejectedError(status, body);
  }
  return { orderId: body.orderId, startedAt, answeredMs: Date.now() - startedAt };
}

/**
 * The order's message as `GET /orders/{id}` shows it: SENT when its last delivery was, CONFIRMED (its derived status)
 * when its last delivery was confirmed, with the inventory's outcome. A message of one delivery (a topic without
 * subscribers) has its times itself.
 */
async function readMessage(api: ApiClient, orderId: string): Promise<Watched> {
  const { body } = await api.send('GET', `/orders/${orderId}`);
  const messages = Array.isArray(body.messages) ? (body.messages as Record<string, unknown>[]) : [];
  const message = messages[0] ?? {};
  const deliveries = Array.isArray(message.deliveries)
    ? (message.deliveries as Record<string, unknown>[])
    : [message];
  const time = (value: unknown): number | undefined =>
    typeof value === 'string' ? Date.parse(value) : undefined;
  const last = (field: string): number | undefined => {
    const times = deliveries.map((delivery) => time(delivery[field]));
    return times.some((at) => at === undefined) ? undefined : Math.max(...(times as number[]));
  };
  const inventory = deliveries.find((delivery) => delivery.subscriber === 'inventory') ?? deliveries[0] ?? {};
  const sentAt = last('sentAt');
  const confirmedAt = last('confirmedAt');
  return {
    ...(sentAt === undefined ? {} : { sentAt }),
    ...(message.status === 'CONFIRMED' && confirmedAt !== undefined ? { confirmedAt } : {}),
    ...(typeof inventory.outcome === 'string' ? { outcome: inventory.outcome } : {}),
  };
}

function invocationsOf(runtime: LocalRuntime): LatencyRunResult['invocations'] {
  const count = (kind: 'stream' | 'queue'): number =>
    runtime.app.mappings
      .filter((mapping) => mapping.source.kind === kind)
      .flatMap((mapping) => runtime.pollers.filter((poller) => poller.functionName === mapping.functionName))
      .reduce((total, poller) => total + poller.stats().invocations, 0);
  return { relay: count('stream'), consumer: count('queue') };
}
