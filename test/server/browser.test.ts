import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type DemoReport, runDemo } from '../../src/cli/commands/demo.js';
import { recordedSearch } from '../../src/cli/search-setup.js';
import type { ChunkEvalReport, ChunkJudgmentRow } from '../../src/evaluate/chunks.js';
import type { ProcessBenchReport } from '../../src/evaluate/processbench.js';
import { createJudge } from '../../src/judge/create.js';
import { createPolicy } from '../../src/models/policy.js';
import type { BenchReport } from '../../src/search/bench.js';
import type { SearchRecord } from '../../src/search/dataset.js';
import { TRACE_STATUS_LEGEND } from '../../src/search/types.js';
import { type RunningWebServer, startWebServer } from '../../src/server/app.js';
import { simDatasetProblems } from '../../src/sim/dataset.js';
import { type Db, openStore } from '../../src/store/db.js';
import { finishRun, startRun, updateRunCounts } from '../../src/store/runs.js';
import { type SelectionRow, selectByJudge } from '../../src/train/select.js';
import { providers } from '../support/providers.js';
import { tempDir } from '../support/temp.js';

/**
 * The web view in a real browser (Debian Chromium through playwright-core), over outputs the real
 * pipeline wrote on the simulated world: a small `stepwise demo` (sample, label, eval chunks, sim
 * ProcessBench set, sample / best-of-N / chunk-reset search, accuracy vs compute) and a greedy-PRM
 * search (the strategy that backtracks). Screenshots go to test-artifacts/web/.
 */

// The few browser globals the page functions below use (they run in Chromium; the test's lib has no DOM).
interface PageElement {
  textContent: string | null;
  innerHTML: string;
  getAttribute(name: string): string | null;
  setAttribute(name: string, value: string): void;
}
declare const document: { querySelector(selector: string): PageElement | null };
declare const location: { hash: string };

const CHROMIUM = process.env.STEPWISE_CHROMIUM ?? '/usr/bin/chromium';
const ARTIFACTS = resolve('test-artifacts/web');

// A fresh store and model-call cache for this file only (restored afterwards: workers run other files too).
const home = tempDir('stepwise-browser-');
const previousHome = process.env.STEPWISE_HOME;
process.env.STEPWISE_HOME = home;
const outputs = join(home, 'outputs');
const demoDir = join(outputs, 'demo');
const POLICY = 'sim?step_error=0.1';
const JUDGE = 'sim:generative?sensitivity=0.9&specificity=0.9';

let store: Db;
let demo: DemoReport;
let greedy: SearchRecord[];
let runningId: string;
let selection: SelectionRow[];
/** Runs of the store whose outputs are not in the served folder (hidden on the Runs page until asked). */
let elsewhereIds: string[];
let server: RunningWebServer;
let browser: Browser;
let page: Page;
const problems: string[] = [];

const readJsonl = <T>(path: string): T[] =>
  readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as T);

const MISSING = `Chromium not found at ${CHROMIUM}: the browser tests need Debian's chromium (apt-get install chromium; .ci/run installs it) or STEPWISE_CHROMIUM=<path>`;

beforeAll(async () => {
  // Without Chromium every test below fails (never skips), the first one with this message.
  if (!existsSync(CHROMIUM)) return;
  mkdirSync(ARTIFACTS, { recursive: true });
  store = openStore(join(home, 'store.sqlite'));
  // 24 problems, 22 labelled solutions: the label file has a second page (20 records per page).
  demo = await runDemo({
    world: 'sim',
    outDir: demoDir,
    problems: 24,
    samples: 2,
    labelSolutions: 22,
    rollouts: 4,
    processbenchRows: 24,
    bestOfN: 2,
    store,
  });
  const model = await providers.languageModel(POLICY);
  const judge = await createJudge(JUDGE, { providers });
  try {
    await recordedSearch(
      store,
      {
        problems: simDatasetProblems(10, { seed: 0, stepError: 0.1 }),
        strategy: 'greedy-prm',
        config: { seed: 0 },
        deps: { policy: createPolicy(model), judge },
        out: join(outputs, 'search-greedy-prm.jsonl'),
        fresh: true,
      },
      { simulated: true, policy: POLICY, judge: JUDGE, dataset: 'sim' },
    );
    greedy = readFileSync(join(outputs, 'search-greedy-prm.jsonl'), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as SearchRecord);
  } finally {
    await model.close?.();
    await judge.close?.();
  }
  // A job still running, with its progress counts, as a long `stepwise label` would leave it mid-way.
  runningId = startRun(
    store,
    'label',
    { simulated: true, policy: POLICY, rollouts: 16, name: 'long label job' },
    join(outputs, 'x.jsonl'),
  );
  updateRunCounts(store, runningId, { done: 3, total: 10, rollouts: 480 });
  // Runs of other projects sharing the store: one wrote elsewhere, one wrote no file.
  const elsewhere = startRun(store, 'sample', { policy: 'openai:m' }, join(home, 'elsewhere', 's.jsonl'));
  finishRun(store, elsewhere, 'done', { samples: 4 });
  const noOutput = startRun(store, 'solve', { policy: 'openai:m' });
  finishRun(store, noOutput, 'done');
  elsewhereIds = [elsewhere, noOutput];
  // `stepwise select` over the demo's samples with the sim judge (rows as the command writes them).
  const selectJudge = await createJudge(JUDGE, { providers });
  try {
    const sampleRows = readJsonl<{
      id: string;
      question: string;
      samples: Array<{ text: string; correct: boolean }>;
    }>(join(demoDir, 'samples.jsonl'));
    selection = await selectByJudge(
      sampleRows.map((r) => ({ id: r.id, question: r.question, samples: r.samples })),
      selectJudge,
      { seed: 0 },
    );
    writeFileSync(
      join(outputs, 'select.jsonl'),
      selection.map((r) => `${JSON.stringify({ ...r, simulated: true })}\n`).join(''),
    );
  } finally {
    await selectJudge.close?.();
  }

  server = await startWebServer({ roots: [outputs], storePath: join(home, 'store.sqlite') });
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--no-first-run',
      '--disable-sync',
      '--disable-quic',
    ],
  });
  page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(`console error: ${m.text()}`);
  });
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('requestfailed', (r) => problems.push(`request failed: ${r.url()} ${r.failure()?.errorText}`));
  page.on('response', (r) => {
    if (r.status() >= 400) problems.push(`HTTP ${r.status()} ${r.url()}`);
  });
});

