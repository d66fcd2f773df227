import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  answersHttp,
  findFreePort,
  type MotoServer,
  startMotoServer,
} from '../../infra/dev/local/backends/moto-server.ts';
import { connectExternalBackend, startMotoBackend } from '../../infra/dev/local/backends/start-backend.ts';
import { describeOnMoto } from '../integration/support/backend.ts';

/** Why this file runs only on moto. */
const NEEDS_MOTO = 'it starts moto, and connects to a running moto as to an external emulator';

describeOnMoto(NEEDS_MOTO)('connectExternalBackend', () => {
  let moto: MotoServer;
  beforeAll(async () => {
    moto = await startMotoServer();
  });
  afterAll(async () => {
    await moto?.stop();
  });

  it('uses a running emulator and leaves it running when stopped', async () => {
    const backend = await connectExternalBackend(`${moto.endpoint}/`);
    expect(backend).toMatchObject({ kind: 'external', endpoint: moto.endpoint });
    expect(backend.pid).toBeUndefined();
    await backend.stop();
    expect(await answersHttp(moto.endpoint)).toBe(true);
  });

  it('fails clearly when the endpoint does not answer', async () => {
    const port = await findFreePort();
    await expect(
      connectExternalBackend(`http://127.0.0.1:${port}`, { readyTimeoutMs: 300 }),
    ).rejects.toMatchObject({ code: 'BACKEND_UNAVAILABLE', message: /does not answer HTTP/ });
  });
});

describeOnMoto(NEEDS_MOTO)('startMotoBackend', () => {
  it('starts a fresh moto that its stop() ends', async () => {
    const backend = await startMotoBackend();
    expect(backend).toMatchObject({
      kind: 'moto',
      endpoint: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+$/),
    });
    expect(backend.pid).toEqual(expect.any(Number));
    expect(await answersHttp(backend.endpoint)).toBe(true);
    await backend.stop();
    expect(await answersHttp(backend.endpoint)).toBe(false);
  });
});
