/** The archiver's Lambda entry point, as `TransactionalOutbox` deploys it when `archive` is set. */
import { createArchiverHandler } from '../archiver-handler.ts';

/** Lambda entry point (the outbox stream, TTL deletions only). */
export const handler = createArchiverHandler();
