/**
 * Synthesizes the project's CDK app the way `cdk synth` does — cdk.json's `app` command run with `CDK_OUTDIR`
 * and `CDK_CONTEXT_JSON` — and reads every stack's template (or the one asked for) from the cloud assembly it
 * writes, with the dependencies between the stacks, in deployment order. Bundling is skipped: the local runtime
 * imports the handler modules, it never runs the bundles.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalRuntimeError } from '../local-runtime-error.ts';
import { asTemplate, type CloudFormationTemplate, isRecord } from './cloudformation-template.ts';
import { deploymentOrder } from './stack-order.ts';

/** Options of {@link synthesizeApp}. */
export interface SynthesizeOptions {
  /** The directory holding cdk.json; the app command runs there, as `cdk synth` would. */
  readonly projectDir: string;
  /** The one stack to read (its name, display name or artifact id). @default every stack of the app */
  readonly stackName?: string;
  /** Environment of the app command. @default process.env */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** @default 180_000 */
  readonly timeoutMs?: number;
}

/** One synthesized stack. */
export interface SynthesizedStack {
  /** The stack's CloudFormation name. */
  readonly stackName: string;
  /**
   * The stack's construct path (`OutboxOrders`, `Prod/Orders` in a stage), as `cdk` lists it: in an app of
   * several stacks, the local runtime names each function `<displayName>/<construct path in the stack>`.
   */
  readonly displayName: string;
  readonly template: CloudFormationTemplate;
  /** CloudFormation names of the app's stacks this one depends on (the cloud assembly's dependencies). */
  readonly dependencies: readonly string[];
}

/** A synthesized app: its stacks in deployment order, each after the stacks it depends on. */
export interface SynthesizedApp {
  readonly stacks: readonly SynthesizedStack[];
  /**
   * How many stacks the app has: more than `stacks` holds when `stackName` picked one. The local runtime names
   * functions `<stack>/<path>` whenever it is more than one, so a stack run alone keeps its functions' names
   * (and the checkpoints saved under them).
   */
  readonly stackCount: number;
}

/** Context the CDK CLI adds to every synth that the local runtime relies on or overrides. */
export const LOCAL_SYNTH_CONTEXT = {
  // Construct paths in the template: the local runtime names functions after them.
  'aws:cdk:enable-path-metadata': true,
  // An empty list of stacks to bundle makes NodejsFunction skip esbuild (it only needs the entry file).
  'aws:cdk:bundling-stacks': [],
} as const;

const DEFAULTS = { timeoutMs: 180_000 } as const;
const STACK_ARTIFACT = 'aws:cloudformation:stack';
const NESTED_ASSEMBLY = 'cdk:cloud-assembly';

/**
 * Runs the app of `projectDir/cdk.json` into a temporary cloud assembly and returns its stacks' templates, in
 * deployment order (or only the stack `stackName` names).
 * @example
 * const { stacks } = await synthesizeApp({ projectDir: process.cwd() });
 * stacks.map((stack) => stack.stackName); // ['OutboxOrders', 'OutboxInventory', 'OutboxLoyalty']
 */
export async function synthesizeApp(options: SynthesizeOptions): Promise<SynthesizedApp> {
  const { app, context } = await readCdkJson(options.projectDir);
  const outdir = await mkdtemp(join(tmpdir(), 'local-synth-'));
  try {
    await runApp(app, {
      cwd: options.projectDir,
      timeoutMs: options.timeoutMs ?? DEFAULTS.timeoutMs,
      env: {
        // CDK's built-in CloudFormation validation (a WASM rule engine, warnings only by default) takes most of
        // a synth: `cdk synth` runs it, a local start need not. An explicit CDK_VALIDATION is kept.
        CDK_VALIDATION: 'false',
        ...(options.env ?? process.env),
        CDK_OUTDIR: outdir,
        CDK_CONTEXT_JSON: JSON.stringify({ ...context, ...LOCAL_SYNTH_CONTEXT }),
      },
    });
    const artifacts = await readStacks(outdir);
    const picked =
      options.stackName === undefined
        ? deploymentOrder(artifacts)
        : [pickStack(artifacts, options.stackName)];
    if (picked.length === 0) {
      throw new LocalRuntimeError('SYNTH_FAILED', `the app of ${options.projectDir} has no stack to run`);
    }
    const stacks = await Promise.all(
      picked.map(async (artifact) => ({
        stackName: artifact.stackName,
        displayName: artifact.displayName,
        template: asTemplate(JSON.parse(await readFile(artifact.templatePath, 'utf8'))),
        dependencies: artifact.dependencies,
      })),
    );
    return { stacks, stackCount: artifacts.length };
  } finally {
    await rm(outdir, { recursive: true, force: true });
  }
}

