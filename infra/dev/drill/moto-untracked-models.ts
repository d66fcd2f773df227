import { delimiter } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The folder whose `sitecustomize.py` stops moto from keeping a list of every model object it creates. */
const FOLDER = fileURLToPath(new URL('./moto-untracked-models/', import.meta.url));

/**
 * Runs `start` (the start of a local runtime, which spawns moto with this process's environment) with `PYTHONPATH`
 * naming the drill's `moto-untracked-models/` first, so that the moto server it starts keeps no list of its models:
 * moto 5.2.1 keeps every table a DynamoDB transaction copies, and the drill's thousands of transactions grew it past
 * 20 GB (see the folder's `sitecustomize.py`). The environment is as it was once `start` has settled, so nothing else
 * started later (another test's moto) is affected.
 * @example
 * const runtime = await withUntrackedMotoModels(() => startLocalRuntime({ templates }));
 */
export async function withUntrackedMotoModels<T>(start: () => Promise<T>): Promise<T> {
  const before = process.env.PYTHONPATH;
  process.env.PYTHONPATH = before === undefined || before === '' ? FOLDER : `${FOLDER}${delimiter}${before}`;
  try {
    return await start();
  } finally {
    if (before === undefined) delete process.env.PYTHONPATH;
    else process.env.PYTHONPATH = before;
  }
}
