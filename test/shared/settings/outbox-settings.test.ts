import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../../shared/errors.ts';
import { OUTBOX_WRITER_DEFAULTS, OUTBOX_WRITER_RANGES } from '../../../shared/outbox/outbox-defaults.ts';
import { DEFAULT_RETRY_POLICY, type RetryPolicy } from '../../../shared/retry/retry-policy.ts';
import {
  ADMIN_SETTINGS,
  CONSUMER_SETTINGS,
  OutboxSettings,
  RELAY_SETTINGS,
  SWEEPER_SETTINGS,
  WRITER_SETTINGS,
} from '../../../shared/settings/outbox-settings.ts';
import { readSetting, type Setting } from '../../../shared/settings/setting.ts';

const QUEUE = 'https://sqs.eu-west-1.amazonaws.com/123456789012/order-created';
const fast: RetryPolicy = { baseDelayMs: 500, multiplier: 3, maxDelayMs: 30_000, maxAttempts: 4 };
const ordered = { scope: 'order', gapTimeoutMs: 300_000 };

type SettingKey = keyof typeof OutboxSettings;

/** For every setting: a text it accepts with the value it reads, and texts it must refuse. */
const CASES: Record<SettingKey, { valid: [string, unknown]; malformed: readonly string[] }> = {
  outboxTable: { valid: ['outbox-table', 'outbox-table'], malformed: ['', ' ', 'ab', 'outbox table', 'a/b'] },
  topicQueues: {
    valid: [JSON.stringify({ 'order.created': QUEUE }), { 'order.created': QUEUE }],
    malformed: ['', '{order.created:', '{"order.created":"order-created"}', `["${QUEUE}"]`, 'null'],
  },
  retryPolicies: {
    valid: [JSON.stringify({ 'order.created': fast }), { 'order.created': fast }],
    malformed: ['nope', '[]', JSON.stringify({ 'order.created': { ...fast, maxAttempts: 0 } })],
  },
  subscriberRetryPolicies: {
    valid: [JSON.stringify({ loyalty: fast }), { loyalty: fast }],
    malformed: [
      '[]',
      JSON.stringify({ Loyalty: fast }),
      JSON.stringify({ loyalty: { ...fast, multiplier: 0 } }),
    ],
  },
  confirmDeadlineMs: { valid: ['60000', 60_000], malformed: ['', '999', '43200001', '1e4', '5 min'] },
  dueShards: { valid: ['16', 16], malformed: ['0', '65', '-1', '8.0', 'eight'] },
  sweeperMaxMessagesPerSecond: { valid: ['1000', 1_000], malformed: ['0', '10001', '1.5', 'fast'] },
  streamGraceMs: { valid: ['0', 0], malformed: ['-1', '1.5', ' ', '43200001'] },
  retentionDays: { valid: ['7', 7], malformed: ['0', '3651', '0x10', '7d'] },
  auditTable: { valid: ['outbox-audit', 'outbox-audit'], malformed: ['', 'au', 'audit table'] },
  archiveBucket: {
    valid: ['shop-outbox-archive', 'shop-outbox-archive'],
    malformed: ['', 'ab', 'Upper-Case', 'under_score', '-leading', 'trailing-'],
  },
  deadLetterQueues: {
    valid: [JSON.stringify({ 'order.created': QUEUE }), { 'order.created': QUEUE }],
    malformed: ['', '{"order.created":"order-created-dlq"}', `["${QUEUE}"]`, '{"Order":"x"}'],
  },
  deliveryInboxes: {
    valid: [JSON.stringify({ 'order.created': 'inventory-inbox' }), { 'order.created': 'inventory-inbox' }],
    malformed: ['inventory-inbox', '{"order.created":"x"}', '{"order.created":42}', '{"Order":"inbox"}'],
  },
  inboxTable: { valid: ['inventory-inbox', 'inventory-inbox'], malformed: ['', 'in', 'inbox?'] },
  inboxRetentionDays: { valid: ['14', 14], malformed: ['0', '3651', '1e1'] },
  sourceQueueUrl: { valid: [QUEUE, QUEUE], malformed: ['', 'order-events', '/queue'] },
  deadLetterQueueUrl: { valid: [QUEUE, QUEUE], malformed: ['', 'order-events-dlq'] },
  maxReceiveCount: { valid: ['5', 5], malformed: ['0', '1001', '', 'five'] },
  visibilityBackoffBaseSeconds: { valid: ['1', 1], malformed: ['0', '43201', '1.5'] },
  visibilityBackoffMaxSeconds: { valid: ['43200', 43_200], malformed: ['0', '43201', '-900'] },
  receiptQueueUrl: {
    valid: [
      'https://sqs.eu-west-1.amazonaws.com/111111111111/orders-receipts',
      'https://sqs.eu-west-1.amazonaws.com/111111111111/orders-receipts',
    ],
    malformed: ['', 'orders-receipts'],
  },
  subscriptions: {
    valid: [
      JSON.stringify({
        'order.created': {
          inventory: 'https://sqs.eu-west-1.amazonaws.com/111111111111/inventory-orders',
          loyalty: 'https://sqs.eu-west-1.amazonaws.com/111111111111/inventory-orders',
        },
      }),
      {
        'order.created': {
          inventory: 'https://sqs.eu-west-1.amazonaws.com/111111111111/inventory-orders',
          loyalty: 'https://sqs.eu-west-1.amazonaws.com/111111111111/inventory-orders',
        },
      },
    ],
    malformed: [
      '[]',
      JSON.stringify({ 'order.created': {} }),
      JSON.stringify({
        'order.created': { Inventory: 'https://sqs.eu-west-1.amazonaws.com/111111111111/inventory-orders' },
      }),
      JSON.stringify({
        Order: { inventory: 'https://sqs.eu-west-1.amazonaws.com/111111111111/inventory-orders' },
      }),
      JSON.stringify({ 'order.created': { inventory: 'inventory-orders' } }),
      // Each subscriber is a row in the writer's transaction: at most 10 per topic.
      JSON.stringify({
        'order.created': Object.fromEntries(
          Array.from({ length: 11 }, (_, n) => [
            `s${n}`,
            'https://sqs.eu-west-1.amazonaws.com/111111111111/inventory-orders',
          ]),
        ),
      }),
      // A receipt's condition lists the subscriber's topics with the two control topics; DynamoDB's IN takes at
      // most 100 values.
      JSON.stringify(
        Object.fromEntries(
          Array.from({ length: 99 }, (_, n) => [
            `order.t${n}`,
            { inventory: 'https://sqs.eu-west-1.amazonaws.com/111111111111/inventory-orders' },
          ]),
        ),
      ),
    ],
  },

  subscriber: {
    valid: ['inventory', 'inventory'],
    malformed: ['', 'Inventory', 'inventory service', '9lives'],
  },
  claimCheckBucket: {
    valid: ['shop-outbox-claims', 'shop-outbox-claims'],
    malformed: ['', 'ab', 'Claims', 'claims_bucket', 'claims-'],
  },
  // 1 KiB to 240 KiB: a kept-inline message still fits SQS's 256 KiB with the dead-letter reason attributes.
  claimCheckThresholdBytes: { valid: ['65536', 65_536], malformed: ['1023', '245761', '64k', '6.5e4'] },
  orderedTopics: {
    valid: [JSON.stringify({ 'order.created': ordered }), { 'order.created': ordered }],
    malformed: [
      '[]',
      JSON.stringify({ 'order.created': 'order' }),
      JSON.stringify({ 'order.created': { scope: 'Order', gapTimeoutMs: 300_000 } }),
      JSON.stringify({ 'order.created': { scope: 'order', gapTimeoutMs: 999 } }),
      JSON.stringify({ 'order.created': { scope: 'order' } }),
    ],
  },
  sequenceTable: { valid: ['outbox-sequences', 'outbox-sequences'], malformed: ['', 'sq', 'seq table'] },
};

