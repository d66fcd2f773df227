/**
 * Watches a project's source files for hot reload: every directory under the project root except dependencies,
 * build output and local state, so a change to a handler or to anything it imports is seen. Changes that arrive
 * together (an editor's save writes a file more than once) are reported once.
 */
import { type FSWatcher, readdirSync, watch } from 'node:fs';
import { join, relative } from 'node:path';

/** Options of {@link watchSources}. */
export interface SourceWatcherOptions {
  readonly rootDir: string;
  /** Receives the changed files (relative to the root), once a burst of changes has settled. */
  readonly onChange: (files: readonly string[]) => void;
  /** Directory names never watched, at any depth. @default node_modules, .git, cdk.out, .local, dist, coverage */
  readonly ignore?: readonly string[];
  /** Extra paths never watched (a `--data-dir` inside the project). */
  readonly ignorePaths?: readonly string[];
  /** How long a burst may last. @default 150 */
  readonly settleMs?: number;
}

/** A running watch. */
export interface SourceWatcher {
  close(): void;
}

const DEFAULTS = {
  ignore: ['node_modules', '.git', 'cdk.out', '.local', 'dist', 'coverage'],
  settleMs: 150,
} as const;

/** Files whose change can change what a function runs. */
const SOURCE_FILE = /\.(?:[cm]?[jt]s|tsx|jsx|json)$/;

/**
 * Starts watching; `close()` stops.
 * @example
 * const watcher = watchSources({ rootDir: process.cwd(), onChange: (files) => void runtime.reloadFunctions() });
 */
export function watchSources(options: SourceWatcherOptions): SourceWatcher {
  const ignore = new Set(options.ignore ?? DEFAULTS.ignore);
  const ignorePaths = (options.ignorePaths ?? []).map((path) => relative(options.rootDir, path));
  const settleMs = options.settleMs ?? DEFAULTS.settleMs;
  const watchers: FSWatcher[] = [];
  const changed = new Set<string>();
  let timer: NodeJS.Timeout | undefined;
  const ignored = (path: string): boolean =>
    path.split(/[\\/]/).some((part) => ignore.has(part)) ||
    ignorePaths.some((prefix) => prefix !== '' && !prefix.startsWith('..') && path.startsWith(prefix));
  const record = (path: string): void => {
    if (ignored(path) || !SOURCE_FILE.test(path)) return;
    changed.add(path);
    clearTimeout(timer);
    timer = setTimeout(() => {
      const files = [...changed].sort();
      changed.clear();
      options.onChange(files);
    }, settleMs);
  };
  const add = (watcher: FSWatcher): void => {
    // A directory removed while watched ends its watcher; the rest go on.
    watcher.on('error', () => watcher.close());
    watchers.push(watcher);
  };
  // The root's own files, then each top-level directory recursively: one recursive watch of the root would
  // also walk node_modules.
  add(watch(options.rootDir, (_event, file) => file !== null && record(file.toString())));
  for (const entry of readdirSync(options.rootDir, { withFileTypes: true })) {
    if (!entry.isDirectory() || ignored(entry.name)) continue;
    add(
      watch(join(options.rootDir, entry.name), { recursive: true }, (_event, file) => {
        if (file !== null) record(join(entry.name, file.toString()));
      }),
    );
  }
  return {
    close() {
      clearTimeout(timer);
      for (const watcher of watchers.splice(0)) watcher.close();
    },
  };
}
