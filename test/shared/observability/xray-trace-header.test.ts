import { describe, expect, it } from 'vitest';
import { xrayTraceHeader } from '../../../shared/observability/xray-trace-header.ts';

const TRACE_ID = '5759e988bd862e3fe1be46a994272793';
const SPAN_ID = '53995c3f42cd8ad8';

describe('xrayTraceHeader', () => {
  it('splits the trace id after 8 hex digits and keeps the span id as the parent', () => {
    expect(xrayTraceHeader(`00-${TRACE_ID}-${SPAN_ID}-01`)).toBe(
      'Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1',
    );
  });

  it.each([
    ['00', 0],
    ['01', 1],
    ['02', 0],
    ['03', 1],
    ['ff', 1],
  ])('reads only the sampled bit of the flags %s', (flags, sampled) => {
    expect(xrayTraceHeader(`00-${TRACE_ID}-${SPAN_ID}-${flags}`)).toMatch(new RegExp(`;Sampled=${sampled}$`));
  });

  it.each([
    ['missing', undefined],
    ['empty', ''],
    ['an X-Ray header', 'Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1'],
    ['uppercase hex', `00-${TRACE_ID.toUpperCase()}-${SPAN_ID}-01`],
    ['a short trace id', `00-${TRACE_ID.slice(1)}-${SPAN_ID}-01`],
    ['a long span id', `00-${TRACE_ID}-${SPAN_ID}0-01`],
    ['the forbidden version ff', `ff-${TRACE_ID}-${SPAN_ID}-01`],
    ['an all-zero trace id', `00-${'0'.repeat(32)}-${SPAN_ID}-01`],
    ['an all-zero span id', `00-${TRACE_ID}-${'0'.repeat(16)}-01`],
    ['trailing text', `00-${TRACE_ID}-${SPAN_ID}-01 `],
    ['a missing field', `00-${TRACE_ID}-${SPAN_ID}`],
  ])('gives no header for a traceparent that is %s', (_case, traceparent) => {
    expect(xrayTraceHeader(traceparent)).toBeUndefined();
  });
});