const settings = Object.entries(OutboxSettings) as [SettingKey, Setting<unknown>][];

/** The ConfigError thrown when `setting` reads `raw`. */
function configErrorFor(setting: Setting<unknown>, raw: string): ConfigError {
  try {
    readSetting({ [setting.name]: raw }, setting);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return error as ConfigError;
  }
  throw new Error(`expected ${setting.name}=${JSON.stringify(raw)} to be refused`);
}

describe('OutboxSettings', () => {
  it('has a test case for every setting', () => {
    expect(Object.keys(CASES).sort()).toEqual(Object.keys(OutboxSettings).sort());
  });

  it('names every variable once', () => {
    const names = settings.map(([, setting]) => setting.name);

    expect(new Set(names).size).toBe(names.length);
    expect(names.every((name) => /^[A-Z][A-Z0-9_]*$/.test(name))).toBe(true);
  });

  it.each(
    settings.flatMap(([key, setting]) => CASES[key].malformed.map((raw) => [setting.name, raw, setting])),
  )('refuses %s=%j with a ConfigError naming the variable', (name, raw, setting) => {
    const error = configErrorFor(setting as Setting<unknown>, raw as string);

    expect(error.message.startsWith(`${name} `)).toBe(true);
    expect(error.code).toBe('INVALID_CONFIG');
  });

  it.each(settings.map(([key, setting]) => [setting.name, key, setting] as const))(
    'reads a valid %s and writes it back as the same text',
    (_name, key, setting) => {
      const [raw, value] = CASES[key].valid;

      expect(readSetting({ [setting.name]: raw }, setting)).toEqual(value);
      expect(setting.parse(setting.format(value))).toEqual(value);
    },
  );

  it('defaults what the shipped functions can run without', () => {
    const defaults = Object.fromEntries(
      settings.flatMap(([, setting]) =>
        setting.defaultValue === undefined ? [] : [[setting.name, readSetting({}, setting)]],
      ),
    );

    expect(defaults).toEqual({
      RETRY_POLICIES: {},
      SUBSCRIBER_RETRY_POLICIES: {},
      CONFIRM_DEADLINE_MS: 300_000,
      DUE_SHARDS: 8,
      SWEEPER_MAX_MESSAGES_PER_SECOND: 600,
      STREAM_GRACE_MS: 60_000,
      RETENTION_DAYS: 30,
      DEAD_LETTER_QUEUES: {},
      DELIVERY_INBOXES: {},
      INBOX_RETENTION_DAYS: 30,
      VISIBILITY_BACKOFF_BASE_SECONDS: 10,
      VISIBILITY_BACKOFF_MAX_SECONDS: 900,
      SUBSCRIPTIONS: {},
      CLAIM_CHECK_THRESHOLD_BYTES: 65_536,
      ORDERED_TOPICS: {},
    });
  });

  it.each(Object.entries(OUTBOX_WRITER_RANGES))(
    'agrees with the writer on %s: the same default, the same bounds',
    (option, range) => {
      const setting = Object.values(OutboxSettings).find((s) => s.name === range.setting) as Setting<number>;
      const writerDefault = OUTBOX_WRITER_DEFAULTS[option as keyof typeof OUTBOX_WRITER_RANGES];

      expect(readSetting({}, setting)).toBe(writerDefault);
      expect(readSetting({ [range.setting]: String(range.min) }, setting)).toBe(range.min);
      expect(readSetting({ [range.setting]: String(range.max) }, setting)).toBe(range.max);
      expect(() => readSetting({ [range.setting]: String(range.max + 1) }, setting)).toThrow(ConfigError);
      if (range.min > 0) {
        expect(() => readSetting({ [range.setting]: String(range.min - 1) }, setting)).toThrow(ConfigError);
      }
    },
  );

  it.each(settings.filter(([, setting]) => setting.defaultValue === undefined).map(([, s]) => [s.name, s]))(
    'requires %s: absent is a ConfigError that names and describes it',
    (name, setting) => {
      expect(() => readSetting({}, setting as Setting<unknown>)).toThrow(
        `${name} is not set (${(setting as Setting<unknown>).description})`,
      );
    },
  );

  it('requires exactly the tables, queues, receive count, bucket and subscriber name that have no safe default', () => {
    expect(
      settings.filter(([, setting]) => setting.defaultValue === undefined).map(([, setting]) => setting.name),
    ).toEqual([
      'OUTBOX_TABLE',
      'TOPIC_QUEUES',
      'AUDIT_TABLE',
      'INBOX_TABLE',
      'SOURCE_QUEUE_URL',
      'DEAD_LETTER_QUEUE_URL',
      'MAX_RECEIVE_COUNT',
      'ARCHIVE_BUCKET',
      'RECEIPT_QUEUE_URL',
      'SUBSCRIBER',
      'CLAIM_CHECK_BUCKET',
      'SEQUENCE_TABLE',
    ]);
  });
});

