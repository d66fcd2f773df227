import { describe, expect, it } from 'vitest';
import { imageJson } from '../../../shared/archive/image-json.ts';

describe('imageJson', () => {
  it('writes every attribute type as plain JSON', () => {
    const json = imageJson({
      messageId: { S: '01HWTS3E00' },
      attempts: { N: '3' },
      confirmed: { BOOL: true },
      lastError: { NULL: true },
      payload: { M: { items: { L: [{ M: { sku: { S: 'SKU-1' }, quantity: { N: '2' } } }] } } },
      tags: { SS: ['a', 'b'] },
      sizes: { NS: ['1', '2.5'] },
      blob: { B: 'AAEC' },
      blobs: { BS: ['AAEC', 'AwQ='] },
    });

    expect(JSON.parse(json)).toEqual({
      messageId: '01HWTS3E00',
      attempts: 3,
      confirmed: true,
      lastError: null,
      payload: { items: [{ sku: 'SKU-1', quantity: 2 }] },
      tags: ['a', 'b'],
      sizes: [1, 2.5],
      blob: 'AAEC',
      blobs: ['AAEC', 'AwQ='],
    });
  });

  it('keeps every digit of a number JavaScript cannot hold', () => {
    const json = imageJson({
      big: { N: '12345678901234567890123456789012345678' },
      small: { N: '-0.000001' },
    });

    expect(json).toBe('{"big":12345678901234567890123456789012345678,"small":-0.000001}');
  });

  it('writes a number JSON cannot spell as its text', () => {
    expect(JSON.parse(imageJson({ odd: { N: '.5' } }))).toEqual({ odd: '.5' });
  });

  it('escapes names and strings', () => {
    const json = imageJson({ 'we"ird\nname': { S: 'line\n"quoted"\u2028' } });

    expect(JSON.parse(json)).toEqual({ 'we"ird\nname': 'line\n"quoted"\u2028' });
    expect(json).not.toContain('\n');
  });

  it('refuses an attribute value it does not know', () => {
    expect(() => imageJson({ odd: {} as never })).toThrow(/unknown DynamoDB attribute value/);
  });
});
