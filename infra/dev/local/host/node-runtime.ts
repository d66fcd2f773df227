/**
 * Which Node.js binary runs a function: the major its template `Runtime` names (`nodejs24.x` → 24), as Lambda
 * runs it. The Node this process runs on serves its own major; another major comes from the npm registry as a
 * dev dependency (the `node` package, which installs the binary of the platform: `npm install --save-dev
 * node@24`). A major that is in neither place fails the start with the command that installs it.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { LocalRuntimeError } from '../local-runtime-error.ts';

/** A Node.js binary and the version it reports. */
export interface NodeBinary {
  readonly path: string;
  /** `v24.21.0`. */
  readonly version: string;
  readonly major: number;
}

/** The Node.js major a Lambda runtime name stands for (`nodejs24.x` → 24); `undefined` for another language. */
export function nodeMajorOf(runtime: string): number | undefined {
  const match = /^nodejs(\d+)\.x$/.exec(runtime);
  return match?.[1] === undefined ? undefined : Number(match[1]);
}

/** The major of this process's Node. */
export function currentNodeMajor(): number {
  return Number(process.versions.node.split('.')[0]);
}

/**
 * The binary for `major`: this process's Node when it is that major, else the `node` package's binary found from
 * `projectDir` (or from this module) when it is that major. Throws `RUNTIME_UNAVAILABLE` naming the install command.
 * @example
 * const node = findNodeBinary(24, process.cwd()); // { path: '…/node_modules/node/bin/node', major: 24, … }
 */
export function findNodeBinary(major: number, projectDir: string): NodeBinary {
  if (currentNodeMajor() === major) {
    return { path: process.execPath, version: process.version, major };
  }
  const candidates = new Set<string>();
  for (const base of [join(projectDir, 'package.json'), import.meta.filename]) {
    try {
      const manifest = createRequire(base).resolve('node/package.json');
      candidates.add(join(dirname(manifest), 'bin', 'node'));
    } catch {
      // Not installed from here.
    }
  }
  const found: string[] = [];
  for (const path of candidates) {
    if (!existsSync(path)) continue;
    const version = versionOf(path);
    if (version === undefined) continue;
    found.push(`${path} (${version})`);
    if (Number(version.slice(1).split('.')[0]) === major) return { path, version, major };
  }
  throw new LocalRuntimeError(
    'RUNTIME_UNAVAILABLE',
    `a function runs on Node.js ${major} (its Runtime is nodejs${major}.x), and this machine has ${process.version}` +
      (found.length === 0 ? '' : ` and ${found.join(', ')}`) +
      `: install that Node as a dev dependency (npm install --save-dev node@${major}), or run npm start on Node ${major}`,
  );
}

function versionOf(path: string): string | undefined {
  try {
    return execFileSync(path, ['--version'], { encoding: 'utf8', timeout: 10_000 }).trim();
  } catch {
    return undefined;
  }
}
