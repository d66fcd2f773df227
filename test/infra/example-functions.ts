/** The example stack's functions by construct name, for tests that go through them one by one. */

/** The functions that handle order messages: the outbox's own, the inventory consumer and the two order writers. */
export const ORDER_MESSAGE_FUNCTIONS = [
  'Outbox/Relay',
  'Outbox/Sweeper',
  'Outbox/InventoryConsumer',
  'Outbox/Admin',
  'CreateOrder',
  'CancelOrder',
] as const;

/** Every function of the example stack: those of {@link ORDER_MESSAGE_FUNCTIONS}, then the order and stock reads and writes. */
export const EXAMPLE_FUNCTIONS = [...ORDER_MESSAGE_FUNCTIONS, 'GetOrder', 'PutStock', 'GetStock'] as const;
