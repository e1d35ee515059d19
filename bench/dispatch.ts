/**
 * Dispatch rate of the OpenAI-compatible backend against the simulated world's server
 * (`stepwise sim serve`, a separate process): requests/s at 0 ms server latency, and
 * efficiency = achieved ÷ (concurrency / latency) at 50 ms latency. Prints JSON.
 *
 *   npx tsx bench/dispatch.ts [--requests N] [--concurrency C] [--latency-ms L]
 *
 * Needs a build (`npm run build`): the server runs from bin/stepwise.js. The numbers describe
 * the client's dispatch overhead against a simulated server, not any real model's speed.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import { createInterface } from 'node:readline';
import { OpenAIModel } from '../src/models/openai.js';
import { renderPolicyPrompt } from '../src/prompts/policy.js';
import { loadSimProblems } from '../src/sim/world.js';

const BIN = new URL('../bin/stepwise.js', import.meta.url).pathname;

function flag(name: string, fallback: number): number {
  const i = process.argv.indexOf(name);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
}

async function startServer(latencyMs: number): Promise<{ child: ChildProcess; baseURL: string }> {
  if (!existsSync(new URL('../dist/cli/main.js', import.meta.url)))
    throw new Error('dist/ missing: run `npm run build` first (the bench starts `stepwise sim serve`)');
  const child = spawn(
    process.execPath,
    [BIN, 'sim', 'serve', '--port', '0', '--latency-ms', String(latencyMs)],
    {
      stdio: ['ignore', 'pipe', 'ignore'],
    },
  );
  const rl = createInterface({ input: child.stdout! });
  const line = await new Promise<string>((resolve, reject) => {
    rl.once('line', resolve);
    child.once('exit', (code) => reject(new Error(`sim serve exited with code ${code}`)));
  });
  rl.close();
  return { child, baseURL: (JSON.parse(line) as { baseURL: string }).baseURL };
}

interface Measurement {
  latencyMs: number;
  concurrency: number;
  requests: number;
  seconds: number;
  requestsPerSecond: number;
  /** achieved ÷ (concurrency / latency); only meaningful when latency > 0. */
  efficiency?: number;
  /** CPU time of the client process per request (user + system). */
  clientCpuMsPerRequest: number;
  retries: number;
}

async function measure(latencyMs: number, concurrency: number, requests: number): Promise<Measurement> {
  const { child, baseURL } = await startServer(latencyMs);
  const model = new OpenAIModel({ model: 'sim', baseUrl: baseURL, concurrency, maxRetries: 2 });
  const prompts = loadSimProblems({ count: 64, seed: 1 }).map((p) => renderPolicyPrompt(p.question));
  try {
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < requests) {
        const i = next++;
        await model.generate({ prompt: prompts[i % prompts.length], maxTokens: 512, seed: i });
      }
    };
    // Warm-up: open the sockets and let V8 compile the hot path.
    const warm = Math.min(requests, concurrency * 20);
    const warmRequests = requests;
    requests = warm;
    await Promise.all(Array.from({ length: concurrency }, worker));
    requests = warmRequests;
    next = 0;
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    await Promise.all(Array.from({ length: concurrency }, worker));
    const seconds = (performance.now() - t0) / 1000;
    const cpu = process.cpuUsage(cpu0);
    const rps = requests / seconds;
    return {
      latencyMs,
      concurrency,
      requests,
      seconds: Number(seconds.toFixed(3)),
      requestsPerSecond: Math.round(rps),
      ...(latencyMs > 0 ? { efficiency: Number((rps / (concurrency / (latencyMs / 1000))).toFixed(3)) } : {}),
      clientCpuMsPerRequest: Number(((cpu.user + cpu.system) / 1000 / requests).toFixed(3)),
      retries: model.stats().retries,
    };
  } finally {
    await model.close();
    child.kill('SIGTERM');
  }
}

const concurrency = flag('--concurrency', 64);
const requests = flag('--requests', 20_000);
const latency = flag('--latency-ms', 50);
const zero = await measure(0, concurrency, requests);
const slow = await measure(latency, concurrency, Math.max(2_000, Math.round(requests / 4)));
process.stdout.write(
  `${JSON.stringify(
    {
      bench: 'dispatch',
      simulated: true,
      server: 'stepwise sim serve (separate process)',
      client: 'OpenAIModel (openai SDK 6.49.0, keep-alive node:http fetch)',
      cores: availableParallelism(),
      // Other processes compete for the same cores: the load average says how much.
      loadAverage1m: Number(loadavg()[0].toFixed(2)),
      zeroLatency: zero,
      withLatency: slow,
      targets: { requestsPerSecondAtZeroLatency: 1500, efficiencyAt50ms: 0.85 },
      pass: zero.requestsPerSecond >= 1500 && (slow.efficiency ?? 0) >= 0.85,
    },
    null,
    2,
  )}\n`,
);
