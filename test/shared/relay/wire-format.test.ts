import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { messageAttributes, messageBody } from '../../../shared/relay/wire-format.ts';
import { envelope } from '../../support/factories.ts';

/** SQS's allowed characters: #x9 | #xA | #xD | #x20–#xD7FF | #xE000–#xFFFD | #x10000–#x10FFFF. */
function allowedBySqs(text: string): boolean {
  for (const character of text) {
    const code = character.codePointAt(0) ?? 0;
    const ok =
      code === 0x9 ||
      code === 0xa ||
      code === 0xd ||
      (code >= 0x20 && code <= 0xd7ff) ||
      (code >= 0xe000 && code <= 0xfffd) ||
      (code >= 0x10000 && code <= 0x10ffff);
    if (!ok) return false;
  }
  return true;
}

/** Every UTF-16 code unit SQS refuses when sent raw, surrogates included. */
const REFUSED_UNITS = [
  ...Array.from({ length: 0x20 }, (_, code) => code).filter((code) => ![0x9, 0xa, 0xd].includes(code)),
  ...Array.from({ length: 0xe000 - 0xd800 }, (_, offset) => 0xd800 + offset),
  0xfffe,
  0xffff,
];

describe('messageBody', () => {
  it('escapes every character SQS refuses and gives the payload back exactly', () => {
    const text = REFUSED_UNITS.map((code) => String.fromCharCode(code)).join('');
    const message = envelope({ payload: { text }, headers: { note: '\uFFFE\uFFFF' } });

    const body = messageBody(message);

    expect(allowedBySqs(body)).toBe(true);
    expect(JSON.parse(body)).toEqual(message);
  });

  it('escapes U+FFFE and U+FFFF, which JSON.stringify leaves raw', () => {
    const body = messageBody(envelope({ payload: { customerId: 'a\uFFFEb\uFFFF' } }));

    expect(body).toContain('a\\ufffeb\\uffff');
    expect(body).not.toMatch(/[\uFFFE\uFFFF]/);
  });

  it('keeps characters SQS allows as they are, astral ones included', () => {
    const payload = { name: 'Zoë 🚀 中文 \t\n', ok: '\uFFFD' };
    const body = messageBody(envelope({ payload }));

    expect(body).toContain('Zoë 🚀 中文');
    expect(JSON.parse(body).payload).toEqual(payload);
  });

  it('is always allowed by SQS and round-trips any string exactly', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (text) => {
        const message = envelope({ payload: { text } });
        const body = messageBody(message);
        return allowedBySqs(body) && JSON.parse(body).payload.text === text;
      }),
      { numRuns: 500 },
    );
  });
});

describe('messageAttributes', () => {
  it('carries a well-formed W3C traceparent', () => {
    const traceparent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';

    expect(messageAttributes(envelope({ headers: { traceparent } })).traceparent?.StringValue).toBe(
      traceparent,
    );
  });

  it.each(['', 'tp', '00-\uFFFF', 'x'.repeat(60)])(
    'leaves a malformed traceparent (%j) in the body only, so SQS never refuses the message for it',
    (traceparent) => {
      const message = envelope({ headers: { traceparent } });

      expect(messageAttributes(message)).not.toHaveProperty('traceparent');
      expect(JSON.parse(messageBody(message)).headers.traceparent).toBe(traceparent);
    },
  );
});
