import { createServer, type IncomingMessage, type Server } from 'node:http';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { StepwiseError } from '../core/errors.js';
import {
  allowedHostNames,
  applyServerLimits,
  checkHost,
  HttpError,
  isLoopbackHost,
  listenOrExplain,
  readBody,
  requireJsonBody,
  sameToken,
  sendJson,
} from '../core/http.js';
import { lastIndexOfLinear } from '../core/last-index.js';
import { splitParagraphs } from '../core/segment.js';
import type { Problem } from '../core/types.js';
import type { StepJudge } from '../judge/types.js';
import { JUDGE_INSTRUCTION, parseJudgeVerdict } from '../prompts/judge.js';
import { parsePolicyPrompt } from '../prompts/policy.js';
import { checkMathAnswer } from '../verify/check.js';

/**
 * A reward service speaking OpenRLHF's remote-reward protocol (INTERFACES.md): `POST /get_reward`
 * with `{query, prompts, labels}` → `{rewards, scores, extra_logs}`; one scalar per sample.
 */
export type RewardKind = 'judge-agreement' | 'outcome' | 'judge';
export const REWARD_KINDS: readonly RewardKind[] = ['judge-agreement', 'outcome', 'judge'];

export type StepAggregation = 'min' | 'mean' | 'last' | 'product';

export interface RewardServerOptions {
  kind: RewardKind;
  port?: number;
  host?: string;
  /** Required when `host` is not loopback: requests must send `Authorization: Bearer <token>`. */
  token?: string;
  /** judge-agreement: reward for a response with no parsable verdict (default 0; e.g. −1 to penalise format). */
  formatPenalty?: number;
  /** judge: the stepwise judge that scores the response's chunks. */
  judge?: StepJudge;
  /** judge: how chunk scores become one reward (default `min`: a solution is as good as its worst step). */
  aggregate?: StepAggregation;
  /** Largest request body accepted (default 32 MiB). */
  maxBodyBytes?: number;
  /** Most samples in one request (default `MAX_REWARD_ITEMS`). */
  maxItems?: number;
  /** judge: reward of a sample whose judge call failed (default 0); the batch is still answered. */
  failureReward?: number;
  /** Where a failed sample's reason is written (the server default: stderr). */
  log?: (line: string) => void;
}

/**
 * Most samples one `/get_reward` request may carry. OpenRLHF sends a micro-batch of rollouts per
 * request; a larger request is answered 400 instead of holding the server (and `/health`) busy.
 */
export const MAX_REWARD_ITEMS = 4096;

/**
 * Characters one sample may carry, per field (413 beyond). A query is a prompt and a response
 * (tens of KB for a 32k-token rollout); a label is a gold answer or verdict. Every computation on
 * an item is linear in these, so one item's work stays in the milliseconds.
 */
export const REWARD_ITEM_LIMITS = { query: 512 << 10, prompt: 512 << 10, label: 10_000 } as const;

/**
 * Longest stretch (ms) the server computes one request before it lets others in (`/health`,
 * SIGTERM); a large batch is computed in slices of about this length.
 */
export const REWARD_SLICE_MS = 20;

export interface RewardRequest {
  query: string[];
  prompts: string[];
  labels: string[];
}

export interface RewardReply {
  rewards: number[];
  scores: number[];
  extra_logs: Record<string, number[]>;
}

/**
 * The response part of an OpenRLHF query (prompt + response). The prompt is found where it ends
 * in the query (a BOS or pad token may precede it); failing that, anything up to the end of the
 * judge's own instruction is cut, because that instruction names both verdict boxes and must
 * never be read as the response's verdict.
 */
export function responseOf(query: string, prompt: string): string {
  if (prompt) {
    const at = lastIndexOfLinear(query, prompt);
    if (at >= 0) return query.slice(at + prompt.length);
  }
  const instruction = lastIndexOfLinear(query, JUDGE_INSTRUCTION);
  return instruction >= 0 ? query.slice(instruction + JUDGE_INSTRUCTION.length) : query;
}

/**
 * Where the last user turn sits in the chat templates of the common model families (ChatML: Qwen,
 * Yi; Llama 3; DeepSeek-R1; Gemma; Phi-3; Mistral / Llama 2 `[INST]`): its opening marker and the
 * marker that ends it.
 */
const USER_TURNS: ReadonlyArray<readonly [open: string, close: readonly string[]]> = [
  ['<|im_start|>user\n', ['<|im_end|>']],
  ['<|start_header_id|>user<|end_header_id|>\n\n', ['<|eot_id|>']],
  ['<｜User｜>', ['<｜Assistant｜>', '<｜end▁of▁sentence｜>']],
  ['<start_of_turn>user\n', ['<end_of_turn>']],
  ['<|user|>\n', ['<|end|>']],
  ['[INST]', ['[/INST]']],
];

