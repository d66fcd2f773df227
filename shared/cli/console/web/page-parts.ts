/** Small pieces every view uses: a status badge, a notice, a table that scrolls on a narrow screen. */
import { html } from 'htm/preact';
import type { ComponentChildren, VNode } from 'preact';

/** A message's or delivery's status, coloured by what it asks of the operator. */
export function StatusBadge({ status }: { readonly status: unknown }): VNode {
  const text = typeof status === 'string' && status !== '' ? status : 'UNKNOWN';
  return html`<span class=${`badge badge-${text.toLowerCase()}`}>${text}</span>`;
}

/** A notice: an error (announced at once), or a note. */
export function Notice({
  kind,
  children,
}: {
  readonly kind: 'error' | 'note' | 'success';
  readonly children: ComponentChildren;
}): VNode {
  return kind === 'error'
    ? html`<div class="notice notice-error" role="alert">${children}</div>`
    : html`<div class=${`notice notice-${kind}`} role="status">${children}</div>`;
}

/** A column heading of numbers: aligned right, as its cells are. */
export interface NumericHead {
  readonly label: string;
  readonly numeric: true;
}

/** `label` as the heading of a column of numbers. */
export function numeric(label: string): NumericHead {
  return { label, numeric: true };
}

/** A table in a box that scrolls sideways on a phone's width; `label` names it for screen readers. */
export function DataTable({
  label,
  head,
  children,
}: {
  readonly label: string;
  readonly head: readonly (string | NumericHead)[];
  readonly children: ComponentChildren;
}): VNode {
  return html`<div class="table-wrap" role="region" aria-label=${label} tabindex="0">
    <table>
      <thead>
        <tr>
          ${head.map((cell) =>
            typeof cell === 'string'
              ? html`<th scope="col">${cell}</th>`
              : html`<th scope="col" class="num">${cell.label}</th>`,
          )}
        </tr>
      </thead>
      <tbody>${children}</tbody>
    </table>
  </div>`;
}

/** A view's state while its data is on the way, or when it could not be read. */
export function LoadState({
  error,
  loading,
}: {
  readonly error: Error | undefined;
  readonly loading: boolean;
}): VNode | null {
  if (error !== undefined) return html`<${Notice} kind="error">${error.message}<//>`;
  return loading ? html`<p class="loading" role="status">Loading…</p>` : null;
}
