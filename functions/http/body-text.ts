import type { APIGatewayProxyEvent } from 'aws-lambda';
import type { Parsed } from './parse-request.ts';
import { errorResponse } from './responses.ts';

// `fatal` refuses malformed bytes instead of replacing them with U+FFFD (which would be stored as if sent);
// `ignoreBOM` keeps a byte-order mark in the text so that JSON.parse refuses it, as it does in a string body.
const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * The text of a request body: decoded from base64 when API Gateway says so (`isBase64Encoded`), refused with
 * a 400 when it is not valid UTF-8 (malformed bytes, or a string holding a lone surrogate) or when it is
 * larger than `maxBytes` UTF-8 bytes.
 */
export function bodyText(event: APIGatewayProxyEvent, maxBytes: number): Parsed<string> {
  if (event.isBase64Encoded) {
    const bytes = Buffer.from(event.body ?? '', 'base64');
    if (bytes.length > maxBytes) return tooLarge(bytes.length, maxBytes);
    try {
      return { ok: true, value: UTF8.decode(bytes) };
    } catch {
      return notUtf8('the body is not a valid UTF-8 byte sequence');
    }
  }
  const text = event.body ?? '';
  if (!text.isWellFormed()) return notUtf8('the body contains a lone surrogate, which has no UTF-8 encoding');
  const bytes = Buffer.byteLength(text);
  return bytes > maxBytes ? tooLarge(bytes, maxBytes) : { ok: true, value: text };
}

function tooLarge(bytes: number, maxBytes: number): Parsed<never> {
  return {
    ok: false,
    response: errorResponse(400, 'request body too large', [
      { field: '(body)', problem: `${bytes} bytes exceeds the limit of ${maxBytes} bytes` },
    ]),
  };
}

function notUtf8(problem: string): Parsed<never> {
  return {
    ok: false,
    response: errorResponse(400, 'request body is not valid UTF-8', [{ field: '(body)', problem }]),
  };
}
