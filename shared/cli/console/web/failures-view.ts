/**
 * Failures (`/failures`): the FAILED deliveries grouped by cause, each group with its count, first and last
 * failure, topics and subscribers; a group is replayed with a reason, paced, its progress shown live (and read back
 * after a reload), cancellable, with a report of what was replayed, skipped and why.
 */
import { html } from 'htm/preact';
import type { VNode } from 'preact';
import { useState } from 'preact/hooks';
import type { JobSnapshot } from '../bulk-jobs.ts';
import type { CauseGroup } from '../cause-groups.ts';
import type { Failures } from '../failures.ts';
import { ActionDialog } from './action-dialog.ts';
import { postJson } from './api.ts';
import { formatCount, formatTime, messagePath, plural } from './format.ts';
import { JobPanel, mergeJobs } from './job-panel.ts';
import { LoadState, Notice } from './page-parts.ts';
import type { PageLocation } from './router.ts';
import { useResource } from './use-resource.ts';

/** How often the groups and the jobs are read again. */
const REFRESH_MS = 10_000;

/** The failures view. */
export function FailuresView({ location }: { readonly location: PageLocation }): VNode {
  const failures = useResource<Failures>('/failures', { refreshMs: REFRESH_MS });
  const jobs = useResource<{ jobs: JobSnapshot[] }>('/jobs', { refreshMs: REFRESH_MS });
  const [replaying, setReplaying] = useState<CauseGroup | undefined>(undefined);
  const [started, setStarted] = useState<JobSnapshot[]>([]);
  const highlighted = location.query.get('cause') ?? undefined;
  const replayJobs = mergeJobs(started, jobs.data?.jobs ?? []).filter((job) => job.kind === 'replay');

  const replay = async (group: CauseGroup, values: Readonly<Record<string, string>>) => {
    const { job } = await postJson<{ job: JobSnapshot }>('/failures/replay', {
      cause: group.id,
      reason: values.reason,
      ratePerSecond: Number(values.rate),
    });
    setStarted((previous) => [job, ...previous]);
  };

  return html`<h1>Failures</h1>
    ${
      failures.data === undefined
        ? html`<${LoadState} error=${failures.error} loading=${failures.loading} />`
        : html`<p class="meta">
          ${plural(failures.data.total, 'FAILED delivery', 'FAILED deliveries')} in${' '}
          ${plural(failures.data.groups.length, 'group')} by cause (ids and numbers masked) · read ${formatTime(failures.data.at)}
        </p>`
    }
    ${
      replayJobs.length === 0
        ? null
        : html`<section aria-labelledby="replays-title">
          <h2 id="replays-title">Replays</h2>
          ${replayJobs.map((job) => html`<${JobPanel} key=${job.id} job=${job} onEnded=${failures.reload} />`)}
        </section>`
    }
    ${failures.data?.groups.length === 0 ? html`<${Notice} kind="success">No FAILED delivery.<//>` : null}
    <ul class="groups">
      ${(failures.data?.groups ?? []).map(
        (
          group,
        ) => html`<li class=${group.id === highlighted ? 'group highlighted' : 'group'} id=${`cause-${group.id}`}>
          <h2 class="cause">
            ${group.kind === '' ? null : html`<span class="kind">${group.kind}</span>`} ${group.message}
          </h2>
          <dl class="facts">
            <div><dt>Deliveries</dt><dd class="big">${formatCount(group.count)}</dd></div>
            <div><dt>First</dt><dd>${formatTime(group.firstAt)}</dd></div>
            <div><dt>Last</dt><dd>${formatTime(group.lastAt)}</dd></div>
            <div><dt>Topics</dt><dd>${group.topics.join(', ')}</dd></div>
            <div><dt>Subscribers</dt><dd>${group.subscribers.length === 0 ? '(one queue)' : group.subscribers.join(', ')}</dd></div>
          </dl>
          <p class="example">
            For example <a href=${messagePath(group.example.messageId)}>${group.example.messageId}</a>${group.example.subscriber === undefined ? '' : ` (${group.example.subscriber})`}:${' '}
            <code>${group.example.lastError}</code>
          </p>
          <p class="actions">
            <button type="button" onClick=${() => setReplaying(group)}>Replay ${plural(group.count, 'delivery', 'deliveries')}…</button>
            <a href=${`/failures?cause=${encodeURIComponent(group.id)}`}>Link to this group</a>
          </p>
        </li>`,
      )}
    </ul>
    ${
      replaying === undefined
        ? null
        : html`<${ActionDialog}
          title=${`Replay ${plural(replaying.count, 'FAILED delivery', 'FAILED deliveries')}`}
          description=${html`<p>
            Each delivery of <b>${replaying.kind === '' ? '' : `${replaying.kind}: `}${replaying.message}</b> goes back to PENDING,
            one at a time at the rate below, and the sweeper sends it within a minute. A delivery that moved on meanwhile
            is skipped. You can cancel; what was replayed stays replayed.
          </p>`}
          confirmLabel="Replay"
          fields=${[{ name: 'rate', label: 'Replays per second', kind: 'number', initial: '10', hint: 'at most 1000' }]}
          onSubmit=${(values: Readonly<Record<string, string>>) => replay(replaying, values)}
          onClose=${() => {
            setReplaying(undefined);
            failures.reload();
          }}
        />`
    }`;
}
