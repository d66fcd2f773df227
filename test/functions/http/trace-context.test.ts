import { describe, expect, it } from 'vitest';
import { traceparentOf } from '../../../functions/http/trace-context.ts';
import { apiEvent } from '../../support/factories.ts';

const TRACEPARENT = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';

describe('traceparentOf', () => {
  it('reads a well-formed traceparent under any casing of the header name', () => {
    expect(traceparentOf(apiEvent({ headers: { TraceParent: TRACEPARENT } }))).toBe(TRACEPARENT);
    expect(traceparentOf(apiEvent({ headers: { traceparent: ` ${TRACEPARENT} ` } }))).toBe(TRACEPARENT);
  });

  it.each([
    ['a lone surrogate', '\ud800'],
    ['a NUL', '\u0000'],
    ['300 KB of text', 'x'.repeat(300_000)],
    ['upper-case hex', TRACEPARENT.toUpperCase()],
    ['the forbidden version ff', `ff${TRACEPARENT.slice(2)}`],
    ['an all-zero trace id', '00-00000000000000000000000000000000-b7ad6b7169203331-01'],
    ['no flags', TRACEPARENT.slice(0, -3)],
  ])('ignores a traceparent with %s', (_case, value) => {
    expect(traceparentOf(apiEvent({ headers: { traceparent: value } }))).toBeUndefined();
  });

  it('is undefined without the header, or without headers at all', () => {
    expect(traceparentOf(apiEvent({ headers: {} }))).toBeUndefined();
    expect(
      traceparentOf({ ...apiEvent(), headers: null as unknown as Record<string, string> }),
    ).toBeUndefined();
  });
});
