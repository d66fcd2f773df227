/**
 * The package as a user gets it: `npm pack`, installed into a fresh project in a temporary folder, where a
 * writer, a consumer, an in-memory round trip and a CDK stack are type-checked, run and synthesized using only
 * the package's public entry points.
 */
import { execFile } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const execFileAsync = promisify(execFile);

/** Runs a command; a failure says what the command printed, not only that it failed. */
async function run(
  command: string,
  args: readonly string[],
  options: { cwd: string; env?: NodeJS.ProcessEnv },
): Promise<{ stdout: string; stderr: string }> {
  try {
    return await execFileAsync(command, [...args], { ...options, maxBuffer: 64 * 1024 * 1024 });
  } catch (error) {
    const { stdout = '', stderr = '' } = error as { stdout?: string; stderr?: string };
    throw new Error(`${command} ${args.join(' ')} failed:\n${stdout}\n${stderr}`.slice(0, 20_000), {
      cause: error,
    });
  }
}
const REPO = new URL('../../', import.meta.url).pathname;
const FIXTURE = new URL('./fixture/', import.meta.url).pathname;
const TSC = join(REPO, 'node_modules/.bin/tsc');

/** The versions this repository is tested with, so the fresh project installs from the npm cache. */
function lockedVersion(name: string): string {
  const lock = JSON.parse(readFileSync(join(REPO, 'package-lock.json'), 'utf8')) as {
    packages: Record<string, { version: string }>;
  };
  const entry = lock.packages[`node_modules/${name}`];
  if (entry === undefined) throw new Error(`${name} is not in package-lock.json`);
  return `${name}@${entry.version}`;
}

let workdir: string;
let project: string;
let tarball: string;

beforeAll(async () => {
  workdir = mkdtempSync(join(tmpdir(), 'outbox-pack-'));
  // `npm pack` runs `prepack`, which builds dist/ from the sources.
  const { stdout } = await run('npm', ['pack', '--pack-destination', workdir, '--silent'], { cwd: REPO });
  tarball = join(workdir, stdout.trim().split('\n').pop() ?? '');
  project = join(workdir, 'shop');
  cpSync(FIXTURE, project, { recursive: true });
  await run(
    'npm',
    [
      'install',
      '--prefer-offline',
      '--no-audit',
      '--no-fund',
      '--loglevel=error',
      tarball,
      lockedVersion('aws-cdk-lib'),
      lockedVersion('constructs'),
      lockedVersion('esbuild'),
      lockedVersion('@aws-sdk/lib-dynamodb'),
      lockedVersion('@types/node'),
    ],
    { cwd: project },
  );
}, 600_000);

afterAll(() => {
  if (workdir !== undefined) rmSync(workdir, { recursive: true, force: true });
});

