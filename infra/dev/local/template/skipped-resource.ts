/** Something in the template the local runtime does not run, with the reason, for the banner and tests. */
export interface SkippedResource {
  /** The resource's local name (its construct path). */
  readonly name: string;
  readonly type: string;
  readonly reason: string;
}
