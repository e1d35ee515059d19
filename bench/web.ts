/**
 * The web view on a real-sized label file, in Chromium: a 300 MB `stepwise label` output of
 * 200,000 solutions (rows of the real label-row shape, `LabeledSolutionRecord` with its job
 * settings record, synthesized from a seeded generator: 3 signals, 6–9 chunks a solution, Q̂
 * values, first errors that sometimes disagree between signals). `stepwise serve` runs as its own
 * process; the bench drives Debian's Chromium through playwright-core and times, end to end
 * (request to the page drawn):
 *
 * - the index build (the page's first visit: the server reads the file once),
 * - the first page once the index is built (a fresh load),
 * - later pages (the middle and the end of the file, a jump to a page),
 * - filter results (first error at a chunk, signals disagreeing, a Q̂ range, wrong final answers),
 * - an id search and a text search,
 *
 * and the server's resident memory (VmRSS now, VmHWM peak) from /proc. Prints JSON. The file
 * describes nothing real: its numbers are synthetic; what is measured is the server and the page.
 *
 *   npm run build && npx tsx bench/web.ts [--rows 200000] [--mb 300] [--keep]
 *
 * Acceptance (issue 31): first page < 1 s after the index is built, index build < 30 s, any later
 * page or filter result < 1 s, server RSS < 300 MB.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import {
  closeSync,
  existsSync,
  mkdtempSync,
  openSync,
  readFileSync,
  rmSync,
  statSync,
  writeSync,
} from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { createRng } from '../src/core/rng.js';
import type { JobSettings } from '../src/jobs/settings.js';
import type { LabeledSolutionRecord } from '../src/label/label.js';
import { freePort } from '../test/support/free-port.js';

const BIN = new URL('../bin/stepwise.js', import.meta.url).pathname;
const CHROMIUM = process.env.STEPWISE_CHROMIUM ?? '/usr/bin/chromium';

function flag(name: string, fallback: string): string {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : fallback;
}
const ROWS = Number(flag('--rows', '200000'));
const TARGET_MB = Number(flag('--mb', '300'));

const WORDS =
  'the sum of both sides gives us a new equation so we subtract and divide by the common factor then check the remainder against the bound'.split(
    ' ',
  );

/** Write the label file a few thousand rows at a time (never the whole file in memory). */
function writeLabelFile(path: string): { bytes: number; seconds: number } {
  const t0 = performance.now();
  const rng = createRng(31);
  const job: JobSettings = {
    command: 'label',
    hash: '0123456789abcdef',
    settings: {
      policy: 'openai:qwen2.5-math-7b',
      rollouts: 16,
      signals: ['abs-q', 'rel-effective', 'ms-soft'],
    },
  };
  const words = (n: number) => Array.from({ length: n }, () => rng.pick(WORDS)).join(' ');
  // Chunk text long enough that the rows average TARGET_MB / ROWS bytes.
  const perRow = (TARGET_MB * 1e6) / ROWS;
  // About 950 bytes of a row are not chunk text; each of the ~7.5 chunks has ~6.4 bytes a word.
  const chunkWords = Math.max(4, Math.round((perRow - 950) / 7.5 / 6.4));
  const fd = openSync(path, 'w');
  let bytes = 0;
  let batch: string[] = [];
  for (let i = 0; i < ROWS; i++) {
    const n = rng.int(6, 9);
    const fe = rng.next() < 0.45 ? -1 : rng.int(0, n - 1);
    const feRel = fe >= 0 && rng.next() < 0.3 ? Math.min(n - 1, fe + rng.int(1, 2)) : fe;
    const q0 = Math.round(rng.next() * 16) / 16;
    let q = q0;
    const chunks: LabeledSolutionRecord['chunks'] = Array.from({ length: n }, (_, k) => {
      q = fe >= 0 && k >= fe ? Math.max(0, q - 0.25) : Math.min(1, q + 0.0625);
      return {
        text: `Step ${k + 1}: ${words(chunkWords)}.`,
        q,
        rollouts: 16,
        labels: { 'abs-q': fe < 0 || k < fe, 'rel-effective': feRel < 0 || k < feRel, 'ms-soft': q },
      };
    });
    const row: LabeledSolutionRecord & { job: JobSettings } = {
      id: `bench/math/${i}`,
      problem: `Problem ${i}: ${words(30)}?`,
      answer: String(rng.int(1, 999)),
      q0,
      chunks,
      firstError: { 'abs-q': fe, 'rel-effective': feRel, 'ms-soft': fe },
      finalAnswerCorrect: fe < 0,
      search: 'linear',
      cost: { rollouts: 16 * (n + 1), tokens: 16 * (n + 1) * 180 },
      job,
    };
    batch.push(JSON.stringify(row));
    if (batch.length === 2000 || i === ROWS - 1) {
      const text = `${batch.join('\n')}\n`;
      bytes += writeSync(fd, text);
      batch = [];
    }
  }
  closeSync(fd);
  return { bytes, seconds: (performance.now() - t0) / 1000 };
}

