/** The MD5 digests SQS returns for a message's body and attributes, computed as SQS documents them. */
import { createHash } from 'node:crypto';
import type { MemoryMessageAttribute } from '../../../../../shared/memory/index.ts';

/** MD5OfMessageBody / MD5OfBody: the hex MD5 of the body's UTF-8 bytes. */
export function md5OfBody(body: string): string {
  return createHash('md5').update(body, 'utf8').digest('hex');
}

/**
 * MD5OfMessageAttributes (and MD5OfMessageSystemAttributes): for each attribute in name order, its name,
 * data type and value, each prefixed by a 4-byte big-endian length, with a transport byte (1 for String and
 * Number, 2 for Binary) before the value; `undefined` when there are none.
 */
export function md5OfAttributes(
  attributes: Readonly<Record<string, MemoryMessageAttribute>>,
): string | undefined {
  const names = Object.keys(attributes).sort();
  if (names.length === 0) return undefined;
  const hash = createHash('md5');
  for (const name of names) {
    const attribute = attributes[name];
    if (attribute === undefined) continue;
    hash.update(lengthPrefixed(Buffer.from(name, 'utf8')));
    hash.update(lengthPrefixed(Buffer.from(attribute.dataType, 'utf8')));
    if (attribute.binaryValue !== undefined) {
      hash.update(Buffer.of(2));
      hash.update(lengthPrefixed(Buffer.from(attribute.binaryValue)));
    } else {
      hash.update(Buffer.of(1));
      hash.update(lengthPrefixed(Buffer.from(attribute.stringValue ?? '', 'utf8')));
    }
  }
  return hash.digest('hex');
}

function lengthPrefixed(bytes: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(bytes.byteLength);
  return Buffer.concat([length, bytes]);
}
