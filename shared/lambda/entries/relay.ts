/** The stream relay's Lambda entry point, as `TransactionalOutbox` deploys it. */
import { createRelayHandler } from '../relay-handler.ts';

/** Lambda entry point (DynamoDB stream of the outbox table). */
export const handler = createRelayHandler();
