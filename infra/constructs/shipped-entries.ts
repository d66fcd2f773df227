import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** A handler module of this package, as TypeScript source (this repository) or compiled JavaScript (npm). */
function shippedEntry(pathWithoutExtension: string): string {
  for (const extension of ['.ts', '.js']) {
    const path = fileURLToPath(new URL(`${pathWithoutExtension}${extension}`, import.meta.url));
    if (existsSync(path)) return path;
  }
  throw new Error(
    `serverless-outbox: the shipped handler ${pathWithoutExtension} is missing from the package`,
  );
}

/** The handlers this package ships, which the outbox's own functions run. */
export const SHIPPED_ENTRIES = {
  /** The stream relay. */
  relay: shippedEntry('../../shared/lambda/entries/relay'),
  /** The sweeper. */
  sweeper: shippedEntry('../../shared/lambda/entries/sweeper'),
  /** The archiver of expired messages. */
  archiver: shippedEntry('../../shared/lambda/entries/archiver'),
  /** The admin API. */
  admin: shippedEntry('../../shared/lambda/entries/admin'),
  /** The producer's receipts function. */
  receipts: shippedEntry('../../shared/lambda/entries/receipts'),
} as const;