describe('TOPIC_QUEUES', () => {
  const read = (raw: string) => readSetting({ TOPIC_QUEUES: raw }, OutboxSettings.topicQueues);

  it('maps each topic to its queue URL', () => {
    expect(read(JSON.stringify({ 'order.created': QUEUE, 'order.shipped': `${QUEUE}-2` }))).toEqual({
      'order.created': QUEUE,
      'order.shipped': `${QUEUE}-2`,
    });
  });

  it.each([
    ['is not JSON', '{order.created:', /TOPIC_QUEUES .*JSON/],
    [
      'maps a topic to something that is not a URL',
      '{"order.created":"order-created"}',
      /must be a queue URL/,
    ],
    ['is a list', `["${QUEUE}"]`, /TOPIC_QUEUES .*expected record/],
    ['names a topic that is not dotted lowercase', `{"OrderCreated":"${QUEUE}"}`, /TOPIC_QUEUES is invalid/],
    ['names a topic `constructor`', `{"constructor":"${QUEUE}"}`, /TOPIC_QUEUES is invalid/],
    // Each topic's own problem, not zod's "Invalid key in record".
    ['names a topic that is not dotted lowercase', `{"OrderCreated":"${QUEUE}"}`, /must be dotted lowercase/],
  ])('fails loudly with a ConfigError naming TOPIC_QUEUES when it %s', (_case, raw, message) => {
    expect(() => read(raw)).toThrow(ConfigError);
    expect(() => read(raw)).toThrow(message);
  });

  it.each([
    OutboxSettings.topicQueues.name,
    OutboxSettings.retryPolicies.name,
    OutboxSettings.subscriberRetryPolicies.name,
    OutboxSettings.deliveryInboxes.name,
  ])('%s refuses a `__proto__` key instead of dropping it silently (zod records skip that key)', (name) => {
    const setting = Object.values(OutboxSettings).find((candidate) => candidate.name === name);
    if (setting === undefined) throw new Error(`no setting ${name}`);
    expect(() => readSetting({ [name]: '{"__proto__":{"x":1}}' }, setting as Setting<unknown>)).toThrow(
      new RegExp(`${name} has a "__proto__" key`),
    );
  });
});

