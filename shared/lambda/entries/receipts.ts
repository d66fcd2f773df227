/** The producer's receipts function's Lambda entry point, as `TransactionalOutbox` deploys it. */
import { createReceiptsHandler } from '../receipts-handler.ts';

/** Lambda entry point (SQS: the outbox's receipt queue). */
export const handler = createReceiptsHandler();