/** Resident memory of a process, MB: now (VmRSS) and its peak (VmHWM). */
function rssOf(pid: number): { rssMb: number; peakMb: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (key: string) => Number(new RegExp(`${key}:\\s+(\\d+)`).exec(status)?.[1] ?? Number.NaN);
  return { rssMb: kb('VmRSS') / 1024, peakMb: kb('VmHWM') / 1024 };
}

async function startServer(dir: string, home: string): Promise<{ child: ChildProcess; url: string }> {
  const port = await freePort();
  const child = spawn(process.execPath, [BIN, 'serve', '--dir', dir, '--port', String(port)], {
    env: { ...process.env, STEPWISE_HOME: home, STEPWISE_QUIET: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 200; i++) {
    try {
      if ((await fetch(`${url}/api/health`)).ok) return { child, url };
    } catch {}
    await new Promise((r) => setTimeout(r, 100));
  }
  child.kill();
  throw new Error('stepwise serve did not answer in 20 s');
}

async function main(): Promise<void> {
  if (!existsSync(BIN.replace('bin/stepwise.js', 'dist/index.js')))
    throw new Error('bench/web.ts runs the built CLI: npm run build first');
  if (!existsSync(CHROMIUM)) throw new Error(`Chromium not found at ${CHROMIUM} (apt-get install chromium)`);
  const base = mkdtempSync(join(tmpdir(), 'stepwise-bench-web-'));
  const dir = join(base, 'outputs');
  const home = join(base, 'home');
  const file = join(dir, 'labels.jsonl');
  let server: { child: ChildProcess; url: string } | undefined;
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--no-first-run',
      '--disable-background-networking',
    ],
  });
  try {
    (await import('node:fs')).mkdirSync(dir, { recursive: true });
    const written = writeLabelFile(file);
    if (process.argv.includes('--write-only')) {
      process.stderr.write(`wrote ${file}\n`);
      return;
    }
    server = await startServer(dir, home);
    const pid = server.child.pid as number;
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    page.on('response', (r) => {
      if (r.status() >= 400) errors.push(`HTTP ${r.status()} ${r.url()}`);
    });
    const at = (extra = '') => `${server?.url}/#/file?root=0&path=labels.jsonl${extra}`;
    /** Seconds from asking for a view to its records drawn (a fresh load of the page). */
    const timed = async (extra: string, ready = 'section.solution, #no-match'): Promise<number> => {
      await page.goto('about:blank');
      const t0 = performance.now();
      await page.goto(at(extra));
      await page.waitForSelector(ready, { timeout: 120_000 }).catch(async (e: unknown) => {
        const main = await page
          .locator('main')
          .innerHTML()
          .catch(() => '');
        throw new Error(
          `${extra || 'first page'}: not drawn (${(e as Error).message}); the page: ${main.slice(0, 800)}`,
        );
      });
      return (performance.now() - t0) / 1000;
    };
    const loadBefore = loadavg()[0];
    const rss: Record<string, { rssMb: number; peakMb: number }> = { idle: rssOf(pid) };
    // 1. The first visit: the server indexes the file (the page shows its progress), then draws.
    const firstVisit = await timed('');
    const index = (await (await fetch(`${server.url}/api/index?root=0&path=labels.jsonl`)).json()) as {
      records: number;
      seconds: number;
      indexBytes: number;
    };
    rss.afterIndex = rssOf(pid);
    // 2. The first page again, index built.
    const firstPage = [await timed(''), await timed(''), await timed('')];
    // 3. Later pages.
    const later = {
      middle: await timed(`&offset=${Math.floor(ROWS / 2)}`),
      end: await timed(`&offset=${ROWS - 20}`),
      jumpToPage: await timed(`&offset=${Math.floor((ROWS * 0.37) / 20) * 20}`),
    };
    // 4. Filters (each computed for the first time), and a later page of one.
    const filters = {
      firstErrorAtChunk2: await timed('&fe=2'),
      signalsDisagree: await timed('&disagree=yes'),
      qRange: await timed('&qof=q0&qlo=0.25&qhi=0.5'),
      wrongFinalAnswer: await timed('&final=wrong&signal=rel-effective&fe=any'),
      disagreeLaterPage: await timed(`&disagree=yes&offset=${Math.floor(ROWS / 20)}`),
    };
    // 5. Searches: an id near the end, a text search (reads the file once, in slices).
    const search = {
      idNearEnd: await timed(`&id=${encodeURIComponent(`bench/math/${ROWS - 7}`)}`),
      textFirst: await timed(`&text=${encodeURIComponent(`Problem ${ROWS - 3}:`)}`),
      textAgain: await timed(`&text=${encodeURIComponent(`Problem ${ROWS - 3}:`)}&offset=0`),
    };
    rss.end = rssOf(pid);
    const matched = await page.locator('#filters .muted.small').first().textContent();
    const worstLater = Math.max(...Object.values(later), ...Object.values(filters));
    const peak = Math.max(...Object.values(rss).map((r) => r.peakMb));
    const out = {
      bench: 'web',
      world: 'synthetic label rows (real label-row shape); timings of the server and the page, in Chromium',
      machine: {
        cpus: availableParallelism(),
        loadAverage1m: { before: +loadBefore.toFixed(1), after: +loadavg()[0].toFixed(1) },
      },
      file: {
        rows: ROWS,
        bytes: statSync(file).size,
        mb: +(written.bytes / 1e6).toFixed(1),
        writeSeconds: +written.seconds.toFixed(1),
      },
      index: {
        records: index.records,
        buildSeconds: +index.seconds.toFixed(2),
        indexMb: +(index.indexBytes / 1e6).toFixed(1),
        firstVisitSeconds: +firstVisit.toFixed(2),
      },
      firstPageSeconds: firstPage.map((s) => +s.toFixed(3)),
      laterPageSeconds: Object.fromEntries(Object.entries(later).map(([k, v]) => [k, +v.toFixed(3)])),
      filterSeconds: Object.fromEntries(Object.entries(filters).map(([k, v]) => [k, +v.toFixed(3)])),
      searchSeconds: Object.fromEntries(Object.entries(search).map(([k, v]) => [k, +v.toFixed(3)])),
      lastView: matched?.trim(),
      serverRssMb: Object.fromEntries(
        Object.entries(rss).map(([k, v]) => [k, { rss: +v.rssMb.toFixed(0), peak: +v.peakMb.toFixed(0) }]),
      ),
      acceptance: {
        indexBuildUnder30s: index.seconds < 30,
        firstPageUnder1s: Math.max(...firstPage) < 1,
        laterPagesAndFiltersUnder1s: worstLater < 1,
        serverPeakRssUnder300MB: peak < 300,
      },
      pageErrors: errors,
    };
    process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
  } finally {
    await browser.close();
    if (server?.child.pid) server.child.kill('SIGTERM');
    if (process.argv.includes('--keep')) process.stderr.write(`kept ${base}\n`);
    else rmSync(base, { recursive: true, force: true });
  }
}

await main();
