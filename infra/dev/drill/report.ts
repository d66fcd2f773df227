import { type LatencySummary, latencyRatio } from './confirm-latency.ts';
import { type DrillResult, drillRates, type Progress } from './drill-config.ts';
import { SUBSCRIBERS } from './drill-subscribers.ts';
import { COUNTED_METRICS, type CountedMetric, type ObservedMetrics } from './observed-metrics.ts';
import { STOP_WINDOW } from './subscriber-stop.ts';

/** A one-line progress bar on a terminal (plain lines every 10 % otherwise), written to stderr. */
export function progressBar(stream: NodeJS.WriteStream = process.stderr): Progress & { finish(): void } {
  let lastDecile = -1;
  const update = (done: number, total: number, status: string) => {
    const fraction = total === 0 ? 1 : Math.min(1, done / total);
    if (stream.isTTY) {
      const width = 30;
      const filled = Math.round(fraction * width);
      stream.write(
        `\r[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${(fraction * 100).toFixed(0).padStart(3)}% ${status}   `,
      );
      return;
    }
    const decile = Math.floor(fraction * 10);
    if (decile !== lastDecile) {
      lastDecile = decile;
      stream.write(`${(fraction * 100).toFixed(0)}% ${status}\n`);
    }
  };
  return Object.assign(update, {
    finish: () => {
      if (stream.isTTY) stream.write('\n');
    },
  });
}

function table(rows: readonly (readonly [string, string])[]): string {
  const width = Math.max(...rows.map(([label]) => label.length));
  return rows.map(([label, value]) => `  ${label.padEnd(width)}  ${value}`).join('\n');
}

/** Rows of cells, the first left-aligned and the others right-aligned, each column as wide as its widest cell. */
function grid(rows: readonly (readonly string[])[]): string {
  const columns = Math.max(...rows.map((row) => row.length));
  const widths = Array.from({ length: columns }, (_, column) =>
    Math.max(...rows.map((row) => (row[column] ?? '').length)),
  );
  return rows
    .map((row) =>
      `  ${row.map((cell, column) => (column === 0 ? cell.padEnd(widths[0] ?? 0) : cell.padStart(widths[column] ?? 0))).join('  ')}`.trimEnd(),
    )
    .join('\n');
}

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}

function milliseconds(ms: number | undefined): string {
  if (ms === undefined) return '–';
  return ms >= 10_000 ? seconds(ms) : `${Math.round(ms)} ms`;
}

function ratio(value: number | undefined): string {
  return value === undefined ? '–' : `×${value.toFixed(2)}`;
}

/**
 * The drill's report: faults injected, how the deliveries ended at each subscriber, the receipts, each
 * subscriber's confirm latency (the running one's during the other's stop and outside it), the metrics the
 * functions would have published, and the invariants.
 */
