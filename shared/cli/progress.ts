import type { BulkReplayProgress } from '../admin/bulk-replay.ts';
import type { RedriveProgress } from '../admin/redrive-dead-letters.ts';

/** Where progress goes: the CLI's stderr. */
export interface ProgressStream {
  write(text: string): unknown;
  /** A terminal gets a bar redrawn in place; anything else (a log, a pipe) plain lines. */
  readonly isTTY?: boolean;
}

/** Reports bulk work on stderr, so that stdout keeps only the result (one JSON document with `--json`). */
export interface ProgressReporter {
  replay(progress: BulkReplayProgress): void;
  redrive(progress: RedriveProgress): void;
  /** Ends a bar in progress with a newline. */
  end(): void;
}

const BAR_WIDTH = 30;

/** A plain line every this many redriven messages (their total is not known in advance). */
const REDRIVE_LINE_EVERY = 10;

/**
 * A progress reporter on `stream`: a bar redrawn in place on a terminal, a plain line every tenth of the work
 * otherwise.
 */
export function progressReporter(stream: ProgressStream): ProgressReporter {
  let drawing = false;
  const draw = (line: string) => {
    stream.write(`\r${line}\u001b[K`);
    drawing = true;
  };
  const end = () => {
    if (drawing) stream.write('\n');
    drawing = false;
  };
  return {
    replay(progress) {
      const line = `replay ${bar(progress.done, progress.total)} ${progress.done}/${progress.total} (replayed ${progress.replayed}, skipped ${progress.skipped}, failed ${progress.failed})`;
      if (stream.isTTY === true) {
        draw(line);
        if (progress.done === progress.total) end();
        return;
      }
      const step = Math.max(1, Math.ceil(progress.total / 10));
      if (progress.done % step === 0 || progress.done === progress.total) stream.write(`${line}\n`);
    },
    redrive(progress) {
      const queue = progress.deadLetterQueueUrl.split('/').filter(Boolean).at(-1) ?? '';
      const line = `redrive ${queue}: examined ${progress.examined}, moved ${progress.moved + progress.resumed}, left ${progress.left}`;
      if (stream.isTTY === true) draw(line);
      else if (progress.examined % REDRIVE_LINE_EVERY === 0) stream.write(`${line}\n`);
    },
    end,
  };
}

/** `[#########---------------------]`. */
export function bar(done: number, total: number): string {
  const filled = total === 0 ? BAR_WIDTH : Math.round((done / total) * BAR_WIDTH);
  return `[${'#'.repeat(filled)}${'-'.repeat(BAR_WIDTH - filled)}]`;
}