describe('SUBSCRIPTIONS', () => {
  it('takes 98 topics for one subscriber: its receipts’ condition lists them with the 2 control topics, 100 in all', () => {
    const topics = (count: number) =>
      JSON.stringify(
        Object.fromEntries(
          Array.from({ length: count }, (_, n) => [
            `order.t${n}`,
            { inventory: 'https://sqs.eu-west-1.amazonaws.com/111111111111/inventory-orders' },
          ]),
        ),
      );
    const read = (raw: string) => readSetting({ SUBSCRIPTIONS: raw }, OutboxSettings.subscriptions);

    expect(Object.keys(read(topics(98)))).toHaveLength(98);
    expect(() => read(topics(99))).toThrow(/gives a subscriber more than 98 topics/);
  });
});

describe('the outbox. namespace, reserved for the outbox’s own messages', () => {
  const QUEUE_URL = 'https://sqs.eu-west-1.amazonaws.com/111111111111/orders';
  it.each([
    ['TOPIC_QUEUES', OutboxSettings.topicQueues, { 'outbox.erase': QUEUE_URL }],
    ['SUBSCRIPTIONS', OutboxSettings.subscriptions, { 'outbox.audit': { inventory: QUEUE_URL } }],
    [
      'ORDERED_TOPICS',
      OutboxSettings.orderedTopics,
      { 'outbox.skip': { scope: 'order', gapTimeoutMs: 60_000 } },
    ],
    ['RETRY_POLICIES', OutboxSettings.retryPolicies, { 'outbox.erase': DEFAULT_RETRY_POLICY }],
  ] as const)('%s refuses a topic in it, saying the namespace is reserved', (name, setting, value) => {
    const read = () => readSetting({ [name]: JSON.stringify(value) }, setting as Setting<unknown>);
    expect(read).toThrow(ConfigError);
    expect(read).toThrow(
      new RegExp(`${name} is invalid: .*must not start with outbox\\.: that namespace is reserved`),
    );
  });
});

