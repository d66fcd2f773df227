import { describe, expect, it } from 'vitest';
import {
  deliveryKey,
  isSubscriber,
  messageIdOfDelivery,
  RUNNING_SUBSCRIBER,
  STOPPED_SUBSCRIBER,
  SUBSCRIBERS,
  subscriberOrderKey,
} from '../../../infra/dev/drill/drill-subscribers.ts';
import { ORDER_SUBSCRIBERS } from '../../../infra/stacks/orders-stack.ts';

describe("the drill's subscribers", () => {
  it("are the order service's, one stopped and the other running", () => {
    expect([...SUBSCRIBERS]).toEqual(Object.values(ORDER_SUBSCRIBERS));
    expect(new Set([STOPPED_SUBSCRIBER, RUNNING_SUBSCRIBER])).toEqual(new Set(SUBSCRIBERS));
    expect(isSubscriber('loyalty')).toBe(true);
    expect(isSubscriber('shipping')).toBe(false);
  });

  it("key a delivery and a sequence per subscriber, and read a delivery's message back", () => {
    expect(deliveryKey('m-1', 'loyalty')).toBe('m-1#loyalty');
    expect(subscriberOrderKey('order#o-1', 'inventory')).toBe('order#o-1#inventory');
    expect(messageIdOfDelivery('m-1#loyalty', 'loyalty')).toBe('m-1');
    expect(messageIdOfDelivery('m-1#loyalty', 'inventory')).toBeUndefined();
    expect(messageIdOfDelivery('#loyalty', 'loyalty')).toBeUndefined();
  });
});
