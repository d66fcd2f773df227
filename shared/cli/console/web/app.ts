/**
 * The console's page: a header with the views and the search box, and the view the URL names. Every control is a
 * link, a button or a labelled field, so the keyboard reaches all of it; the layout folds to one column on a
 * phone's width.
 */
import { html } from 'htm/preact';
import type { VNode } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { AggregateView } from './aggregate-view.ts';
import { ApiError, getJson } from './api.ts';
import { AuditView } from './audit-view.ts';
import { DeadLettersView } from './dead-letters-view.ts';
import { FailuresView } from './failures-view.ts';
import { MessageView } from './message-view.ts';
import { MessagesView } from './messages-view.ts';
import { OverviewView } from './overview-view.ts';
import { Notice } from './page-parts.ts';
import { navigate, type PageLocation, useLocation } from './router.ts';
import { useResource } from './use-resource.ts';

/** What `/api/session` says about the console. */
interface SessionInfo {
  readonly stackName: string;
  readonly outboxName?: string;
  readonly actor: string;
  readonly topics: readonly string[];
  readonly subscribers: readonly { subscriber: string; stackName?: string; problem?: string }[];
}

const VIEWS = [
  { path: '/', label: 'Overview' },
  { path: '/failures', label: 'Failures' },
  { path: '/messages', label: 'Messages', href: '/messages?status=FAILED' },
  { path: '/dead-letters', label: 'Dead letters' },
  { path: '/audit', label: 'Audit' },
] as const;

/** The page. */
export function App(): VNode {
  const location = useLocation();
  const session = useResource<SessionInfo>('/session');
  const main = useRef<HTMLElement>(null);
  const first = useRef(true);
  const view = viewOf(location, session.data);
  useEffect(() => {
    document.title = `${view.title} · outbox console · ${session.data?.stackName ?? ''}`;
  }, [view.title, session.data?.stackName]);
  useEffect(() => {
    // After a move within the page, the new view is where the keyboard and a screen reader go next.
    if (!first.current) main.current?.focus();
    first.current = false;
  }, [location.path, location.query.toString()]);
  return html`<a class="skip" href="#main">Skip to the content</a>
    <header class="top">
      <div class="brand">
        <span class="name">outbox console</span>
        <span class="stack">${session.data?.outboxName ?? session.data?.stackName ?? ''}</span>
      </div>
      <nav aria-label="Views">
        <ul>
          ${VIEWS.map((item) => {
            const current = item.path === '/' ? location.path === '/' : location.path.startsWith(item.path);
            return html`<li><a href=${'href' in item ? item.href : item.path} aria-current=${current ? 'page' : undefined}>${item.label}</a></li>`;
          })}
        </ul>
      </nav>
      <${SearchBox} />
    </header>
    <main id="main" tabindex="-1" ref=${main}>
      ${
        session.error instanceof ApiError && session.error.status === 401
          ? html`<${Notice} kind="error">${session.error.message}<//>`
          : view.body
      }
    </main>
    <footer>
      ${session.data === undefined ? null : html`Acting as <b>${session.data.actor}</b> · stack ${session.data.stackName} · `}
      served on 127.0.0.1 only, from this machine
    </footer>`;
}

/** The view of `location`, and its title. */
function viewOf(location: PageLocation, session: SessionInfo | undefined): { title: string; body: VNode } {
  const { path } = location;
  if (path === '/') return { title: 'Overview', body: html`<${OverviewView} />` };
  if (path === '/failures')
    return { title: 'Failures', body: html`<${FailuresView} location=${location} />` };
  if (path === '/messages') {
    return { title: 'Messages', body: html`<${MessagesView} location=${location} session=${session} />` };
  }
  const message = /^\/messages\/([^/]+)$/.exec(path);
  if (message !== null) {
    const messageId = decodeURIComponent(message[1] ?? '');
    return {
      title: `Message ${messageId}`,
      body: html`<${MessageView} key=${messageId} messageId=${messageId} />`,
    };
  }
  const aggregate = /^\/aggregates\/([^/]+)$/.exec(path);
  if (aggregate !== null) {
    const aggregateId = decodeURIComponent(aggregate[1] ?? '');
    return {
      title: `Aggregate ${aggregateId}`,
      body: html`<${AggregateView} key=${aggregateId} aggregateId=${aggregateId} location=${location} />`,
    };
  }
  if (path === '/dead-letters') return { title: 'Dead letters', body: html`<${DeadLettersView} />` };
  if (path === '/audit') return { title: 'Audit', body: html`<${AuditView} location=${location} />` };
  return {
    title: 'Not found',
    body: html`<h1>Not found</h1><p>No view at ${path}. <a href="/">Overview</a></p>`,
  };
}

/** The search box: a message id, an aggregate id or an order key, to the page that shows it. */
function SearchBox(): VNode {
  const [query, setQuery] = useState('');
  const [error, setError] = useState<string | undefined>(undefined);
  const submit = async (event: Event) => {
    event.preventDefault();
    if (query.trim() === '') return;
    setError(undefined);
    try {
      const found = await getJson<{ location: string }>(`/search?q=${encodeURIComponent(query.trim())}`);
      setQuery('');
      navigate(found.location);
    } catch (cause) {
      setError(cause instanceof Error ? cause.message : String(cause));
    }
  };
  return html`<form role="search" class="search" onSubmit=${submit}>
    <label for="search">Message id, aggregate id or order key</label>
    <div class="search-row">
      <input
        id="search"
        type="search"
        value=${query}
        aria-describedby=${error === undefined ? undefined : 'search-error'}
        onInput=${(event: Event) => setQuery((event.target as HTMLInputElement).value)}
      />
      <button type="submit">Find</button>
    </div>
    ${error === undefined ? null : html`<p id="search-error" class="search-error" role="alert">${error}</p>`}
  </form>`;
}