describe('ORDERED_TOPICS', () => {
  const read = (raw: string) => readSetting({ ORDERED_TOPICS: raw }, OutboxSettings.orderedTopics);

  it('maps each ordered topic to its scope and gap timeout; topics of one scope share it', () => {
    const cancelled = { scope: 'order', gapTimeoutMs: 1_000 };

    expect(read(JSON.stringify({ 'order.created': ordered, 'order.cancelled': cancelled }))).toEqual({
      'order.created': ordered,
      'order.cancelled': cancelled,
    });
  });

  it('reads an absent variable as no ordered topic', () => {
    expect(readSetting({}, OutboxSettings.orderedTopics)).toEqual({});
  });

  it('accepts the boundaries: a 1 s and a 12 h gap timeout, a 32-character scope', () => {
    const widest = { scope: `a${'-'.repeat(30)}9`, gapTimeoutMs: 12 * 3_600_000 };

    expect(read(JSON.stringify({ 'a.b': { scope: 'a', gapTimeoutMs: 1_000 }, 'c.d': widest }))).toEqual({
      'a.b': { scope: 'a', gapTimeoutMs: 1_000 },
      'c.d': widest,
    });
  });

  it.each([
    ['a scope with capitals', { scope: 'Order', gapTimeoutMs: 300_000 }, /scope/],
    ['a scope with a #', { scope: 'order#1', gapTimeoutMs: 300_000 }, /scope/],
    ['an empty scope', { scope: '', gapTimeoutMs: 300_000 }, /scope/],
    ['a 33-character scope', { scope: 'a'.repeat(33), gapTimeoutMs: 300_000 }, /scope/],
    ['a gap timeout under 1 s', { scope: 'order', gapTimeoutMs: 999 }, /gapTimeoutMs/],
    ['a gap timeout over 12 h', { scope: 'order', gapTimeoutMs: 12 * 3_600_000 + 1 }, /gapTimeoutMs/],
    ['a fractional gap timeout', { scope: 'order', gapTimeoutMs: 1_000.5 }, /gapTimeoutMs/],
    ['a gap timeout given as text', { scope: 'order', gapTimeoutMs: '300000' }, /gapTimeoutMs/],
    ['no gap timeout', { scope: 'order' }, /gapTimeoutMs/],
    ['an unknown field', { ...ordered, fifo: true }, /fifo/],
    ['"none" instead of an object', 'none', /expected object/],
  ])('refuses %s, naming ORDERED_TOPICS, the topic and the field', (_case, value, field) => {
    const error = configErrorFor(OutboxSettings.orderedTopics, JSON.stringify({ 'order.created': value }));

    expect(error.message).toMatch(/^ORDERED_TOPICS is invalid: /);
    expect(error.message).toContain('order.created');
    expect(error.message).toMatch(field);
  });

  it('refuses a topic that is not dotted lowercase', () => {
    expect(configErrorFor(OutboxSettings.orderedTopics, JSON.stringify({ Orders: ordered })).message).toMatch(
      /^ORDERED_TOPICS is invalid: /,
    );
  });

  it('reads each topic’s seq source, and refuses one it does not know', () => {
    const versioned = { scope: 'order', gapTimeoutMs: 1_000, sequence: 'aggregate-version' };
    expect(read(JSON.stringify({ 'order.created': versioned }))).toEqual({ 'order.created': versioned });
    const error = configErrorFor(
      OutboxSettings.orderedTopics,
      JSON.stringify({ 'order.created': { ...versioned, sequence: 'clock' } }),
    );
    expect(error.message).toMatch(/sequence/);
    expect(error.message).toMatch(/'counter' or 'aggregate-version'/);
  });

  it('refuses a scope whose topics name two seq sources: it would give two messages one seq', () => {
    const error = configErrorFor(
      OutboxSettings.orderedTopics,
      JSON.stringify({
        'order.created': { scope: 'order', gapTimeoutMs: 1_000, sequence: 'aggregate-version' },
        'order.note-added': { scope: 'order', gapTimeoutMs: 1_000 },
      }),
    );

    expect(error.message).toMatch(/^ORDERED_TOPICS is invalid: /);
    expect(error.message).toContain(
      "ordering scope 'order' takes its seqs from two sources (counter: order.note-added; aggregate-version: order.created)",
    );
  });
});

