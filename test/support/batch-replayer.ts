import { spawn } from 'node:child_process';

/** The independent Batch API replayer (no stepwise code): test/support/replay-batch.mjs. */
const REPLAYER = new URL('./replay-batch.mjs', import.meta.url).pathname;

/**
 * Replay the Batch API input file `req` against `baseUrl` (without /v1) and write the output
 * file `res`, as a cluster's `vllm run-batch` would. Rejects with the replayer's stderr unless
 * it exits 0.
 */
export async function replayBatch(baseUrl: string, req: string, res: string): Promise<void> {
  const child = spawn(process.execPath, [REPLAYER, baseUrl, req, res], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let err = '';
  child.stderr.on('data', (c) => {
    err += c;
  });
  const code = await new Promise<number | null>((r) => child.on('close', r));
  if (code !== 0) throw new Error(`replayer exited ${code}: ${err}`);
}