/**
 * The problem inside an OpenRLHF prompt. Under `--apply_chat_template` OpenRLHF sends `prompts[i]`
 * as the templated text (system turn, user turn, generation prompt); the judge's problem is the last
 * user turn's text, and when that turn is stepwise's own policy prompt, the question it asks. Markers
 * are found with lastIndexOf/indexOf, so a hostile prompt costs linear time. Text without a known
 * template is taken as it is.
 */
export function problemOfPrompt(prompt: string): string {
  let user: string | undefined;
  let best = -1;
  for (const [open, closes] of USER_TURNS) {
    const at = prompt.lastIndexOf(open);
    if (at <= best) continue;
    const start = at + open.length;
    const ends = closes.map((c) => prompt.indexOf(c, start)).filter((e) => e >= 0);
    best = at;
    user = prompt.slice(start, ends.length > 0 ? Math.min(...ends) : prompt.length);
  }
  if (user === undefined) return parsePolicyPrompt(prompt)?.question ?? prompt.trim();
  // Llama 2 puts the system prompt inside the first [INST] turn.
  const sys = user.indexOf('<</SYS>>');
  if (user.trimStart().startsWith('<<SYS>>') && sys >= 0) user = user.slice(sys + '<</SYS>>'.length);
  user = user.trim();
  return parsePolicyPrompt([{ role: 'user', content: user }])?.question ?? user;
}

/** A request the server cannot take: HTTP 400 with the reason. */
const badRequest = (message: string) => new HttpError(400, message);

/**
 * Validate a request body: `query`, `prompts` and `labels` arrays of equal length. Labels may be
 * strings or numbers (read as their decimal text); they may be omitted only for `judge`.
 */
export function parseRewardRequest(
  body: unknown,
  kind: RewardKind,
  maxItems: number = MAX_REWARD_ITEMS,
): RewardRequest {
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw badRequest('body must be a JSON object');
  const b = body as Record<string, unknown>;
  const strings = (name: string, required: boolean): string[] | undefined => {
    const v = b[name];
    if (v === undefined && !required) return undefined;
    if (!Array.isArray(v) || !v.every((x) => typeof x === 'string')) {
      throw badRequest(`"${name}" must be an array of strings`);
    }
    return v as string[];
  };
  if (Array.isArray(b.query) && b.query.length > maxItems)
    throw badRequest(
      `"query" holds ${b.query.length} samples; at most ${maxItems} per request: split the batch`,
    );
  const query = strings('query', true)!;
  const prompts = strings('prompts', false) ?? query.map(() => '');
  // OpenRLHF passes the data set's label column through as it is: a numeric answer arrives as a number.
  const rawLabels = b.labels;
  if (rawLabels === undefined && kind !== 'judge')
    throw badRequest(
      `"labels" is missing: the ${kind} reward compares each response with its label (the gold ${
        kind === 'outcome' ? 'answer' : 'verdict'
      }); OpenRLHF sends it from the column named by --data.label_key`,
    );
  if (rawLabels !== undefined && !Array.isArray(rawLabels)) throw badRequest('"labels" must be an array');
  const labels =
    rawLabels === undefined
      ? query.map(() => '')
      : (rawLabels as unknown[]).map((v, i) => {
          if (typeof v === 'string') return v;
          if (typeof v === 'number' && Number.isFinite(v)) return String(v);
          throw badRequest(
            `"labels"[${i}] must be a string or a number (got ${v === null ? 'null' : typeof v})`,
          );
        });
  if (prompts.length !== query.length || labels.length !== query.length) {
    throw badRequest(
      `"query", "prompts" and "labels" must have the same length (got ${query.length}, ${prompts.length}, ${labels.length})`,
    );
  }
  const fields = [
    ['query', query, REWARD_ITEM_LIMITS.query],
    ['prompts', prompts, REWARD_ITEM_LIMITS.prompt],
    ['labels', labels, REWARD_ITEM_LIMITS.label],
  ] as const;
  for (const [name, values, max] of fields)
    for (let i = 0; i < values.length; i++)
      if (values[i].length > max)
        throw new HttpError(
          413,
          `"${name}"[${i}] is ${values[i].length} characters; the reward server takes at most ${max} per sample`,
        );
  return { query, prompts, labels };
}

function aggregateScores(scores: readonly number[], how: StepAggregation): number {
  if (scores.length === 0) return 0;
  switch (how) {
    case 'min':
      // A loop, not Math.min(...scores): spreading 10^5 chunk scores overflows the stack.
      return scores.reduce((a, b) => Math.min(a, b), Number.POSITIVE_INFINITY);
    case 'mean':
      return scores.reduce((a, b) => a + b, 0) / scores.length;
    case 'last':
      return scores[scores.length - 1];
    case 'product':
      return scores.reduce((a, b) => a * b, 1);
  }
}

