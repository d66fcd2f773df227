import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readApp } from '../../infra/dev/local/template/read-app.ts';
import { synthesizeApp } from '../../infra/dev/local/template/synthesize-app.ts';

const NOTES_APP = resolve(import.meta.dirname, 'fixtures/notes-app');
const scratch = mkdtempSync(join(tmpdir(), 'synth-test-'));

afterAll(() => {
  rmSync(scratch, { recursive: true, force: true });
});

describe('synthesizeApp', () => {
  it('runs cdk.json’s app in the project directory with path metadata on, entries relative to the project', async () => {
    const { stackName, template } = await synthesizeApp({ projectDir: NOTES_APP });
    expect(stackName).toBe('NotesApp');
    const app = readApp(template);
    expect(app.functions.map((fn) => [fn.name, fn.entry])).toEqual([
      ['Writer', '../writer.ts'],
      ['Audit/Auditor', '../auditor.ts'],
    ]);
  });

  it('fails with the app’s own output when the app command fails', async () => {
    writeFileSync(
      join(scratch, 'cdk.json'),
      JSON.stringify({ app: 'node -e "console.error(\'no stacks here\'); process.exit(3)"' }),
    );
    await expect(synthesizeApp({ projectDir: scratch })).rejects.toMatchObject({
      code: 'SYNTH_FAILED',
      message: expect.stringMatching(/exited with code 3:\nno stacks here/),
    });
  });

  it('says which stacks there are when it cannot tell which one to run', async () => {
    const app = [
      "const fs = require('node:fs'); const out = process.env.CDK_OUTDIR;",
      "const stack = (name) => ({ type: 'aws:cloudformation:stack', properties: { templateFile: name + '.json' } });",
      "for (const name of ['One', 'Two']) fs.writeFileSync(out + '/' + name + '.json', JSON.stringify({ Resources: {} }));",
      "fs.writeFileSync(out + '/manifest.json', JSON.stringify({ artifacts: { One: stack('One'), Two: stack('Two') } }));",
    ].join(' ');
    writeFileSync(
      join(scratch, 'cdk.json'),
      JSON.stringify({ app: `node -e "${app.replaceAll('"', '\\"')}"` }),
    );
    await expect(synthesizeApp({ projectDir: scratch })).rejects.toThrow(/the app has 2 stacks \(One, Two\)/);
    await expect(synthesizeApp({ projectDir: scratch, stackName: 'Two' })).resolves.toMatchObject({
      stackName: 'Two',
    });
    await expect(synthesizeApp({ projectDir: scratch, stackName: 'Three' })).rejects.toThrow(
      /no stack Three/,
    );
  });

  it('passes cdk.json’s context to the app, with the local runtime’s settings over it', async () => {
    const app = [
      "const fs = require('node:fs'); const out = process.env.CDK_OUTDIR;",
      'const context = JSON.parse(process.env.CDK_CONTEXT_JSON);',
      "fs.writeFileSync(out + '/S.json', JSON.stringify({ Resources: {}, Context: context }));",
      "fs.writeFileSync(out + '/manifest.json', JSON.stringify({ artifacts: { S: { type: 'aws:cloudformation:stack', properties: { templateFile: 'S.json' } } } }));",
    ].join(' ');
    writeFileSync(
      join(scratch, 'cdk.json'),
      JSON.stringify({
        app: `node -e "${app.replaceAll('"', '\\"')}"`,
        context: { flag: 'on', 'aws:cdk:bundling-stacks': ['**'] },
      }),
    );
    const { template } = await synthesizeApp({ projectDir: scratch });
    expect(template.Context).toEqual({
      flag: 'on',
      'aws:cdk:enable-path-metadata': true,
      'aws:cdk:bundling-stacks': [],
    });
  });

  it('names cdk.json when there is none', async () => {
    await expect(synthesizeApp({ projectDir: join(scratch, 'nowhere') })).rejects.toThrow(/cdk\.json/);
  });
});
