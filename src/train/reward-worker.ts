import { parentPort, workerData } from 'node:worker_threads';
import { HttpError } from '../core/http.js';
import { computeRewards, parseRewardRequest, type RewardServerOptions } from './reward-server.js';

/**
 * The reward server's computing thread (outcome and judge-agreement rewards): it parses each
 * request body, checks it and computes its rewards, so the server's own thread only moves bytes
 * and answers `/health` and SIGTERM at once whatever a request holds. The body arrives as it is
 * received, `{id, chunk}` messages then `{id, end: true}` (or `{id, abort: true}`), so the server's
 * thread never holds, joins or decodes a whole body; the answer is `{id, reply}` or
 * `{id, status, error}`.
 */
const options = workerData as Pick<RewardServerOptions, 'kind' | 'formatPenalty' | 'maxItems'>;

const bodies = new Map<number, Uint8Array[]>();

parentPort?.on('message', async (m: { id: number; chunk?: Uint8Array; end?: true; abort?: true }) => {
  const { id } = m;
  if (m.chunk) {
    const parts = bodies.get(id) ?? [];
    parts.push(m.chunk);
    bodies.set(id, parts);
    return;
  }
  const parts = bodies.get(id) ?? [];
  bodies.delete(id);
  if (m.abort) return;
  try {
    let body: unknown;
    try {
      body = JSON.parse(Buffer.concat(parts).toString('utf8'));
    } catch (e) {
      throw new HttpError(400, `body is not valid JSON: ${(e as Error).message}`);
    }
    const reply = await computeRewards(parseRewardRequest(body, options.kind, options.maxItems), options);
    parentPort?.postMessage({ id, reply });
  } catch (e) {
    const status = e instanceof HttpError ? e.status : 500;
    parentPort?.postMessage({ id, status, error: (e as Error).message });
  }
});
