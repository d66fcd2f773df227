import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../../shared/errors.ts';
import { parseTopicRoutes } from '../../../shared/relay/topic-routes.ts';

const QUEUE = 'https://sqs.eu-west-1.amazonaws.com/123456789012/order-created';

describe('parseTopicRoutes', () => {
  it('maps each topic to its queue URL', () => {
    const routes = parseTopicRoutes(JSON.stringify({ 'order.created': QUEUE }));

    expect(routes.get('order.created')).toBe(QUEUE);
    expect(routes.get('order.cancelled')).toBeUndefined();
  });

  it.each([
    ['is not set', undefined, /TOPIC_QUEUES is not set/],
    ['is not JSON', '{order.created:', /TOPIC_QUEUES is not valid JSON/],
    [
      'maps a topic to something that is not a URL',
      '{"order.created":"order-created"}',
      /TOPIC_QUEUES must map/,
    ],
    ['is a list', `["${QUEUE}"]`, /TOPIC_QUEUES must map/],
  ])('fails loudly with a ConfigError naming TOPIC_QUEUES when it %s', (_, json, message) => {
    expect(() => parseTopicRoutes(json)).toThrow(ConfigError);
    expect(() => parseTopicRoutes(json)).toThrow(message);
  });

  it('names the setting it was given', () => {
    expect(() => parseTopicRoutes('nope', 'ROUTES')).toThrow(/ROUTES is not valid JSON/);
  });
});