export function formatReport(result: DrillResult): string {
  const { config, stop, receipts } = result;
  const rates: Readonly<Record<string, number>> = drillRates(config);
  const applied = Object.entries(receipts.applied)
    .filter(([, count]) => count > 0)
    .map(([outcome, count]) => `${outcome} ${count}`)
    .join(', ');
  const lines = [
    `Fault drill (${result.mode}): ${config.orders} orders to ${SUBSCRIBERS.join(' and ')}, seed ${config.seed}, ` +
      `poison rate ${config.poisonRate}; ${stop.subscriber} stopped from ${STOP_WINDOW.from * 100} % to ` +
      `${STOP_WINDOW.to * 100} % of the writes (and until ${stop.running} had done all it could with what was ` +
      'written meanwhile)',
    '',
    'Faults injected',
    table(Object.entries(result.injected).map(([kind, count]) => [kind, `${count} (rate ${rates[kind]})`])),
    '',
    'Outcome',
    table([
      ...Object.entries(result.counts).map(([name, count]) => [name, String(count)] as const),
      ...SUBSCRIBERS.map(
        (subscriber) =>
          [
            `records handled by ${subscriber}'s consumer`,
            String(result.deliveries[subscriber] ?? 0),
          ] as const,
      ),
      ['time to write all orders', seconds(result.writeMs)],
      ['time to settle after that', seconds(result.settleMs)],
      ...(result.simulatedMs === undefined
        ? []
        : ([['simulated time', seconds(result.simulatedMs)]] as const)),
    ]),
    '',
    'Receipts',
    table([
      ['sent by the consumers', `${receipts.sent} in ${receipts.bodies} bodies`],
      [
        'lost / duplicated / delayed (injected)',
        `${receipts.lost} / ${receipts.duplicated} / ${receipts.delayed}`,
      ],
      ['resends of the deliveries whose receipt was lost', String(receipts.resendsAfterLoss)],
      ['found by the receipts function', applied === '' ? 'none' : applied],
    ]),
    '',
    "Confirm latency (a message's write → that subscriber's delivery CONFIRMED)",
    latencyTable(result),
    '',
    'Send metrics (relay and sweepers, per topic)',
    metricsTable(
      Object.keys(result.metrics.sends)
        .sort()
        .map((topic) => [topic, result.metrics.sends[topic]]),
      ['MessagesSent', 'SendFailures', 'RetriesScheduled', 'MessagesFailed'],
    ),
    '',
    'Consumer metrics (per subscriber and topic)',
    metricsTable(
      SUBSCRIBERS.flatMap((subscriber) => {
        const metrics: ObservedMetrics = result.metrics.consumers[subscriber] ?? {};
        return Object.keys(metrics)
          .sort()
          .map((topic) => [`${subscriber} ${topic}`, metrics[topic]] as const);
      }),
      COUNTED_METRICS.filter(
        (name) => !['MessagesSent', 'SendFailures', 'RetriesScheduled', 'MessagesFailed'].includes(name),
      ),
    ),
    '',
    'Invariants',
    table(result.invariants.map(({ name, ok, detail }) => [`${ok ? 'PASS' : 'FAIL'} ${name}`, detail])),
  ];
  return lines.join('\n');
}

/** Each subscriber's p50 and p95 over all its deliveries, those written during the stop and the others; the ratios. */
function latencyTable(result: DrillResult): string {
  const { stop, latency } = result;
  const row = (subscriber: string, written: string, summary: LatencySummary) => [
    subscriber,
    written,
    String(summary.count),
    milliseconds(summary.p50),
    milliseconds(summary.p95),
    milliseconds(summary.mean),
  ];
  const rows = [
    ['subscriber', 'messages written', 'deliveries', 'p50', 'p95', 'mean'],
    ...SUBSCRIBERS.flatMap((subscriber) => [
      row(subscriber, 'all', latency[subscriber].all),
      row(subscriber, `regular orders, during ${stop.subscriber}'s stop`, latency[subscriber].duringStop),
      row(subscriber, 'regular orders, outside it', latency[subscriber].outsideStop),
    ]),
  ];
  const ratios = SUBSCRIBERS.map((subscriber) => {
    const { duringStop, outsideStop } = latency[subscriber];
    const of = (key: 'p50' | 'p95' | 'mean') => ratio(latencyRatio(duringStop[key], outsideStop[key]));
    return (
      `  ${subscriber}'s latency for messages written during ${stop.subscriber}'s stop ÷ outside it: ` +
      `p50 ${of('p50')}, p95 ${of('p95')}, mean ${of('mean')}`
    );
  });
  return [
    grid(rows),
    ...ratios,
    `  ${stop.subscriber} stopped for ${seconds(stop.restartedAt - stop.stoppedAt)} ` +
      `(planned ${seconds(stop.plannedRestartAt - stop.stoppedAt)}${result.mode === 'memory' ? ', simulated' : ''})`,
  ].join('\n');
}

/** One row per metric, one column per (subscriber and) topic. */
function metricsTable(
  columns: readonly (readonly [string, ObservedMetrics[string] | undefined])[],
  names: readonly CountedMetric[],
): string {
  if (columns.length === 0) return '  (none)';
  return grid([
    ['metric', ...columns.map(([name]) => name)],
    ...names.map((name) => [name, ...columns.map(([, metrics]) => String(metrics?.counts[name] ?? 0))]),
  ]);
}