/** Compute rewards for one request (the server's logic, usable without HTTP). */
export async function computeRewards(req: RewardRequest, options: RewardServerOptions): Promise<RewardReply> {
  const rewards: number[] = [];
  const scores: number[] = [];
  const formatOk: number[] = [];
  let sliceStart = performance.now();
  const judgeFailed: number[] = [];
  for (let i = 0; i < req.query.length; i++) {
    // Let other requests (a trainer's /health probe, SIGTERM) in between samples of a large batch.
    if (performance.now() - sliceStart > REWARD_SLICE_MS) {
      await new Promise((next) => setImmediate(next));
      sliceStart = performance.now();
    }
    const response = responseOf(req.query[i], req.prompts[i]);
    if (options.kind === 'judge-agreement') {
      const verdict = parseJudgeVerdict(response);
      const label = req.labels[i].trim().toLowerCase();
      formatOk.push(verdict ? 1 : 0);
      const r = verdict === null ? (options.formatPenalty ?? 0) : verdict.toLowerCase() === label ? 1 : 0;
      rewards.push(r);
      scores.push(r > 0 ? 1 : 0);
    } else if (options.kind === 'outcome') {
      const { answer, correct } = checkMathAnswer(req.labels[i], response);
      formatOk.push(answer === null ? 0 : 1);
      rewards.push(correct ? 1 : 0);
      scores.push(correct ? 1 : 0);
    } else {
      if (!options.judge) throw new StepwiseError('the judge reward needs a judge (--judge <spec>)');
      const problem: Problem = {
        id: `req-${i}`,
        question: problemOfPrompt(req.prompts[i]),
        answer: req.labels[i],
        domain: 'math',
        source: 'reward',
      };
      const chunks = splitParagraphs(response).map((c) => c.text);
      // One sample's failed judge call (a server down, a context overflow) costs that sample its
      // reward, with the reason logged; the rest of the batch is still scored and answered.
      try {
        const result = await options.judge.judge(problem, chunks);
        const s = aggregateScores(
          result.judgments.map((j) => j.score),
          options.aggregate ?? 'min',
        );
        formatOk.push(result.formatFailures === 0 ? 1 : 0);
        rewards.push(s);
        scores.push(Math.min(1, Math.max(0, s)));
        judgeFailed.push(0);
      } catch (e) {
        const reward = options.failureReward ?? 0;
        options.log?.(
          `get_reward: sample ${i} of ${req.query.length}: the judge failed (${(e as Error).message}); reward ${reward}`,
        );
        formatOk.push(0);
        rewards.push(reward);
        scores.push(Math.min(1, Math.max(0, reward)));
        judgeFailed.push(1);
      }
    }
  }
  return {
    rewards,
    scores,
    extra_logs: { format_ok: formatOk, ...(options.kind === 'judge' ? { judge_failed: judgeFailed } : {}) },
  };
}

export interface RunningRewardServer {
  url: string;
  port: number;
  server: Server;
  close(): Promise<void>;
}

/** Start the reward server. Refuses a non-loopback bind without a token. */
export async function startRewardServer(options: RewardServerOptions): Promise<RunningRewardServer> {
  const host = options.host ?? '127.0.0.1';
  if (!isLoopbackHost(host) && !options.token) {
    throw new StepwiseError(`refusing to bind ${host} without a token: pass --token (or bind 127.0.0.1)`, {
      exitCode: 2,
    });
  }
  if (options.kind === 'judge' && !options.judge)
    throw new StepwiseError('--kind judge needs --judge <spec>', { exitCode: 2 });
  const max = options.maxBodyBytes ?? 32 * 1024 * 1024;
  const hosts = allowedHostNames(host);
  // One request is computed at a time, in arrival order: each yields between its slices, and
  // with several computing at once a health probe would wait for a slice of each, several times.
  let queue: Promise<unknown> = Promise.resolve();
  const serially = <T>(work: () => Promise<T>): Promise<T> => {
    const next = queue.then(work, work);
    queue = next.catch(() => {});
    return next;
  };
  const worker = options.kind === 'judge' ? null : startRewardWorker(options);
  const server = createServer(async (req, res) => {
    try {
      checkHost(req, hosts);
      const auth = req.headers.authorization;
      if (options.token && !sameToken(auth?.startsWith('Bearer ') ? auth.slice(7) : null, options.token)) {
        sendJson(res, 401, { error: 'missing or wrong bearer token' });
        return;
      }
      const path = (req.url ?? '/').split('?')[0];
      if (req.method === 'GET' && path === '/health') {
        sendJson(res, 200, { ok: true, kind: options.kind });
        return;
      }
      if (path !== '/get_reward') {
        sendJson(res, 404, { error: `no route ${req.method} ${path}; use POST /get_reward` });
        return;
      }
      if (req.method !== 'POST') {
        sendJson(res, 405, { error: 'use POST /get_reward' });
        return;
      }
      requireJsonBody(req);
      // Outcome and judge-agreement rewards are parsed and computed in the worker thread, the
      // body passed on as it arrives; the judge reward waits on its judge's model here (its own
      // work is a paragraph split).
      if (worker) {
        sendJson(res, 200, await worker.compute(req, max));
        return;
      }
      const text = await readBody(req, max);
      let body: unknown;
      try {
        body = JSON.parse(text);
      } catch (e) {
        throw badRequest(`body is not valid JSON: ${(e as Error).message}`);
      }
      const request = parseRewardRequest(body, options.kind, options.maxItems);
      const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
      sendJson(res, 200, await serially(() => computeRewards(request, { ...options, log })));
    } catch (e) {
      if (e instanceof HttpError) sendJson(res, e.status, { error: e.message });
      else if (!res.headersSent) sendJson(res, 500, { error: (e as Error).message });
    }
  });
  applyServerLimits(server);
  await listenOrExplain(server, options.port ?? 0, host);
  const addr = server.address();
  const port = typeof addr === 'object' && addr ? addr.port : (options.port ?? 0);
  const shownHost = host.includes(':') ? `[${host}]` : host;
  return {
    url: `http://${shownHost}:${port}`,
    port,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => {
          if (worker) worker.close().then(() => resolve());
          else resolve();
        });
      }),
  };
}

