import { type DrillResult, drillRates, type Progress } from './drill-config.ts';
import { COUNTED_METRICS, type ObservedMetrics, percentile } from './observed-metrics.ts';

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

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}

/**
 * The drill's report table: faults injected, how messages ended (the rogue ones apart), the hot SKU's burst
 * (conflicts, dead letters), timings, the metrics the functions would have published per topic, and invariants.
 */
export function formatReport(result: DrillResult): string {
  const { config } = result;
  const rates: Readonly<Record<string, number>> = drillRates(config);
  const lines = [
    `Fault drill (${result.mode}): ${config.orders} orders, seed ${config.seed}, poison rate ${config.poisonRate}`,
    '',
    'Faults injected',
    table(Object.entries(result.injected).map(([kind, count]) => [kind, `${count} (rate ${rates[kind]})`])),
    '',
    'Outcome',
    table([
      ...Object.entries(result.counts).map(([name, count]) => [name, String(count)] as const),
      ['deliveries to the consumer', String(result.deliveries)],
      ['time to write all orders', seconds(result.writeMs)],
      ['time to settle after that', seconds(result.settleMs)],
      ...(result.simulatedMs === undefined
        ? []
        : ([['simulated time', seconds(result.simulatedMs)]] as const)),
    ]),
    '',
    'Metrics observed (per topic)',
    metricsTable(result.metrics),
    '',
    'Invariants',
    table(result.invariants.map(({ name, ok, detail }) => [`${ok ? 'PASS' : 'FAIL'} ${name}`, detail])),
  ];
  return lines.join('\n');
}

/** One row per metric, one column per topic; ConfirmLatencyMs as its p50, p95 and max. */
function metricsTable(metrics: ObservedMetrics): string {
  const topics = Object.keys(metrics).sort();
  if (topics.length === 0) return '  (none)';
  const latency = (p: number) => (topic: string) => {
    const value = percentile(metrics[topic]?.confirmLatenciesMs ?? [], p);
    return value === undefined ? '–' : `${Math.round(value)} ms`;
  };
  const rows: (readonly string[])[] = [
    ['metric', ...topics],
    ...COUNTED_METRICS.map((name) => [
      name,
      ...topics.map((topic) => String(metrics[topic]?.counts[name] ?? 0)),
    ]),
    ['ConfirmLatencyMs p50', ...topics.map(latency(50))],
    ['ConfirmLatencyMs p95', ...topics.map(latency(95))],
    ['ConfirmLatencyMs max', ...topics.map(latency(100))],
  ];
  const widths = topics.map((_, column) => Math.max(...rows.map((row) => (row[column + 1] ?? '').length)));
  const labelWidth = Math.max(...rows.map(([label]) => (label ?? '').length));
  return rows
    .map(([label = '', ...cells]) =>
      `  ${label.padEnd(labelWidth)}  ${cells.map((cell, column) => cell.padStart(widths[column] ?? 0)).join('  ')}`.trimEnd(),
    )
    .join('\n');
}