describe('RETRY_POLICIES', () => {
  const read = (raw: string) => readSetting({ RETRY_POLICIES: raw }, OutboxSettings.retryPolicies);

  it('reads a policy per topic', () => {
    const slow = { baseDelayMs: 60_000, multiplier: 1, maxDelayMs: 60_000, maxAttempts: 100 };

    expect(read(JSON.stringify({ 'order.created': fast, 'order.shipped': slow }))).toEqual({
      'order.created': fast,
      'order.shipped': slow,
    });
  });

  it('refuses text that is not JSON, naming RETRY_POLICIES and keeping the parse error as cause', () => {
    const error = configErrorFor(OutboxSettings.retryPolicies, '{"order.created": ');

    expect(error.message).toContain('RETRY_POLICIES');
    expect(error.code).toBe('INVALID_CONFIG');
    expect(error.cause).toBeInstanceOf(SyntaxError);
  });

  it.each([
    ['a negative base delay', { ...fast, baseDelayMs: -1 }],
    ['a zero base delay', { ...fast, baseDelayMs: 0 }],
    ['a negative maximum delay', { ...fast, maxDelayMs: -1_000 }],
    ['a fractional delay', { ...fast, baseDelayMs: 1.5 }],
    ['a shrinking multiplier', { ...fast, multiplier: 0.5 }],
    ['zero attempts', { ...fast, maxAttempts: 0 }],
    ['more than 1 000 attempts', { ...fast, maxAttempts: 1_001 }],
    ['a missing field', { baseDelayMs: 1_000, multiplier: 2, maxDelayMs: 10_000 }],
    ['an unknown field', { ...fast, jitter: 'full' }],
    ['a delay given as text', { ...fast, baseDelayMs: '1000' }],
  ])('refuses %s, naming RETRY_POLICIES and the topic', (_case, policy) => {
    const error = configErrorFor(OutboxSettings.retryPolicies, JSON.stringify({ 'order.created': policy }));

    expect(error.message).toMatch(/^RETRY_POLICIES is invalid: /);
    expect(error.message).toContain('order.created');
  });

  it('refuses a base delay above the maximum delay', () => {
    const error = configErrorFor(
      OutboxSettings.retryPolicies,
      JSON.stringify({ 'order.created': { ...fast, baseDelayMs: 60_000, maxDelayMs: 1_000 } }),
    );

    expect(error.message).toContain('RETRY_POLICIES');
    expect(error.message).toContain('baseDelayMs must not exceed maxDelayMs');
  });

  it.each([
    ['an array', '[]'],
    ['a number', '42'],
    ['null', 'null'],
    ['an empty topic name', JSON.stringify({ '': fast })],
    ['a topic named `constructor`', JSON.stringify({ constructor: fast })],
  ])('refuses %s instead of a topic → policy object', (_case, raw) => {
    expect(configErrorFor(OutboxSettings.retryPolicies, raw).message).toContain('RETRY_POLICIES');
  });

  it('accepts the boundaries: base = max, multiplier 1, one attempt, 1 000 attempts', () => {
    const edge = { baseDelayMs: 5_000, multiplier: 1, maxDelayMs: 5_000, maxAttempts: 1 };
    const most = { ...edge, maxAttempts: 1_000 };

    expect(read(JSON.stringify({ 'a.b': edge, 'c.d': most }))).toEqual({ 'a.b': edge, 'c.d': most });
  });
});