describe('the packed library', () => {
  it('holds the library only: no tests, example, drill or local runtime', async () => {
    const { stdout } = await run('tar', ['-tzf', tarball], { cwd: workdir });
    const files = stdout.trim().split('\n');
    expect(files).toContain('package/package.json');
    expect(files).toContain('package/dist/shared/index.js');
    expect(files).toContain('package/dist/shared/index.d.ts');
    expect(files).toContain('package/dist/shared/lambda/entries/relay.js');
    expect(files).toContain('package/dist/infra/constructs/index.js');
    // The operator console's page, bundled at build: the published `outbox console` serves it as it is.
    expect(files).toContain('package/dist/shared/cli/console/web/console.js');
    expect(files).toContain('package/dist/shared/cli/console/web/console.css');
    expect(files.filter((file) => /console\/web\/.*\.ts$|build-console/.test(file))).toEqual([]);
    const outside = files.filter(
      (file) =>
        !/^package\/(package\.json|README\.md|LICENSE)$/.test(file) &&
        !/^package\/dist\/(shared|infra\/constructs)\//.test(file),
    );
    expect(outside).toEqual([]);
    expect(
      files.filter((file) => /test|functions\/|drill|infra\/dev|infra\/stacks|fixture/.test(file)),
    ).toEqual([]);
  });

  it('type-checks a service that imports the core, /lambda, /cdk and /testing by the package name', async () => {
    // skipLibCheck is off in the fixture: the published declarations must type-check too.
    await expect(run(TSC, ['-p', 'tsconfig.json'], { cwd: project })).resolves.toBeDefined();
    expect(existsSync(join(project, 'dist/src/reserve-stock.js'))).toBe(true);
  }, 120_000);

  it('writes, consumes once, skips the redelivery and confirms, on the in-memory adapters of /testing', async () => {
    const { stdout } = await run('node', ['dist/src/round-trip.js'], { cwd: project });
    expect(JSON.parse(stdout)).toEqual({
      first: 'APPLIED',
      redelivery: 'DUPLICATE',
      available: 3,
      status: 'CONFIRMED',
    });
  }, 60_000);

  it('synthesizes a stack with TransactionalOutbox from /cdk and bundles the shipped relay and sweeper', async () => {
    const outdir = join(project, 'cdk.out');
    await run('node', ['dist/src/stack.js'], { cwd: project, env: { ...process.env, CDK_OUTDIR: outdir } });
    const template = JSON.parse(readFileSync(join(outdir, 'Shop.template.json'), 'utf8')) as {
      Resources: Record<string, { Type: string; Metadata?: Record<string, string> }>;
    };
    const entries = Object.values(template.Resources)
      .filter((resource) => resource.Type === 'AWS::Lambda::Function')
      .map((resource) => resource.Metadata?.['serverless-outbox:entry'])
      .sort();
    expect(entries).toEqual([
      'node_modules/serverless-outbox/dist/shared/lambda/entries/relay.js',
      'node_modules/serverless-outbox/dist/shared/lambda/entries/sweeper.js',
      'src/place-order.ts',
      'src/reserve-stock.ts',
    ]);
    // Every function was bundled by esbuild into an asset that exports its handler.
    const bundles = readdirSync(outdir).filter((name) => name.startsWith('asset.'));
    expect(bundles).toHaveLength(4);
    for (const bundle of bundles) {
      const code = readFileSync(join(outdir, bundle, 'index.mjs'), 'utf8');
      expect(code).toMatch(/export\s*\{[^}]*\bhandler\b/);
    }
  }, 300_000);

  it('synthesizes a producer and its subscriber in stacks of their own, neither referring to the other', async () => {
    const outdir = join(project, 'cdk.out.services');
    // Bundling was proven above; the template is what this checks.
    await run('node', ['dist/src/services.js'], {
      cwd: project,
      env: {
        ...process.env,
        CDK_OUTDIR: outdir,
        CDK_CONTEXT_JSON: JSON.stringify({ 'aws:cdk:bundling-stacks': [] }),
      },
    });
    type Template = {
      Resources: Record<
        string,
        { Type: string; Properties?: Record<string, unknown>; Metadata?: Record<string, string> }
      >;
    };
    const read = (name: string) =>
      JSON.parse(readFileSync(join(outdir, `${name}.template.json`), 'utf8')) as Template;
    const orders = read('ShopOrders');
    const stock = read('ShopStock');
    const entries = (template: Template) =>
      Object.values(template.Resources)
        .filter((resource) => resource.Type === 'AWS::Lambda::Function')
        .map((resource) => resource.Metadata?.['serverless-outbox:entry'])
        .sort();
    expect(entries(orders)).toEqual([
      'node_modules/serverless-outbox/dist/shared/lambda/entries/receipts.js',
      'node_modules/serverless-outbox/dist/shared/lambda/entries/relay.js',
      'node_modules/serverless-outbox/dist/shared/lambda/entries/sweeper.js',
      'src/place-order.ts',
    ]);
    expect(entries(stock)).toEqual(['src/reserve-stock.ts']);
    const queueNames = Object.values(stock.Resources)
      .filter((resource) => resource.Type === 'AWS::SQS::Queue')
      .map((resource) => resource.Properties?.QueueName);
    expect(queueNames).toContain('ShopOrders-Outbox-stock');
    for (const template of [orders, stock]) expect(JSON.stringify(template)).not.toContain('Fn::ImportValue');
  }, 300_000);

  it('installs the outbox command, which answers --help and refuses a bad argument with exit code 2', async () => {
    const bin = join(project, 'node_modules', '.bin', 'outbox');
    const { stdout } = await run(bin, ['--help'], { cwd: project });
    expect(stdout).toMatch(/Usage: outbox/);
    expect(stdout).toMatch(/recover/);
    expect(stdout).toMatch(/console/);
    await expect(run(bin, ['list', '--limit', '0'], { cwd: project })).rejects.toMatchObject({
      cause: { code: 2 },
    });
  });
});
