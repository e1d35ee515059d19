import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningWebServer, startWebServer } from '../../src/server/app.js';
import { openStore } from '../../src/store/db.js';
import { startRun, updateRunCounts } from '../../src/store/runs.js';
import { tempDir } from '../support/temp.js';

/**
 * Stored XSS through the web view: output files a stranger wrote (a third-party data set, a
 * model's text) whose every string and number holds markup. Each view is opened in Chromium; the
 * payload must show as text, never become an element or run.
 */

// The few browser globals the page functions below use (they run in Chromium; the test's lib has no DOM).
interface PageElement {
  textContent: string | null;
}
declare const document: {
  body: { hasAttribute(name: string): boolean };
  querySelector(selector: string): PageElement | null;
  querySelectorAll(selector: string): { length: number };
};

const CHROMIUM = process.env.STEPWISE_CHROMIUM ?? '/usr/bin/chromium';
const MISSING = `Chromium not found at ${CHROMIUM}: the browser tests need Debian's chromium (apt-get install chromium; .ci/run installs it) or STEPWISE_CHROMIUM=<path>`;
const PAYLOAD = `<img src=x onerror="document.body.setAttribute('data-xss','1')">`;

/** Every string and number below `value` replaced by the payload; arrays, objects and booleans kept. */
function poison(value: unknown): unknown {
  if (typeof value === 'string' || typeof value === 'number') return PAYLOAD;
  if (Array.isArray(value)) return value.map(poison);
  if (value && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, poison(v)]));
  return value;
}
/** Maps keyed by data (signal names, stats, pass@k) get a payload key too. */
const withPayloadKey = (o: Record<string, unknown>, v: unknown) => ({ ...o, [PAYLOAD]: v });
const jsonl = (records: unknown[]) => `${records.map((r) => JSON.stringify(r)).join('\n')}\n`;

