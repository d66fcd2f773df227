/** How the page writes times, ages and counts. */

/** `0s`, `42s`, `5m 03s`, `2h 10m`, `3d 4h` (as the CLI writes ages). */
export function formatAge(seconds: number): string {
  if (seconds < 60) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes}m ${String(seconds % 60).padStart(2, '0')}s`;
  const hours = Math.floor(minutes / 60);
  if (hours < 24) return `${hours}h ${String(minutes % 60).padStart(2, '0')}m`;
  return `${Math.floor(hours / 24)}d ${hours % 24}h`;
}

/** An instant as `2026-12-01 04:42:00 UTC`; empty for none. */
export function formatTime(iso: unknown): string {
  if (typeof iso !== 'string' || iso === '') return '';
  const time = Date.parse(iso);
  if (Number.isNaN(time)) return iso;
  return `${new Date(time).toISOString().slice(0, 19).replace('T', ' ')} UTC`;
}

/** `1,234`. */
export function formatCount(count: number): string {
  return count.toLocaleString('en-US');
}

/** `1 message`, `3 messages`. */
export function plural(count: number, one: string, many = `${one}s`): string {
  return `${formatCount(count)} ${count === 1 ? one : many}`;
}

/** A value as text for a table cell: strings as they are, anything else as JSON. */
export function text(value: unknown): string {
  if (value === undefined || value === null) return '';
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** The path of a message's page. */
export function messagePath(messageId: string): string {
  return `/messages/${encodeURIComponent(messageId)}`;
}

/** The path of an aggregate's page. */
export function aggregatePath(aggregateId: string): string {
  return `/aggregates/${encodeURIComponent(aggregateId)}`;
}
