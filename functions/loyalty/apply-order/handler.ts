import { requireEnv } from 'serverless-outbox';
import { createConsumerHandler } from 'serverless-outbox/lambda';
import { LOYALTY_TABLE } from '../loyalty-table.ts';
import { customerConflictKeys } from './customer-conflict-keys.ts';
import { planLoyalty } from './plan-loyalty.ts';

/**
 * The loyalty consumer: `order.created` awards the order's points, `order.cancelled` revokes them, each once and
 * in the order's sequence; orders of different customers apply at once. LOYALTY_TABLE, plus `addConsumer`'s.
 */
export const handler = createConsumerHandler({
  serviceName: 'loyalty-consumer',
  plan: (env) => planLoyalty(requireEnv(env, LOYALTY_TABLE), () => new Date()),
  conflictKeys: customerConflictKeys,
});
