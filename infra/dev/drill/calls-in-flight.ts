import type { ConsumeDeps } from '../../../shared/index.ts';

/**
 * The calls a consumer's deps have in flight, so the drill reads the tables and the metrics only once the last one
 * has answered. An invocation that hands records back at its wrap-up point returns while their current call is
 * still out; that call may still commit (it starts nothing after), and a table read before it answers would
 * disagree with the counts read before it.
 * @example
 * const inFlight = new CallsInFlight();
 * const tracked = inFlight.track(deps);
 * // … the run …
 * await inFlight.settled();
 */
export class CallsInFlight {
  #count = 0;
  #waiting: (() => void)[] = [];

  /** `deps` with every client call and confirmation counted while it is out. */
  track(deps: ConsumeDeps): ConsumeDeps {
    const { client, confirmer } = deps;
    const send = client.send.bind(client) as (command: unknown) => Promise<unknown>;
    return {
      ...deps,
      client: new Proxy(client, {
        get: (target, property, receiver) => {
          if (property === 'send') return (command: unknown) => this.#counted(send(command));
          const value: unknown = Reflect.get(target, property, receiver);
          return typeof value === 'function' ? value.bind(target) : value;
        },
      }),
      ...(confirmer === undefined
        ? {}
        : {
            confirmer: {
              confirm: (...args: Parameters<typeof confirmer.confirm>) =>
                this.#counted(confirmer.confirm(...args)),
            },
          }),
    };
  }

  /** Calls out now. */
  get count(): number {
    return this.#count;
  }

  /** Resolves once no call is out (at once when none is). */
  settled(): Promise<void> {
    if (this.#count === 0) return Promise.resolve();
    return new Promise((resolve) => this.#waiting.push(resolve));
  }

  #counted<T>(call: Promise<T>): Promise<T> {
    this.#count += 1;
    const done = () => {
      this.#count -= 1;
      if (this.#count > 0) return;
      const waiting = this.#waiting;
      this.#waiting = [];
      for (const resolve of waiting) resolve();
    };
    call.then(done, done);
    return call;
  }
}
