import { afterEach, describe, expect, it, vi } from 'vitest';
import { InvalidMessageError } from '../../../shared/errors.ts';
import {
  createMessage,
  ENVELOPE_SCHEMA_VERSION,
  messageIdTime,
  parseEnvelope,
} from '../../../shared/message/envelope.ts';
import { envelope, FIXED_NOW, testMessageId } from '../../support/factories.ts';

const ULID = /^[0-9A-HJKMNP-TV-Z]{26}$/;

describe('createMessage', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('fills a ULID message id, the creation time and the schema version', () => {
    const message = createMessage(
      { topic: 'order.created', aggregateId: 'order-1', payload: { a: 1 } },
      FIXED_NOW,
    );

    expect(message.messageId).toMatch(ULID);
    expect(message.createdAt).toBe('2024-05-01T12:00:00.000Z');
    expect(message.schemaVersion).toBe(ENVELOPE_SCHEMA_VERSION);
    expect(message).toMatchObject({ topic: 'order.created', aggregateId: 'order-1', payload: { a: 1 } });
  });

  it('encodes the creation time in the message id, so ids sort by time', () => {
    const earlier = createMessage({ topic: 'order.created', aggregateId: 'a', payload: {} }, FIXED_NOW);
    const later = createMessage(
      { topic: 'order.created', aggregateId: 'a', payload: {} },
      new Date(FIXED_NOW.getTime() + 1_000),
    );

    expect(messageIdTime(earlier.messageId)).toEqual(FIXED_NOW);
    expect(later.messageId > earlier.messageId).toBe(true);
  });

  it('uses the current time when no time is given', () => {
    vi.useFakeTimers({ now: new Date('2030-01-02T03:04:05.678Z') });

    const message = createMessage({ topic: 'order.created', aggregateId: 'order-1', payload: {} });

    expect(message.createdAt).toBe('2030-01-02T03:04:05.678Z');
    expect(messageIdTime(message.messageId).toISOString()).toBe('2030-01-02T03:04:05.678Z');
  });

  it('generates a different id for every message', () => {
    const ids = new Set(
      Array.from(
        { length: 50 },
        () => createMessage({ topic: 'order.created', aggregateId: 'a', payload: {} }, FIXED_NOW).messageId,
      ),
    );

    expect(ids.size).toBe(50);
  });

  it('passes the traceparent header through untouched', () => {
    const traceparent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';

    const message = createMessage(
      { topic: 'order.created', aggregateId: 'order-1', payload: {}, headers: { traceparent } },
      FIXED_NOW,
    );

    expect(message.headers).toEqual({ traceparent });
  });

  it('copies the headers instead of sharing the caller object', () => {
    const headers: Record<string, string> = { traceparent: 'x' };

    const message = createMessage(
      { topic: 'order.created', aggregateId: 'a', payload: {}, headers },
      FIXED_NOW,
    );
    headers.traceparent = 'changed';

    expect(message.headers.traceparent).toBe('x');
  });

  it('keeps a supplied message id, so a retried request produces the same message', () => {
    const messageId = testMessageId(42);

    const message = createMessage(
      { topic: 'order.created', aggregateId: 'a', payload: {}, messageId },
      FIXED_NOW,
    );

    expect(message.messageId).toBe(messageId);
  });

  it.each(
    [
      ['a topic without a dot', { topic: 'orders' }, 'topic', /dotted lowercase/],
      ['an upper-case topic', { topic: 'Order.Created' }, 'topic', /dotted lowercase/],
      ['a topic with a leading dot', { topic: '.order.created' }, 'topic', /dotted lowercase/],
      ['a topic with a trailing dot', { topic: 'order.created.' }, 'topic', /dotted lowercase/],
      ['a topic with a space', { topic: 'order. created' }, 'topic', /dotted lowercase/],
      [
        'a topic of the outbox’s own namespace',
        { topic: 'outbox.erase' },
        'topic',
        /must not start with outbox\.: that namespace is reserved for the outbox's own messages/,
      ],
      ['an empty aggregate id', { aggregateId: '' }, 'aggregateId', /.+/],
      ['an aggregate id over 128 characters', { aggregateId: 'a'.repeat(129) }, 'aggregateId', /.+/],
      ['a message id that is not a ULID', { messageId: 'not-a-ulid' }, 'messageId', /ULID/],
      ['a payload that is not plain JSON', { payload: { total: 10n } }, 'payload.total', /bigint/],
      [
        'a header with a lone surrogate',
        { headers: { traceparent: '\ud800' } },
        'headers.traceparent',
        /surrogate/,
      ],
    ].map(([kind, override, path, problem]) => ({ kind, override, path, problem })),
  )('refuses to build a message with $kind, naming the field', ({ override, path, problem }) => {
    let error: unknown;
    try {
      createMessage<unknown>(
        { topic: 'order.created', aggregateId: 'order-1', payload: {}, ...(override as object) },
        FIXED_NOW,
      );
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(InvalidMessageError);
    expect((error as InvalidMessageError).path).toBe(path);
    expect((error as InvalidMessageError).message).toMatch(problem as RegExp);
  });
});

describe('parseEnvelope', () => {
  it('accepts an envelope as the relay sends it', () => {
    const message = envelope({ headers: { traceparent: 't' } });

    expect(parseEnvelope(JSON.parse(JSON.stringify(message)))).toEqual(message);
  });

  it.each([
    ['a lower-case id', { messageId: testMessageId(1).toLowerCase() }],
    ['an id of 25 characters', { messageId: testMessageId(1).slice(1) }],
    ['an id with the excluded letter U', { messageId: `${testMessageId(1).slice(0, 25)}U` }],
  ])('rejects a message id that is not a ULID: %s', (_, override) => {
    expect(() => parseEnvelope(envelope(override))).toThrow(/ULID/);
  });

  it('reads a message from a newer producer: unknown fields ignored, a newer schema version accepted', () => {
    const newer = {
      ...envelope(),
      schemaVersion: 2,
      priority: 'high',
      payload: { orderId: 'o', giftWrap: true },
    };

    const read = parseEnvelope(newer);

    expect(read).toEqual({ ...envelope(), schemaVersion: 2, payload: { orderId: 'o', giftWrap: true } });
    expect(read).not.toHaveProperty('priority');
  });

  it('reads a message without headers as one with none', () => {
    const { headers: _headers, ...bare } = envelope();

    expect(parseEnvelope(bare).headers).toEqual({});
  });

  it.each([
    ['an empty topic', { topic: '' }],
    ['an empty aggregate id', { aggregateId: '' }],
    ['a schema version of 0', { schemaVersion: 0 }],
  ])('rejects %s: the fields a consumer routes and dedupes on must be there', (_, override) => {
    expect(() => parseEnvelope({ ...envelope(), ...override })).toThrow();
  });

  it('rejects headers that are not strings', () => {
    expect(() => parseEnvelope({ ...envelope(), headers: { traceparent: 1 } })).toThrow();
  });

  it('rejects a value that is not an object', () => {
    expect(() => parseEnvelope('{"messageId":"x"}')).toThrow();
    expect(() => parseEnvelope(null)).toThrow();
  });
});