// Record shapes as the pipeline writes them (every field a view reads).
const labelRecord = {
  id: 'p1#0',
  problem: 'What is 2+2?',
  answer: '4',
  finalAnswerCorrect: false,
  q0: 0.5,
  cost: { rollouts: 8, tokens: 120 },
  firstError: withPayloadKey({ 'abs-q': 1 }, 1),
  chunks: [
    {
      text: 'Step one',
      q: 0.75,
      rollouts: 4,
      labels: withPayloadKey({ 'abs-q': true }, 0.7),
      verdict: 'positive',
      score: 0.9,
      rationale: 'fine',
    },
    {
      text: 'Step two',
      q: 0.25,
      rollouts: 4,
      labels: { 'abs-q': false },
      verdict: PAYLOAD,
      score: 0.1,
      rationale: 'wrong',
    },
  ],
};
const searchRecord = {
  id: 'p1',
  question: 'What is 2+2?',
  strategy: 'greedy-prm',
  gold: '4',
  answer: '5',
  correct: false,
  finalText: 'Step one\n\nStep two',
  chunks: [
    { index: 0, text: 'Step one', verdict: 'positive', score: 0.9, node: 0, attempts: 1, rationale: 'ok' },
    { index: 1, text: 'Step two', verdict: 'negative', score: 0.2, node: 2, attempts: 2, rationale: 'no' },
  ],
  cost: {
    policy: { calls: 3, promptTokens: 30, completionTokens: 12 },
    judge: { calls: 3, promptTokens: 40, completionTokens: 9 },
  },
  stats: withPayloadKey({ expansions: 3 }, 1),
  trace: [
    {
      id: 0,
      parent: null,
      depth: 0,
      status: 'accepted',
      verdict: 'positive',
      score: 0.9,
      text: 'Step one',
      label: 'a',
      final: false,
      answer: null,
      rationale: 'r',
    },
    {
      id: 1,
      parent: 0,
      depth: 1,
      status: 'backtracked',
      verdict: 'positive',
      score: 0.6,
      text: 'Step 2a',
      label: 'b',
      final: false,
      answer: null,
      rationale: 'r',
    },
    {
      id: 2,
      parent: 0,
      depth: 1,
      status: 'rejected',
      verdict: 'negative',
      score: 0.2,
      text: 'Step 2b',
      label: 'c',
      final: true,
      answer: '5',
      rationale: 'r',
    },
    {
      id: 3,
      parent: 0,
      depth: 1,
      status: PAYLOAD,
      verdict: PAYLOAD,
      score: 0.1,
      text: 'x',
      label: 'd',
      final: false,
      answer: 'y',
      rationale: 'r',
    },
  ],
  backtracks: [
    { from: 1, to: 0 },
    { from: 2, to: null },
  ],
};
const processBenchRow = {
  id: 'gsm8k-0',
  generator: 'model',
  problem: 'What is 2+2?',
  steps: ['Step one', 'Step two', 'Step three'],
  label: 1,
};
const sampleRecord = {
  id: 'p1',
  question: 'What is 2+2?',
  gold: '4',
  samples: [{ text: 'a', answer: '4', correct: true, tokens: 10, chunks: [{ text: 'a' }, 'b'] }],
};
const predictionRecord = {
  id: 'gsm8k-0',
  subset: 'gsm8k',
  label: 1,
  prediction: 2,
  steps: 3,
  scores: [0.9, 0.2, 0.1],
  judge: 'j',
};
const problemRecord = { id: 'p1', question: 'What is 2+2?', answer: '4', success_rate: 0.5 };
const pbReport = {
  judge: 'j',
  average_f1: 50,
  samples: 2,
  subsets: { gsm8k: { n: 2, error_acc: 50, correct_acc: 50, f1: 50 } },
  threshold: { mode: 'fixed', value: 0.5, chosenOn: 'dev' },
  cost: { judge: { calls: 1, promptTokens: 1, completionTokens: 1 } },
  formatFailures: 0,
  formatFailureRate: 0,
  abstained: 1,
  predictions: 'predictions.jsonl',
};
const accuracy = {
  problems: 2,
  policy: 'p',
  judge: 'j',
  seconds: 1,
  points: [
    {
      strategy: 'sample',
      knob: 'N',
      budget: 1,
      accuracy: 0.5,
      correct: 1,
      checked: 2,
      costPerProblem: { policyTokens: 10, judgeTokens: 0, totalTokens: 10, policyCalls: 1, judgeCalls: 0 },
    },
  ],
};
const demoReport = {
  demo: true,
  policy: 'p',
  judge: 'j',
  seconds: 1,
  files: withPayloadKey({ labels: 'labels.jsonl' }, 'x.jsonl'),
  sample: {
    problems: 2,
    samplesPerProblem: 2,
    accuracy: 0.5,
    passAtK: withPayloadKey({ 'pass@1': 0.5 }, 0.5),
  },
  label: { solutions: 2, chunks: 4, rollouts: 4, positiveShare: withPayloadKey({ 'abs-q': 0.5 }, 0.5) },
  evalChunks: { signal: 'abs-q', accuracy: 0.5, balancedAccuracy: 0.5 },
  processbench: { rows: 2, errorAcc: 50, correctAcc: 50, f1: 50 },
  search: [
    {
      strategy: 'sample',
      label: 'sample',
      accuracy: 0.5,
      tokensPerProblem: 10,
      policyCallsPerProblem: 1,
      judgeCallsPerProblem: 0,
    },
  ],
  accuracyVsCompute: [
    { strategy: 'best-of-n', knob: 'n', budget: 2, accuracy: 0.5, tokensPerProblem: 10 },
    { strategy: 'best-of-n', knob: 'n', budget: 4, accuracy: 0.6, tokensPerProblem: 20 },
  ],
};
const evalChunks = {
  judge: 'j',
  signal: 'abs-q',
  solutions: 2,
  n: 4,
  accuracy: 0.5,
  balanced_accuracy: 0.5,
  recall_positive: 0.5,
  recall_negative: 0.5,
  positives: 2,
  negatives: 2,
  first_error_accuracy: 0.5,
  abstained: 0,
  formatFailures: 0,
  cost: { judge: { calls: 1, promptTokens: 1, completionTokens: 1 } },
  calibration: {
    n: 3,
    gap: 0.1,
    bins: [
      { lo: 0, hi: 0.1, n: 1, meanScore: 0.05, meanQ: 0.2, positiveShare: 0 },
      { lo: 0.9, hi: 1, n: 2, meanScore: 0.95, meanQ: 0.8, positiveShare: 1 },
    ],
  },
  chunkRows: 'eval-chunks.chunks.jsonl',
};
/** A line of `eval chunks`' per-chunk file. */
const chunkRow = {
  solution: 'p1#0',
  chunk: 0,
  text: 'Step one',
  label: false,
  q: 0.25,
  verdict: 'positive',
  score: 0.9,
  agrees: false,
  rationale: 'fine',
};
/** A line of `stepwise select` output. */
const selectionRow = {
  id: 'p1',
  question: 'What is 2+2?',
  chosen: { index: 1, text: 'Four.', meanScore: 0.9 },
  outcomeOnly: { index: 0, text: '4' },
  candidates: [
    { index: 0, meanScore: 0.5 },
    { index: 1, meanScore: 0.9 },
  ],
  cost: { judge: { calls: 2, promptTokens: 10, completionTokens: 4 } },
};
/** Numbers kept where the view draws with them (chart positions), every string crafted. */
const poisonStrings = (value: unknown): unknown => {
  if (typeof value === 'string') return PAYLOAD;
  if (Array.isArray(value)) return value.map(poisonStrings);
  if (value && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, poisonStrings(v)]));
  return value;
};

