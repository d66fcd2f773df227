/**
 * Topics come from messages, so a topic named `__proto__` must count like any other: as an own entry, never
 * as a write into Object.prototype (which would break every later marshall in the container).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { type ConsumeCountsByTopic, consumeCountsOf } from '../../../shared/consumer/consume-counts.ts';
import { type SendCountsByTopic, topicCounts } from '../../../shared/relay/send-counts.ts';

afterEach(() => {
  // A failing run must not poison the other tests of this worker.
  for (const key of ['applied', 'deadLettered', 'accepted', 'failed']) {
    delete (Object.prototype as Record<string, unknown>)[key];
  }
});

describe.each(['__proto__', 'constructor', 'toString', 'hasOwnProperty'])('a topic named %s', (topic) => {
  it('is counted as its own entry by the consumer, and Object.prototype is untouched', () => {
    const counts: ConsumeCountsByTopic = {};
    consumeCountsOf(counts, topic).deadLettered += 1;
    consumeCountsOf(counts, topic).deadLettered += 1;

    expect(Object.hasOwn(counts, topic)).toBe(true);
    expect(Object.entries(counts)).toEqual([[topic, expect.objectContaining({ deadLettered: 2 })]]);
    expect(Object.hasOwn(Object.prototype, 'deadLettered')).toBe(false);
    expect(({} as Record<string, unknown>).deadLettered).toBeUndefined();
  });

  it('is counted as its own entry by the relay and the sweeper, and Object.prototype is untouched', () => {
    const counts: SendCountsByTopic = {};
    topicCounts(counts, topic).failed += 1;

    expect(Object.entries(counts)).toEqual([[topic, expect.objectContaining({ failed: 1 })]]);
    expect(Object.hasOwn(Object.prototype, 'failed')).toBe(false);
  });
});
