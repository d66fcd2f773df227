/** The sweeper's Lambda entry point, as `TransactionalOutbox` deploys it. */
import { createSweeperHandler } from '../sweeper-handler.ts';

/** Lambda entry point (EventBridge schedule). */
export const handler = createSweeperHandler();
