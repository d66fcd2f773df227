import { type MockInstance, vi } from 'vitest';

/** One embedded-metric-format document as Powertools Metrics prints it. */
export interface EmfDocument {
  readonly _aws: {
    readonly Timestamp: number;
    readonly CloudWatchMetrics: readonly {
      readonly Namespace: string;
      readonly Dimensions: readonly (readonly string[])[];
      readonly Metrics: readonly { readonly Name: string; readonly Unit: string }[];
    }[];
  };
  readonly [key: string]: unknown;
}

/** One value of one metric, with what it was published under. */
export interface PublishedValue {
  readonly namespace: string;
  readonly dimensions: readonly (readonly string[])[];
  readonly service: unknown;
  readonly topic: unknown;
  /** Set on a subscriber's figures only. */
  readonly subscriber: unknown;
  readonly unit: string;
  readonly value: number;
}

/** What the handlers printed to stdout while captured. */
export interface EmfCapture {
  documents(): EmfDocument[];
  /** Every value of metric `name` (a document may hold several values of one metric). */
  values(name: string): PublishedValue[];
  restore(): void;
}

/**
 * Captures the EMF documents Powertools Metrics writes to stdout (through its own `Console` on
 * `process.stdout`); anything else written goes through.
 */
export function captureEmf(): EmfCapture {
  const captured: EmfDocument[] = [];
  const original = process.stdout.write.bind(process.stdout);
  const spy: MockInstance = vi.spyOn(process.stdout, 'write').mockImplementation(((
    chunk: unknown,
    ...rest: unknown[]
  ) => {
    const text = typeof chunk === 'string' ? chunk : String(chunk);
    const documents = text
      .split('\n')
      .filter((line) => line.startsWith('{') && line.includes('"_aws"'))
      .map((line) => JSON.parse(line) as EmfDocument);
    if (documents.length === 0) return (original as (...args: unknown[]) => boolean)(chunk, ...rest);
    captured.push(...documents);
    const done = rest.find((argument) => typeof argument === 'function') as (() => void) | undefined;
    done?.();
    return true;
  }) as typeof process.stdout.write);
  return {
    documents: () => [...captured],
    values(name) {
      return captured.flatMap((document) =>
        document._aws.CloudWatchMetrics.flatMap((directive) =>
          directive.Metrics.filter((metric) => metric.Name === name).flatMap((metric) => {
            const raw = document[name];
            const values = Array.isArray(raw) ? (raw as number[]) : [raw as number];
            return values.map((value) => ({
              namespace: directive.Namespace,
              dimensions: directive.Dimensions,
              service: document.service,
              topic: document.topic,
              subscriber: document.subscriber,
              unit: metric.Unit,
              value,
            }));
          }),
        ),
      );
    },
    restore: () => spy.mockRestore(),
  };
}

/**
 * The values of a metric published per topic as `{ topic: value }` (summed when a topic has several); a
 * subscriber's figures are left out.
 */
export function byTopic(values: readonly PublishedValue[]): Record<string, number> {
  const sums: Record<string, number> = {};
  for (const { topic, subscriber, value } of values) {
    if (subscriber !== undefined) continue;
    sums[String(topic)] = (sums[String(topic)] ?? 0) + value;
  }
  return sums;
}

/**
 * The values of a metric published per subscriber: `{ '<subscriber>': value }` over all its topics, and
 * `{ '<subscriber> <topic>': value }` per topic (summed when there are several).
 */
export function bySubscriber(values: readonly PublishedValue[]): Record<string, number> {
  const sums: Record<string, number> = {};
  for (const { topic, subscriber, value } of values) {
    if (subscriber === undefined) continue;
    const key = topic === undefined ? String(subscriber) : `${String(subscriber)} ${String(topic)}`;
    sums[key] = (sums[key] ?? 0) + value;
  }
  return sums;
}
