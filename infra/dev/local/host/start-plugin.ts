/**
 * What an app adds to `npm start` that the generic runtime cannot know: starting data, how to try it, a live
 * status line. An app ships a module whose default export is a {@link LocalPlugin}, and the CLI loads it with
 * `--plugin <module>`.
 */
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { LocalRuntimeError } from '../local-runtime-error.ts';
import type { LocalRuntime } from './runtime.ts';

/** The hooks of an `npm start` plug-in; each one is optional. */
export interface LocalPlugin {
  /** Puts starting data in once the runtime runs (`--no-seed` skips it); returns lines for the banner. */
  seed?(runtime: LocalRuntime): Promise<readonly string[]>;
  /** Lines that end the banner: how to try the app. */
  tryIt?(runtime: LocalRuntime): readonly string[];
  /** The live status line, refreshed while the runtime runs. */
  status?(runtime: LocalRuntime): Promise<string>;
  /** Releases what the plug-in holds (SDK clients), before the runtime stops. */
  close?(): Promise<void> | void;
}

/** Imports the plug-in module at `path` (relative to `projectDir`) and checks its default export. */
export async function loadPlugin(path: string, projectDir: string): Promise<LocalPlugin> {
  let module: { default?: unknown };
  try {
    module = (await import(pathToFileURL(resolve(projectDir, path)).href)) as { default?: unknown };
  } catch (cause) {
    throw new LocalRuntimeError('PLUGIN_FAILED', `cannot import the plug-in ${path}`, { cause });
  }
  const plugin = module.default;
  const hooks = ['seed', 'tryIt', 'status', 'close'] as const;
  if (
    typeof plugin !== 'object' ||
    plugin === null ||
    hooks.some((hook) => {
      const value = (plugin as Record<string, unknown>)[hook];
      return value !== undefined && typeof value !== 'function';
    })
  ) {
    throw new LocalRuntimeError(
      'PLUGIN_FAILED',
      `${path} must export default a plug-in object with optional ${hooks.join(', ')} functions`,
    );
  }
  return plugin as LocalPlugin;
}
