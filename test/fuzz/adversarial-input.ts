import fc from 'fast-check';

/**
 * Number tokens as a client may write them, outside what JSON.stringify produces: overflow to Infinity
 * (`1e400`), negative zero, integers past 2^53, exponents and fractions that equal integers.
 */
export const RAW_NUMBERS = [
  '0',
  '-0',
  '1',
  '1.0',
  '1e0',
  '1E2',
  '4e2',
  '1e400',
  '-1e400',
  '1e-400',
  '-1',
  '0.5',
  '1000',
  '1001',
  '1000000000',
  '1000000001',
  '9007199254740993',
  '123456789012345678901234567890',
  '1e308',
] as const;

/** Keys that are special to JavaScript objects, the request schemas' own keys, and odd ones. */
export const ODD_KEYS = [
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  'hasOwnProperty',
  'orderId',
  'customerId',
  'items',
  'sku',
  'quantity',
  'available',
  '',
  '\u0000',
  'a\u0061',
  '𝒳',
] as const;

/** A string with, sometimes, a lone surrogate somewhere in it (no UTF-8 encoding exists for it). */
export const oddString: fc.Arbitrary<string> = fc.oneof(
  { arbitrary: fc.string({ unit: 'binary', maxLength: 40 }), weight: 4 },
  {
    arbitrary: fc
      .tuple(
        fc.string({ maxLength: 10 }),
        fc.integer({ min: 0xd800, max: 0xdfff }),
        fc.string({ maxLength: 10 }),
      )
      .map(([before, unit, after]) => `${before}${String.fromCharCode(unit)}${after}`),
    weight: 1,
  },
  { arbitrary: fc.constantFrom(...ODD_KEYS), weight: 1 },
);

/** JSON text of a string: escaped as JSON.stringify writes it, or with a raw `\ud800` escape, or huge. */
const stringText: fc.Arbitrary<string> = fc.oneof(
  { arbitrary: oddString.map((value) => JSON.stringify(value)), weight: 6 },
  { arbitrary: fc.constantFrom('"\\ud800"', '"a\\udc00b"', '"\\u0000"', '"\\ud83d\\ude00"'), weight: 1 },
  { arbitrary: fc.constantFrom(1_000, 20_000).map((length) => `"${'x'.repeat(length)}"`), weight: 1 },
);

/** A key of an object in JSON text. */
const keyText: fc.Arbitrary<string> = fc.oneof(
  { arbitrary: fc.constantFrom(...ODD_KEYS).map((key) => JSON.stringify(key)), weight: 3 },
  { arbitrary: stringText, weight: 1 },
  // The same key, escaped: JSON.parse sees "sku" twice.
  { arbitrary: fc.constant('"\\u0073ku"'), weight: 1 },
);

/** Texts that stress a parser's depth and size. */
const hugeText: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(1_000, 100_000).map((depth) => `${'['.repeat(depth)}${']'.repeat(depth)}`),
  fc.constantFrom(1_000, 50_000).map((depth) => `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`),
  fc.constantFrom(10, 30, 10_000).map((length) => `[${Array.from({ length }, () => '1').join(',')}]`),
  fc
    .constantFrom(30, 10_000)
    .map((length) => `[${Array.from({ length }, () => '{"sku":"SKU-1","quantity":1}').join(',')}]`),
);

/** Arbitrary JSON text, valid or not quite, built from adversarial parts. */
export const jsonText: fc.Arbitrary<string> = fc.letrec<{ value: string }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constantFrom(...RAW_NUMBERS, 'true', 'false', 'null'),
    stringText,
    fc
      .array(fc.tuple(keyText, tie('value')), { maxLength: 5 })
      .map((entries) => `{${entries.map(([key, value]) => `${key}:${value}`).join(',')}}`),
    fc.array(tie('value'), { maxLength: 5 }).map((values) => `[${values.join(',')}]`),
    hugeText,
  ),
})).value;

/** Text that is not JSON at all, or JSON broken in a small way. */
export const brokenJsonText: fc.Arbitrary<string> = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 60 }),
  jsonText.map((text) => text.slice(0, Math.max(0, text.length - 1))),
  jsonText.map((text) => `\uFEFF${text}`),
  jsonText.map((text) => `${text},`),
  fc.constantFrom('', ' ', '\n', 'NaN', 'Infinity', '{"a":1,}', "{'a':1}", '{"a":01}', '[1,]', 'undefined'),
);