/** cdk.json's app command and context, plus cdk.context.json's cached context (as the CLI reads them). */
async function readCdkJson(projectDir: string): Promise<{ app: string; context: Record<string, unknown> }> {
  const file = join(projectDir, 'cdk.json');
  let cdkJson: unknown;
  try {
    cdkJson = JSON.parse(await readFile(file, 'utf8'));
  } catch (cause) {
    throw new LocalRuntimeError(
      'SYNTH_FAILED',
      `cannot read ${file}: the local runtime synthesizes the app it names`,
      {
        cause,
      },
    );
  }
  const app = isRecord(cdkJson) ? cdkJson.app : undefined;
  if (typeof app !== 'string' || app.trim() === '') {
    throw new LocalRuntimeError('SYNTH_FAILED', `${file} has no "app" command`);
  }
  const cached = await readFile(join(projectDir, 'cdk.context.json'), 'utf8').then(
    (text) => JSON.parse(text) as unknown,
    () => ({}),
  );
  const context = isRecord(cdkJson) && isRecord(cdkJson.context) ? cdkJson.context : {};
  return { app, context: { ...(isRecord(cached) ? cached : {}), ...context } };
}

interface RunOptions {
  readonly cwd: string;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly timeoutMs: number;
}

function runApp(command: string, options: RunOptions): Promise<void> {
  return new Promise((resolve, reject) => {
    // A shell, as the CDK CLI runs the command: `npx tsx infra/app.ts` is one string in cdk.json.
    const child = spawn(command, {
      cwd: options.cwd,
      env: options.env as NodeJS.ProcessEnv,
      shell: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const output: string[] = [];
    const keep = (chunk: Buffer): void => {
      output.push(chunk.toString());
      if (output.length > 200) output.shift();
    };
    child.stdout?.on('data', keep);
    child.stderr?.on('data', keep);
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs);
    child.once('error', (cause) => {
      clearTimeout(timer);
      reject(new LocalRuntimeError('SYNTH_FAILED', `cannot run the app command "${command}"`, { cause }));
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve();
      else {
        const ended = signal === null ? `exited with code ${code}` : `was stopped (${signal})`;
        reject(
          new LocalRuntimeError(
            'SYNTH_FAILED',
            `the app command "${command}" ${ended}:\n${output.join('').trim()}`,
          ),
        );
      }
    });
  });
}

interface StackArtifact {
  readonly artifactId: string;
  readonly stackName: string;
  readonly displayName: string;
  readonly templatePath: string;
  /** CloudFormation names of the stacks it depends on. */
  readonly dependencies: readonly string[];
}

/** The stacks of a cloud assembly, nested assemblies (stages) included, in manifest order. */
async function readStacks(directory: string): Promise<StackArtifact[]> {
  const manifest: unknown = JSON.parse(await readFile(join(directory, 'manifest.json'), 'utf8'));
  const artifacts = isRecord(manifest) && isRecord(manifest.artifacts) ? manifest.artifacts : {};
  // A manifest's dependencies are artifact ids (asset manifests among them): only those of stacks count.
  const nameOf = new Map<string, string>();
  for (const [artifactId, artifact] of Object.entries(artifacts)) {
    if (isRecord(artifact) && artifact.type === STACK_ARTIFACT && isRecord(artifact.properties)) {
      const { stackName } = artifact.properties;
      nameOf.set(artifactId, typeof stackName === 'string' ? stackName : artifactId);
    }
  }
  const stacks: StackArtifact[] = [];
  for (const [artifactId, artifact] of Object.entries(artifacts)) {
    if (!isRecord(artifact) || !isRecord(artifact.properties)) continue;
    const { properties } = artifact;
    if (artifact.type === STACK_ARTIFACT && typeof properties.templateFile === 'string') {
      const stackName = nameOf.get(artifactId) ?? artifactId;
      const dependsOn = Array.isArray(artifact.dependencies) ? artifact.dependencies : [];
      stacks.push({
        artifactId,
        stackName,
        displayName: typeof artifact.displayName === 'string' ? artifact.displayName : stackName,
        templatePath: join(directory, properties.templateFile),
        dependencies: dependsOn.flatMap((id) => (typeof id === 'string' ? (nameOf.get(id) ?? []) : [])),
      });
    } else if (artifact.type === NESTED_ASSEMBLY && typeof properties.directoryName === 'string') {
      stacks.push(...(await readStacks(join(directory, properties.directoryName))));
    }
  }
  return stacks;
}

function pickStack(stacks: readonly StackArtifact[], wanted: string): StackArtifact {
  const names = stacks.map((stack) => stack.displayName).join(', ') || 'none';
  const found = stacks.find((stack) =>
    [stack.stackName, stack.artifactId, stack.displayName].includes(wanted),
  );
  if (found === undefined)
    throw new LocalRuntimeError('SYNTH_FAILED', `the app has no stack ${wanted} (stacks: ${names})`);
  return found;
}
