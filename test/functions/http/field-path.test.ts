import { describe, expect, it } from 'vitest';
import { fieldPath } from '../../../functions/http/field-path.ts';

describe('fieldPath', () => {
  it.each([
    ['', 'customerId', 'customerId'],
    ['', 0, '[0]'],
    ['items', 0, 'items[0]'],
    ['items[0]', 'quantity', 'items[0].quantity'],
    ['labels', 'gift wrap', 'labels["gift wrap"]'],
    ['', 'a.b', '["a.b"]'],
    ['', '', '[""]'],
    ['x', '\ud800', 'x["\\ud800"]'],
  ])('names key %j of %j as %j', (parent, key, expected) => {
    expect(fieldPath(parent, key)).toBe(expected);
  });
});
