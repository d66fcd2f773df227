/**
 * The writer's defaults and the whole numbers its numeric options accept. `writeWithOutbox` takes them for an
 * absent option, and the settings contract takes the same for DUE_SHARDS, STREAM_GRACE_MS and
 * CLAIM_CHECK_THRESHOLD_BYTES, so a writer built in code and one built from its environment behave alike.
 */
import {
  DEFAULT_CLAIM_CHECK_THRESHOLD_BYTES,
  MAX_CLAIM_CHECK_THRESHOLD_BYTES,
  MIN_CLAIM_CHECK_THRESHOLD_BYTES,
} from '../claim-check/claim-check-reference.ts';
import { SQS_MAX_MESSAGE_BYTES } from '../message/message-size.ts';
import { DEFAULT_DUE_SHARDS, DEFAULT_STREAM_GRACE_MS, MAX_DUE_SHARDS } from './outbox-item.ts';

/** How long terminal messages stay before TTL archives them. */
export const DEFAULT_RETENTION_DAYS = 30;

/** The longest stream grace period: 12 hours, as long as the longest confirm deadline. */
export const MAX_STREAM_GRACE_MS = 12 * 3_600_000;

/** What the writer takes for an option that is not given. */
export const OUTBOX_WRITER_DEFAULTS = {
  dueShards: DEFAULT_DUE_SHARDS,
  streamGraceMs: DEFAULT_STREAM_GRACE_MS,
  /** SQS's own limit: a larger message could never be sent. */
  maxMessageBytes: SQS_MAX_MESSAGE_BYTES,
  claimCheckThresholdBytes: DEFAULT_CLAIM_CHECK_THRESHOLD_BYTES,
} as const;

/** The whole numbers a numeric option accepts, and the variable that sets it (named when a value is refused). */
export interface OptionRange {
  readonly setting: string;
  readonly min: number;
  readonly max: number;
}

/** The range of each numeric option of the writer. */
export const OUTBOX_WRITER_RANGES = {
  dueShards: { setting: 'DUE_SHARDS', min: 1, max: MAX_DUE_SHARDS },
  streamGraceMs: { setting: 'STREAM_GRACE_MS', min: 0, max: MAX_STREAM_GRACE_MS },
  claimCheckThresholdBytes: {
    setting: 'CLAIM_CHECK_THRESHOLD_BYTES',
    min: MIN_CLAIM_CHECK_THRESHOLD_BYTES,
    max: MAX_CLAIM_CHECK_THRESHOLD_BYTES,
  },
} as const satisfies Record<string, OptionRange>;
