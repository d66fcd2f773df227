import { countOutbox, dynamoAdminDeps } from '../../../shared/admin/index.ts';
import { DEFAULT_SWEEPER_SETTINGS, type SweepReport, sweep } from '../../../shared/memory/index.ts';
import { SWEEPER_DEFAULTS } from '../../constructs/index.ts';
import { AWS_PRICES } from './aws-prices.ts';
import { type BenchOptions, type BenchSection, formatNumber, median, repeat } from './bench-section.ts';
import { ExamplePipeline } from './example-pipeline.ts';
import { delayedDocumentClient, delayedPublisher, pause } from './simulated-latency.ts';

const SECONDS_PER_MONTH = 30 * 86_400;

/** One idle sweeper run: how long it took and why it ended. */
interface IdleRun {
  readonly ms: number;
  readonly report: SweepReport;
}

/**
 * One scheduled sweeper run on an empty outbox as the sweeper function makes it: the sweep and the backlog gauges'
 * index reads side by side, every DynamoDB call delayed as over the network.
 */
async function idleRun(options: BenchOptions): Promise<IdleRun> {
  const pipeline = new ExamplePipeline({
    client: (client) => delayedDocumentClient(client, { latencyMs: options.dynamoLatencyMs }),
    publisher: (publisher) => delayedPublisher(publisher, { latencyMs: options.sqsLatencyMs }),
  });
  const base = pipeline.relayDeps('sweeper');
  const client = pipeline.client('sweeper');
  const timeoutMs = SWEEPER_DEFAULTS.timeout.toMilliseconds();
  const started = performance.now();
  const [report] = await Promise.all([
    sweep({
      ...base,
      store: pipeline.store('sweeper'),
      owner: 'idle-run',
      deliveryCheckFor: () => undefined,
      remainingMs: () => started + timeoutMs - performance.now(),
      sleep: pause,
      settings: DEFAULT_SWEEPER_SETTINGS,
    }),
    countOutbox({
      outbox: dynamoAdminDeps({ client, outboxTable: 'outbox', auditTable: 'audit' }).outbox,
      dueShards: DEFAULT_SWEEPER_SETTINGS.dueShards,
      clock: () => new Date(),
    }),
  ]);
  return { ms: performance.now() - started, report };
}

/** Monthly Lambda cost of a schedule whose every run lasts `runMs` at `memoryMb`. */
export function scheduleCost(schedule: {
  readonly everyMinutes: number;
  readonly runMs: number;
  readonly memoryMb: number;
}): { runs: number; gbSeconds: number; dollars: number } {
  const runs = SECONDS_PER_MONTH / 60 / schedule.everyMinutes;
  const gbSeconds = runs * (schedule.runMs / 1_000) * (schedule.memoryMb / 1_024);
  const dollars =
    gbSeconds * AWS_PRICES.lambdaArmPerGbSecond + (runs / 1_000_000) * AWS_PRICES.lambdaPerMillionRequests;
  return { runs, gbSeconds, dollars };
}

/** Bench section 7: what the sweeper costs when nothing is due, per schedule, against the recovery delay. */
export async function measureIdleCost(options: BenchOptions): Promise<BenchSection> {
  const runs = await repeat(Math.max(3, options.repeats), () => idleRun(options));
  if (runs.some((run) => run.report.ended !== 'IDLE' || run.report.claimed !== 0)) {
    throw new Error('an idle sweeper run did not end idle');
  }
  const measuredMs = median(runs.map((run) => run.ms));
  // Lambda bills the handler's duration; the function's own overhead (logging, metrics) is assumed to add 20 ms.
  const billedMs = measuredMs + 20;
  const memoryMb = SWEEPER_DEFAULTS.memorySize;
  const before = scheduleCost({ everyMinutes: 1, runMs: 55_000, memoryMb });
  const rows = [1, 5, 15].map((everyMinutes) => {
    const cost = scheduleCost({ everyMinutes, runMs: billedMs, memoryMb });
    return [
      `every ${everyMinutes} min, ends at once`,
      formatNumber(billedMs),
      formatNumber(cost.gbSeconds),
      `$${formatNumber(cost.dollars, 2)}`,
      `≤ ${everyMinutes} min`,
    ];
  });
  const now = scheduleCost({ everyMinutes: 1, runMs: billedMs, memoryMb });
  return {
    title: `Idle cost: the sweeper (${memoryMb} MB, arm64) on an outbox with nothing due`,
    columns: [
      'schedule',
      'ms per run',
      'GB-s / month',
      'Lambda $ / month',
      'extra delay of a lost record or retry',
    ],
    rows: [
      [
        'every 1 min, runs its 55 s (before)',
        formatNumber(55_000),
        formatNumber(before.gbSeconds),
        `$${formatNumber(before.dollars, 2)}`,
        '≈ 1 s',
      ],
      ...rows,
    ],
    targets: [
      {
        name: 'idle run ends at once',
        measured: `${formatNumber(measuredMs)} ms (${runs[0]?.report.rounds ?? 0} round), $${formatNumber(now.dollars, 2)}/month`,
        target: 'ends without waiting; ≪ $16/month',
        holds: measuredMs < 5_000,
      },
    ],
    notes: [
      `measured: one sweep round, the look-ahead and the backlog gauges' reads with DynamoDB at ${options.dynamoLatencyMs} ms per call, +20 ms assumed for the function's own overhead`,
      'the schedule stays at 1 minute: a run that finds work keeps going (at most 600 msg/s) and looks ahead, so a retry due during a run is sent within a second; only work that falls due between runs waits for the next one',
      `reads per idle run: ${DEFAULT_SWEEPER_SETTINGS.dueShards} due-index pages, ${DEFAULT_SWEEPER_SETTINGS.dueShards} one-entry look-aheads and the gauges' ${DEFAULT_SWEEPER_SETTINGS.dueShards * 3} partitions (½ read unit each)`,
    ],
  };
}
