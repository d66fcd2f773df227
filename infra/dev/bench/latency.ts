/**
 * Bench section "latency": how long an order takes from `POST /orders` to its message CONFIRMED, measured on
 * the local runtime with the template's batching windows and with the relay's (then both) set to 0 s, next to
 * a hop-by-hop model of the same way on AWS.
 */
import { fileURLToPath } from 'node:url';
import type { CloudFormationTemplate } from '../local/template/cloudformation-template.ts';
import { readApp } from '../local/template/read-app.ts';
import { synthesizeApp } from '../local/template/synthesize-app.ts';
import {
  type BenchCell,
  type BenchOptions,
  type BenchSection,
  type BenchTarget,
  formatNumber,
  percentile,
} from './bench-section.ts';
import {
  ASSUMED_RELAY_INVOCATION_MS,
  AWS_LATENCY_SOURCES,
  awsLatencyModel,
  type BatchingWindows,
  extraRelayCostPerShardMonth,
  STREAM_POLLS_PER_SECOND,
  sumHops,
} from './latency-model.ts';
import { batchingWindowsOf, type LatencyRunResult, runLatency, withBatchingWindows } from './latency-run.ts';

const PROJECT_DIR = fileURLToPath(new URL('../../../', import.meta.url));

const PLAN = {
  // The first run (the windows as synthesized) is the one the README quotes; the others show what a window
  // of 0 s changes.
  tiny: { firstRunOrders: 5, otherRunOrders: 5 },
  full: { firstRunOrders: 200, otherRunOrders: 60 },
  // About 7 orders a second: neither batch (relay 100, consumer 10) fills within a 1 s window, so the windows
  // run their full length.
  arrivalIntervalMs: 150,
  // The local runtime's default idle poll (Lambda polls a stream 4 times a second), passed explicitly so
  // the notes state what ran.
  pollIntervalMs: 250,
  settleTimeoutMs: 30_000,
} as const;

const COLUMNS = [
  'path',
  'orders',
  'p50 ms',
  'p99 ms',
  'POST p50 ms',
  'SENT p50 ms',
  'relay inv./100',
  'consumer inv./100',
  'basis',
] as const;

interface MeasuredRun {
  readonly windows: BatchingWindows;
  readonly asSynthesized: boolean;
  readonly result: LatencyRunResult;
}

/** Measures POST → CONFIRMED on the local runtime and models it on AWS. */
export async function measureLatency(options: BenchOptions): Promise<BenchSection> {
  const plan = PLAN[options.size];
  const { stacks } = await synthesizeApp({ projectDir: PROJECT_DIR });
  const [producer] = stacks;
  if (producer === undefined) throw new Error(`the app of ${PROJECT_DIR} has no stack`);
  const { template } = producer;
  // The relay's stream window is the producer's; the queue windows are every queue mapping's (the receipts' in the
  // producer, each subscriber's consumer in its own stack), which the example keeps alike.
  const synthesized = batchingWindowsOf(template);
  const variants = distinctWindows([
    synthesized,
    { ...synthesized, relaySeconds: 0 },
    { relaySeconds: 0, consumerSeconds: 0 },
  ]);

  const runs: MeasuredRun[] = [];
  for (const [index, windows] of variants.entries()) {
    const result = await runLatency({
      stacks: stacks.map((stack) => ({
        stackName: stack.stackName,
        template: withBatchingWindows(stack.template, windows),
      })),
      projectDir: PROJECT_DIR,
      orders: index === 0 ? plan.firstRunOrders : plan.otherRunOrders,
      arrivalIntervalMs: PLAN.arrivalIntervalMs,
      pollIntervalMs: PLAN.pollIntervalMs,
      settleTimeoutMs: PLAN.settleTimeoutMs,
    });
    runs.push({ windows, asSynthesized: index === 0, result });
  }

  const hops = awsLatencyModel(synthesized);
  const rows: BenchCell[][] = [
    ...runs.map(measuredRow),
    ...hops.map((hop) => modelRow(`AWS · ${hop.hop}`, hop, hop.basis)),
    ...variants.map((windows) =>
      modelRow(
        `AWS · total, ${describeWindows(windows)}`,
        sumHops(awsLatencyModel(windows)),
        'sum of the hops',
      ),
    ),
  ];
  return {
    title: 'Latency: POST /orders → message CONFIRMED (every subscriber’s delivery)',
    columns: COLUMNS,
    rows,
    targets: runs.map(deliveryTarget),
    notes: [...latencyNotes(runs, template), ...failureNotes(runs)],
  };
}