afterAll(async () => {
  await browser?.close();
  await server?.close();
  store?.close();
  if (previousHome === undefined) delete process.env.STEPWISE_HOME;
  else process.env.STEPWISE_HOME = previousHome;
  rmSync(home, { recursive: true, force: true });
});

// Whatever a test did, the browser saw no console error and no failed request.
afterEach(() => {
  expect(problems).toEqual([]);
});

/** Keep a screenshot: the whole page, or only the first screen of long record pages (whole long pages are slow to capture). */
const shot = (name: string, full = true) =>
  page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: full });
const text = async (selector: string) => (await page.locator(selector).first().textContent()) ?? '';
const count = (selector: string) => page.locator(selector).count();
/** Open a hash route and wait until the page has drawn its heading. */
async function open(hash: string): Promise<void> {
  if (!page) throw new Error(MISSING);
  // Clear the page first: going to another hash of the same document only fires hashchange.
  await page
    .evaluate(() => {
      const main = document.querySelector('main');
      if (main) main.innerHTML = '';
    })
    .catch(() => {});
  await page.goto(`${server.url}/${hash}`);
  await page.waitForSelector('main h1');
  await page.waitForLoadState('networkidle');
}
const fileHash = (path: string, extra = '') => `#/file?root=0&path=${encodeURIComponent(path)}${extra}`;
/** Click a link and wait for the page it opens (its heading contains `heading`). */
async function follow(link: string, heading: string | RegExp): Promise<void> {
  await page.locator(link).first().click();
  await page.waitForFunction(
    ([h, isRe]) => {
      const t = document.querySelector('main h1')?.textContent ?? '';
      return isRe ? new RegExp(h).test(t) : t.includes(h);
    },
    [heading instanceof RegExp ? heading.source : heading, heading instanceof RegExp] as const,
  );
  await page.waitForLoadState('networkidle');
}

