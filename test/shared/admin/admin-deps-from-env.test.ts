import { describe, expect, it } from 'vitest';
import { SqsAdminQueues } from '../../../shared/aws/sqs-admin-queues.ts';
import { ConfigError } from '../../../shared/errors.ts';
import { adminDeps, adminDepsOptions } from '../../../shared/lambda/admin-deps-from-env.ts';

const QUEUE = 'https://sqs.eu-west-1.amazonaws.com/123456789012/order-events';
const env = {
  AWS_REGION: 'eu-west-1',
  OUTBOX_TABLE: 'outbox-table',
  AUDIT_TABLE: 'audit-table',
  TOPIC_QUEUES: JSON.stringify({ 'order.created': QUEUE }),
  DEAD_LETTER_QUEUES: JSON.stringify({ 'order.created': `${QUEUE}-dlq` }),
  DELIVERY_INBOXES: JSON.stringify({ 'order.created': 'inventory-inbox' }),
  DUE_SHARDS: '16',
  RETENTION_DAYS: '7',
};

describe('adminDeps', () => {
  it('reads the admin settings from the environment, over the SQS adapter', () => {
    const deps = adminDeps(env);

    expect({ ...adminDepsOptions(env), ...deps }).toMatchObject({
      outboxTable: 'outbox-table',
      auditTable: 'audit-table',
      topicQueues: { 'order.created': QUEUE },
      deadLetterQueues: { 'order.created': `${QUEUE}-dlq` },
      deliveryInboxes: { 'order.created': 'inventory-inbox' },
      dueShards: 16,
      retentionDays: 7,
    });
    expect(deps.queues).toBeInstanceOf(SqsAdminQueues);
  });

  it('makes time-ordered audit ids', () => {
    const { newId } = adminDeps(env);
    const ids = Array.from({ length: 5 }, () => newId());

    expect([...ids].sort()).toEqual(ids);
    expect(ids.every((value) => /^[0-9A-HJKMNP-TV-Z]{26}$/.test(value))).toBe(true);
  });

  it('fails at start naming a missing setting', () => {
    const { AUDIT_TABLE: _missing, ...withoutAudit } = env;

    expect(() => adminDeps(withoutAudit)).toThrow(ConfigError);
    expect(() => adminDeps(withoutAudit)).toThrow(/AUDIT_TABLE is not set/);
  });

  it('fails at start when a dead-letter queue belongs to no routed topic', () => {
    const stray = { ...env, DEAD_LETTER_QUEUES: JSON.stringify({ 'order.shipped': `${QUEUE}-dlq` }) };

    expect(() => adminDeps(stray)).toThrow(
      /DEAD_LETTER_QUEUES names topic order.shipped, which TOPIC_QUEUES does not route/,
    );
  });

  it('fails at start when one dead-letter queue serves two queues', () => {
    const shared = {
      ...env,
      TOPIC_QUEUES: JSON.stringify({ 'order.created': QUEUE, 'payment.captured': `${QUEUE}-payments` }),
      DEAD_LETTER_QUEUES: JSON.stringify({
        'order.created': `${QUEUE}-dlq`,
        'payment.captured': `${QUEUE}-dlq`,
      }),
    };

    expect(() => adminDeps(shared)).toThrow(/gives .* to two queues/);
  });
});
