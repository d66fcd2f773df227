/**
 * DynamoDB numbers as JavaScript reads them. DynamoDB keeps 38 significant digits; a JavaScript number keeps a
 * safe integer or a double. The SDK's default turns an out-of-range integer into a BigInt (which JSON.stringify
 * cannot write) and throws for a non-integer it cannot hold (`1e20` written by another tool), failing the whole
 * response — one bad item would hide a whole page of the due index. Reading each number with
 * {@link readDynamoNumber} keeps such a value in its item, where the item alone fails with its reason.
 */

/** A number stored in DynamoDB that JavaScript cannot read back exactly; kept as its text. */
export class UnreadableNumber {
  /** The number as DynamoDB stores it. */
  readonly text: string;

  constructor(text: string) {
    this.text = text;
  }
}

/** The number `text` as JavaScript reads it exactly, or an {@link UnreadableNumber} when it cannot. */
export function readDynamoNumber(text: string): number | UnreadableNumber {
  const value = Number(text);
  if (!Number.isFinite(value)) return new UnreadableNumber(text);
  if (Number.isInteger(value) && !Number.isSafeInteger(value)) return new UnreadableNumber(text);
  return value;
}

/**
 * Unmarshall options that read every number with {@link readDynamoNumber}. A fresh object each time:
 * lib-dynamodb writes its own flags into the options it is given.
 */
export function safeUnmarshallOptions(): { wrapNumbers: (text: string) => number | UnreadableNumber } {
  return { wrapNumbers: readDynamoNumber };
}