/** A JSON value text that is usually `good`, sometimes anything at all. */
export function mostly(good: fc.Arbitrary<string>): fc.Arbitrary<string> {
  return fc.oneof({ arbitrary: good, weight: 5 }, { arbitrary: jsonText, weight: 1 });
}

/**
 * JSON object text from `[key, value text]` entries, sometimes with an entry repeated, an extra odd key, or
 * one left out: the shape of a request body as a careless or hostile client sends it.
 */
export function objectText(
  entries: fc.Arbitrary<readonly (readonly [string, string])[]>,
): fc.Arbitrary<string> {
  return fc
    .tuple(entries, rarely(fc.tuple(keyText, jsonText)), rarely(fc.nat()), rarely(fc.nat()))
    .map(([fields, extra, repeated, dropped]) => {
      const texts = fields.map(([key, value]) => `${JSON.stringify(key)}:${value}`);
      if (repeated !== null && texts.length > 0) texts.push(texts[repeated % texts.length] ?? '');
      if (dropped !== null && texts.length > 0) texts.splice(dropped % texts.length, 1);
      if (extra !== null) texts.push(`${extra[0]}:${extra[1]}`);
      return `{${texts.join(',')}}`;
    });
}

/** `null` five times in six, else a value of `arbitrary`. */
function rarely<T>(arbitrary: fc.Arbitrary<T>): fc.Arbitrary<T | null> {
  return fc.oneof({ arbitrary: fc.constant(null), weight: 5 }, { arbitrary, weight: 1 });
}

/** A value of a header: what a browser or curl sends, or any string at all. */
export const headerValue: fc.Arbitrary<string> = fc.oneof(
  fc.string({ unit: 'grapheme-ascii', maxLength: 30 }),
  oddString,
  fc.constantFrom('', ' ', '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01', 'x'.repeat(9_000)),
);

/** A W3C `traceparent` header value: valid, subtly invalid, or hostile (a lone surrogate, NUL, 300 KB). */
export const traceparentValue: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
    '00-0AF7651916CD43DD8448EB211C80319C-B7AD6B7169203331-01',
    'ff-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
    '00-00000000000000000000000000000000-b7ad6b7169203331-01',
    '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331',
    '\ud800',
    '\u0000',
    '\uffff',
    'x'.repeat(300_000),
  ),
  headerValue,
);

/** A `content-type` as clients spell it, right and wrong. */
export const contentTypeValue: fc.Arbitrary<string> = fc.oneof(
  {
    arbitrary: fc.constantFrom(
      'application/json',
      'application/json; charset=utf-8',
      'Application/JSON;Charset="UTF-8"',
      ' application/json ',
      'application/json;;',
      'application/json; charset',
      'application/json; charset=',
      'application/json; charset="',
      'application/json; charset=latin1',
      'application/json;charset=utf-16',
      'application/json-patch+json',
      'text/plain',
      'multipart/form-data; boundary=x',
      '*/*',
      '',
    ),
    weight: 5,
  },
  { arbitrary: headerValue, weight: 1 },
);

/** The names a client may give the content-type header, and some that are near misses. */
export const contentTypeName: fc.Arbitrary<string> = fc.oneof(
  { arbitrary: fc.constantFrom('content-type', 'Content-Type', 'CONTENT-TYPE', 'cOnTeNt-TyPe'), weight: 8 },
  { arbitrary: fc.constantFrom('content_type', 'content-type ', 'contenttype'), weight: 1 },
);

/** Header names: ordinary, special to JavaScript objects, or anything. */
export const headerName: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom('traceparent', 'Traceparent', 'accept', 'x-forwarded-for', 'authorization', ...ODD_KEYS),
  fc.string({ maxLength: 20 }),
);

/** Raw bytes, often not valid UTF-8. */
export const rawBytes: fc.Arbitrary<Uint8Array> = fc.oneof(
  fc.uint8Array({ maxLength: 200 }),
  fc.constantFrom(
    Uint8Array.from([0xc3, 0x28]),
    Uint8Array.from([0xed, 0xa0, 0x80]),
    Uint8Array.from([0xef, 0xbb, 0xbf, 0x7b, 0x7d]),
    Uint8Array.from([0xff, 0xfe, 0x7b, 0x00, 0x7d, 0x00]),
    Uint8Array.from([0xf4, 0x90, 0x80, 0x80]),
  ),
);
