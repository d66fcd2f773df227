import { deliveryKey } from './drill-subscribers.ts';
import type { ConsumerLogLine } from './unreported-commits.ts';

/**
 * What went wrong for each delivery at its subscriber's end, as the consumers logged it (a record failed, handed
 * back, or a parked message's apply failed) and as the receipt faults did it (lost, delayed): the delays a delivery
 * owes to faults of its own, which the stop's check tells from a wait on another subscriber.
 * @example
 * const trouble = new DeliveryTrouble();
 * const logger = commits.logger((line) => trouble.noteLine('inventory', line));
 */
export class DeliveryTrouble {
  readonly #notes = new Map<string, string>();

  /** Notes what a consumer's warning line says of its message. */
  noteLine(subscriber: string, line: ConsumerLogLine): void {
    if (line.level !== 'warn' || typeof line.attributes.messageId !== 'string') return;
    const disposition =
      typeof line.attributes.disposition === 'string' ? ` (${line.attributes.disposition})` : '';
    this.note(
      deliveryKey(line.attributes.messageId, subscriber),
      `${line.message}${disposition} at its consumer`,
    );
  }

  /** Notes the messages of an SQS call to `subscriber`'s queue that timed out: sent nowhere, left to reconciliation. */
  noteTimeout(subscriber: string | undefined, messages: readonly { readonly messageId: string }[]): void {
    if (subscriber === undefined) return;
    for (const { messageId } of messages)
      this.note(deliveryKey(messageId, subscriber), 'its send timed out (outcome unknown)');
  }

  /** Notes a delivery (its row's key) whose stream record the relay never got: the sweeper sends it after the grace. */
  noteStreamMiss(key: string, what: string): void {
    this.note(key, `its stream record ${what}`);
  }

  /** Notes a delivery (its row's key) whose sender stopped between its SENT mark and its send. */
  noteCrash(key: string): void {
    this.note(key, 'its sender stopped after its SENT mark');
  }

  /** Notes `what` of the delivery `key` (`<messageId>#<subscriber>`); the first note stays. */
  note(key: string, what: string): void {
    if (!this.#notes.has(key)) this.#notes.set(key, what);
  }

  /** The first trouble noted of the delivery `key`, if any. */
  of(key: string): string | undefined {
    return this.#notes.get(key);
  }
}
