/**
 * The reserved namespace of the outbox's own messages (see `control-message.ts`), apart from everything else so that
 * the envelope's topic check can refuse it without importing what reads those messages. Pure.
 */

/** What every topic of the outbox's own messages starts with; a producer's topic never does. */
export const CONTROL_TOPIC_PREFIX = 'outbox.';

/** The topics of the outbox's own messages. */
export const ControlTopic = {
  /** Delete what the subscriber still holds of an erased aggregate's messages (its parked copies). */
  ERASE: 'outbox.erase',
  /** Move the subscriber's cursor of an order key past a seq that will never come, as an operator's skip. */
  SKIP: 'outbox.skip',
} as const;

/** One of the {@link ControlTopic} values. */
export type ControlTopic = (typeof ControlTopic)[keyof typeof ControlTopic];

/** Every control topic: each subscriber may be sent (and may confirm) any of them. */
export const CONTROL_TOPICS: readonly ControlTopic[] = Object.values(ControlTopic);

/** Whether `topic` is in the reserved namespace of the outbox's own messages. */
export function isControlTopic(topic: string): boolean {
  return topic.startsWith(CONTROL_TOPIC_PREFIX);
}
