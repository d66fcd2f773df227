import { afterAll, expect, it } from 'vitest';
import {
  answersHttp,
  findFreePort,
  type MotoServer,
  startMotoServer,
} from '../../infra/dev/local/backends/moto-server.ts';
import { describeOnMoto } from '../integration/support/backend.ts';

/** Why this file runs only on moto. */
const NEEDS_MOTO = 'it tests the launcher of moto itself';

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

const started: MotoServer[] = [];
afterAll(async () => {
  await Promise.all(started.map((emulator) => emulator.stop()));
});

describeOnMoto(NEEDS_MOTO)('startMotoServer', () => {
  it('starts moto on a free loopback port and stops it, process and port', async () => {
    const moto = await startMotoServer();
    started.push(moto);
    expect(moto.endpoint).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(await answersHttp(moto.endpoint)).toBe(true);
    const { pid } = moto;
    expect(isAlive(pid)).toBe(true);

    await moto.stop();
    expect(isAlive(pid)).toBe(false);
    expect(await answersHttp(moto.endpoint)).toBe(false);
    await moto.stop();
  });

  it('binds the port it is given', async () => {
    const port = await findFreePort();
    const moto = await startMotoServer({ port });
    started.push(moto);
    expect(moto.endpoint).toBe(`http://127.0.0.1:${port}`);
    await moto.stop();
  });
});
