import { afterAll, describe, expect, it } from 'vitest';
import {
  answersHttp,
  type Emulator,
  EmulatorUnreachableError,
  findFreePort,
  resolveEmulator,
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

const started: Emulator[] = [];
afterAll(async () => {
  await Promise.all(started.map((emulator) => emulator.stop()));
});

describe('startMotoServer', () => {
  it('starts moto on a free loopback port and stops it, process and port', async () => {
    const moto = await startMotoServer();
    started.push(moto);
    expect(moto.endpoint).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(await answersHttp(moto.endpoint)).toBe(true);
    const pid = moto.pid ?? -1;
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

describe('resolveEmulator', () => {
  it('uses the emulator AWS_ENDPOINT_URL names instead of starting one', async () => {
    const moto = await startMotoServer();
    started.push(moto);
    const external = await resolveEmulator({ AWS_ENDPOINT_URL: `${moto.endpoint}/` });
    expect(external).toMatchObject({ endpoint: moto.endpoint, pid: undefined });
    await external.stop();
    expect(await answersHttp(moto.endpoint)).toBe(true);
    await moto.stop();
  });

  it('fails clearly when AWS_ENDPOINT_URL does not answer', async () => {
    const port = await findFreePort();
    await expect(
      resolveEmulator({ AWS_ENDPOINT_URL: `http://127.0.0.1:${port}` }, { readyTimeoutMs: 300 }),
    ).rejects.toThrow(EmulatorUnreachableError);
  });
});
