/**
 * The X-Ray form of a W3C trace context, for the SQS system attribute `AWSTraceHeader`: with it, the relay's
 * send and the consumer's invocation join the trace the message was written in.
 */

/** A W3C `traceparent`: version, 32-hex trace id, 16-hex parent span id, 2-hex flags (lowercase only). */
const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/** W3C trace context: version `ff` is forbidden, and an all-zero trace id or parent id is invalid. */
const FORBIDDEN_VERSION = 'ff';
const ALL_ZEROS = /^0+$/;

/** The low bit of the trace flags: the caller sampled this trace. */
const SAMPLED_FLAG = 0x01;

/**
 * `Root=1-<first 8 hex of the trace id>-<remaining 24>;Parent=<span id>;Sampled=<0|1>` for a valid W3C
 * `traceparent`, or `undefined` for anything else (SQS refuses a malformed `AWSTraceHeader`, and a send must
 * never fail over a header).
 * @example
 * xrayTraceHeader('00-5759e988bd862e3fe1be46a994272793-53995c3f42cd8ad8-01');
 * // 'Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1'
 */
export function xrayTraceHeader(traceparent: string | undefined): string | undefined {
  const parts = traceparent === undefined ? null : TRACEPARENT.exec(traceparent);
  if (parts === null) return undefined;
  const [, version = '', traceId = '', parentId = '', flags = ''] = parts;
  if (version === FORBIDDEN_VERSION || ALL_ZEROS.test(traceId) || ALL_ZEROS.test(parentId)) return undefined;
  const sampled = Number.parseInt(flags, 16) & SAMPLED_FLAG;
  return `Root=1-${traceId.slice(0, 8)}-${traceId.slice(8)};Parent=${parentId};Sampled=${sampled}`;
}