/** How the figures were measured and modelled, with the settings read from the template. */
function latencyNotes(runs: readonly MeasuredRun[], template: CloudFormationTemplate): string[] {
  const app = readApp(template);
  const relay = app.mappings.find((mapping) => mapping.source.kind === 'stream');
  const consumer = app.mappings.find((mapping) => mapping.source.kind === 'queue');
  const relayMemoryMb = app.functions.find((fn) => fn.name === relay?.functionName)?.memoryMb ?? Number.NaN;
  const relayWindowSeconds = relay?.maxBatchingWindowSeconds ?? 0;
  const windowed = runs.find((run) => run.asSynthesized);
  const unwindowed = runs.find((run) => run.windows.relaySeconds === 0 && run.windows.consumerSeconds === 0);
  const windowedP50 = windowed === undefined ? Number.NaN : p50Of(windowed.result);
  const unwindowedP50 = unwindowed === undefined ? Number.NaN : p50Of(unwindowed.result);
  // What a relay window of 0 s costs against one of a second (the default before it was lowered).
  const extra = extraRelayCostPerShardMonth({ windowSeconds: 1, memoryMb: relayMemoryMb });
  return [
    `Measured: the example app on the local runtime (embedded backend, in process), orders POSTed one every ${PLAN.arrivalIntervalMs} ms without waiting; latency = the consumer's confirmedAt − the moment before the POST; SENT = the relay's sentAt; nearest-rank percentiles.`,
    `Local pollers: idle poll every ${PLAN.pollIntervalMs} ms; as synthesized, relay mapping batch ${relay?.batchSize}, window ${relayWindowSeconds} s; consumer mapping batch ${consumer?.batchSize}, window ${consumer?.maxBatchingWindowSeconds} s, short receives repeated until the window ends or the batch fills.`,
    `What dominates locally: the batching windows, ${formatNumber(windowedP50 - unwindowedP50)} of the ${formatNumber(windowedP50)} ms p50 as synthesized (p50 with both at 0 s: ${formatNumber(unwindowedP50)} ms); the rest is the idle poll's phase and the handlers.`,
    'inv./100: function invocations per 100 orders, what the windows save. Under steady traffic a record arriving inside an open window waits only its rest, so under steady traffic the local p50 can fall below the sum of the windows.',
    'AWS rows model a lone order (no other traffic), which waits each whole window; p50 sums the hop medians, p99 the hop p99s (an upper bound: hops rarely all hit their tail at once).',
    `Relay window ${relayWindowSeconds} s as synthesized; against a 1 s window a lone order gains up to 1 s, for at most ${formatNumber(extra.invocations / 1_000_000, 1)} M more relay invocations per stream shard a month (≈ $${formatNumber(extra.dollars, 2)} at ${relayMemoryMb} MB, ${ASSUMED_RELAY_INVOCATION_MS} ms each); equal once batches fill; none idle.`,
    `Source, ${STREAM_POLLS_PER_SECOND} polls/s per shard and window semantics: ${AWS_LATENCY_SOURCES.streamPolling}`,
    `Source, stream records "in near-real time" (no figure, so assumed): ${AWS_LATENCY_SOURCES.streamRecords}`,
    `Source, long polling of the queue: ${AWS_LATENCY_SOURCES.queuePolling}`,
    `Source, a mapping's window defaults to 0 s: ${AWS_LATENCY_SOURCES.windowDefault}`,
    `Source, cold starts in under 1% of invocations: ${AWS_LATENCY_SOURCES.coldStarts}`,
    `Source, Lambda prices (us-east-1, arm64): ${AWS_LATENCY_SOURCES.lambdaPricing}`,
  ];
}

function measuredRow(run: MeasuredRun): BenchCell[] {
  const { orders, invocations } = run.result;
  const confirmed = confirmedLatencies(run.result);
  const sent = orders.flatMap((order) => (order.sentMs === undefined ? [] : [order.sentMs]));
  const per100 = (count: number): string =>
    orders.length === 0 ? '—' : formatNumber((count * 100) / orders.length, 1);
  return [
    `local · ${describeWindows(run.windows)}${run.asSynthesized ? ' (as synthesized)' : ''}`,
    `${confirmed.length}/${orders.length}`,
    ms(confirmed, 50),
    ms(confirmed, 99),
    ms(
      orders.map((order) => order.answeredMs),
      50,
    ),
    ms(sent, 50),
    per100(invocations.relay),
    per100(invocations.consumer),
    'measured',
  ];
}

function modelRow(
  name: string,
  figures: { readonly p50Ms: number; readonly p99Ms: number },
  basis: string,
): BenchCell[] {
  return [name, '—', formatNumber(figures.p50Ms), formatNumber(figures.p99Ms), '—', '—', '—', '—', basis];
}

/** Every order confirmed, and applied once: the consumer took exactly one unit of stock per order. */
function deliveryTarget(run: MeasuredRun): BenchTarget {
  const { orders, stockTaken } = run.result;
  const applied = orders.filter((order) => order.confirmedMs !== undefined && order.outcome === 'APPLIED');
  return {
    name: `every order CONFIRMED and applied once, ${describeWindows(run.windows)}`,
    measured: `${applied.length}/${orders.length} applied, stock taken ${stockTaken}`,
    target: `${orders.length}/${orders.length}, stock taken ${orders.length}`,
    holds: orders.length > 0 && applied.length === orders.length && stockTaken === orders.length,
  };
}

/** The runtime's first log lines of a run that did not confirm every order, to say why. */
function failureNotes(runs: readonly MeasuredRun[]): string[] {
  return runs.flatMap((run) => {
    const missing = run.result.orders.filter((order) => order.confirmedMs === undefined).length;
    if (missing === 0) return [];
    const why = run.result.log.slice(0, 2).join(' | ') || 'no runtime log line';
    return [`${describeWindows(run.windows)}: ${missing} order(s) not CONFIRMED in time; ${why}`];
  });
}

function confirmedLatencies(result: LatencyRunResult): number[] {
  return result.orders.flatMap((order) => (order.confirmedMs === undefined ? [] : [order.confirmedMs]));
}

function p50Of(result: LatencyRunResult): number {
  const confirmed = confirmedLatencies(result);
  return confirmed.length === 0 ? Number.NaN : percentile(confirmed, 50);
}

function ms(values: readonly number[], p: number): string {
  return values.length === 0 ? '—' : formatNumber(percentile(values, p));
}

function describeWindows(windows: BatchingWindows): string {
  return `relay window ${windows.relaySeconds} s, consumer ${windows.consumerSeconds} s`;
}

function distinctWindows(candidates: readonly BatchingWindows[]): BatchingWindows[] {
  const seen = new Set<string>();
  return candidates.filter((windows) => {
    const key = `${windows.relaySeconds}/${windows.consumerSeconds}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
