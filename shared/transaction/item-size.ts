/**
 * Estimates DynamoDB's size of an item written through the Document client: attribute names plus values,
 * following AWS's published sizing rules (strings and binaries by length, numbers about one byte per two
 * digits plus one, 3 bytes of overhead per list or map plus 1 per element).
 */
export function itemSizeBytes(item: Readonly<Record<string, unknown>>): number {
  let size = 0;
  for (const [name, value] of Object.entries(item)) {
    if (value === undefined) continue;
    size += utf8Length(name) + valueSizeBytes(value);
  }
  return size;
}

function valueSizeBytes(value: unknown): number {
  if (value === null || typeof value === 'boolean') return 1;
  if (typeof value === 'string') return utf8Length(value);
  if (typeof value === 'number' || typeof value === 'bigint') {
    const digits = String(value)
      .replace(/[-.]|e.*$/gi, '')
      .replace(/^0+/, '').length;
    return Math.ceil(digits / 2) + 1;
  }
  if (value instanceof Uint8Array) return value.byteLength;
  if (value instanceof Set) {
    let size = 0;
    for (const member of value) size += valueSizeBytes(member);
    return size;
  }
  if (Array.isArray(value)) {
    let size = 3;
    for (const element of value) size += 1 + valueSizeBytes(element);
    return size;
  }
  if (typeof value === 'object') {
    let size = 3;
    for (const [name, element] of Object.entries(value)) {
      if (element === undefined) continue;
      size += 1 + utf8Length(name) + valueSizeBytes(element);
    }
    return size;
  }
  return utf8Length(String(value));
}

function utf8Length(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}
