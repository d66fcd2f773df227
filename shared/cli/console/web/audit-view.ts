/** Audit (`/audit?subject=&actor=`): who did what, when, and why. */
import { html } from 'htm/preact';
import type { VNode } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import type { AuditView as AuditData } from '../audit-entries.ts';
import { withQuery } from './api.ts';
import { formatTime, messagePath } from './format.ts';
import { DataTable, LoadState, Notice } from './page-parts.ts';
import { navigate, type PageLocation } from './router.ts';
import { useResource } from './use-resource.ts';

/** The audit view. */
export function AuditView({ location }: { readonly location: PageLocation }): VNode {
  const subject = location.query.get('subject') ?? '';
  const actor = location.query.get('actor') ?? '';
  const audit = useResource<AuditData>(withQuery('/audit', { subject, actor }), { refreshMs: 10_000 });
  const [draft, setDraft] = useState({ subject, actor });
  useEffect(() => setDraft({ subject, actor }), [subject, actor]);
  const submit = (event: Event) => {
    event.preventDefault();
    navigate(withQuery('/audit', draft));
  };
  return html`<h1>Audit</h1>
    <form class="filters" onSubmit=${submit} aria-label="Filter the audit trail">
      <div class="field">
        <label for="audit-subject">Subject (message:ID, aggregate:ID, dlq:NAME)</label>
        <input id="audit-subject" value=${draft.subject} onInput=${(event: Event) => setDraft({ ...draft, subject: (event.target as HTMLInputElement).value })} />
      </div>
      <div class="field">
        <label for="audit-actor">Actor contains</label>
        <input id="audit-actor" value=${draft.actor} onInput=${(event: Event) => setDraft({ ...draft, actor: (event.target as HTMLInputElement).value })} />
      </div>
      <button type="submit">Show</button>
    </form>
    <${LoadState} error=${audit.error} loading=${audit.loading && audit.data === undefined} />
    ${
      audit.data === undefined
        ? null
        : html`${audit.data.problems.map((problem) => html`<${Notice} kind="error">${problem}<//>`)}
          ${audit.data.complete ? null : html`<${Notice} kind="note">The newest of the rows read are shown; an audit table held more. Filter by subject for its whole trail.<//>`}
          ${
            audit.data.entries.length === 0
              ? html`<p>No audit rows${subject === '' ? '' : ` for ${subject}`}.</p>`
              : html`<${DataTable} label="Audit trail" head=${['At', 'Action', 'Actor', 'Subject', 'Reason', 'Stack', 'Details']}>
                ${audit.data.entries.map(
                  (row) => html`<tr>
                    <td>${formatTime(row.at)}</td>
                    <td>${row.action}</td>
                    <td>${row.actor}</td>
                    <td>${subjectLink(row.subject)}</td>
                    <td>${row.reason}</td>
                    <td>${row.stackName}</td>
                    <td class="details">${JSON.stringify(row.details)}</td>
                  </tr>`,
                )}
              <//>`
          }`
    }`;
}

function subjectLink(subject: string): VNode | string {
  if (subject.startsWith('message:')) {
    const id = subject.slice('message:'.length);
    return html`<a href=${messagePath(id.split('#')[0] ?? id)}>${subject}</a>`;
  }
  if (subject.startsWith('aggregate:')) {
    return html`<a href=${`/aggregates/${encodeURIComponent(subject.slice('aggregate:'.length))}`}>${subject}</a>`;
  }
  return subject;
}
