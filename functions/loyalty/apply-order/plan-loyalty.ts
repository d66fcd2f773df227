import { type PlanEffect, PoisonMessageError } from 'serverless-outbox';
import { ORDER_CANCELLED, ORDER_CREATED } from '../../orders/order.ts';
import { planAward } from './plan-award.ts';
import { planRevocation } from './plan-revocation.ts';

/**
 * The loyalty consumer's plan, by topic: `order.created` awards the order's points (see `planAward`),
 * `order.cancelled` revokes them (see `planRevocation`). Any other topic is poison.
 * @example
 * createConsumerHandler({ plan: (env) => planLoyalty(requireEnv(env, LOYALTY_TABLE), () => new Date()) });
 */
export function planLoyalty(loyaltyTable: string, clock: () => Date): PlanEffect {
  const byTopic: Readonly<Record<string, PlanEffect>> = {
    [ORDER_CREATED]: planAward(loyaltyTable, clock),
    [ORDER_CANCELLED]: planRevocation(loyaltyTable, clock),
  };
  return (message) => {
    const plan = Object.hasOwn(byTopic, message.topic) ? byTopic[message.topic] : undefined;
    if (plan === undefined) {
      throw new PoisonMessageError(
        `the loyalty consumer reads ${ORDER_CREATED} and ${ORDER_CANCELLED}, not ${message.topic}`,
      );
    }
    return plan(message);
  };
}
