import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  chooseBackend,
  describeBackendChoice,
  isMotoInstalled,
} from '../../infra/dev/local/backends/choose-backend.ts';

/** A PATH on which neither moto_server nor python3 can be found. */
const NO_MOTO = { PATH: '/nonexistent' };

/** A PATH with an executable `moto_server` on it (a script: the check looks for the command, it runs nothing). */
const fakeMotoDir = mkdtempSync(join(tmpdir(), 'fake-moto-'));
writeFileSync(join(fakeMotoDir, 'moto_server'), '#!/bin/sh\nexit 0\n');
chmodSync(join(fakeMotoDir, 'moto_server'), 0o755);
const WITH_MOTO = { PATH: fakeMotoDir };
afterAll(() => rmSync(fakeMotoDir, { recursive: true, force: true }));

describe('chooseBackend', () => {
  it('uses the emulator an endpoint names, from the option or AWS_ENDPOINT_URL', async () => {
    expect(await chooseBackend({ env: { AWS_ENDPOINT_URL: 'http://localhost:4566' } })).toEqual({
      kind: 'external',
      endpoint: 'http://localhost:4566',
    });
    expect(await chooseBackend({ endpoint: 'http://127.0.0.1:5000', env: NO_MOTO })).toMatchObject({
      kind: 'external',
    });
  });

  it('starts a fresh moto when moto is installed, and the embedded backend when it is not', async () => {
    expect(await chooseBackend({ env: WITH_MOTO })).toEqual({ kind: 'moto' });
    expect(await chooseBackend({ env: NO_MOTO })).toEqual({ kind: 'embedded', forced: false });
  });

  it('lets an explicit choice win over the endpoint and the moto check', async () => {
    const env = { AWS_ENDPOINT_URL: 'http://localhost:4566' };
    expect(await chooseBackend({ backend: 'moto', env })).toEqual({ kind: 'moto' });
    expect(await chooseBackend({ backend: 'embedded', env })).toEqual({ kind: 'embedded', forced: true });
    await expect(chooseBackend({ backend: 'external', env: NO_MOTO })).rejects.toMatchObject({
      code: 'INVALID_OPTION',
    });
  });
});

describe('isMotoInstalled', () => {
  it('finds moto_server on the PATH, and no moto on a PATH without it', async () => {
    expect(await isMotoInstalled(WITH_MOTO)).toBe(true);
    expect(await isMotoInstalled(NO_MOTO)).toBe(false);
  });
});

describe('describeBackendChoice', () => {
  it('says which backend runs and how to get the full-fidelity one', () => {
    expect(describeBackendChoice({ kind: 'embedded', forced: false })).toMatch(
      /^backend: embedded, in memory \(moto is not installed\); for full fidelity install moto .* AWS_ENDPOINT_URL/,
    );
    expect(describeBackendChoice({ kind: 'moto' })).toMatch(
      /^backend: moto, fresh for this run \(full fidelity\)/,
    );
    expect(describeBackendChoice({ kind: 'external', endpoint: 'http://localhost:4566' })).toMatch(
      /^backend: the emulator at http:\/\/localhost:4566 \(AWS_ENDPOINT_URL\); .* updated in place/,
    );
  });
});
