import { describe, expect, it } from 'vitest';
import { createDocumentClient } from '../../../shared/aws/clients.ts';
import { readStreamRecord } from '../../../shared/aws/stream-records.ts';
import { readDynamoNumber, UnreadableNumber } from '../../../shared/message/dynamo-numbers.ts';
import { outboxItem, streamRecord } from '../../support/factories.ts';

describe('readDynamoNumber', () => {
  it.each([
    ['0', 0],
    ['-12', -12],
    ['0.1', 0.1],
    ['9007199254740991', Number.MAX_SAFE_INTEGER],
    ['1.5E-100', 1.5e-100],
  ])('reads %s exactly', (text, value) => {
    expect(readDynamoNumber(text)).toBe(value);
  });

  it.each(['9007199254740993', '1e20', '123456789012345678901234567890', '1E+126'])(
    'keeps %s, which JavaScript cannot read back exactly, as an UnreadableNumber',
    (text) => {
      expect(readDynamoNumber(text)).toEqual(new UnreadableNumber(text));
    },
  );
});

describe('createDocumentClient', () => {
  it('reads every number with readDynamoNumber, so one odd item never fails a whole response', () => {
    const client = createDocumentClient({ region: 'eu-west-1' });

    expect(client.config.translateConfig?.unmarshallOptions?.wrapNumbers).toBe(readDynamoNumber);
    expect(client.config.translateConfig?.marshallOptions?.removeUndefinedValues).toBe(true);
  });

  it('leaves the stream reader working after clients were created (lib-dynamodb writes into the options it gets)', () => {
    createDocumentClient({ region: 'eu-west-1' });
    createDocumentClient({ region: 'eu-west-1' });

    expect(readStreamRecord(streamRecord(outboxItem())).kind).toBe('message');
  });
});
