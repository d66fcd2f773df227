/**
 * Messages (`/messages?status=&topic=&subscriber=&from=&to=`): one page of the listing the CLI's `list` reads
 * through the indexes (never a scan), filtered, with a link to the next page.
 */
import { html } from 'htm/preact';
import type { VNode } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import type { MessagePage } from '../../../admin/list-messages.ts';
import { withQuery } from './api.ts';
import { aggregatePath, formatCount, formatTime, messagePath } from './format.ts';
import { DataTable, LoadState, numeric, StatusBadge } from './page-parts.ts';
import { navigate, type PageLocation } from './router.ts';
import { useResource } from './use-resource.ts';

const STATUSES = ['', 'PENDING', 'SENT', 'FAILED', 'CANCELLED'] as const;
const FILTERS = ['status', 'topic', 'subscriber', 'from', 'to'] as const;
type Filter = (typeof FILTERS)[number];

/** The messages view. */
export function MessagesView({
  location,
  session,
}: {
  readonly location: PageLocation;
  readonly session:
    | { readonly topics: readonly string[]; readonly subscribers: readonly { subscriber: string }[] }
    | undefined;
}): VNode {
  const filters = Object.fromEntries(FILTERS.map((name) => [name, location.query.get(name) ?? ''])) as Record<
    Filter,
    string
  >;
  const cursor = location.query.get('cursor') ?? undefined;
  const chosen = FILTERS.some((name) => filters[name] !== '');
  const page = useResource<MessagePage>(chosen ? withQuery('/messages', { ...filters, cursor }) : undefined);
  const [draft, setDraft] = useState(filters);
  useEffect(() => setDraft(filters), [location.query.toString()]);

  const set = (name: Filter) => (event: Event) =>
    setDraft((previous) => ({ ...previous, [name]: (event.target as HTMLInputElement).value }));
  const submit = (event: Event) => {
    event.preventDefault();
    navigate(withQuery('/messages', draft));
  };

  return html`<h1>Messages</h1>
    <form class="filters" onSubmit=${submit} aria-label="Filter the messages">
      <div class="field">
        <label for="filter-status">Status</label>
        <select id="filter-status" value=${draft.status} onChange=${set('status')}>
          ${STATUSES.map((status) => html`<option value=${status}>${status === '' ? 'any' : status}</option>`)}
        </select>
      </div>
      <div class="field">
        <label for="filter-topic">Topic</label>
        <input id="filter-topic" list="topics" value=${draft.topic} onInput=${set('topic')} />
        <datalist id="topics">${(session?.topics ?? []).map((topic) => html`<option value=${topic}></option>`)}</datalist>
      </div>
      <div class="field">
        <label for="filter-subscriber">Subscriber</label>
        <input id="filter-subscriber" list="subscribers" value=${draft.subscriber} onInput=${set('subscriber')} />
        <datalist id="subscribers">${(session?.subscribers ?? []).map((s) => html`<option value=${s.subscriber}></option>`)}</datalist>
      </div>
      <div class="field">
        <label for="filter-from">Created from (ISO-8601)</label>
        <input id="filter-from" value=${draft.from} placeholder="2026-12-01T04:00:00Z" onInput=${set('from')} />
      </div>
      <div class="field">
        <label for="filter-to">Created to (ISO-8601)</label>
        <input id="filter-to" value=${draft.to} placeholder="2026-12-01T05:00:00Z" onInput=${set('to')} />
      </div>
      <button type="submit">Show</button>
    </form>
    ${
      chosen
        ? null
        : html`<p>Choose a status, a topic, a subscriber or a time: listing every message would read the whole table.</p>`
    }
    <${LoadState} error=${page.error} loading=${page.loading && page.data === undefined} />
    ${
      page.data === undefined
        ? null
        : html`<p class="meta">${formatCount(page.data.items.length)} on this page${page.data.cursor === undefined ? '' : ', more after it'}</p>
          <${DataTable} label="Messages" head=${['Message', 'Subscriber', 'Status', 'Topic', 'Aggregate', numeric('Attempts'), 'Created', 'Last error']}>
            ${page.data.items.map(
              (item) => html`<tr>
                <td><a href=${messagePath(item.messageId)}>${item.messageId}</a></td>
                <td>${item.subscriber ?? ''}</td>
                <td><${StatusBadge} status=${item.status} /></td>
                <td>${item.topic}</td>
                <td><a href=${aggregatePath(item.aggregateId)}>${item.aggregateId}</a></td>
                <td class="num">${item.attempts}</td>
                <td>${formatTime(item.createdAt)}</td>
                <td class="error-text">${item.lastError ?? ''}</td>
              </tr>`,
            )}
          <//>
          ${
            page.data.cursor === undefined
              ? null
              : html`<p><a class="button" href=${withQuery('/messages', { ...filters, cursor: page.data.cursor })}>Next page</a></p>`
          }`
    }`;
}