describe('web view in Chromium over real sim-world outputs', () => {
  it('has Chromium to drive', () => {
    expect(existsSync(CHROMIUM), MISSING).toBe(true);
    expect(browser, MISSING).toBeDefined();
  });

  it('runs: the runs writing into the served folder (all on request), command, status, progress of the running one, simulated marks; run page with config and output', async () => {
    await open('#/');
    expect(await text('main h1')).toBe('Runs');
    // The demo's runs, the greedy search, and the running label job (its file not written yet);
    // not the runs of other projects in the same store.
    expect(await count('#runs tbody tr')).toBe(demo.runs.length + 2);
    for (const id of elsewhereIds) expect(await count(`#runs tr[data-run="${id}"]`)).toBe(0);
    expect(await text('#runs-scope')).toContain('2 other runs in this store');
    expect(await text(`#runs tr[data-run="${runningId}"]`)).toContain('not written yet');
    await follow('#runs-toggle', 'Runs');
    await page.waitForFunction(() => location.hash === '#/runs?all=1');
    await page.waitForSelector(`#runs tr[data-run="${elsewhereIds[0]}"]`);
    expect(await count('#runs tbody tr')).toBe(demo.runs.length + 4);
    expect(await text(`#runs tr[data-run="${elsewhereIds[0]}"]`)).toContain('not in the served folders');
    await shot('01b-runs-all');
    await follow('#runs-toggle', 'Runs');
    await page.waitForFunction(() => location.hash === '#/runs');
    await page.waitForFunction(
      (n) => document.querySelector('#runs tbody')?.innerHTML.split('<tr').length === n + 1,
      demo.runs.length + 2,
    );
    expect(await text('.sim-banner')).toMatch(/simulated/i);
    const running = page.locator(`#runs tr[data-run="${runningId}"]`);
    expect(await running.textContent()).toContain('running');
    expect(await running.textContent()).toContain('3/10');
    expect(await running.locator('.progress').count()).toBe(1);
    const demoRow = page.locator('#runs tr[data-command="demo"]');
    expect(await demoRow.locator('.badge.sim').count()).toBe(1);
    await shot('01-runs');

    await follow('#runs tr[data-command="demo"] td:first-child a', 'Run ');
    expect(await text('main h1')).toBe(`Run ${demo.runs[0]}`);
    expect(await text('.sim-banner')).toMatch(/simulated/i);
    expect(await text('#config')).toContain(POLICY);
    await shot('02-run-demo');

    await follow('#run-output', 'report.json');
    expect(await count('#demo-search tbody tr')).toBe(3);
    // The accuracy-vs-compute curve of the demo's bench search: several budgets per strategy.
    expect(demo.accuracyVsCompute.length).toBeGreaterThan(6);
    expect(await count('#demo-curve circle.point')).toBe(demo.accuracyVsCompute.length);
    const perStrategy = new Map<string, number>();
    for (const p of demo.accuracyVsCompute)
      perStrategy.set(p.strategy, (perStrategy.get(p.strategy) ?? 0) + 1);
    expect(perStrategy.get('best-of-n')).toBeGreaterThanOrEqual(3);
    expect(perStrategy.get('chunk-reset')).toBeGreaterThanOrEqual(3);
    expect(await count('#demo-curve polyline.series')).toBe(
      [...perStrategy.values()].filter((k) => k > 1).length,
    );
    expect(await page.locator('#demo-curve text.legend-label').allTextContents()).toEqual([
      ...perStrategy.keys(),
    ]);
    expect(await text('#demo-search')).toContain('chunk-reset');
    expect(await text('.sim-banner')).toMatch(/SIMULATED world/);
    // Every JSON/JSONL output is a page; the SVG chart links to the chart drawn from its report.
    expect(await count('#demo-files a')).toBe(
      Object.values(demo.files).filter((f) => /\.(jsonl?|svg)$/.test(f)).length,
    );
    const svgHref = await page.locator('#demo-files a.svg-link').getAttribute('href');
    const svg = await fetch(`${server.url}${svgHref}`);
    expect(svg.status).toBe(200);
    expect(svg.headers.get('content-type')).toMatch(/image\/svg\+xml/);
    expect(await svg.text()).toMatch(/<svg[^>]*>[\s\S]*Accuracy vs compute/);
    await shot('03-demo-report');
  });

  it('demo report of the tiny world: its own banner, no simulated mark, intervals beside accuracies', async () => {
    // The report as `stepwise demo` (tiny world) writes it: real tiny networks, not the simulator.
    const tiny = {
      ...demo,
      world: 'tiny',
      simulated: false,
      notice: 'TINY world: real tiny networks trained on synthetic arithmetic by this project',
      policy: 'gguf:models/tiny/policy.gguf',
      judge: 'generative:gguf:models/tiny/judge.gguf',
      files: {},
    };
    mkdirSync(join(outputs, 'tiny'), { recursive: true });
    writeFileSync(join(outputs, 'tiny', 'report.json'), JSON.stringify(tiny));
    await open(fileHash('tiny/report.json'));
    expect(await count('.sim-banner')).toBe(0);
    expect(await count('.badge.sim')).toBe(0);
    expect(await text('.tiny-banner')).toContain('TINY world: real tiny networks');
    const ci = demo.search[0]?.ci95 ?? [0, 0];
    expect(await text('#demo-search tbody tr')).toContain(
      `${(100 * ci[0]).toFixed(1)}%–${(100 * ci[1]).toFixed(1)}%`,
    );
    await shot('03b-demo-report-tiny');
  });

  it('labels: solution view with chunks coloured by Q̂ or by a signal, first errors, pages', async () => {
    const labels = readJsonl<{
      id: string;
      chunks: Array<{ q: number | null }>;
      firstError: Record<string, number>;
    }>(join(demoDir, 'labels.jsonl'));
    expect(labels).toHaveLength(22);
    await open('#/files');
    await follow('#files a[href*="labels.jsonl"]', 'labels.jsonl');
    expect(await text('.sim-banner')).toMatch(/simulated/i);
    expect(await text('#summary')).toContain('22');
    expect(await count('section.solution')).toBe(20);
    expect(await text('.page-info')).toBe('records 1–20 of 22');
    const first = page.locator('section.solution').first();
    expect(await first.getAttribute('data-id')).toBe(labels[0].id);
    expect(await first.locator('.chunk').count()).toBe(labels[0].chunks.length);
    // Q̂ colouring: the chunk carries its value and a hue from red (0) to green (1).
    expect(await first.locator('.chunk').first().getAttribute('data-q')).toBe(String(labels[0].chunks[0].q));
    const withError = labels.slice(0, 20).filter((l) => l.firstError['abs-q'] >= 0).length;
    expect(await count('.chunk.first-error')).toBe(withError);
    await shot('04-labels-q', false);

    // Colour by the abs-q label instead.
    await page.selectOption('#color-by', 'abs-q');
    await page.waitForFunction(
      () => location.hash.includes('color=abs-q') && document.querySelector('.chunk.pos'),
    );
    expect(await count('.chunk.neg')).toBeGreaterThan(0);
    await shot('05-labels-abs-q', false);

    await follow('.pager a.next', 'labels.jsonl');
    await page.waitForFunction(
      () => document.querySelector('.page-info')?.textContent === 'records 21–22 of 22',
    );
    expect(await count('section.solution')).toBe(2);
    expect(await page.locator('section.solution').first().getAttribute('data-id')).toBe(labels[20].id);
    expect(await page.locator('#color-by').inputValue()).toBe('abs-q');
  });

  it('search: chunk-reset record with verdicts, attempts and a tree with its rejected attempts', async () => {
    const records = readJsonl<SearchRecord>(join(demoDir, 'search-chunk-reset.jsonl'));
    await open(fileHash('demo/search-chunk-reset.jsonl'));
    expect(await text('.sim-banner')).toMatch(/simulated/i);
    const correct = records.filter((r) => r.correct).length;
    expect(await text('#summary')).toContain(`(${correct}/${records.length})`);
    const cards = page.locator('section.search');
    expect(await cards.count()).toBe(20);
    const i = records.findIndex((r) => r.trace?.some((n) => n.status === 'rejected'));
    expect(i).toBeGreaterThanOrEqual(0);
    expect(i).toBeLessThan(20);
    const card = cards.nth(i);
    const rec = records[i];
    expect(await card.locator('.chunks .chunk.kept').count()).toBe(rec.chunks.length);
    const rejected = rec.trace!.filter((n) => n.status === 'rejected').length;
    expect(await card.locator('g.node[data-status="rejected"]').count()).toBe(rejected);
    expect(await card.locator('g.node').count()).toBe(rec.trace!.length);
    // Rejected attempts are on the card without a click: each above the chunk that was kept instead.
    expect(await card.locator('.rejected-attempt').count()).toBe(rejected);
    const firstRejected = rec.trace!.find((n) => n.status === 'rejected')!;
    const shown = card.locator(`.rejected-attempt[data-node="${firstRejected.id}"]`);
    expect(await shown.isVisible()).toBe(true);
    expect(await shown.locator('.text').textContent()).toBe(firstRejected.text);
    if (firstRejected.score !== undefined)
      expect(await shown.textContent()).toContain(`score ${firstRejected.score.toFixed(2)}`);
    // Every node of the tree says what the judge made of it: verdict mark and score.
    const labels = await card.locator('g.node text.node-label').allTextContents();
    expect(labels).toHaveLength(rec.trace!.length);
    rec.trace!.forEach((n, k) => {
      const mark =
        n.verdict === 'positive' ? '✓' : n.verdict === 'negative' ? '✗' : n.verdict === 'neutral' ? '?' : '';
      expect(labels[k]).toBe(
        n.score === undefined && !mark
          ? n.status
          : `${mark}${n.score === undefined ? '' : n.score.toFixed(2)}`,
      );
    });
    // The legend is the code's TraceStatus, in its order, each status with its meaning.
    const legend = card.locator('.legend .status-key');
    expect(await legend.allTextContents()).toEqual(Object.keys(TRACE_STATUS_LEGEND));
    expect(await legend.evaluateAll((els) => els.map((e) => e.getAttribute('title')))).toEqual(
      Object.values(TRACE_STATUS_LEGEND),
    );
    await card.locator('g.node[data-status="rejected"] circle').first().click();
    expect(await card.locator('.node-detail').textContent()).toContain(
      `rejected ${TRACE_STATUS_LEGEND.rejected}`,
    );
    await card.screenshot({ path: join(ARTIFACTS, '06-search-chunk-reset-card.png') });
  });

  it('search: best-of-N candidates are labelled with name, status, score and answer (no bare dots)', async () => {
    const records = readJsonl<SearchRecord>(join(demoDir, 'search-best-of-n.jsonl'));
    await open(fileHash('demo/search-best-of-n.jsonl'));
    const card = page.locator('section.search').first();
    const rec = records[0];
    expect(rec.trace!.length).toBe(2);
    const labels = await card.locator('g.node text.node-label').allTextContents();
    expect(labels).toHaveLength(rec.trace!.length);
    rec.trace!.forEach((n, k) => {
      expect(labels[k]).toContain(n.label!);
      expect(labels[k]).toContain(n.status);
      expect(labels[k]).toContain(`score ${n.score!.toFixed(2)}`);
      expect(labels[k]).toContain(`answer ${n.answer ?? 'none'}`);
    });
    await card.screenshot({ path: join(ARTIFACTS, '06b-search-best-of-n-card.png') });
  });

  it('search: greedy PRM tree shows its backtracks; the summary links the problems that backtracked', async () => {
    const withBacktrack = greedy
      .map((r, i) => [r, i] as const)
      .filter(([r]) => (r.backtracks ?? []).length > 0);
    expect(withBacktrack.length).toBeGreaterThan(0);
    await open(fileHash('search-greedy-prm.jsonl'));
    const total = greedy.reduce((s, r) => s + (r.backtracks ?? []).length, 0);
    expect(await text('#summary')).toMatch(new RegExp(`backtracks\\s*${total}`));
    const [rec, index] = withBacktrack[0];
    await follow(`#summary a[href$="offset=${index}"]`, 'search-greedy-prm.jsonl');
    await page.waitForFunction(
      (i) => document.querySelector('section.search')?.getAttribute('data-index') === String(i),
      index,
    );
    const card = page.locator('section.search').first();
    expect(await card.getAttribute('data-id')).toBe(rec.id);
    expect(await card.locator('path.backtrack').count()).toBe(rec.backtracks!.length);
    expect(await card.locator('g.node[data-status="backtracked"]').count()).toBeGreaterThan(0);
    expect(await card.locator('g.node[data-status="rejected"]').count()).toBe(
      rec.trace!.filter((n) => n.status === 'rejected').length,
    );
    await card.screenshot({ path: join(ARTIFACTS, '07-search-greedy-backtrack.png') });
  });

  it('ProcessBench report: per-subset table and a predicted-vs-true chart over every prediction', async () => {
    const report = JSON.parse(
      readFileSync(join(demoDir, 'processbench-report.json'), 'utf8'),
    ) as ProcessBenchReport;
    const predictions = readJsonl<{ label: number; prediction: number | null }>(
      join(demoDir, 'processbench-predictions.jsonl'),
    );
    await open(fileHash('demo/report.json'));
    await follow('#demo-files a[href*="processbench-report.json"]', 'processbench-report.json');
    await page.waitForSelector('#pb-chart svg');
    expect(await text('.sim-banner')).toMatch(/SIMULATED judge/);
    const row = page.locator('#pb-table tbody tr').first();
    expect(await row.locator('td').first().textContent()).toBe('sim');
    expect(await row.locator('td.f1').textContent()).toBe(report.subsets.sim.f1!.toFixed(1));
    expect(await text('#pb-table tr.avg')).toContain(report.average_f1!.toFixed(1));
    // One filled cell per distinct (true, predicted) pair (no prediction: its own row); the
    // numbers in them add up to the samples.
    const pairs = new Set(predictions.map((p) => `${p.label},${p.prediction}`));
    expect(await count('#pb-chart rect.cell:not(.empty)')).toBe(pairs.size);
    const numbers = await page.locator('#pb-chart text.count').allTextContents();
    expect(numbers.map((n) => Number(n.replace(/,/g, ''))).reduce((a, b) => a + b, 0)).toBe(
      predictions.length,
    );
    const exact = predictions.filter((p) => p.prediction === p.label).length;
    const exactNumbers = await page.locator('#pb-chart rect.exact').count();
    expect(exactNumbers).toBeGreaterThan(0);
    expect(exact).toBeGreaterThan(0);
    // Readable: cells of at least 30 px.
    expect(
      Number(await page.locator('#pb-chart rect.cell').first().getAttribute('width')),
    ).toBeGreaterThanOrEqual(28);
    // The published results sit beside this run's table, not in it.
    expect(await count('#pb-published tbody tr')).toBeGreaterThan(5);
    expect(await text('#pb-table')).not.toContain('Skywork');
    expect(await text('#pb-published')).toContain('Skywork-PRM-7B');
    await shot('08-processbench');

    await follow('#pb-predictions', 'processbench-predictions.jsonl');
    expect(await count('#predictions tbody tr')).toBe(Math.min(20, predictions.length));
    expect(await text('#summary')).toContain(`${exact} (`);
    await shot('09-predictions');
  });

  it('accuracy vs compute: one line per strategy with a point per budget, and the table', async () => {
    const bench = JSON.parse(readFileSync(join(demoDir, 'accuracy-vs-compute.json'), 'utf8')) as BenchReport;
    await open(fileHash('demo/accuracy-vs-compute.json'));
    expect(await text('.sim-banner')).toMatch(/SIMULATED world/);
    expect(await count('#acc-chart circle.point')).toBe(bench.points.length);
    expect(await page.locator('#acc-chart text.legend-label').allTextContents()).toEqual([
      ...new Set(bench.points.map((p) => p.strategy)),
    ]);
    expect(await count('#acc-table tbody tr')).toBe(bench.points.length);
    expect(await text('#acc-table')).toContain(`${(bench.points[2].accuracy * 100).toFixed(1)}%`);
    await shot('10-accuracy-vs-compute');
  });

  it('with a token, the page logged in once through its form works through its cookie; without it, 401', async () => {
    if (!browser) throw new Error(MISSING);
    const guarded = await startWebServer({
      roots: [outputs],
      storePath: join(home, 'store.sqlite'),
      token: 's3cret',
    });
    const context = await browser.newContext();
    try {
      const tab = await context.newPage();
      const seen: string[] = [];
      tab.on('console', (m) => {
        if (m.type() === 'error') seen.push(m.text());
      });
      tab.on('response', (r) => {
        if (r.status() >= 400) seen.push(`HTTP ${r.status()} ${r.url()}`);
      });
      expect((await fetch(`${guarded.url}/`)).status).toBe(401);
      expect((await fetch(`${guarded.url}/api/runs`)).status).toBe(401);
      // The login form is the page's 401 answer (the one HTTP error allowed here), then the app.
      await tab.goto(`${guarded.url}/`);
      await tab.fill('input[name=token]', 's3cret');
      await Promise.all([tab.waitForURL(`${guarded.url}/`), tab.click('button[type=submit]')]);
      seen.length = 0;
      await tab.goto(`${guarded.url}/#/`);
      await tab.waitForSelector('#runs tbody tr');
      expect(await tab.locator('#runs tbody tr').count()).toBe(demo.runs.length + 2);
      await tab.goto(`${guarded.url}/#/files`);
      await tab.waitForSelector('#files tbody tr');
      expect(seen).toEqual([]);
    } finally {
      await context.close();
      await guarded.close();
    }
  });

  it('eval chunks: a calibration plot of judge score vs Q̂ with counts, and every chunk with verdict, score, label and Q̂', async () => {
    const report = JSON.parse(readFileSync(join(demoDir, 'eval-chunks.json'), 'utf8')) as ChunkEvalReport;
    const rows = readJsonl<ChunkJudgmentRow>(join(demoDir, 'eval-chunks.chunks.jsonl'));
    const withBoth = rows.filter((r) => r.score !== null && r.q !== null);
    expect(withBoth.length).toBeGreaterThan(10);
    expect(report.calibration.n).toBe(withBoth.length);
    await open(fileHash('demo/eval-chunks.json'));
    const bins = report.calibration.bins.filter((b) => b.n > 0);
    expect(bins.length).toBeGreaterThan(1);
    expect(await count('#calibration circle.bin')).toBe(bins.length);
    const numbers = await page.locator('#calibration text.count').allTextContents();
    expect(numbers.map(Number).reduce((a, b) => a + b, 0)).toBe(withBoth.length);
    expect(await count('#calibration-table tbody tr')).toBe(bins.length);
    // The sim judge's scores are not Q̂: the bins it says are sure (score ≥ 0.9) hold mixed prefixes.
    const top = report.calibration.bins[9];
    expect(await text('#calibration-table tbody tr:last-child')).toContain(top.meanQ!.toFixed(3));
    await shot('12b-eval-chunks-calibration');

    await follow('#chunk-rows', 'eval-chunks.chunks.jsonl');
    expect(await count('#chunk-rows-table tbody tr')).toBe(Math.min(20, rows.length));
    const first = page.locator('#chunk-rows-table tbody tr').first();
    expect(await first.locator('.chunk-text').textContent()).toBe(rows[0].text);
    expect(await first.textContent()).toContain(rows[0].verdict!);
    const agree = rows.filter((r) => r.agrees === true).length;
    const disagree = rows.filter((r) => r.agrees === false).length;
    expect(await text('#summary')).toMatch(new RegExp(`judge agrees\\s*${agree}`));
    expect(await text('#summary')).toMatch(new RegExp(`judge disagrees\\s*${disagree}`));
    // A disagreement's link opens the page that holds that chunk.
    const k = rows.findIndex((r) => r.agrees === false);
    expect(k).toBeGreaterThanOrEqual(0);
    await follow(`#summary a[href$="offset=${k}"]`, 'eval-chunks.chunks.jsonl');
    await page.waitForFunction(
      (i) => document.querySelector('#chunk-rows-table tbody tr')?.getAttribute('data-index') === String(i),
      k,
    );
    expect(await page.locator('#chunk-rows-table tbody tr.disagree').first().getAttribute('data-index')).toBe(
      String(k),
    );
    await shot('12c-eval-chunk-rows', false);
  });

  it('select: each problem with its candidates, the judge pick and the outcome-only pick (no raw JSON)', async () => {
    await open(fileHash('select.jsonl'));
    expect(await text('main h1')).toContain('selection');
    expect(await count('main > #view > pre')).toBe(0);
    expect(await count('section.selection')).toBe(Math.min(20, selection.length));
    const picked = selection.filter((r) => r.chosen).length;
    expect(await text('#summary')).toMatch(new RegExp(`with a pick\\s*${picked}`));
    const i = selection.findIndex((r) => r.chosen && r.candidates.length > 1);
    expect(i).toBeGreaterThanOrEqual(0);
    expect(i).toBeLessThan(20);
    const card = page.locator('section.selection').nth(i);
    const row = selection[i];
    expect(await card.locator('tr.candidate').count()).toBe(row.candidates.length);
    expect(await card.locator('pre.pick').textContent()).toBe(row.chosen!.text);
    expect(await card.locator('tr.candidate .badge.pos').count()).toBe(1);
    await shot('14-select', false);
  });

  it('the other outputs open as pages: samples, judge vs labels, ProcessBench set, problems', async () => {
    await open(fileHash('demo/samples.jsonl'));
    expect(await text('.sim-banner')).toMatch(/simulated/i);
    expect(await text('#summary')).toContain('24');
    expect(await count('details.sample')).toBe(20 * 2);
    await shot('11-samples', false);

    await open(fileHash('demo/eval-chunks.json'));
    expect(await text('.sim-banner')).toMatch(/SIMULATED judge/);
    expect(await count('#eval-table tbody tr')).toBe(2);
    await shot('12-eval-chunks');

    await open(fileHash('demo/processbench-sim.json'));
    expect(await text('main h1')).toContain('processbench-set');
    expect(await count('section.pb-row')).toBe(20);
    await shot('13-processbench-set', false);

    await open(fileHash('demo/problems.jsonl'));
    expect(await text('main h1')).toContain('problems');
    expect(await count('#problems tbody tr')).toBe(20);
  });
  it('run names: a named run shows its name on the runs page and its run page', async () => {
    await open('#/');
    expect(await text(`#runs tr[data-run="${runningId}"] .run-name`)).toBe('long label job');
    await open(`#/run/${runningId}`);
    expect(await text('main h1')).toContain('long label job');
  });

  /** Records of a JSONL file of the demo, as written. */
  const demoRows = <T>(name: string) => readJsonl<T>(join(demoDir, name));
  /** Choose a value in a filter of the filter bar and wait for the page it draws. */
  async function choose(param: string, value: string): Promise<void> {
    // The page drawn before the choice is marked: the one drawn for it has no mark.
    await page.evaluate(() => document.querySelector('#filters')?.setAttribute('data-old', '1'));
    await page.locator(`#filters select[data-param="${param}"]`).selectOption({ value });
    await page.waitForFunction(([p, v]) => new URLSearchParams(location.hash.split('?')[1]).get(p) === v, [
      param,
      value,
    ] as const);
    await page.waitForSelector('#filters:not([data-old])');
    await page.waitForLoadState('networkidle');
  }
  /** How many records the page says match. */
  const matched = async () => Number((await text('.page-info')).match(/of ([\d,]+)/)?.[1].replace(/,/g, ''));

  it('filters and search on every kind: labels, search, predictions, eval-chunk rows, samples; the address keeps them', async () => {
    type Label = { id: string; firstError: Record<string, number>; finalAnswerCorrect: boolean; q0: number };
    const labels = demoRows<Label>('labels.jsonl');
    const signal = Object.keys(labels[0].firstError)[0];
    await open(fileHash('demo/labels.jsonl'));
    await choose('fe', 'any');
    expect(await matched()).toBe(labels.filter((l) => l.firstError[signal] >= 0).length);
    for (const card of await page.locator('section.solution').all())
      expect(await card.locator('.fe-mark').count()).toBe(1);
    await choose('final', 'wrong');
    expect(await matched()).toBe(
      labels.filter((l) => l.firstError[signal] >= 0 && !l.finalAnswerCorrect).length,
    );
    // The view is in the address: opened afresh, it is the same view.
    const shared = await page.evaluate(() => location.hash);
    await page.goto('about:blank');
    await open(shared);
    expect(await matched()).toBe(
      labels.filter((l) => l.firstError[signal] >= 0 && !l.finalAnswerCorrect).length,
    );
    await shot('20-labels-filtered', false);
    await open(fileHash('demo/labels.jsonl', '&qof=q0&qlo=0.5'));
    expect(await matched()).toBe(labels.filter((l) => l.q0 >= 0.5 - 1e-6).length);
    // Text search, id search and a jump to a page.
    const target = labels[labels.length - 1];
    await open(fileHash('demo/labels.jsonl'));
    await page.locator('#text-search').fill(target.id);
    await page.locator('#text-search').press('Enter');
    await page.waitForFunction(() => location.hash.includes('text='));
    await page.waitForSelector(`section.solution[data-id="${target.id}"]`);
    await page.locator('#clear-filters').click();
    await page.waitForFunction(() => !location.hash.includes('text='));
    await page.locator('#find-id').fill(target.id);
    await page.locator('#find-id').press('Enter');
    await page.waitForSelector('#single-record');
    expect(await page.locator('section.solution').first().getAttribute('data-id')).toBe(target.id);
    await open(fileHash('demo/labels.jsonl'));
    await page.locator('.page-jump').first().fill('2');
    await page.locator('.page-jump').first().press('Enter');
    await page.waitForSelector('section.solution[data-index="20"]');

    type Search = { id: string; correct?: boolean; stats: Record<string, number> };
    const reset = demoRows<Search>('search-chunk-reset.jsonl');
    await open(fileHash('demo/search-chunk-reset.jsonl'));
    await choose('correct', 'wrong');
    expect(await matched()).toBe(reset.filter((r) => r.correct === false).length);
    await choose('resets', 'with');
    expect(await matched()).toBe(
      reset.filter((r) => r.correct === false && (r.stats.resets ?? 0) > 0).length,
    );
    // Every search card shows its question.
    expect(await count('section.search details.question pre')).toBe(await count('section.search'));

    type Prediction = { label: number; prediction: number | null };
    const preds = demoRows<Prediction>('processbench-predictions.jsonl');
    await open(fileHash('demo/processbench-predictions.jsonl'));
    await choose('pred', 'exact');
    expect(await matched()).toBe(preds.filter((p) => p.prediction === p.label).length);
    await choose('pred', 'missed');
    expect(await matched()).toBe(preds.filter((p) => p.label >= 0 && p.prediction === -1).length);

    const rowsName = demo.files.evalChunkRows;
    const rows = demoRows<ChunkJudgmentRow>(rowsName);
    await open(fileHash(`demo/${rowsName}`));
    await choose('agree', 'disagree');
    expect(await matched()).toBe(rows.filter((r) => r.agrees === false).length);
    expect(await count('#chunk-rows-table tr.disagree')).toBe(Math.min(20, await matched()));

    const samples = demoRows<{ samples: Array<{ correct: boolean }> }>('samples.jsonl');
    await open(fileHash('demo/samples.jsonl'));
    await choose('solved', 'no');
    expect(await matched()).toBe(samples.filter((r) => !r.samples.some((x) => x.correct)).length);
  });

  it('compare: two searches over the same problems, the paired difference with its 95% interval, both traces side by side', async () => {
    type Search = { id: string; correct?: boolean };
    const a = new Map(demoRows<Search>('search-sample.jsonl').map((r) => [r.id, r.correct]));
    const b = demoRows<Search>('search-chunk-reset.jsonl');
    const diffs = b.filter((r) => a.has(r.id)).map((r) => Number(r.correct) - Number(a.get(r.id)));
    const mean = diffs.reduce((x, y) => x + y, 0) / diffs.length;
    const sd = Math.sqrt(diffs.reduce((x, d) => x + (d - mean) ** 2, 0) / (diffs.length - 1));
    // 24 problems: t with 23 degrees of freedom.
    const half = (2.0687 * sd) / Math.sqrt(diffs.length);
    await open('#/files');
    await follow('#compare-link', 'Compare two runs');
    await page.locator('#compare-a').selectOption({ value: '0:demo/search-sample.jsonl' });
    await page.waitForFunction(() => location.hash.includes('apath='));
    await page.locator('#compare-b').selectOption({ value: '0:demo/search-chunk-reset.jsonl' });
    await page.waitForSelector('#paired-difference');
    await page.waitForLoadState('networkidle');
    expect(await text('#compare-summary')).toContain('24');
    const shown = await text('#paired-difference');
    const pct = (v: number) => `${(100 * v).toFixed(1)}%`;
    expect(shown).toContain(`${mean > 0 ? '+' : ''}${pct(mean)}`);
    expect(shown).toContain(`95% ${mean - half > 0 ? '+' : ''}${pct(mean - half)} to`);
    expect(shown).toContain(`${mean + half > 0 ? '+' : ''}${pct(mean + half)}`);
    expect(await count('#compare-rows tbody tr')).toBe(20);
    await shot('21-compare');
    await page.evaluate(() => document.querySelector('#compare-rows')?.setAttribute('data-old', '1'));
    await page.locator('#compare-only').selectOption({ value: 'differ' });
    await page.waitForFunction(() => location.hash.includes('only=differ'));
    await page.waitForSelector('#compare-rows:not([data-old])');
    await page.waitForLoadState('networkidle');
    expect(await count('#compare-rows tbody tr')).toBe(diffs.filter((d) => d !== 0).length);
    await follow('#compare-rows a.both-traces', 'both runs');
    await page.waitForSelector('.pair-traces .tree svg');
    expect(await count('.pair-traces section.search')).toBe(2);
    await shot('22-compare-traces');
  });

  it('a file still being written grows on screen; a repeated file name is shown with its folder', async () => {
    const growing = join(outputs, 'labels.jsonl');
    const rows = readFileSync(join(demoDir, 'labels.jsonl'), 'utf8').split('\n').filter(Boolean);
    writeFileSync(growing, `${rows.slice(0, 3).join('\n')}\n${rows[3].slice(0, 40)}`);
    await open(fileHash('labels.jsonl'));
    expect(await count('section.solution')).toBe(3);
    expect(await count('#growing-file')).toBe(1);
    writeFileSync(growing, `${rows.slice(0, 6).join('\n')}\n`);
    await page.waitForFunction(
      () => document.querySelector('.page-info')?.textContent?.includes('of 6'),
      null,
      {
        timeout: 30_000,
      },
    );
    expect(await count('section.solution')).toBe(6);
    await open('#/files');
    expect(await text('#files')).toContain('demo/');
    expect(await count('#files .folder')).toBeGreaterThan(0);
  });

  it('charts: the accuracy axis is zoomed to the data, every point has its 95% error bar, the SVG is linked', async () => {
    const bench = JSON.parse(readFileSync(join(demoDir, 'accuracy-vs-compute.json'), 'utf8')) as BenchReport;
    await open(fileHash('demo/accuracy-vs-compute.json'));
    expect(await count('#acc-chart path.error-bar')).toBe(bench.points.length);
    expect(await count('#acc-table td.ci')).toBe(bench.points.length);
    const lo = Number(await page.locator('#acc-chart svg').getAttribute('data-ylo'));
    const hi = Number(await page.locator('#acc-chart svg').getAttribute('data-yhi'));
    const accs = bench.points.map((p) => p.accuracy);
    // Zoomed: the axis is not 0–100% unless the data (with its intervals) spans it.
    expect(lo).toBeLessThanOrEqual(Math.min(...accs));
    expect(hi).toBeGreaterThanOrEqual(Math.max(...accs));
    expect(hi - lo).toBeLessThan(1);
    const href = await page.locator('#chart-svg').getAttribute('href');
    const svg = await fetch(`${server.url}${href}`);
    expect(svg.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(await svg.text()).toContain('95% interval');
  });
});
