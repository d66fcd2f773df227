/**
 * The process functions run in: started by the local runtime with the Node.js its functions' `Runtime` names,
 * it imports their handler modules (tsx loads TypeScript), builds each from its resolved environment and runs
 * the invocations the runtime sends over the IPC channel. It exits when the runtime asks, or when the channel
 * closes: the runtime has gone, even by SIGKILL, and a function host must not outlive it.
 */

import { type HostReply, type HostRequest, serializeError } from './host-protocol.ts';
import { type LocalFunction, loadLocalFunction } from './local-function.ts';
import { processEnvironment } from './process-environment.ts';

const functions = new Map<string, LocalFunction>();
const shared = processEnvironment();

function reply(message: HostReply): void {
  process.send?.(message);
}

async function load(request: Extract<HostRequest, { type: 'load' }>): Promise<void> {
  try {
    // One after another: a plain handler's variables are in process.env while its module is imported.
    for (const target of request.functions) {
      const fn = await loadLocalFunction(target.definition, {
        env: target.env,
        physicalName: target.physicalName,
        arn: target.arn,
        rootDir: request.rootDir,
        processEnv: shared,
      });
      functions.set(fn.name, fn);
    }
    reply({
      type: 'loaded',
      nodeVersion: process.version,
      functions: [...functions.values()].map((fn) => ({
        name: fn.name,
        plain: fn.plain,
        ...(fn.initError === undefined ? {} : { initError: serializeError(fn.initError) }),
      })),
    });
  } catch (error) {
    reply({ type: 'load-failed', error: serializeError(error) });
  }
}

async function invoke(request: Extract<HostRequest, { type: 'invoke' }>): Promise<void> {
  const fn = functions.get(request.name);
  if (fn === undefined) {
    reply({
      type: 'result',
      id: request.id,
      ok: false,
      error: { name: 'Error', message: `no function ${request.name} in this host` },
    });
    return;
  }
  const invocation = await fn.invoke(request.event);
  reply(
    invocation.ok
      ? { type: 'result', id: request.id, ok: true, result: invocation.result }
      : { type: 'result', id: request.id, ok: false, error: serializeError(invocation.error) },
  );
}

process.on('message', (message: HostRequest) => {
  switch (message.type) {
    case 'load':
      void load(message);
      return;
    case 'invoke':
      void invoke(message);
      return;
    case 'wrap-up':
      for (const fn of functions.values()) fn.wrapUp();
      return;
    case 'drain':
      void Promise.all([...functions.values()].map((fn) => fn.idle())).then(() => reply({ type: 'drained' }));
      return;
  }
});

// The runtime is gone (stopped, crashed or killed): nothing can reach this host any more.
process.on('disconnect', () => process.exit(0));
// A terminal's Ctrl-C, or a signal to the process group, reaches this host too: the runtime decides when it stops
// (it lets in-flight invocations finish first), and the host ends when the runtime closes the channel or dies.
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, () => {});