const home = tempDir('stepwise-xss-');
const outputs = join(home, 'outputs');
let server: RunningWebServer;
let browser: Browser;
let page: Page;
let runId: string;
const consoleErrors: string[] = [];

beforeAll(async () => {
  mkdirSync(outputs, { recursive: true });
  const files: Record<string, string> = {
    'labels.jsonl': jsonl([poison(labelRecord), poison(labelRecord)]),
    'search.jsonl': jsonl([poison(searchRecord)]),
    // ProcessBench sets are recognised by a numeric label in the first row; the rows after it are
    // drawn with the same view, so they carry the payload in every field, the label included.
    'processbench.json': JSON.stringify([processBenchRow, poison(processBenchRow), poison(processBenchRow)]),
    'processbench.jsonl': jsonl([processBenchRow, poison(processBenchRow)]),
    // Every field, the first row's label included: no longer recognised, shown as raw JSON.
    'processbench-all.json': JSON.stringify([poison(processBenchRow), poison(processBenchRow)]),
    'samples.jsonl': jsonl([poison(sampleRecord)]),
    'predictions.jsonl': jsonl([predictionRecord, poison(predictionRecord)]),
    'problems.jsonl': jsonl([poison(problemRecord)]),
    'pb-report.json': JSON.stringify(poison(pbReport)),
    // Points without a numeric accuracy are left out of the chart: one point keeps it to be drawn.
    'accuracy.json': JSON.stringify({
      ...(poison(accuracy) as object),
      points: [poison(accuracy.points[0]), { ...(poison(accuracy.points[0]) as object), accuracy: 0.5 }],
    }),
    'demo.json': JSON.stringify(poison(demoReport)),
    'eval-chunks.json': JSON.stringify(poison(evalChunks)),
    // Numbers kept: the calibration plot and the demo's curve are drawn, crafted strings in them.
    'eval-chunks-numbers.json': JSON.stringify(poisonStrings(evalChunks)),
    'demo-numbers.json': JSON.stringify(poisonStrings(demoReport)),
    'eval-chunks.chunks.jsonl': jsonl([chunkRow, poison(chunkRow), poisonStrings(chunkRow)]),
    'select.jsonl': jsonl([selectionRow, poison(selectionRow), poisonStrings(selectionRow)]),
    // Statuses kept (rejected attempts are shown on the card, verdict marks beside the nodes).
    'search-kept-status.jsonl': jsonl([
      {
        ...(poisonStrings(searchRecord) as object),
        chunks: searchRecord.chunks.map((c) => ({ ...(poisonStrings(c) as object), verdict: c.verdict })),
        trace: searchRecord.trace.map((n) => ({
          ...(poisonStrings(n) as object),
          status: n.status === PAYLOAD ? 'rejected' : n.status,
          verdict: n.verdict === PAYLOAD ? 'negative' : n.verdict,
        })),
      },
      // Whole solutions (best-of-N): name, status, score and answer beside each node.
      {
        ...(poisonStrings(searchRecord) as object),
        strategy: 'best-of-n',
        trace: searchRecord.trace.map((n) => ({
          ...(poisonStrings(n) as object),
          parent: null,
          status: 'pruned',
        })),
        backtracks: [],
      },
    ]),
    [`${PAYLOAD}.jsonl`]: jsonl([poison(problemRecord)]),
    // The other side of a comparison: the same problem id (kept), every other field crafted.
    // Numbers kept: first errors under a crafted signal name, offered in the filter bar.
    'labels-numbers.jsonl': jsonl([poisonStrings(labelRecord)]),
    'search-b.jsonl': jsonl([{ ...(poisonStrings(searchRecord) as object), id: 'p1' }]),
    'search-a.jsonl': jsonl([{ ...(poisonStrings(searchRecord) as object), id: 'p1', correct: true }]),
  };
  for (const [name, text] of Object.entries(files)) writeFileSync(join(outputs, name), text);
  // A folder named by the data, holding a file whose name repeats: listed with its folder.
  mkdirSync(join(outputs, PAYLOAD), { recursive: true });
  writeFileSync(join(outputs, PAYLOAD, 'labels.jsonl'), files['labels.jsonl']);

  const storePath = join(home, 'store.sqlite');
  const store = openStore(storePath);
  runId = startRun(
    store,
    PAYLOAD,
    poison({ policy: 'sim', rollouts: 4, name: 'run' }) as Record<string, unknown>,
    PAYLOAD,
  );
  updateRunCounts(store, runId, { [PAYLOAD]: 3, done: 1, total: 2, rollouts: PAYLOAD } as unknown as Record<
    string,
    number
  >);
  store.close();
  server = await startWebServer({ roots: [outputs], storePath });

  if (!existsSync(CHROMIUM)) return;
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--no-first-run',
    ],
  });
  page = await browser.newPage();
  // A crafted file may name a file that does not exist (a 404 in the console is expected);
  // a refused inline script or style is not.
  page.on('console', (m) => {
    if (m.type() === 'error' && !/Failed to load resource/.test(m.text())) consoleErrors.push(m.text());
  });
  page.on('pageerror', (e) => consoleErrors.push(`page error: ${e.message}`));
});