/**
 * The worker thread that parses and computes outcome and judge-agreement requests
 * (src/train/reward-worker.ts). Run from TypeScript sources (the tests), it loads them through tsx.
 */
function startRewardWorker(options: RewardServerOptions): {
  compute(req: IncomingMessage, maxBytes: number): Promise<RewardReply>;
  close(): Promise<void>;
} {
  const fromSource = import.meta.url.endsWith('.ts');
  const script = new URL(`./reward-worker.${fromSource ? 'ts' : 'js'}`, import.meta.url);
  // From sources (the tests) the worker registers tsx's loader first: a worker does not inherit it.
  const entry = fromSource ? tsxEntry(script) : script;
  const worker = new Worker(entry, {
    workerData: { kind: options.kind, formatPenalty: options.formatPenalty, maxItems: options.maxItems },
  });
  // The server's thread does not wait for it: an idle worker does not keep the process alive.
  worker.unref();
  const pending = new Map<number, { resolve: (r: RewardReply) => void; reject: (e: Error) => void }>();
  let ids = 0;
  const failAll = (e: Error) => {
    for (const p of pending.values()) p.reject(e);
    pending.clear();
  };
  worker.on('message', (m: { id: number; reply?: RewardReply; status?: number; error?: string }) => {
    const p = pending.get(m.id);
    if (!p) return;
    pending.delete(m.id);
    if (m.reply) p.resolve(m.reply);
    else p.reject(new HttpError(m.status ?? 500, m.error ?? 'reward computation failed'));
  });
  worker.on('error', (e) => failAll(e));
  worker.on('exit', () => failAll(new HttpError(503, 'the reward server is shutting down')));
  return {
    compute: (req, maxBytes) =>
      new Promise<RewardReply>((resolve, reject) => {
        const tooLarge = () => new HttpError(413, `request body larger than ${maxBytes} bytes`);
        if (Number(req.headers['content-length'] ?? 0) > maxBytes) {
          req.resume();
          reject(tooLarge());
          return;
        }
        const id = ++ids;
        let size = 0;
        let refused = false;
        worker.ref();
        req.on('data', (chunk: Buffer) => {
          if (refused) return;
          size += chunk.length;
          if (size > maxBytes) {
            // Keep reading (and dropping) the rest so the 413 reaches the client.
            refused = true;
            worker.postMessage({ id, abort: true });
            reject(tooLarge());
            return;
          }
          worker.postMessage({ id, chunk });
        });
        req.on('end', () => {
          if (refused) return;
          pending.set(id, { resolve, reject });
          worker.postMessage({ id, end: true });
        });
        req.on('error', (e) => {
          if (!refused) worker.postMessage({ id, abort: true });
          refused = true;
          reject(e);
        });
      }).finally(() => {
        if (pending.size === 0) worker.unref();
      }),
    close: async () => {
      await worker.terminate();
    },
  };
}

/** A worker entry that loads the TypeScript module `script` through tsx (its ESM API, resolved from here). */
function tsxEntry(script: URL): URL {
  const api = createRequire(import.meta.url)
    .resolve('tsx/esm/api')
    .replace(/\.cjs$/, '.mjs');
  const code = `import { register } from ${JSON.stringify(pathToFileURL(api).href)};
register();
await import(${JSON.stringify(script.href)});`;
  return new URL(`data:text/javascript,${encodeURIComponent(code)}`);
}
