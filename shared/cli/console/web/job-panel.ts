/**
 * A bulk job's progress, streamed from the console while it runs (and read back after a reload), its cancel
 * button, and once it has ended its report: what was done, what was not, and why.
 */
import { html } from 'htm/preact';
import type { VNode } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import type { JobSnapshot } from '../bulk-jobs.ts';
import type { GroupReplayReport } from '../group-replay.ts';
import { postJson } from './api.ts';
import { formatCount, formatTime, messagePath, plural } from './format.ts';
import { Notice } from './page-parts.ts';

/** Whether a job is still working. */
export function isRunning(job: JobSnapshot): boolean {
  return job.state === 'RUNNING' || job.state === 'CANCELLING';
}

/** The job, kept up to date from the console's event stream while it runs. */
function useLiveJob(initial: JobSnapshot): JobSnapshot {
  const [job, setJob] = useState(initial);
  useEffect(() => setJob(initial), [initial]);
  useEffect(() => {
    if (!isRunning(initial)) return undefined;
    const events = new EventSource(`/api/jobs/${encodeURIComponent(initial.id)}/events`);
    events.onmessage = (event: MessageEvent<string>) => {
      const snapshot = JSON.parse(event.data) as JobSnapshot;
      setJob(snapshot);
      if (!isRunning(snapshot)) events.close();
    };
    return () => events.close();
  }, [initial.id]);
  return job;
}

/**
 * One job: its progress bar and counts, Cancel while it runs, its report once it has ended; `onEnded` is called when
 * it ends while shown (the view reads its data again).
 */
export function JobPanel({
  job: initial,
  onEnded,
}: {
  readonly job: JobSnapshot;
  readonly onEnded?: () => void;
}): VNode {
  const job = useLiveJob(initial);
  const wasRunning = useRef(isRunning(initial));
  useEffect(() => {
    if (wasRunning.current && !isRunning(job)) onEnded?.();
    wasRunning.current = isRunning(job);
  }, [job.state]);
  const [error, setError] = useState<string | undefined>(undefined);
  const running = isRunning(job);
  const { total, done, counts } = job.progress;
  const cancel = async () => {
    setError(undefined);
    try {
      await postJson(`/jobs/${encodeURIComponent(job.id)}/cancel`, {});
    } catch (cause) {
      setError(cause instanceof Error ? cause.message : String(cause));
    }
  };
  const progressId = `job-${job.id}-progress`;
  return html`<section class=${`job job-${job.state.toLowerCase()}`} aria-labelledby=${`job-${job.id}-title`} data-job-id=${job.id}>
    <h3 id=${`job-${job.id}-title`}>${job.title}</h3>
    <p class="job-meta">
      ${job.state === 'RUNNING' ? 'running' : job.state.toLowerCase()} · started ${formatTime(job.startedAt)} by
      ${' '}${job.actor} · ${job.ratePerSecond}/s · reason: ${job.reason}
    </p>
    <label for=${progressId}>${formatCount(done)} of ${formatCount(total)} done</label>
    <progress id=${progressId} max=${Math.max(total, 1)} value=${done}></progress>
    <p class="job-counts" aria-live="polite">
      ${Object.entries(counts).map(([name, count]) => html`<span class="count"><b>${formatCount(count)}</b> ${name}</span>`)}
    </p>
    ${
      running
        ? html`<button type="button" class="danger" onClick=${cancel} disabled=${job.state === 'CANCELLING'}>
          ${job.state === 'CANCELLING' ? 'Stopping after the current message…' : 'Cancel'}
        </button>`
        : html`<${JobReport} job=${job} />`
    }
    ${error === undefined ? null : html`<${Notice} kind="error">${error}<//>`}
  </section>`;
}

/** What an ended job did. */
function JobReport({ job }: { readonly job: JobSnapshot }): VNode {
  if (job.state === 'FAILED')
    return html`<${Notice} kind="error">The job stopped: ${job.error ?? 'unknown error'}<//>`;
  const ended = `${job.state === 'CANCELLED' ? 'Cancelled' : 'Done'} at ${formatTime(job.endedAt)}.`;
  if (job.kind === 'replay') {
    const report = (job.report ?? {}) as Partial<GroupReplayReport>;
    return html`<div class="job-report" role="status">
      <p>
        ${ended} Replayed ${plural(report.replayed ?? 0, 'delivery', 'deliveries')}, skipped ${formatCount(report.skipped ?? 0)},${' '}
        failed ${formatCount(report.failed ?? 0)}${(report.notStarted ?? 0) > 0 ? `, not started ${formatCount(report.notStarted ?? 0)} (left FAILED)` : ''}.
        ${report.bulkId === undefined ? null : html` Audit rows: BULK_REPLAY, run <code>${report.bulkId}</code>.`}
      </p>
      ${
        (report.replayedExamples ?? []).length === 0
          ? null
          : html`<p>
              Replayed, for example:${' '}
              ${(report.replayedExamples ?? []).map(
                (example) =>
                  html`<a href=${messagePath(example.messageId)}>${example.messageId}</a>${example.subscriber === undefined ? '' : ` (${example.subscriber})`}${' '}`,
              )}
            </p>`
      }
      ${
        (report.problems ?? []).length === 0
          ? null
          : html`<ul class="problems">
            ${(report.problems ?? []).map(
              (problem) => html`<li>
                <b>${formatCount(problem.count)} ${problem.outcome}</b>: ${problem.kind === '' ? '' : `${problem.kind}: `}${problem.message}
                <ul>
                  ${problem.examples.map(
                    (example) => html`<li>
                      <a href=${messagePath(example.messageId)}>${example.messageId}</a>${example.subscriber === undefined ? '' : ` (${example.subscriber})`}: ${example.error}
                    </li>`,
                  )}
                </ul>
              </li>`,
            )}
          </ul>`
      }
    </div>`;
  }
  const report = (job.report ?? {}) as {
    moved?: number;
    resumed?: number;
    left?: number;
    examined?: number;
    causes?: Record<string, number>;
  };
  const causes = Object.entries(report.causes ?? {});
  return html`<div class="job-report" role="status">
    <p>
      ${ended} Moved ${plural((report.moved ?? 0) + (report.resumed ?? 0), 'message')} back to the queue, left ${formatCount(report.left ?? 0)}${' '}
      (examined ${formatCount(report.examined ?? 0)}).
    </p>
    ${causes.length === 0 ? null : html`<p>Why they were dead letters: ${causes.map(([cause, count]) => `${cause} ${count}`).join(', ')}.</p>`}
  </div>`;
}

/** Jobs started from this page and those the console holds, each once, the newest first. */
export function mergeJobs(started: readonly JobSnapshot[], listed: readonly JobSnapshot[]): JobSnapshot[] {
  const byId = new Map<string, JobSnapshot>();
  for (const job of [...listed, ...started]) if (!byId.has(job.id)) byId.set(job.id, job);
  return [...byId.values()].sort((a, b) =>
    a.startedAt < b.startedAt ? 1 : a.startedAt > b.startedAt ? -1 : b.id.localeCompare(a.id),
  );
}
