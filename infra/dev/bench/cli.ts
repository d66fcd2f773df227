import { Command, InvalidArgumentError, Option } from 'commander';
import type { BenchOptions, BenchSection, BenchSize } from './bench-section.ts';
import { formatSection, missedTargets } from './format-bench.ts';
import { BENCH_SECTIONS } from './run-bench.ts';

function nonNegativeInteger(value: string): number {
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < 0) throw new InvalidArgumentError('must be a whole number ≥ 0');
  return parsed;
}

function sectionList(value: string): string[] {
  const names = value.split(',').map((name) => name.trim());
  const known = BENCH_SECTIONS.map((section) => section.name);
  const unknown = names.filter((name) => !known.includes(name));
  if (unknown.length > 0) {
    throw new InvalidArgumentError(`unknown section ${unknown.join(', ')}; sections: ${known.join(', ')}`);
  }
  return names;
}

const program = new Command()
  .name('bench')
  .description(
    'Measures throughput, capacity units, fan-out, bundles, latency, recovery and cost side by side in one run and prints one table per section. Targets are reported, never asserted: compare ratios from one run.',
  )
  .addOption(
    new Option('--size <size>', 'tiny (seconds, for tests) or full')
      .choices(['tiny', 'full'])
      .default('full'),
  )
  .option(
    '--repeats <n>',
    'repetitions per timed measurement (median reported; default 5, tiny 1)',
    nonNegativeInteger,
  )
  .option('--sqs-latency <ms>', 'simulated latency of one SQS call', nonNegativeInteger, 20)
  .option('--dynamo-latency <ms>', 'simulated latency of one DynamoDB call', nonNegativeInteger, 8)
  .option('--sns-latency <ms>', 'simulated latency of one SNS publish', nonNegativeInteger, 20)
  .option(
    '--only <sections>',
    `comma-separated: ${BENCH_SECTIONS.map((s) => s.name).join(', ')}`,
    sectionList,
  );

async function main(): Promise<void> {
  const opts = program.parse().opts<{
    size: BenchSize;
    repeats?: number;
    sqsLatency: number;
    dynamoLatency: number;
    snsLatency: number;
    only?: string[];
  }>();
  const options: BenchOptions = {
    size: opts.size,
    repeats: Math.max(1, opts.repeats ?? (opts.size === 'tiny' ? 1 : 5)),
    sqsLatencyMs: opts.sqsLatency,
    dynamoLatencyMs: opts.dynamoLatency,
    snsLatencyMs: opts.snsLatency,
  };
  console.log(
    `bench: size ${options.size}, ${options.repeats} repeat(s), simulated latency SQS ${options.sqsLatencyMs} ms, DynamoDB ${options.dynamoLatencyMs} ms, SNS ${options.snsLatencyMs} ms, node ${process.version}\n`,
  );
  const only = opts.only ?? BENCH_SECTIONS.map((s) => s.name);
  const sections: BenchSection[] = [];
  for (const { name, measure } of BENCH_SECTIONS) {
    if (!only.includes(name)) continue;
    const section = await measure(options);
    sections.push(section);
    console.log(`${formatSection(section, sections.length)}\n`);
  }
  const missed = missedTargets(sections);
  console.log(
    missed.length === 0 ? 'every target met' : `targets missed:\n${missed.map((m) => `  ${m}`).join('\n')}`,
  );
}

await main();
