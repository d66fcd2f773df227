import { afterAll, describe, expect, it } from 'vitest';
import {
  answersHttp,
  findFreePort,
  type MotoServer,
  startMotoServer,
} from '../../infra/local/moto-server.ts';

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

describe('startMotoServer', () => {
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
