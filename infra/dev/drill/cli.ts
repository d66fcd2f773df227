import { Command, InvalidArgumentError } from 'commander';
import type { DrillConfig, DrillResult } from './drill-config.ts';
import { uniformRates } from './faults.ts';
import { formatReport, progressBar } from './report.ts';

function positiveInteger(value: string): number {
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed <= 0) throw new InvalidArgumentError('must be a positive integer');
  return parsed;
}

function rate(value: string): number {
  const parsed = Number(value);
  if (!Number.isFinite(parsed) || parsed < 0 || parsed > 1)
    throw new InvalidArgumentError('must be between 0 and 1');
  return parsed;
}

const program = new Command()
  .name('drill')
  .description(
    "Drives orders through the example's three services (orders to inventory and loyalty, confirmed by receipts) while injecting faults at every hop, receipts included, and stopping loyalty's consumer for a stretch; lets it settle, and checks the invariants per subscriber from the tables. Exits 1 if any invariant breaks.",
  )
  .option('--scale', 'run against in-memory tables and queues on a simulated clock (default 100000 orders)')
  .option('--orders <n>', 'orders to create (default: 200 on moto, 100000 with --scale)', positiveInteger)
  .option(
    '--fault-rate <r>',
    'rate of every injected fault but the two below (receipts lost, duplicated and delayed included)',
    rate,
    0.1,
  )
  .option(
    '--unknown-outcome-rate <r>',
    "rate of the faults that leave a send's outcome unknown (an SQS timeout, a crash between the SENT mark and the send): each costs its messages a reconciliation round, whose deadline doubles round after round",
    rate,
    0.02,
  )
  .option(
    '--poison-rate <r>',
    'fraction of orders whose messages SQS rejects forever, at every subscriber',
    rate,
    0.01,
  )
  .option(
    '--cancel-rate <r>',
    'fraction of the orders cancelled too (half right after the create, racing it; the others later)',
    rate,
    0.3,
  )
  .option(
    '--hot-conflict-rate <r>',
    'with --scale: chance per try that a transaction on the hot SKU is cancelled with TransactionConflict (on moto the conflicts are real)',
    rate,
    0.6,
  )
  .option('--seed <n>', 'random seed (replay a run with the seed it printed)', positiveInteger)
  .option('--skus <n>', 'distinct SKUs', positiveInteger, 50)
  .option('--stock <n>', 'initial stock per SKU (low values make some orders out of stock)', positiveInteger);

async function main(): Promise<void> {
  const options = program.parse().opts<{
    scale?: boolean;
    orders?: number;
    faultRate: number;
    unknownOutcomeRate: number;
    poisonRate: number;
    cancelRate: number;
    hotConflictRate: number;
    seed?: number;
    skus: number;
    stock?: number;
  }>();
  const orders = options.orders ?? (options.scale ? 100_000 : 200);
  const config: DrillConfig = {
    orders,
    rates: {
      ...uniformRates(options.faultRate),
      sqsTimeout: options.unknownOutcomeRate,
      relayCrashAfterSend: options.unknownOutcomeRate,
    },
    poisonRate: options.poisonRate,
    cancelRate: options.cancelRate,
    hotConflictRate: options.hotConflictRate,
    seed: options.seed ?? Math.floor(Math.random() * 1_000_000) + 1,
    skus: options.skus,
    // Enough for about 90 % of the orders (≈ 6 units each) less what the cancels give back, so out-of-stock
    // rejections (and cancels of rejected orders) happen too.
    initialStock:
      options.stock ?? Math.max(1, Math.floor((orders * 6 * 0.9 * (1 - options.cancelRate)) / options.skus)),
  };
  const bar = progressBar();
  let result: DrillResult;
  if (options.scale) {
    // The X-Ray SDK the handler factories load tracks every promise (an async hook) unless told it is in manual mode;
    // the scale drill traces nothing, and its millions of promises ran a fifth slower for it.
    process.env.AWS_XRAY_MANUAL_MODE ??= '1';
    const { runMemoryDrill } = await import('./memory-drill.ts');
    result = await runMemoryDrill(config, bar);
  } else {
    const { runMotoDrill } = await import('./moto-drill.ts');
    result = await runMotoDrill(config, bar);
  }
  bar.finish();
  process.stdout.write(`${formatReport(result)}\n`);
  process.exitCode = result.invariants.every((invariant) => invariant.ok) ? 0 : 1;
}

let finished = false;
// An emptied event loop with the drill unfinished means a promise nobody will settle: say so, fail loudly.
process.on('beforeExit', () => {
  if (!finished) {
    process.stderr.write('drill failed: the event loop emptied before the drill finished\n');
    process.exitCode = 2;
  }
});

main()
  .then(() => {
    finished = true;
  })
  .catch((error: unknown) => {
    finished = true;
    process.stderr.write(
      `drill failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    process.exitCode = 2;
  });
