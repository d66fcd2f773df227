import { describe, expect, it, vi } from 'vitest';
import { lazyHandler } from '../../../shared/lambda/lazy-handler.ts';

describe('lazyHandler', () => {
  it('builds nothing until the first invocation, then builds once', async () => {
    const build = vi.fn(() => async (event: number) => event * 2);

    const handler = lazyHandler(build);
    expect(build).not.toHaveBeenCalled();

    await expect(handler(1, {})).resolves.toBe(2);
    await expect(handler(2, {})).resolves.toBe(4);
    expect(build).toHaveBeenCalledTimes(1);
  });

  it('tries again on the next invocation when building failed', async () => {
    const build = vi
      .fn<() => (event: number, context: object) => Promise<number>>()
      .mockImplementationOnce(() => {
        throw new Error('ORDERS_TABLE is not set');
      })
      .mockImplementation(() => async (event) => event);
    const handler = lazyHandler(build);

    expect(() => handler(1, {})).toThrow('ORDERS_TABLE is not set');
    await expect(handler(1, {})).resolves.toBe(1);
  });
});