describe('what each shipped function reads', () => {
  const names = (list: readonly Setting<unknown>[]) => list.map((setting) => setting.name);

  it('the relay: its table, routes, policies, deadline, retention, and the due shards (a FAILED message is filed in the attention index under its shard)', () => {
    expect(names(RELAY_SETTINGS)).toEqual([
      'OUTBOX_TABLE',
      'TOPIC_QUEUES',
      'SUBSCRIPTIONS',
      'RETRY_POLICIES',
      'SUBSCRIBER_RETRY_POLICIES',
      'CONFIRM_DEADLINE_MS',
      'RETENTION_DAYS',
      'DUE_SHARDS',
      'ORDERED_TOPICS',
    ]);
  });

  it("the sweeper: the relay's, plus the delivery inboxes and its rate bound", () => {
    expect(names(SWEEPER_SETTINGS)).toEqual([
      ...names(RELAY_SETTINGS),
      'DELIVERY_INBOXES',
      'SWEEPER_MAX_MESSAGES_PER_SECOND',
    ]);
  });

  it('the admin: the outbox, the audit trail, the routes with their DLQs and inboxes, the shards and retention', () => {
    expect(names(ADMIN_SETTINGS)).toEqual([
      'OUTBOX_TABLE',
      'AUDIT_TABLE',
      'TOPIC_QUEUES',
      'SUBSCRIPTIONS',
      'DEAD_LETTER_QUEUES',
      'DELIVERY_INBOXES',
      'DUE_SHARDS',
      'RETENTION_DAYS',
      'CLAIM_CHECK_BUCKET',
      'ORDERED_TOPICS',
    ]);
  });

  it('the admin reads an environment without DEAD_LETTER_QUEUES as no DLQs, and refuses one without AUDIT_TABLE', () => {
    expect(readSetting({}, OutboxSettings.deadLetterQueues)).toEqual({});
    expect(() => readSetting({}, OutboxSettings.auditTable)).toThrow(/AUDIT_TABLE is not set/);
  });

  it('a consumer: its inbox, the outbox to confirm or the receipt queue, its queues and backoff, the claim-check bucket', () => {
    expect(names(CONSUMER_SETTINGS).sort()).toEqual(
      [
        'INBOX_TABLE',
        'INBOX_RETENTION_DAYS',
        'OUTBOX_TABLE',
        'RETENTION_DAYS',
        'SOURCE_QUEUE_URL',
        'DEAD_LETTER_QUEUE_URL',
        'MAX_RECEIVE_COUNT',
        'VISIBILITY_BACKOFF_BASE_SECONDS',
        'VISIBILITY_BACKOFF_MAX_SECONDS',
        'RECEIPT_QUEUE_URL',
        'SUBSCRIBER',
        'CLAIM_CHECK_BUCKET',
        'ORDERED_TOPICS',
      ].sort(),
    );
  });

  it('a writer: the outbox table, what the sweeper must agree on, the claim check and the ordering', () => {
    expect(names(WRITER_SETTINGS)).toEqual([
      'OUTBOX_TABLE',
      'DUE_SHARDS',
      'STREAM_GRACE_MS',
      'CLAIM_CHECK_BUCKET',
      'CLAIM_CHECK_THRESHOLD_BYTES',
      'ORDERED_TOPICS',
      'SEQUENCE_TABLE',
      'SUBSCRIPTIONS',
    ]);
  });
});