afterAll(async () => {
  await browser?.close();
  await server?.close();
  rmSync(home, { recursive: true, force: true });
});

/** Open a route, wait for its heading (and `ready`, an element the view draws from the data). */
async function open(hash: string, ready: string): Promise<void> {
  if (!page) throw new Error(MISSING);
  await page.goto('about:blank');
  await page.goto(`${server.url}/${hash}`);
  await page.waitForSelector('main h1');
  await page.waitForLoadState('networkidle');
  const heading = await page.locator('main h1').first().textContent();
  const why = heading?.includes('Could not load')
    ? await page.locator('main .error').first().textContent()
    : '';
  expect(heading, `${hash}: ${why}`).not.toContain('Could not load');
  expect(await page.locator(ready).count(), `${hash}: ${ready}`).toBeGreaterThan(0);
}

/** Nothing from the data became an element or ran, and the payload is on the page as text. */
async function expectInert(where: string): Promise<void> {
  const state = await page.evaluate(() => ({
    xss: document.body.hasAttribute('data-xss') || document.querySelector('[data-xss]') !== null,
    imgs: document.querySelectorAll('img').length,
    text: document.querySelector('main')?.textContent ?? '',
  }));
  expect(state.xss, `${where}: the payload ran`).toBe(false);
  expect(state.imgs, `${where}: an element was injected`).toBe(0);
  // Raw JSON views show it with its quotes escaped: its start is enough.
  expect(state.text, `${where}: the payload is shown as text`).toContain('<img src=x onerror=');
}

const file = (name: string) => `#/file?root=0&path=${encodeURIComponent(name)}`;

describe('crafted output files in Chromium', () => {
  it('has Chromium to drive', () => {
    expect(existsSync(CHROMIUM), MISSING).toBe(true);
    expect(browser, MISSING).toBeDefined();
  });

  it('the page is sent with the CSP and no inline script', async () => {
    const res = await fetch(`${server.url}/`);
    expect(res.headers.get('content-security-policy')).toBe("default-src 'self'; script-src 'self'");
    const html = await res.text();
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    expect(html).not.toMatch(/\son[a-z]+=/i);
  });

  it('labels file: payload in every field shows as text', async () => {
    await open(file('labels.jsonl'), 'section.solution .chunk');
    expect(await page.locator('section.solution').count()).toBe(2);
    await expectInert('labels');
    // The other colourings draw the same fields through other branches.
    await open(`${file('labels.jsonl')}&color=verdict`, 'section.solution .chunk');
    await expectInert('labels by verdict');
    await open(`${file('labels.jsonl')}&color=${encodeURIComponent(PAYLOAD)}`, 'section.solution .chunk');
    await expectInert('labels by a crafted signal');
  });

  it('ProcessBench-format files: rows after the first and a fully crafted set', async () => {
    await open(file('processbench.json'), 'section.pb-row');
    expect(await page.locator('section.pb-row').count()).toBe(3);
    await expectInert('processbench.json');
    await open(file('processbench.jsonl'), 'section.pb-row');
    await expectInert('processbench.jsonl');
    await open(file('processbench-all.json'), 'main pre');
    await expectInert('processbench-all.json');
  });

  it('search file: cards, tree, backtracks and the node detail', async () => {
    await open(file('search.jsonl'), 'section.search g.node');
    expect(await page.locator('section.search g.node').count()).toBe(searchRecord.trace.length);
    await expectInert('search');
    for (let i = 0; i < searchRecord.trace.length; i++) {
      // Crafted ids put every node on one spot: click each through the DOM, not the pointer.
      await page.locator('section.search g.node').nth(i).dispatchEvent('click');
      await page.waitForSelector('.node-detail pre');
      await expectInert(`search node ${i}`);
    }
  });

  it('search with real statuses: rejected attempts on the card and labelled nodes', async () => {
    await open(file('search-kept-status.jsonl'), 'section.search .rejected-attempt');
    expect(await page.locator('section.search text.node-label').count()).toBe(2 * searchRecord.trace.length);
    await expectInert('search with statuses');
  });

  it('every other view and the runs pages', async () => {
    const views: Array<[string, string]> = [
      [file('samples.jsonl'), 'details.sample'],
      [file('predictions.jsonl'), '#predictions tbody tr'],
      [file('problems.jsonl'), '#problems tbody tr'],
      [file('pb-report.json'), '#pb-table'],
      [file('accuracy.json'), '#acc-table tbody tr'],
      [file('demo.json'), '#demo-table'],
      [file('eval-chunks.json'), '#eval-table'],
      [file('eval-chunks-numbers.json'), '#calibration circle.bin'],
      [file('eval-chunks.chunks.jsonl'), '#chunk-rows-table tbody tr'],
      [file('select.jsonl'), 'section.selection tr.candidate'],
      [file('demo-numbers.json'), '#demo-curve circle.point'],
      [file(`${PAYLOAD}.jsonl`), '#problems tbody tr'],
      // Filter bar, text and id search: crafted signal names, a crafted query in the address.
      [`${file('labels.jsonl')}&text=${encodeURIComponent(PAYLOAD)}`, '#filters select'],
      [`${file('labels-numbers.jsonl')}&fe=any&signal=${encodeURIComponent(PAYLOAD)}`, '#filters select'],
      [`${file('labels.jsonl')}&id=${encodeURIComponent(PAYLOAD)}`, '#single-record'],
      [`${file('search-a.jsonl')}&correct=correct`, 'section.search .question'],
      [file('predictions.jsonl'), '#filters select'],
      [file('eval-chunks.chunks.jsonl'), '#filters select'],
      // Two runs side by side: ids, questions, answers, strategies and the traces of both.
      [`#/compare?aroot=0&apath=search-a.jsonl&broot=0&bpath=search-b.jsonl`, '#compare-rows tbody tr'],
      [
        '#/compare/problem?aroot=0&apath=search-a.jsonl&broot=0&bpath=search-b.jsonl&id=p1',
        '.pair-traces section.search',
      ],
      [file(`${PAYLOAD}/labels.jsonl`), 'section.solution'],
      ['#/runs?all=1', '#runs tbody tr'],
      ['#/', '#files tbody tr'],
      ['#/files', '#files tbody tr'],
      [`#/run/${runId}`, '#config'],
    ];
    for (const [hash, ready] of views) {
      await open(hash, ready);
      await expectInert(hash);
    }
  });

  it('the page broke no rule of its CSP and threw nothing', () => {
    expect(consoleErrors).toEqual([]);
  });
});
