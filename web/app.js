// @ts-check
// stepwise web view: a small single-page app over the JSON API (no build step, no framework).
// Files are hostile data (third-party data sets, model-written text): every value from the API
// reaches the HTML through esc() (text and attribute values), Number()/int()/fmt()/pct() (numbers),
// encodeURIComponent (inside href query strings) or a fixed table looked up with own(). The page's
// Content-Security-Policy blocks inline scripts and inline style attributes, so styles this file
// computes ride in data-css and are applied through the CSSOM by setHtml().
//
// Type-checked (`npm run typecheck`, web/tsconfig.json) against the package's own types: the API's
// answers are the server's declared ones (src/server/api.ts), a file's records the types their
// writers declare. Files are still untrusted, so the checks on every value stay.

/**
 * @import { Cost, RoleCost, Verdict } from '../src/core/types.js'
 * @import { FileEntry, FileKind } from '../src/server/files.js'
 * @import { CompareResponse, CompareSide, FileResponse, FilesResponse, IndexResponse, JsonlPageResponse, LegendResponse, PairedDifference, RunResponse, RunsResponse, RunView, SummaryResponse } from '../src/server/api.js'
 * @import { ChunkJudgmentFileSummary, LabelFileSummary, PredictionFileSummary, SampleFileSummary, SearchFileSummary, SelectionFileSummary } from '../src/server/summary.js'
 * @import { RunStatus } from '../src/store/runs.js'
 * @import { LabeledChunkRecord, LabeledSolutionRecord, ProcessBenchRow } from '../src/label/label.js'
 * @import { LabelValue } from '../src/label/signals.js'
 * @import { JobSettings } from '../src/jobs/settings.js'
 * @import { SampleRecord } from '../src/sample/sample.js'
 * @import { BenchReport } from '../src/search/bench.js'
 * @import { CostPerProblem, SearchRecord } from '../src/search/dataset.js'
 * @import { Backtrack, SearchChunk, SearchResult, TraceNode, TraceStatus } from '../src/search/types.js'
 * @import { ProcessBenchPrediction, ProcessBenchReport } from '../src/evaluate/processbench.js'
 * @import { Calibration, ChunkEvalReport, ChunkJudgmentRow } from '../src/evaluate/chunks.js'
 * @import { SelectionRow } from '../src/train/select.js'
 * @import { SimProblemRow } from '../src/sim/dataset.js'
 * @import { DemoReport } from '../src/cli/commands/demo.js'
 */

/**
 * What each kind of JSONL file holds, as its writer declares it. Label chunks may also carry a
 * judge's ruling (label files joined with a judge's verdicts); a search record may be a single
 * `solve --json` result (no gold answer); problem files are any problem set, the sim's included.
 * @typedef {LabeledChunkRecord & { verdict?: Verdict, score?: number, rationale?: string }} LabelChunk
 * @typedef {Omit<LabeledSolutionRecord, 'chunks'> & { chunks: LabelChunk[], job?: JobSettings }} LabelRecord
 * @typedef {Omit<SearchRecord, 'gold'> & { gold?: string }} SearchCardRecord
 * @typedef {{ id: string, answer: string } & Partial<Pick<SimProblemRow, 'question' | 'problem' | 'success_rate'>>} ProblemRow
 * @typedef {{
 *   labels: LabelRecord,
 *   samples: SampleRecord,
 *   search: SearchCardRecord,
 *   predictions: ProcessBenchPrediction,
 *   problems: ProblemRow,
 *   'processbench-set': ProcessBenchRow,
 *   'chunk-judgments': ChunkJudgmentRow,
 *   selection: SelectionRow,
 * }} RecordOfKind
 */

/**
 * One page of a JSONL file (or a JSON file shown as one) and where it is.
 * `data` is a JSON file's content (undefined for JSONL).
 * @typedef {{ root: string, path: string, offset: number, params: URLSearchParams, file: JsonlPageResponse, data: unknown }} PageCtx
 */
/** A record view's two parts: [summary, records]; the pager goes between them. */
/** @typedef {[string, string]} RecordParts */

/** An element of index.html, which this file cannot run without. */
function mustGet(/** @type {string} */ id) {
  const el = document.getElementById(id);
  if (!el) throw new Error(`index.html has no #${id}`);
  return el;
}
const app = mustGet('app');
const statusEl = mustGet('status');

/** @type {Readonly<Record<string, string>>} */
const ESCAPES = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
/** Any value from the data as HTML text or attribute value. */
const esc = (/** @type {unknown} */ v) => String(v ?? '').replace(/[&<>"']/g, (c) => ESCAPES[c]);
/**
 * A value of one of this file's fixed tables, or `fallback`: never a prototype member named by the data.
 * @param {Readonly<Record<string, string | undefined>>} table
 * @param {unknown} key
 */
const own = (table, key, fallback = '') =>
  (typeof key === 'string' && Object.hasOwn(table, key) ? table[key] : undefined) ?? fallback;
/** A number from the data for a place that must hold a number (NaN shows as NaN, never as markup). */
const num = (/** @type {unknown} */ v) => Number(v);
/** @returns {n is number} */
const isNum = (/** @type {unknown} */ n) => typeof n === 'number' && Number.isFinite(n);
const fmt = (/** @type {unknown} */ n, d = 1) => (isNum(n) ? n.toFixed(d) : '—');
const pct = (/** @type {unknown} */ x, d = 1) => (isNum(x) ? `${(100 * x).toFixed(d)}%` : '—');
const int = (/** @type {unknown} */ n) => (isNum(n) ? Math.round(n).toLocaleString('en-US') : '—');
const plural = (/** @type {unknown} */ n, /** @type {string} */ one, many = `${one}s`) =>
  `${int(n)} ${n === 1 ? one : many}`;

/**
 * Put HTML built by this file into `el`, then apply the styles carried in data-css (computed here
 * from numbers and constants only): the CSP refuses inline style attributes, not the CSSOM.
 */
function setHtml(/** @type {Element} */ el, /** @type {string} */ html) {
  el.innerHTML = html;
  paint(el);
}
function paint(/** @type {Element} */ el) {
  // HTML and SVG elements alike carry a style and a dataset.
  for (const x of el.querySelectorAll(/** @type {'[data-css]'} */ ('[data-css]'))) {
    if (!(x instanceof HTMLElement || x instanceof SVGElement)) continue;
    x.style.cssText = x.dataset.css ?? '';
    x.removeAttribute('data-css');
  }
}

/** Thrown when an answer arrives after the user moved to another page: the old page must not draw over the new one. */
class Stale extends Error {}
let routing = 0;

/**
 * GET one API answer. The answer is what the server declares for the endpoint (src/server/api.ts,
 * which it builds with `satisfies`): the endpoint functions below name that type.
 * @template T
 * @param {string} path
 * @returns {Promise<T>}
 */
async function api(path) {
  const generation = routing;
  const res = await fetch(path, { credentials: 'same-origin' });
  const body = await res.json().catch(() => ({}));
  if (generation !== routing) throw new Stale('page changed');
  if (!res.ok) throw new Error(typeof body?.error === 'string' ? body.error : `HTTP ${res.status}`);
  return body;
}

/** A served folder's index (as the address gives it) and a path in it. */
/** @typedef {string | number} RootRef */

const fileHref = (/** @type {RootRef} */ root, /** @type {string} */ path, extra = '') =>
  `#/file?root=${encodeURIComponent(root)}&path=${encodeURIComponent(path)}${extra}`;
const fileApi = (/** @type {RootRef} */ root, /** @type {string} */ path, extra = '') =>
  `/api/file?root=${encodeURIComponent(root)}&path=${encodeURIComponent(path)}${extra}`;
/** The folder part of a served path ('' at the top of a root), with a trailing slash. */
const dirOf = (/** @type {string} */ path) =>
  path.includes('/') ? path.slice(0, path.lastIndexOf('/') + 1) : '';

// The endpoints, each with the answer type the server declares for it.
/** @returns {Promise<RunsResponse>} */
const getRuns = (/** @type {boolean} */ all) => api(`/api/runs?scope=${all ? 'all' : 'served'}`);
/** @returns {Promise<RunResponse>} */
const getRun = (/** @type {string} */ id) => api(`/api/runs/${encodeURIComponent(id)}`);
/** @returns {Promise<FilesResponse>} */
const getFiles = () => api('/api/files');
/** @returns {Promise<FileResponse>} */
const getFile = (/** @type {RootRef} */ root, /** @type {string} */ path, extra = '') =>
  api(fileApi(root, path, extra));
/** @returns {Promise<SummaryResponse>} */
const getSummary = (/** @type {RootRef} */ root, /** @type {string} */ path) =>
  api(`/api/summary?root=${encodeURIComponent(root)}&path=${encodeURIComponent(path)}`);
/** @returns {Promise<LegendResponse>} */
const getLegend = () => api('/api/legend');
/** @type {LegendResponse | undefined} */
let legendCache;
/** The code's vocabularies (trace statuses, published baselines): fixed by the server's code, so asked once per page load. */
const legend = async () => (legendCache ??= await getLegend());
const traceLegend = async () => (await legend()).traceStatus;

function parseHash() {
  const h = location.hash.replace(/^#/, '') || '/';
  const [path, query = ''] = h.split('?');
  return { path, params: new URLSearchParams(query) };
}

// ---------- colours ----------
/** @type {Readonly<Record<Verdict, string>>} */
const VERDICT_CLASS = { positive: 'pos', negative: 'neg', neutral: 'neu' };
/** Q-value in [0,1] → red (0) … amber … green (1). */
function qColor(/** @type {unknown} */ q) {
  if (!isNum(q)) return '#b9b9b4';
  return `hsl(${Math.round(120 * Math.max(0, Math.min(1, q)))} 60% 40%)`;
}
function qBackground(/** @type {unknown} */ q) {
  if (!isNum(q)) return '#f4f4f2';
  return `hsl(${Math.round(120 * Math.max(0, Math.min(1, q)))} 60% 95%)`;
}

const SIM_TEXT =
  'These results come from the stepwise simulated world (src/sim): a simulated policy, judge and problems. They show the pipeline working; they are not results of any real model.';

function simulatedBanner(/** @type {unknown} */ flag, /** @type {unknown} */ text = undefined) {
  if (!flag) return '';
  return `<div class="banner sim-banner" role="note"><b>Simulated.</b> ${esc(text || SIM_TEXT)}</div>`;
}
const simBadge = (/** @type {unknown} */ flag) =>
  flag ? '<span class="badge sim" title="simulated world, not a real model">simulated</span>' : '';

function progressBar(/** @type {Record<string, number> | undefined} */ counts) {
  const done = counts?.done;
  const total = counts?.total;
  if (!isNum(done) || !isNum(total) || total <= 0) return '';
  const share = Math.max(0, Math.min(1, done / total));
  return `<span class="progress" title="${int(done)} of ${int(total)}"><span data-css="width:${(share * 100).toFixed(1)}%"></span></span> <span class="muted">${int(done)}/${int(total)}</span>`;
}

/** The cost-like counts of a run (tokens, calls, rollouts), in a short line. */
function costOf(/** @type {Record<string, number> | undefined} */ counts) {
  return Object.entries(counts || {})
    .filter(([k, v]) => isNum(v) && /token|call|rollout/i.test(k))
    .map(([k, v]) => `${esc(k)} ${int(v)}`)
    .join(' · ');
}

const kpi = (/** @type {string} */ label, /** @type {string} */ value, cls = '') =>
  `<span class="kpi ${cls}"><span class="muted">${esc(label)}</span><b>${value}</b></span>`;

/** A property of a value from the data when it is an object (files are untrusted: anything may be anything). */
const prop = (/** @type {unknown} */ v, /** @type {string} */ key) =>
  v !== null && typeof v === 'object' ? /** @type {Record<string, unknown>} */ (v)[key] : undefined;
/** Prompt plus completion tokens of a role's cost (missing counts as 0). */
const tokensOf = (/** @type {Partial<RoleCost> | undefined} */ c) =>
  (c?.promptTokens ?? 0) + (c?.completionTokens ?? 0);

// ---------- runs ----------
/** Milliseconds from a run's start to its end (NaN when either is missing or not a date). */
const took = (/** @type {RunView} */ run) => Date.parse(run.endedAt ?? '') - Date.parse(run.startedAt);
const statusClass = (/** @type {RunStatus} */ status) =>
  status === 'done' ? 'pos' : status === 'failed' || status === 'interrupted' ? 'neg' : 'running';

/**
 * The runs of the store. By default only those whose outputs are (or will be) in the served
 * folders: a store shared by many projects would otherwise list mostly runs this view cannot open.
 */
async function runsPage(/** @type {URLSearchParams} */ params) {
  const all = params.get('all') === '1';
  const [list, { files, roots }] = await Promise.all([getRuns(all), getFiles()]);
  const runs = list.runs;
  const rows = runs
    .map((r) => {
      const dur = r.endedAt ? `${(took(r) / 1000).toFixed(1)} s` : '';
      const gone = r.endReason
        ? ` <span class="muted small" title="${esc(r.endReason)}">${esc(r.endReason)}</span>`
        : '';
      const status = `<span class="badge ${statusClass(r.status)}">${esc(r.status)}</span>${gone}`;
      const progress = r.status === 'running' ? progressBar(r.counts) : '';
      const out = r.outputFile
        ? `<a href="${fileHref(r.outputFile.root, r.outputFile.path)}">${esc(r.outputFile.path)}</a>`
        : r.output
          ? `<span class="muted" title="${esc(r.output)}">${r.served ? 'not written yet' : 'not in the served folders'}</span>`
          : '';
      return `<tr data-run="${esc(r.id)}" data-command="${esc(r.command)}"><td><a href="#/run/${encodeURIComponent(r.id)}">${r.name ? `<b class="run-name">${esc(r.name)}</b><br><span class="muted small">${esc(r.id)}</span>` : esc(r.id)}</a></td><td>${esc(r.command)} ${simBadge(r.simulated)}</td><td>${status} ${progress}</td><td>${esc(new Date(r.startedAt).toLocaleString())}</td><td class="num">${dur}</td><td class="small">${costOf(r.counts)}</td><td>${out}</td></tr>`;
    })
    .join('');
  const anySim = runs.some((r) => r.simulated);
  const others = num(list.total) - num(list.served);
  const scope = all
    ? `<p class="muted" id="runs-scope">All ${plural(num(list.total), 'run')} of this store. <a id="runs-toggle" href="#/runs">Only the ${plural(num(list.served), 'run')} whose outputs are in the served folders</a></p>`
    : `<p class="muted" id="runs-scope">${plural(num(list.served), 'run')} whose outputs are in the served folders${others > 0 ? `; ${plural(others, 'other run')} in this store. <a id="runs-toggle" href="#/runs?all=1">Show all ${plural(num(list.total), 'run')}</a>` : '.'}</p>`;
  const empty =
    all || others === 0
      ? '<p class="muted empty">No runs recorded yet in this store. Run <code>npx stepwise demo</code>, then reload.</p>'
      : '<p class="muted empty">No run of this store wrote into the served folders.</p>';
  setHtml(
    app,
    `<h1>Runs</h1>
    ${anySim ? simulatedBanner(true, 'Runs marked “simulated” ran on the stepwise simulated world: their numbers are not results of any real model.') : ''}
    ${scope}
    ${runs.length ? `<table id="runs"><thead><tr><th>Run</th><th>Command</th><th>Status</th><th>Started</th><th class="num">Took</th><th>Cost</th><th>Output</th></tr></thead><tbody>${rows}</tbody></table>` : empty}
    <h2>Outputs</h2>${filesTable(files, roots)}`,
  );
}

/**
 * How a file is named in lists: its path in its folder, and the served folder's own name in front
 * when several folders are served (the same path can then be in two of them).
 */
function servedName(/** @type {FileEntry} */ f, /** @type {readonly string[]} */ roots) {
  if (roots.length < 2) return f.path;
  const root = String(roots[f.root] ?? f.root).replace(/[\\/]+$/, '');
  return `${root.slice(root.search(/[^\\/]*$/))}/${f.path}`;
}

function filesTable(/** @type {FileEntry[]} */ files, /** @type {readonly string[]} */ roots) {
  if (!files.length) return '<p class="muted empty">No JSON or JSONL outputs in the served folders.</p>';
  // A file name that repeats (in two folders) is shown with its folder.
  /** @type {Map<string, number>} */
  const names = new Map();
  for (const f of files) {
    const base = f.path.slice(f.path.lastIndexOf('/') + 1);
    names.set(base, (names.get(base) ?? 0) + 1);
  }
  const rows = files
    .map((f) => {
      const shown = servedName(f, roots);
      const base = f.path.slice(f.path.lastIndexOf('/') + 1);
      const folder = shown.slice(0, shown.length - base.length);
      const label =
        (names.get(base) ?? 0) > 1 || folder
          ? `<span class="folder muted">${esc(folder)}</span>${esc(base)}`
          : esc(base);
      return `<tr><td><a href="${fileHref(f.root, f.path)}" title="${esc(shown)}">${label}</a></td><td><span class="badge">${esc(f.kind)}</span> ${simBadge(f.simulated)}</td><td class="num">${int(f.size)}</td><td>${esc(new Date(f.mtime).toLocaleString())}</td></tr>`;
    })
    .join('');
  const compare =
    files.filter((f) => f.kind === 'search' && f.path.endsWith('.jsonl')).length >= 2
      ? '<p><a id="compare-link" href="#/compare">Compare two search outputs</a></p>'
      : '';
  return `${compare}<table id="files"><thead><tr><th>File</th><th>Kind</th><th class="num">Bytes</th><th>Modified</th></tr></thead><tbody>${rows}</tbody></table>`;
}

async function filesPage() {
  const { roots, files } = await getFiles();
  setHtml(
    app,
    `<h1>Files</h1><p class="muted">Served folders: ${roots.map((r, i) => `${i}: ${esc(r)}`).join(', ')}</p>${filesTable(files, roots)}`,
  );
}

async function runPage(/** @type {string} */ id) {
  const { run, output } = await getRun(id);
  const dur = run.endedAt
    ? `${(took(run) / 1000).toFixed(1)} s`
    : run.status === 'running'
      ? 'still running'
      : 'unknown';
  const counts = Object.entries(run.counts || {})
    .map(([k, v]) => kpi(k, esc(isNum(v) ? (Number.isInteger(v) ? int(v) : fmt(v, 3)) : v)))
    .join('');
  let cost = costOf(run.counts);
  // Reports (ProcessBench, eval chunks) keep their cost in the file rather than in the run's counts.
  if (!cost && output && /\.json$/.test(output.path)) {
    const report = await getFile(output.root, output.path);
    const c = /** @type {Partial<Cost> | undefined} */ (
      prop('data' in report ? report.data : undefined, 'cost')
    );
    const role = (/** @type {keyof Cost} */ name) => {
      const r = c?.[name];
      return r?.calls ? `${name} ${plural(r.calls, 'call')}, ${int(tokensOf(r))} tokens` : '';
    };
    cost = [role('policy'), role('judge')].filter(Boolean).join(' · ');
  }
  setHtml(
    app,
    `<h1>Run ${run.name ? `${esc(run.name)} <small class="muted">${esc(run.id)}</small>` : esc(run.id)}</h1>
    ${simulatedBanner(run.simulated)}
    <div class="card"><div class="row">
      ${kpi('command', esc(run.command))}
      ${kpi('status', `<span class="badge ${statusClass(run.status)}">${esc(run.status)}</span>${run.endReason ? ` <small class="muted" id="end-reason">${esc(run.endReason)}</small>` : ''}`)}
      ${kpi('started', esc(new Date(run.startedAt).toLocaleString()))}
      ${kpi('took', esc(dur))}
    </div>${run.status === 'running' ? `<p>Progress ${progressBar(run.counts) || '<span class="muted">no count yet</span>'}</p>` : ''}</div>
    <h2>Counts</h2><div class="card" id="counts"><div class="row">${counts || '<span class="muted">none recorded</span>'}</div></div>
    <h2>Cost</h2><p id="cost">${cost || '<span class="muted">no token or call counts recorded for this run</span>'}</p>
    <h2>Output</h2><p>${output ? `<a id="run-output" href="${fileHref(output.root, output.path)}">${esc(output.path)}</a> <span class="badge">${esc(output.kind)}</span>` : run.output ? `${esc(run.output)} <span class="muted">(not in the served folders: serve its folder with --dir)</span>` : '<span class="muted">this run wrote no output file</span>'}</p>
    <h2>Config</h2><pre id="config">${esc(JSON.stringify(run.config, null, 2))}</pre>`,
  );
}

// ---------- file pages ----------
const PAGE = 20;

/**
 * The records of a page as the writer of its kind declares them: the server read the kind from the
 * file's first record, and every value is still checked where it is drawn.
 * @template {keyof RecordOfKind & FileKind} K
 * @param {PageCtx} ctx
 * @param {K} _kind
 */
const recordsOf = (ctx, _kind) => /** @type {RecordOfKind[K][]} */ (ctx.file.records);

/**
 * The filter and search part of a page's address, to pass on to the API (`&k=v…`): the parameters
 * are the server's own list (GET /api/legend `queryParams`), so a filter added there needs no edit here.
 */
async function queryOf(/** @type {URLSearchParams} */ params) {
  return (await legend()).queryParams
    .filter((k) => (params.get(k) ?? '') !== '')
    .map((k) => `&${k}=${encodeURIComponent(params.get(k) ?? '')}`)
    .join('');
}

/**
 * A JSONL file's index: asked until the server has read the whole file (a large file takes a few
 * seconds the first time), the progress drawn meanwhile.
 * @returns {Promise<IndexResponse>}
 */
async function indexOfFile(
  /** @type {RootRef} */ root,
  /** @type {string} */ path,
  /** @type {string} */ query,
) {
  for (;;) {
    /** @type {IndexResponse} */
    const ix = await api(
      `/api/index?root=${encodeURIComponent(root)}&path=${encodeURIComponent(path)}&wait=1500${query}`,
    );
    if (ix.ready) return ix;
    const share = ix.size > 0 ? Math.max(0, Math.min(1, ix.bytes / ix.size)) : 0;
    setHtml(
      app,
      `<h1>${esc(path)}</h1><div class="card" id="indexing"><p>Reading the file once to index it: ${int(ix.records)} records so far, ${pct(share)} of ${int(ix.size)} bytes.</p><span class="progress wide"><span data-css="width:${(share * 100).toFixed(1)}%"></span></span></div>`,
    );
  }
}

async function filePage(/** @type {URLSearchParams} */ params) {
  const root = params.get('root') || '0';
  const path = params.get('path') || '';
  const offset = Math.max(0, Math.floor(Number(params.get('offset') || 0)) || 0);
  const id = params.get('id');
  const isJsonl = path.endsWith('.jsonl');
  const query = isJsonl ? await queryOf(params) : '';
  const index = isJsonl ? await indexOfFile(root, path, query) : null;
  const kindNow = index?.kind;
  // The page, the file's summary and the trace legend are asked at once (the index is ready).
  const [answer, summaryAnswer, statusesNow] = await Promise.all([
    getFile(
      root,
      path,
      isJsonl
        ? id !== null
          ? `&id=${encodeURIComponent(id)}&limit=1`
          : `&offset=${offset}&limit=${PAGE}${query}`
        : '',
    ),
    // The kinds with a summary are the server's list (GET /api/legend `summaryKinds`, src/server/summary.ts).
    isJsonl
      ? legend().then(({ summaryKinds }) =>
          summaryKinds.some((k) => k === kindNow) ? getSummary(root, path) : null,
        )
      : null,
    kindNow === 'search' ? traceLegend() : null,
  ]);
  const data = 'data' in answer ? answer.data : undefined;
  // A single search result saved as JSON (`stepwise solve --json > solve.json`) shows as a one-record page.
  const solved = answer.kind === 'search' && data ? /** @type {SearchResult} */ (data) : null;
  /** @type {JsonlPageResponse} */
  const file =
    'records' in answer
      ? answer
      : {
          ...answer,
          total: solved ? 1 : 0,
          matched: solved ? 1 : 0,
          offset: 0,
          records: solved ? [{ id: solved.problemId, ...solved }] : [],
          indices: solved ? [0] : [],
          badLines: [],
          growing: false,
        };
  /** @type {PageCtx} */
  const ctx = { root, path, offset: isJsonl ? file.offset : offset, params, file, data };
  const written = (file.runs || [])
    .map(
      (r) =>
        `<a href="#/run/${encodeURIComponent(r.id)}">${esc(r.command)} ${r.name ? `<b class="run-name">${esc(r.name)}</b> ` : ''}${esc(r.id)}</a>`,
    )
    .join(', ');
  const notice = prop(data, 'notice') || prop(data, 'note') || prop(file.records[0], 'notice');
  const head = `<h1>${esc(path)} <span class="badge">${esc(file.kind)}</span> ${simBadge(file.simulated)}${file.growing ? ' <span class="badge running" id="growing-file" title="the page is read again every 3 s">still being written</span>' : ''}</h1>
    ${simulatedBanner(file.simulated, notice)}
    ${written ? `<p class="muted">Written by ${written}</p>` : ''}
    ${file.badLines?.length ? `<p class="error">Lines that are not JSON: ${file.badLines.map(esc).join(', ')}</p>` : ''}`;
  const summary = summaryAnswer?.summary ?? null;
  // The trace statuses' meanings, from the code's TraceStatus (GET /api/legend).
  const statuses = file.kind === 'search' ? (statusesNow ?? (await traceLegend())) : null;
  const filtered = query !== '';
  const pager = isJsonl && id === null ? pagerHtml(ctx) : '';
  const single =
    isJsonl && id !== null
      ? `<p id="single-record">Record #${int(file.offset)} (id ${esc(id)}). <a id="record-in-file" href="${fileHref(root, path, `&offset=${Math.floor(file.offset / PAGE) * PAGE}`)}">its page in the file</a> · <a href="${fileHref(root, path)}">all records of this file</a></p>`
      : '';
  const tools = isJsonl && index ? filterBar(ctx, index, filtered) : '';
  // JSON reports: the type their writer declares (the kind was read from their shape).
  /** @type {Partial<Record<FileKind, () => string | RecordParts>>} */
  const views = {
    labels: () => labelsView(ctx, summary?.kind === 'labels' ? summary : null),
    samples: () => samplesView(ctx, summary?.kind === 'samples' ? summary : null),
    search: () => searchView(ctx, summary?.kind === 'search' ? summary : null, statuses ?? {}),
    predictions: () => predictionsView(ctx, summary?.kind === 'predictions' ? summary : null),
    problems: () => /** @type {RecordParts} */ (['', problemsView(recordsOf(ctx, 'problems'))]),
    'processbench-set': () => processBenchSetView(ctx),
    'processbench-report': () => '<div id="pb-view"></div>',
    'accuracy-vs-compute': () => accuracyView(/** @type {BenchReport} */ (data), root, path),
    'demo-report': () => demoView(/** @type {DemoReport} */ (data), root, path),
    'eval-chunks': () => evalChunksView(/** @type {ChunkEvalReport} */ (data), root, path),
    'chunk-judgments': () => chunkJudgmentsView(ctx, summary?.kind === 'chunk-judgments' ? summary : null),
    selection: () => selectionView(ctx, summary?.kind === 'selection' ? summary : null),
  };
  /** @returns {RecordParts} */
  const raw = () => [
    '',
    `<pre>${esc(JSON.stringify('records' in answer ? answer.records : data, null, 2))}</pre>`,
  ];
  const out = (views[file.kind] ?? raw)();
  const none =
    isJsonl && file.records.length === 0 && !file.badLines?.length
      ? `<p class="muted empty" id="no-match">${filtered && file.matched === 0 ? 'No record matches.' : `No record here: ${plural(file.matched, 'record')} ${filtered ? 'match' : 'in the file'}.`}</p>`
      : '';
  // Record views give [summary, records] and get the tools and pager around the records; the others are whole pages.
  const body = Array.isArray(out)
    ? `${out[0]}${tools}${single}${pager}${none}${out[1]}${out[1].length > 2000 ? pager : ''}`
    : out;
  setHtml(app, `${head}<div id="view">${body}</div>`);
  if (file.kind === 'processbench-report')
    await processBenchView(/** @type {ProcessBenchReport} */ (data), root, path);
  if (file.kind === 'search') drawTrees(statuses ?? {});
}

/** A record's index in its file: the server says it (the page may be of filtered records). */
const indexAt = (/** @type {PageCtx} */ ctx, /** @type {number} */ i) => {
  const k = ctx.file.indices?.[i];
  return isNum(k) ? k : ctx.offset + i;
};

/**
 * Filters of this kind of file (from the index: each choice with the records it keeps), text and
 * id search, and a jump to a page. Every choice lives in the address, so a view can be shared.
 */
function filterBar(
  /** @type {PageCtx} */ ctx,
  /** @type {IndexResponse} */ index,
  /** @type {boolean} */ filtered,
) {
  const p = ctx.params;
  const fields = index.filters
    .map((f) => {
      const value = p.get(f.param) ?? '';
      if (f.type === 'choice') {
        const options = f.choices
          .map(
            (c) =>
              `<option value="${esc(c.value)}"${c.value === value ? ' selected' : ''}>${esc(c.label)} (${int(c.count)})</option>`,
          )
          .join('');
        return `<label class="filter">${esc(f.label)} <select data-param="${esc(f.param)}"><option value="">${f.param === 'signal' ? 'first signal' : 'all'}</option>${options}</select></label>`;
      }
      return `<label class="filter">${esc(f.label)} <input type="number" data-param="${esc(f.param)}" min="${num(f.min)}" max="${num(f.max)}" step="0.05" value="${esc(value)}"></label>`;
    })
    .join('');
  const clear = filtered
    ? ` <a id="clear-filters" href="${fileHref(ctx.root, ctx.path)}">clear filters and search</a>`
    : '';
  return `<form class="card tools" id="filters" autocomplete="off"><div class="row">${fields}</div>
    <div class="row"><label>Text <input type="search" id="text-search" data-param="text" maxlength="200" value="${esc(p.get('text') ?? '')}" placeholder="words in the records"></label>
    <label>Id <input type="search" id="find-id" maxlength="1000" placeholder="a record's id"></label>
    <span class="muted small">${plural(num(ctx.file.matched), 'record')} ${filtered ? `of ${int(ctx.file.total)} match` : 'in the file'} · index ${int(index.indexBytes / 1024)} KiB${isNum(index.seconds) ? `, built in ${fmt(index.seconds, 2)} s` : ''}</span>${clear}</div></form>`;
}

function pagerHtml(/** @type {PageCtx} */ ctx) {
  const offset = num(ctx.offset);
  const matched = num(ctx.file.matched ?? ctx.file.total);
  const go = (/** @type {number} */ to) => {
    const q = new URLSearchParams(ctx.params);
    q.set('offset', String(to));
    q.delete('id');
    return `#/file?${q.toString()}`;
  };
  const prev = Math.max(0, offset - PAGE);
  const next = offset + PAGE;
  const pages = Math.max(1, Math.ceil(matched / PAGE));
  const pageNo = Math.floor(offset / PAGE) + 1;
  return `<nav class="pager"><a ${offset > 0 ? `href="${go(prev)}"` : 'aria-disabled="true"'} class="prev">‹ previous</a>
    <span class="muted page-info">records ${matched ? offset + 1 : 0}–${Math.min(matched, offset + PAGE)} of ${int(matched)}</span>
    <a ${next < matched ? `href="${go(next)}"` : 'aria-disabled="true"'} class="next">next ›</a>
    <label class="muted small">page <input type="number" class="page-jump" min="1" max="${pages}" value="${pageNo}"> of ${int(pages)}</label></nav>`;
}

const recordLink = (/** @type {PageCtx} */ ctx, /** @type {number} */ index, /** @type {string} */ text) =>
  `<a href="${fileHref(ctx.root, ctx.path, `&offset=${num(index)}`)}">${esc(text)}</a>`;

// ---------- solution view (labels) ----------
/** @returns {RecordParts} */
function labelsView(/** @type {PageCtx} */ ctx, /** @type {LabelFileSummary | null} */ s) {
  const records = recordsOf(ctx, 'labels');
  const color = ctx.params.get('color') || 'q';
  // Label files joined with a judge's verdicts (chunks with `verdict`) can be coloured by the verdict too.
  const judged = records.some((r) => (r.chunks || []).some((c) => typeof c.verdict === 'string'));
  /** @type {Array<[string, string]>} */
  const choices = [['q', 'Q̂ (rollout value)']];
  if (judged) choices.push(['verdict', "judge's verdict"]);
  for (const x of s?.signals || []) choices.push([x, `${x} label`]);
  const options = choices
    .map(([v, t]) => `<option value="${esc(v)}"${v === color ? ' selected' : ''}>${esc(t)}</option>`)
    .join('');
  const summary = s
    ? `<div class="card summary" id="summary"><div class="row">
        ${kpi('solutions', int(s.solutions))}${kpi('chunks', int(s.chunks))}${kpi('rollouts', int(s.rollouts))}
        ${kpi('final answer correct', `${int(s.finalAnswerCorrect)} / ${int(s.solutions)}`)}
      </div>
      <table class="compact"><thead><tr><th>Signal</th><th class="num">positive chunks</th><th class="num">solutions with a first error</th></tr></thead><tbody>
      ${s.signals.map((x) => `<tr><td>${esc(x)}</td><td class="num">${pct(s.positiveShare[x])}</td><td class="num">${int(s.withFirstError[x] ?? 0)}</td></tr>`).join('')}
      </tbody></table></div>`
    : '';
  const legend =
    color === 'q'
      ? `<span><span class="swatch" data-css="background:${qColor(0)}"></span>Q̂ = 0</span><span><span class="swatch" data-css="background:${qColor(0.5)}"></span>0.5</span><span><span class="swatch" data-css="background:${qColor(1)}"></span>1 (every rollout from this prefix reached the gold answer)</span><span><span class="swatch" data-css="background:${qColor(null)}"></span>not estimated</span>`
      : `<span><span class="swatch pos-sw"></span>positive</span><span><span class="swatch neg-sw"></span>negative</span><span><span class="swatch" data-css="background:${qColor(null)}"></span>undetermined</span>`;
  const control = `<div class="row controls"><label>Colour chunks by <select id="color-by">${options}</select></label><div class="legend">${legend}</div><span class="muted">outlined: first error under ${esc(color === 'q' ? s?.signals?.[0] || 'the first signal' : color)}</span></div>`;
  const cards = records.map((r, i) => labelCard(r, indexAt(ctx, i), color)).join('');
  return [`${summary}${control}`, cards || '<p class="muted empty">This file has no records.</p>'];
}

// A soft (ms-soft) label is positive at the threshold its label run used (recorded in job.settings).
function softThresholdOf(/** @type {LabelRecord} */ rec) {
  const t = rec?.job?.settings?.softThreshold;
  return isNum(t) ? t : 0.5;
}

function labelValueClass(/** @type {LabelValue | null | undefined} */ v, softThreshold = 0.5) {
  if (v === true) return 'pos';
  if (v === false) return 'neg';
  if (isNum(v)) return v >= softThreshold - 1e-12 ? 'pos' : 'neg';
  return 'und';
}

function labelCard(/** @type {LabelRecord} */ rec, /** @type {number} */ index, /** @type {string} */ color) {
  // Keyed by signal name; read as a plain table (a file may name signals this version does not know).
  /** @type {Record<string, number | undefined>} */
  const firstError = rec.firstError || {};
  const signals = Object.keys(firstError);
  const feSignal = signals.includes(color) ? color : signals[0];
  const fe = feSignal ? firstError[feSignal] : -1;
  const firstErrors = signals
    .map(
      (s) =>
        `<span class="badge ${firstError[s] === -1 ? 'pos' : 'neg'}">${esc(s)}: ${firstError[s] === -1 ? 'no error' : `first error at chunk ${esc(firstError[s])}`}</span>`,
    )
    .join('');
  const chunks = (rec.chunks || [])
    .map((c, i) => {
      const labels = Object.entries(c.labels || {})
        .map(
          ([s, v]) =>
            `<span class="badge ${labelValueClass(v, softThresholdOf(rec))}">${esc(s)} ${esc(isNum(v) ? fmt(v, 2) : v === null || v === undefined ? '?' : v ? '+' : '−')}</span>`,
        )
        .join('');
      const style = color === 'q' ? `border-left-color:${qColor(c.q)};background:${qBackground(c.q)}` : '';
      /** @type {Record<string, LabelValue | null | undefined>} */
      const chunkLabels = c.labels || {};
      const cls =
        color === 'q'
          ? ''
          : color === 'verdict'
            ? own(VERDICT_CLASS, c.verdict, 'und')
            : labelValueClass(chunkLabels[color], softThresholdOf(rec));
      const verdict =
        typeof c.verdict === 'string'
          ? `<span class="badge ${own(VERDICT_CLASS, c.verdict)}">judge: ${esc(c.verdict)}${isNum(c.score) ? ` ${fmt(c.score, 2)}` : ''}</span>`
          : '';
      // `rollouts` is a count, or the rollouts themselves with `label --keep-rollouts`.
      const m = Array.isArray(c.rollouts) ? c.rollouts.length : c.rollouts;
      const reached =
        isNum(c.q) && m
          ? ` (${int(Math.round(c.q * m))} of ${int(m)} rollouts from this prefix reached the gold answer)`
          : '';
      return `<div class="chunk ${cls}${i === fe ? ' first-error' : ''}" data-q="${esc(c.q)}" data-css="${style}">
        <div class="text">${esc(c.text)}</div>
        <div class="meta">chunk ${i} · Q̂ ${isNum(c.q) ? fmt(c.q, 3) : 'not estimated'}${esc(reached)} ${labels}${verdict}${i === fe ? ' <b class="fe-mark">← first error</b>' : ''}</div>
        ${c.rationale ? `<details class="rationale"><summary>judge's rationale</summary><pre>${esc(c.rationale)}</pre></details>` : ''}
      </div>`;
    })
    .join('');
  return `<section class="card solution" data-id="${esc(rec.id)}" data-index="${index}">
    <h3>#${index} · ${esc(rec.id)} ${typeof rec.finalAnswerCorrect === 'boolean' ? `<span class="badge ${rec.finalAnswerCorrect ? 'pos' : 'neg'}">${rec.finalAnswerCorrect ? 'final answer correct' : 'final answer wrong'}</span>` : ''}</h3>
    <details><summary>problem${rec.answer !== undefined ? ` (gold answer ${esc(rec.answer)})` : ''}</summary><pre>${esc(rec.problem)}</pre></details>
    <div class="row">${firstErrors}<span class="muted">Q̂(empty prefix) ${fmt(rec.q0, 3)} · ${plural(rec.cost?.rollouts, 'rollout')}, ${int(rec.cost?.tokens)} tokens</span></div>
    <div class="chunks">${chunks}</div>
  </section>`;
}

// ---------- samples ----------
/** @returns {RecordParts} */
function samplesView(/** @type {PageCtx} */ ctx, /** @type {SampleFileSummary | null} */ s) {
  const summary = s
    ? `<div class="card summary" id="summary"><div class="row">${kpi('problems', int(s.problems))}${kpi('samples', int(s.samples))}${kpi('correct samples', `${int(s.correct)} (${pct(s.correct / Math.max(1, s.samples))})`)}${kpi('problems with a correct sample', `${int(s.solved)} (${pct(s.solved / Math.max(1, s.problems))})`)}</div></div>`
    : '';
  return [
    summary,
    recordsOf(ctx, 'samples')
      .map((r, i) => sampleCard(r, indexAt(ctx, i)))
      .join(''),
  ];
}

function sampleCard(/** @type {SampleRecord} */ rec, /** @type {number} */ index) {
  const samples = (rec.samples || [])
    .map((s, k) => {
      const chunks = (s.chunks || [{ text: s.text }])
        .map(
          (c) =>
            `<div class="chunk ${s.correct ? 'pos' : 'neg'}"><div class="text">${esc(typeof c === 'string' ? c : c.text)}</div></div>`,
        )
        .join('');
      return `<details class="sample"><summary>sample ${k} · answer ${esc(s.answer ?? 'none')} <span class="badge ${s.correct ? 'pos' : 'neg'}">${s.correct ? 'correct' : 'wrong'}</span> <span class="muted">${plural((s.chunks || []).length, 'chunk')}, ${int(s.tokens)} tokens</span></summary><div class="chunks">${chunks}</div></details>`;
    })
    .join('');
  const right = (rec.samples || []).filter((s) => s.correct).length;
  return `<section class="card" data-id="${esc(rec.id)}"><h3>#${index} · ${esc(rec.id)} <span class="muted">${right}/${(rec.samples || []).length} correct · gold ${esc(rec.gold ?? '?')}</span></h3>
    ${rec.question ? `<details><summary>problem</summary><pre>${esc(rec.question)}</pre></details>` : ''}${samples}</section>`;
}

// ---------- problems ----------
function problemsView(/** @type {ProblemRow[]} */ records) {
  const rows = records
    .map(
      (r) =>
        `<tr><td>${esc(r.id)}</td><td>${esc(r.question ?? r.problem)}</td><td>${esc(r.answer)}</td>${isNum(r.success_rate) ? `<td class="num">${pct(r.success_rate)}</td>` : '<td></td>'}</tr>`,
    )
    .join('');
  return `<table id="problems"><thead><tr><th>Id</th><th>Problem</th><th>Answer</th><th class="num">Policy success rate</th></tr></thead><tbody>${rows}</tbody></table>`;
}

// ---------- ProcessBench-format set ----------
/** @returns {string | RecordParts} */
function processBenchSetView(/** @type {PageCtx} */ ctx) {
  // A ProcessBench-format set is a JSON array of rows (paged here) or a JSONL file of them (paged by the server).
  const isJson = Array.isArray(ctx.data);
  const rows = isJson ? /** @type {ProcessBenchRow[]} */ (ctx.data) : recordsOf(ctx, 'processbench-set');
  const page = isJson ? rows.slice(ctx.offset, ctx.offset + PAGE) : rows;
  const total = isJson ? rows.length : ctx.file.total;
  const withError = rows.filter((r) => r.label >= 0).length;
  const cards = page
    .map((r) => {
      const steps = (r.steps || [])
        .map(
          (t, i) =>
            `<div class="chunk ${r.label < 0 || i < r.label ? 'pos' : i === r.label ? 'neg first-error' : 'und'}"><div class="text">${esc(t)}</div><div class="meta">step ${i}${i === r.label ? ' <b class="fe-mark">← first error (label)</b>' : ''}</div></div>`,
        )
        .join('');
      return `<section class="card pb-row" data-id="${esc(r.id)}"><h3>${esc(r.id)} <span class="badge ${r.label < 0 ? 'pos' : 'neg'}">${r.label < 0 ? 'no error' : `first error at step ${esc(r.label)}`}</span> <span class="muted">${esc(r.generator ?? '')}</span></h3>
        <details><summary>problem</summary><pre>${esc(r.problem)}</pre></details><div class="chunks">${steps}</div></section>`;
    })
    .join('');
  const where = isJson ? '' : ' (this page)';
  const summary = `<div class="card summary"><div class="row">${kpi('rows', int(total))}${kpi(`with an error${where}`, int(withError))}${kpi(`without${where}`, int(rows.length - withError))}</div></div>`;
  if (!isJson) return [summary, cards];
  const pager = pagerHtml({ ...ctx, file: { ...ctx.file, matched: total, total } });
  return `${summary}${pager}${cards}${pager}`;
}

// ---------- search view ----------
/**
 * The colour of each trace status. Which statuses exist and what each means come from the code
 * (`TraceStatus` and `TRACE_STATUS_LEGEND`, served by GET /api/legend); a status added there
 * without a colour here fails the typecheck.
 * @type {Readonly<Record<TraceStatus, string>>}
 */
const STATUS_COLOR = {
  accepted: '#1f8a4c',
  rejected: '#b3261e',
  fallback: '#c77800',
  pruned: '#9a9a9a',
  backtracked: '#7b4fc9',
  finished: '#5a7bd3',
};
/** What each trace status means, as GET /api/legend gives it (empty when the page has no search). */
/** @typedef {Partial<LegendResponse['traceStatus']>} StatusLegend */
/** The tree of one search card: its attempts, backtracks and the attempts on the final path. */
/** @typedef {{ trace: TraceNode[], backtracks: Backtrack[], path: Set<number | undefined> }} TreeData */
/** Trace data of the search cards on the page, by card index (drawn after the HTML is in place). */
/** @type {Map<number, TreeData>} */
const treeData = new Map();

/** @returns {RecordParts} */
function searchView(
  /** @type {PageCtx} */ ctx,
  /** @type {SearchFileSummary | null} */ s,
  /** @type {StatusLegend} */ statuses,
) {
  treeData.clear();
  const summary = s
    ? `<div class="card summary" id="summary"><div class="row">
        ${kpi('strategy', esc(s.strategies.join(', ') || '?'))}
        ${kpi('problems', int(s.problems))}
        ${kpi('accuracy', s.accuracy === null ? 'not checked' : `${pct(s.accuracy)} <small class="muted">(${int(s.correct)}/${int(s.checked)})</small>`)}
        ${kpi('policy tokens / problem', int(s.perProblem.policyTokens))}
        ${kpi('judge tokens / problem', int(s.perProblem.judgeTokens))}
        ${kpi('attempts', int(s.attempts))}
        ${kpi('rejected', int(s.rejected))}
        ${kpi('backtracks', int(s.backtracks))}
      </div>
      ${s.withBacktracks.length ? `<p>Problems where the search backtracked: ${s.withBacktracks.map((i) => recordLink(ctx, i, `#${i}`)).join(' ')}</p>` : ''}
      ${
        s.withRejections.length
          ? `<p>Problems with rejected attempts: ${s.withRejections
              .slice(0, 30)
              .map((i) => recordLink(ctx, i, `#${i}`))
              .join(' ')}${s.withRejections.length > 30 ? ' …' : ''}</p>`
          : ''
      }
    </div>`
    : '';
  const compare = ctx.data
    ? ''
    : `<p><a id="compare-this" href="#/compare?aroot=${encodeURIComponent(ctx.root)}&apath=${encodeURIComponent(ctx.path)}">Compare with another run over the same problems</a></p>`;
  return [
    summary + compare,
    recordsOf(ctx, 'search')
      .map((r, i) => searchCard(r, indexAt(ctx, i), i, statuses))
      .join(''),
  ];
}

function attemptsText(/** @type {SearchChunk} */ c, /** @type {TraceStatus | undefined} */ status) {
  if (status === 'fallback')
    return `${plural(c.attempts, 'attempt')}, all rejected: the best-scored one was kept (fallback)`;
  if (c.attempts > 1) return `${plural(c.attempts, 'attempt')} (${int(c.attempts - 1)} thrown away)`;
  return plural(c.attempts, 'attempt');
}

/** @type {Readonly<Record<Verdict, string>>} */
const VERDICT_MARK = { positive: '✓', negative: '✗', neutral: '?' };

/** One attempt the search threw away, shown in place (text, verdict, score, the judge's reasoning). */
function rejectedAttempt(/** @type {TraceNode} */ n) {
  return `<div class="chunk rejected-attempt" data-node="${esc(n.id)}"><div class="meta"><span class="badge neg">rejected</span> attempt ${esc(n.id)}${n.verdict ? ` · judge: ${esc(n.verdict)}` : ''}${isNum(n.score) ? ` · score ${fmt(n.score, 2)}` : ''}</div><div class="text">${esc(n.text)}</div>
    ${n.rationale ? `<details class="rationale"><summary>judge's rationale</summary><pre>${esc(n.rationale)}</pre></details>` : ''}</div>`;
}

function searchCard(
  /** @type {SearchCardRecord} */ rec,
  /** @type {number} */ index,
  /** @type {number} */ slot,
  /** @type {StatusLegend} */ statuses,
) {
  const nodeStatus = new Map((rec.trace || []).map((n) => [n.id, n.status]));
  const byId = new Map((rec.trace || []).map((n) => [n.id, n]));
  // Attempts rejected at a kept chunk's position from the same prefix: shown above the kept one.
  const rejectedBefore = (/** @type {SearchChunk} */ c) => {
    const kept = c.node === undefined ? undefined : byId.get(c.node);
    return (rec.trace || []).filter(
      (n) =>
        n.status === 'rejected' &&
        (kept ? n.parent === kept.parent && n.depth === kept.depth : n.depth === c.index),
    );
  };
  const chunks = (rec.chunks || [])
    .map((c) => {
      const thrown = rejectedBefore(c);
      return `${thrown.length ? `<div class="rejected-attempts" data-chunk="${esc(c.index)}">${thrown.map(rejectedAttempt).join('')}</div>` : ''}<div class="chunk kept ${own(VERDICT_CLASS, c.verdict)}"><div class="text">${esc(c.text)}</div>
      <div class="meta">chunk ${esc(c.index)} · ${esc(c.verdict ?? 'not judged')}${isNum(c.score) ? ` · score ${fmt(c.score, 2)}` : ''} · ${attemptsText(c, c.node === undefined ? undefined : nodeStatus.get(c.node))}</div>
      ${c.rationale ? `<details class="rationale"><summary>judge's rationale</summary><pre>${esc(c.rationale)}</pre></details>` : ''}</div>`;
    })
    .join('');
  const cost = rec.cost || {};
  const trace = rec.trace || [];
  const rejected = trace.filter((n) => n.status === 'rejected').length;
  const stats = Object.entries(rec.stats || {})
    .map(([k, v]) => `${esc(k)} ${esc(v)}`)
    .join(' · ');
  if (trace.length)
    treeData.set(slot, {
      trace,
      backtracks: rec.backtracks || [],
      path: new Set((rec.chunks || []).map((c) => c.node)),
    });
  return `<section class="card search" data-id="${esc(rec.id)}" data-index="${index}">
    <h3>#${index} · ${esc(rec.id)} · ${esc(rec.strategy)} <span class="badge ${rec.correct ? 'pos' : rec.correct === false ? 'neg' : ''}">${rec.correct ? 'correct' : rec.correct === false ? 'wrong' : 'unchecked'}</span></h3>
    ${rec.question ? `<details class="question" open><summary>question</summary><pre>${esc(rec.question)}</pre></details>` : '<p class="muted small question">The question is not in this record (searched by an older stepwise).</p>'}
    <div class="row muted">answer ${esc(rec.answer ?? 'none')} (gold ${esc(rec.gold ?? '?')}) · policy ${plural(cost.policy?.calls, 'call')}, ${int((cost.policy?.promptTokens ?? 0) + (cost.policy?.completionTokens ?? 0))} tokens · judge ${plural(cost.judge?.calls, 'call')}, ${int((cost.judge?.promptTokens ?? 0) + (cost.judge?.completionTokens ?? 0))} tokens · ${plural(rejected, 'rejected attempt')} · ${plural((rec.backtracks || []).length, 'backtrack')}</div>
    ${stats ? `<div class="muted small">${stats}</div>` : ''}
    <h4>Final solution${rejected ? ' <span class="muted small">(with the attempts the judge rejected at each chunk, in red, above the one kept)</span>' : ''}</h4>
    <div class="chunks">${chunks || '<p class="muted">no chunks</p>'}</div>
    ${trace.length ? `<h4>Search tree <span class="muted small">(${plural(trace.length, 'attempt')}; left: the problem${trace.every((n) => n.parent === null) ? ', then one node per whole solution' : ', then one column per chunk position'}; click a node for its text)</span></h4><div class="legend">${statusLegend(statuses)}<span><svg width="26" height="8" aria-hidden="true"><path d="M1,4 H25" stroke="#7b4fc9" stroke-dasharray="4 3"/></svg> backtrack</span><span><span class="swatch ring"></span>on the final path</span></div><div class="tree" data-slot="${slot}"></div><div class="node-detail muted small">Click a node.</div>` : '<p class="muted small">No attempt tree in this record (searched with --no-trace).</p>'}
  </section>`;
}

/** One swatch per trace status the code defines, in its order, with its meaning as the tooltip. */
function statusLegend(/** @type {StatusLegend} */ statuses) {
  return Object.entries(statuses)
    .map(
      ([k, meaning]) =>
        `<span class="status-key" data-status="${esc(k)}" title="${esc(meaning)}"><span class="swatch" data-css="background:${own(STATUS_COLOR, k, '#888')}"></span>${esc(k)}</span>`,
    )
    .join('');
}

/**
 * Lay a trace out as a layered tree: one row per level (parent chain), the kept child first so
 * the final path runs straight down the left, other attempts packed to its right.
 */
function layoutTree(/** @type {TraceNode[]} */ trace, /** @type {Set<number | undefined>} */ onPath) {
  const byId = new Map(trace.map((n) => [n.id, n]));
  /** @type {Map<number, TraceNode[]>} */
  const children = new Map();
  for (const n of trace) {
    const p = n.parent ?? -1;
    const kids = children.get(p);
    if (kids) kids.push(n);
    else children.set(p, [n]);
  }
  for (const kids of children.values())
    kids.sort((a, b) => Number(onPath.has(b.id)) - Number(onPath.has(a.id)) || a.id - b.id);
  /** @type {Map<number, { x: number, y: number }>} */
  const pos = new Map();
  /** @type {number[]} */
  const nextFree = [];
  const visit = (/** @type {TraceNode} */ node, /** @type {number} */ level, /** @type {number} */ minX) => {
    // A crafted trace may repeat an id or loop (a node its own ancestor): each id is placed once.
    if (pos.has(node.id)) return;
    const x = Math.max(minX, nextFree[level] ?? 0);
    nextFree[level] = x + 1;
    pos.set(node.id, { x, y: level });
    for (const k of children.get(node.id) || []) visit(k, level + 1, x);
  };
  for (const top of children.get(-1) || []) visit(top, 1, 0);
  // Nodes whose parent is missing from the trace still get a place.
  for (const n of trace) if (!pos.has(n.id)) visit(n, 1, 0);
  return {
    pos,
    byId,
    levels: nextFree.length,
    width: Math.max(1, ...nextFree.filter((v) => v !== undefined)),
  };
}

/** The text beside a tree node: verdict mark and score (and, for whole solutions, name, status and answer). */
function nodeLabel(
  /** @type {TraceNode} */ n,
  /** @type {number} */ x,
  /** @type {number} */ y,
  /** @type {boolean} */ whole,
) {
  const mark = own(VERDICT_MARK, n.verdict);
  const score = isNum(n.score) ? fmt(n.score, 2) : '';
  if (whole) {
    const parts = [n.label ? esc(n.label) : `attempt ${esc(n.id)}`, esc(n.status)];
    if (mark || score) parts.push(`${mark}${mark && score ? ' ' : ''}${score ? `score ${score}` : ''}`);
    if (n.answer !== undefined) parts.push(`answer ${esc(n.answer ?? 'none')}`);
    return `<text class="node-label" x="${x + 12}" y="${y + 4}">${parts.join(' · ')}</text>`;
  }
  const text = `${mark}${score}` || esc(n.status);
  return `<text class="node-label ${own(VERDICT_CLASS, n.verdict, 'und')}" x="${x}" y="${y + 19}" text-anchor="middle">${text}</text>`;
}

function drawTrees(/** @type {StatusLegend} */ statuses) {
  for (const holder of document.querySelectorAll('.tree[data-slot]')) {
    if (!(holder instanceof HTMLElement)) continue;
    const data = treeData.get(Number(holder.dataset.slot));
    if (!data) continue;
    const { trace, backtracks, path } = data;
    const { pos, levels, width } = layoutTree(trace, path);
    // Levels run left to right (the problem, then chunk 0, 1, …); attempts at one level stack downwards.
    const whole = trace.every((n) => n.parent === null || n.parent === undefined);
    // Every node says what the judge made of it (verdict mark and score) next to its dot; whole
    // solutions (best-of-N, majority) also their name and answer.
    const dx = whole ? 34 : 52;
    const dy = whole ? 24 : 30;
    // A place in the tree: y = level (left to right), x = row (attempts stack downwards).
    const X = (/** @type {{ y: number }} */ p) => 20 + p.y * dx;
    const Y = (/** @type {{ x: number }} */ p) => 34 + p.x * dy;
    const root = { x: 0, y: 0 };
    const w = 20 + Math.max(1, levels - 1) * dx + (whole ? 330 : 60);
    const h = 34 + (width - 1) * dy + 20;
    let svg = `<svg width="${w}" height="${h}" role="img" aria-label="search tree of ${trace.length} attempts"><rect x="${X(root) - 7}" y="${Y(root) - 7}" width="14" height="14" fill="#444" class="root"><title>the problem</title></rect>`;
    if (whole) svg += `<text x="${X({ y: 1 }) + 12}" y="12" class="level">whole solutions</text>`;
    else
      for (let l = 1; l < levels; l++) {
        if (levels > 12 && l % 5 !== 0 && l !== 1) continue;
        svg += `<text x="${X({ y: l })}" y="12" text-anchor="middle" class="level">${l - 1}</text>`;
      }
    for (const n of trace) {
      const p = pos.get(n.id);
      if (!p) continue; // layoutTree places every node; a place is still looked up, not assumed
      const parent = (n.parent === null || n.parent === undefined ? undefined : pos.get(n.parent)) ?? root;
      const bend = parent.x === p.x ? `L${X(p)},${Y(p)}` : `H${X(p) - dx / 2} V${Y(p)} H${X(p)}`;
      svg += `<path d="M${X(parent)},${Y(parent)} ${bend}" stroke="${path.has(n.id) ? '#555' : '#cfcfca'}" stroke-width="${path.has(n.id) ? 2 : 1}" fill="none"/>`;
    }
    for (const b of backtracks) {
      const from = pos.get(b.from);
      const to = b.to === null || b.to === undefined ? root : pos.get(b.to);
      if (!from || !to) continue;
      svg += `<path class="backtrack" d="M${X(from)},${Y(from) - 6} C${X(from) - 8},${Y(from) - 30} ${X(to) + 8},${Y(to) - 30} ${X(to)},${Y(to) - 7}" stroke="#7b4fc9" stroke-width="1.5" stroke-dasharray="4 3" fill="none" marker-end="url(#arrow)"><title>backtrack from attempt ${esc(b.from)} to ${b.to === null ? 'the problem' : `attempt ${esc(b.to)}`}</title></path>`;
    }
    trace.forEach((n, at) => {
      const p = pos.get(n.id);
      if (!p) return;
      const label = `attempt ${n.id}${n.label ? ` (${n.label})` : ''} · chunk ${n.depth} · ${n.status}${n.verdict ? ` · ${n.verdict}` : ''}${isNum(n.score) ? ` · score ${n.score.toFixed(2)}` : ''}${n.final ? ' · ends the solution' : ''}\n${n.text}`;
      svg += `<g class="node" data-status="${esc(n.status)}" data-id="${esc(n.id)}" data-at="${at}" tabindex="0"><circle cx="${X(p)}" cy="${Y(p)}" r="${n.final ? 8 : 6}" fill="${own(STATUS_COLOR, n.status, '#888')}" stroke="${path.has(n.id) ? '#111' : '#fff'}" stroke-width="${path.has(n.id) ? 2 : 1}"><title>${esc(label)}</title></circle>${nodeLabel(n, X(p), Y(p), whole)}</g>`;
    });
    svg = svg
      .replace('<svg ', '<svg ')
      .replace(
        /(<svg [^>]*>)/,
        '$1<defs><marker id="arrow" viewBox="0 0 8 8" refX="7" refY="4" markerWidth="7" markerHeight="7" orient="auto"><path d="M0,0 L8,4 L0,8 z" fill="#7b4fc9"/></marker></defs>',
      );
    setHtml(holder, `${svg}</svg>`);
    const detail = holder.nextElementSibling;
    const show = (/** @type {Element} */ g) => {
      const n = trace[Number(g.getAttribute('data-at'))];
      if (!n || !detail) return;
      detail.classList.remove('muted');
      setHtml(
        detail,
        `<b>attempt ${esc(n.id)}</b>${n.label ? ` (${esc(n.label)})` : ''} · chunk ${esc(n.depth)} · <span class="badge" data-css="border-color:${own(STATUS_COLOR, n.status, '#888')}">${esc(n.status)}</span> ${esc(own(statuses, n.status))}${n.verdict ? ` · judge: ${esc(n.verdict)}` : ''}${isNum(n.score) ? ` · score ${fmt(n.score, 2)}` : ''}${n.answer !== undefined ? ` · answer ${esc(n.answer ?? 'none')}` : ''}<pre>${esc(n.text)}</pre>${n.rationale ? `<details class="rationale" open><summary>judge's rationale</summary><pre>${esc(n.rationale)}</pre></details>` : ''}`,
      );
    };
    const nodeOf = (/** @type {Event} */ e) =>
      e.target instanceof Element ? e.target.closest('g.node') : null;
    holder.addEventListener('click', (e) => {
      const g = nodeOf(e);
      if (g) show(g);
    });
    holder.addEventListener('keydown', (e) => {
      const g = nodeOf(e);
      if (g && (e.key === 'Enter' || e.key === ' ')) show(g);
    });
  }
}

// ---------- ProcessBench ----------
async function processBenchView(
  /** @type {ProcessBenchReport} */ report,
  /** @type {RootRef} */ root,
  /** @type {string} */ reportPath,
) {
  const subsets = Object.entries(report.subsets || {});
  const table = `<table id="pb-table"><thead><tr><th>Subset</th><th class="num">samples</th><th class="num">error acc</th><th class="num">correct acc</th><th class="num">F1</th></tr></thead><tbody>
    ${subsets.map(([name, s]) => `<tr><td>${esc(name)}</td><td class="num">${int(s.n)}</td><td class="num">${fmt(s.error_acc)}</td><td class="num">${fmt(s.correct_acc)}</td><td class="num f1">${fmt(s.f1)}</td></tr>`).join('')}
    <tr class="avg"><th>average F1</th><td></td><td></td><td></td><th class="num">${fmt(report.average_f1)}</th></tr></tbody></table>
    <p class="muted small">error acc: share of samples with an error whose first error the judge found exactly; correct acc: share of error-free samples the judge called error-free; F1: their harmonic mean (ProcessBench's metric, in %).</p>`;
  const view = mustGet('pb-view');
  /** @type {Partial<ProcessBenchReport['threshold']>} */
  const th = report.threshold || {};
  setHtml(
    view,
    `<div class="card"><div class="row">${kpi('judge', esc(report.judge))}
      ${kpi('average F1', fmt(report.average_f1))}
      ${kpi('samples', int(report.samples))}
      ${kpi('threshold', `${esc(th.mode)}${isNum(th.value) ? ` ${fmt(th.value, 3)}` : ''}${th.chosenOn ? ` <small class="muted">(chosen on ${esc(th.chosenOn)})</small>` : ''}`)}
      ${kpi('judge calls', int(report.cost?.judge?.calls))}
      ${kpi('judge tokens', int((report.cost?.judge?.promptTokens ?? 0) + (report.cost?.judge?.completionTokens ?? 0)))}
      ${kpi('format failures', `${int(report.formatFailures)} <small class="muted">(${pct(report.formatFailureRate)})</small>`)}
      ${report.abstained ? kpi('abstained', int(report.abstained)) : ''}</div></div>
    <div class="side-by-side"><div><h2>This run</h2>${table}</div>${publishedTable((await legend()).processbenchPublished, report)}</div>
    <h2>Predicted vs true first error</h2><div id="pb-chart" class="muted">Loading predictions…</div>`,
  );
  const chart = mustGet('pb-chart');
  const predPath =
    dirOf(reportPath) +
    String(report.predictions || reportPath.replace(/\.json$/, '.predictions.jsonl'))
      .split('/')
      .pop();
  try {
    const { summary } = await getSummary(root, predPath);
    if (summary?.kind !== 'predictions') throw new Error(`${predPath} is not a predictions file`);
    chart.outerHTML = `<div id="pb-chart">${confusionChart(summary.cells)}<p><a id="pb-predictions" href="${fileHref(root, predPath)}">every prediction (${int(summary.samples)})</a></p></div>`;
    paint(view);
  } catch (e) {
    if (e instanceof Stale) throw e;
    chart.outerHTML = `<p id="pb-chart" class="muted">The chart needs the predictions file ${esc(predPath)} next to the report, in a served folder (${esc(e instanceof Error ? e.message : e)}).</p>`;
  }
}

/** @type {Readonly<Record<string, string>>} */
const PREDICTION_CLASS_BADGE = { exact: 'pos', early: 'neg', late: 'neg', missed: 'neg', none: 'und' };
/** Where a predicted first error lies against the true one (the server's filter uses the same words). */
function predictionClass(/** @type {unknown} */ label, /** @type {unknown} */ prediction) {
  if (!isNum(label)) return 'none';
  if (!isNum(prediction)) return 'none';
  if (prediction === label) return 'exact';
  if (prediction < 0) return 'missed';
  return label < 0 || prediction < label ? 'early' : 'late';
}

/**
 * Published average F1 of real models, beside this run's table and never ranked with it: their
 * numbers are over the four full subsets, and a simulated run's F1 describes the simulator.
 */
function publishedTable(
  /** @type {LegendResponse['processbenchPublished']} */ published,
  /** @type {ProcessBenchReport} */ report,
) {
  const rows = (published || [])
    .map(
      (p) =>
        `<tr><td>${esc(p.model)}</td><td>${esc(p.kind)}</td><td class="num">${fmt(p.averageF1)}</td><td class="small muted">${esc(p.note ?? '')}</td></tr>`,
    )
    .join('');
  const note = report.simulated
    ? 'This run is simulated: its F1 describes the simulator and is not compared with these.'
    : 'Published numbers are over all four ProcessBench subsets at full size; a run on part of them is not comparable.';
  return `<aside id="pb-published"><h2>Published results</h2><table class="compact"><thead><tr><th>Model</th><th>Kind</th><th class="num">average F1</th><th></th></tr></thead><tbody>${rows}</tbody></table><p class="muted small">${esc(note)} Source: docs/METHODS.md §4.</p></aside>`;
}

/** @returns {RecordParts} */
function predictionsView(/** @type {PageCtx} */ ctx, /** @type {PredictionFileSummary | null} */ s) {
  const rows = recordsOf(ctx, 'predictions')
    .map((r, i) => {
      const cls = predictionClass(r.label, r.prediction);
      return `<tr data-index="${indexAt(ctx, i)}"><td>${esc(r.id)}</td><td>${esc(r.subset)}</td><td class="num">${esc(r.label)}</td><td class="num">${r.prediction === null ? '<span class="muted">none</span>' : esc(r.prediction)}</td><td><span class="badge ${own(PREDICTION_CLASS_BADGE, cls, 'und')}">${esc(cls)}</span></td><td class="num">${esc(r.steps)}</td><td class="small">${(r.scores || []).map((x) => fmt(x, 2)).join(' ')}</td></tr>`;
    })
    .join('');
  const subsets = s
    ? Object.entries(s.subsets)
        .map(([k, v]) => `${esc(k)} ${int(v.exact)}/${int(v.n)}`)
        .join(', ')
    : '';
  return [
    `${s ? `<div class="card summary" id="summary"><div class="row">${kpi('samples', int(s.samples))}${kpi('exact first error', `${int(s.exact)} (${pct(s.exact / Math.max(1, s.samples))})`)}${kpi('judge', esc(s.judge ?? '?'))}</div><p class="muted">by subset (exact / samples): ${subsets}</p></div><h2>Predicted vs true first error</h2><div id="pb-chart">${confusionChart(s.cells)}</div>` : ''}
    <h2>Predictions</h2>`,
    `<table id="predictions"><thead><tr><th>Id</th><th>Subset</th><th class="num">true</th><th class="num">predicted</th><th></th><th class="num">steps</th><th>chunk scores</th></tr></thead><tbody>${rows}</tbody></table>`,
  ];
}

/**
 * Predicted against true first error as a grid of cells: column = true (−1 = no error), row =
 * predicted (and a row for no usable prediction); each cell's shade and number = samples, the
 * diagonal (exact) green. Cells are large enough to read their counts.
 */
function confusionChart(/** @type {PredictionFileSummary['cells']} */ cells) {
  const ok = (cells || []).filter(
    (c) => Array.isArray(c) && isNum(c[0]) && isNum(c[2]) && (c[1] === null || isNum(c[1])),
  );
  if (!ok.length) return '<p class="muted">No labelled predictions.</p>';
  const maxSeen = Math.max(0, ...ok.flatMap(([t, p]) => [t, p ?? -1]));
  const cap = Math.min(20, Math.max(4, maxSeen));
  const bucket = (/** @type {number} */ v) => Math.max(-1, Math.min(v, cap));
  /** @type {Map<string, number>} */
  const counts = new Map();
  /** @type {number[]} */
  const perTrue = [];
  for (const [t, p, n] of ok) {
    const k = `${bucket(t)},${p === null ? 'none' : bucket(p)}`;
    counts.set(k, (counts.get(k) || 0) + n);
    perTrue[bucket(t) + 1] = (perTrue[bucket(t) + 1] || 0) + n;
  }
  const max = Math.max(1, ...counts.values());
  const cols = cap + 2;
  const rowsN = cap + 3; // −1 … cap, and "none"
  const cell = Math.max(30, Math.min(48, Math.floor(620 / cols)));
  const padL = 92;
  const padT = 14;
  const padB = 58;
  const W = padL + cols * cell + 24;
  const H = padT + rowsN * cell + padB;
  const x = (/** @type {number} */ t) => padL + (t + 1) * cell;
  const yOf = (/** @type {number | 'none'} */ p) => padT + (p === 'none' ? rowsN - 1 : cap - p) * cell;
  const label = (/** @type {number} */ v) => (v === cap && maxSeen > cap ? `${cap}+` : String(v));
  let svg = `<svg width="${W}" height="${H}" role="img" aria-label="predicted versus true first error" class="confusion">`;
  for (let t = -1; t <= cap; t++) {
    svg += `<text x="${x(t) + cell / 2}" y="${padT + rowsN * cell + 18}" text-anchor="middle">${label(t)}</text>`;
    svg += `<text x="${x(t) + cell / 2}" y="${padT + rowsN * cell + 32}" text-anchor="middle" class="small-label">${int(perTrue[t + 1] || 0)}</text>`;
  }
  for (let p = -1; p <= cap; p++)
    svg += `<text x="${padL - 8}" y="${yOf(p) + cell / 2 + 4}" text-anchor="end">${label(p)}</text>`;
  svg += `<text x="${padL - 8}" y="${yOf('none') + cell / 2 + 4}" text-anchor="end">none</text>`;
  for (let t = -1; t <= cap; t++)
    for (const p of [...Array.from({ length: cap + 2 }, (_, k) => k - 1), /** @type {'none'} */ ('none')]) {
      const c = counts.get(`${t},${p}`) || 0;
      const exact = p === t;
      const shade = c ? 0.15 + 0.85 * Math.sqrt(c / max) : 0;
      svg += `<rect class="cell ${c ? (exact ? 'exact' : 'miss') : 'empty'}" x="${x(t) + 1}" y="${yOf(p) + 1}" width="${cell - 2}" height="${cell - 2}" fill="${c ? (exact ? '#1f8a4c' : '#b3261e') : exact ? '#eef6f0' : '#fafaf8'}" fill-opacity="${c ? shade.toFixed(2) : 1}">${c ? `<title>true ${label(t)}, predicted ${p === 'none' ? 'none' : label(p)}: ${plural(c, 'sample')}</title>` : ''}</rect>`;
      if (c)
        svg += `<text x="${x(t) + cell / 2}" y="${yOf(p) + cell / 2 + 4}" text-anchor="middle" class="count${shade > 0.55 ? ' on-dark' : ''}">${int(c)}</text>`;
    }
  svg += `<text x="${padL + (cols * cell) / 2}" y="${H - 6}" text-anchor="middle" class="axis-title">true first error (−1 = no error; small numbers: samples per column)</text>`;
  svg += `<text x="14" y="${padT + (rowsN * cell) / 2}" text-anchor="middle" transform="rotate(-90 14 ${padT + (rowsN * cell) / 2})" class="axis-title">predicted first error</text>`;
  svg += '</svg>';
  return `<div class="legend"><span><span class="swatch" data-css="background:#1f8a4c"></span>exact (the diagonal)</span><span><span class="swatch" data-css="background:#b3261e"></span>wrong: above the diagonal late, below early; row "none": no usable prediction</span><span>shade and number: samples</span></div>${svg}`;
}

// ---------- accuracy vs compute ----------
const PALETTE = ['#2f5bd3', '#b3261e', '#1f8a4c', '#c77800', '#7b4fc9', '#00897b', '#6d4c41', '#d81b60'];

function logTicks(/** @type {number} */ lo, /** @type {number} */ hi) {
  const out = [];
  const wide = Math.log10(hi / lo) > 2.5;
  for (let e = Math.floor(Math.log10(lo)); e <= Math.ceil(Math.log10(hi)); e++) {
    for (const m of wide ? [1] : [1, 2, 5]) {
      const v = m * 10 ** e;
      if (v >= lo && v <= hi) out.push(v);
    }
  }
  return out;
}
const shortNum = (/** @type {number} */ v) =>
  v >= 1e6
    ? `${+(v / 1e6).toPrecision(3)}M`
    : v >= 1e3
      ? `${+(v / 1e3).toPrecision(3)}k`
      : `${+v.toPrecision(3)}`;

/**
 * A point of an accuracy-vs-compute chart: a `bench search` point, or the demo's summary of one.
 * `ci` is its accuracy's 95% interval (drawn as an error bar) when the point has one.
 * @typedef {{ strategy: string, knob?: string, budget?: number, accuracy: number, costPerProblem?: Partial<CostPerProblem>, ci?: [number, number] | null }} ChartPoint
 */

/** 95% Wilson score interval of k correct out of n (stays in [0, 1]); null without a count. */
function wilson95(/** @type {unknown} */ k, /** @type {unknown} */ n) {
  if (!isNum(k) || !isNum(n) || n <= 0 || k < 0 || k > n) return null;
  const z = 1.959963984540054;
  const p = k / n;
  const d = 1 + (z * z) / n;
  const c = (p + (z * z) / (2 * n)) / d;
  const h = (z * Math.sqrt((p * (1 - p)) / n + (z * z) / (4 * n * n))) / d;
  return /** @type {[number, number]} */ ([Math.max(0, c - h), Math.min(1, c + h)]);
}
/** An interval from the data, when it is two numbers in order. */
const intervalOf = (/** @type {unknown} */ v) =>
  Array.isArray(v) && v.length === 2 && isNum(v[0]) && isNum(v[1]) && v[0] <= v[1]
    ? /** @type {[number, number]} */ ([v[0], v[1]])
    : null;

/** Round ticks (1, 2, 5 × 10^k steps) covering [lo, hi], about `count` of them. */
function niceTicks(/** @type {number} */ lo, /** @type {number} */ hi, count = 5) {
  if (!(hi > lo)) return [lo];
  const raw = (hi - lo) / count;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((k) => k * mag).find((v) => v >= raw) ?? 10 * mag;
  const out = [];
  for (let v = Math.ceil(lo / step) * step; v <= hi + step * 1e-9; v += step)
    out.push(Number(v.toPrecision(12)));
  return out;
}
/** Tokens per problem of a point (policy + judge), 0 when unknown. */
const tokensPerProblem = (/** @type {ChartPoint} */ p) => {
  const t = p.costPerProblem?.totalTokens;
  return isNum(t) ? t : 0;
};

/** Accuracy against tokens per problem (log scale), one line per strategy, a point per budget. */
function accuracyChart(/** @type {ChartPoint[]} */ points) {
  const xOf = tokensPerProblem;
  /** @type {Map<string, ChartPoint[]>} */
  const by = new Map();
  for (const p of points) {
    const line = by.get(p.strategy);
    if (line) line.push(p);
    else by.set(p.strategy, [p]);
  }
  const W = 760;
  const H = 400;
  const m = { l: 60, r: 170, t: 16, b: 52 };
  const xs = points.map(xOf).filter((x) => x > 0);
  const lo = xs.length ? Math.min(...xs) / 1.5 : 1;
  const hi = xs.length ? Math.max(...xs) * 1.5 : 10;
  const lx = (/** @type {number} */ x) =>
    m.l +
    ((Math.log10(Math.max(x, lo)) - Math.log10(lo)) / (Math.log10(hi) - Math.log10(lo))) * (W - m.l - m.r);
  // The accuracy axis is zoomed to the points and their intervals (padded, within 0–100%).
  const ys = points.flatMap((p) => [p.accuracy, ...(p.ci ?? [])]).filter(isNum);
  let yLo = ys.length ? Math.min(...ys) : 0;
  let yHi = ys.length ? Math.max(...ys) : 1;
  const pad = Math.max(0.02, (yHi - yLo) * 0.08);
  yLo = Math.max(0, yLo - pad);
  yHi = Math.min(1, yHi + pad);
  const ly = (/** @type {number} */ y) => H - m.b - ((y - yLo) / (yHi - yLo)) * (H - m.t - m.b);
  const yTicks = niceTicks(yLo, yHi, 6);
  const tickDigits = yTicks.length > 1 && yTicks[1] - yTicks[0] < 0.01 ? 1 : 0;
  let svg = `<svg width="${W}" height="${H}" role="img" aria-label="accuracy versus compute" class="acc-chart" data-ylo="${yLo.toFixed(4)}" data-yhi="${yHi.toFixed(4)}">`;
  svg += `<rect x="${m.l}" y="${m.t}" width="${W - m.l - m.r}" height="${H - m.t - m.b}" fill="#fff" stroke="#e2e2e0"/>`;
  for (const t of yTicks)
    svg += `<line x1="${m.l}" x2="${W - m.r}" y1="${ly(t).toFixed(1)}" y2="${ly(t).toFixed(1)}" stroke="#eee"/><text x="${m.l - 8}" y="${(ly(t) + 4).toFixed(1)}" text-anchor="end">${(t * 100).toFixed(tickDigits)}%</text>`;
  for (const t of logTicks(lo, hi))
    svg += `<line x1="${lx(t)}" x2="${lx(t)}" y1="${m.t}" y2="${H - m.b}" stroke="#f0f0ee"/><text x="${lx(t)}" y="${H - m.b + 16}" text-anchor="middle">${shortNum(t)}</text>`;
  svg += `<text x="${m.l + (W - m.l - m.r) / 2}" y="${H - 8}" text-anchor="middle" class="axis-title">tokens per problem (policy + judge, log scale)</text>`;
  svg += `<text x="14" y="${m.t + (H - m.t - m.b) / 2}" text-anchor="middle" transform="rotate(-90 14 ${m.t + (H - m.t - m.b) / 2})" class="axis-title">accuracy (bars: 95% interval)</text>`;
  let i = 0;
  for (const [name, pts] of by) {
    const c = PALETTE[i % PALETTE.length];
    pts.sort((a, b) => xOf(a) - xOf(b));
    if (pts.length > 1)
      svg += `<polyline class="series" fill="none" stroke="${c}" stroke-width="2" points="${pts.map((p) => `${lx(xOf(p)).toFixed(1)},${ly(p.accuracy).toFixed(1)}`).join(' ')}"/>`;
    for (const p of pts) {
      const budget = p.budget !== undefined ? `${p.knob ?? 'budget'} = ${p.budget}` : '';
      if (p.ci) {
        const x = lx(xOf(p)).toFixed(1);
        const [a, b] = [ly(p.ci[0]).toFixed(1), ly(p.ci[1]).toFixed(1)];
        svg += `<path class="error-bar" d="M${x},${a} V${b} M${num(x) - 4},${a} h8 M${num(x) - 4},${b} h8" stroke="${c}" stroke-width="1.2" fill="none"><title>${esc(name)}${budget ? ` (${esc(budget)})` : ''}: 95% interval ${pct(p.ci[0])}–${pct(p.ci[1])}</title></path>`;
      }
      svg += `<circle class="point" cx="${lx(xOf(p)).toFixed(1)}" cy="${ly(p.accuracy).toFixed(1)}" r="4.5" fill="${c}"><title>${esc(name)}${budget ? ` (${esc(budget)})` : ''}: ${pct(p.accuracy)} at ${int(xOf(p))} tokens per problem</title></circle>`;
      if (p.budget !== undefined)
        svg += `<text x="${(lx(xOf(p)) + 6).toFixed(1)}" y="${(ly(p.accuracy) - 6).toFixed(1)}" fill="${c}" class="small-label">${esc(p.budget)}</text>`;
    }
    svg += `<rect x="${W - m.r + 14}" y="${m.t + 6 + i * 18}" width="12" height="12" fill="${c}"/><text x="${W - m.r + 32}" y="${m.t + 16 + i * 18}" class="legend-label">${esc(name)}</text>`;
    i++;
  }
  return `${svg}</svg>`;
}

/** The address of a bench report's SVG chart (drawn by the server from the report, as `bench search` writes it). */
const chartHref = (/** @type {RootRef} */ root, /** @type {string} */ path) =>
  `/api/chart.svg?root=${encodeURIComponent(root)}&path=${encodeURIComponent(path)}`;

function accuracyView(
  /** @type {BenchReport} */ data,
  /** @type {RootRef} */ root,
  /** @type {string} */ path,
) {
  /** @type {Array<ChartPoint & { correct?: number, checked?: number }>} */
  const points = (data.points || [])
    .filter((p) => isNum(p.accuracy))
    .map((p) => ({ ...p, ci: wilson95(p.correct, p.checked) }));
  if (!points.length) return '<p class="muted empty">This report has no points.</p>';
  const xOf = tokensPerProblem;
  const svg = accuracyChart(points);
  const rows = points
    .map(
      (p) =>
        `<tr><td>${esc(p.strategy)}</td><td class="num">${esc(p.budget !== undefined ? `${p.knob ?? ''} ${p.budget}` : '')}</td><td class="num">${pct(p.accuracy)}</td><td class="num ci">${p.ci ? `${pct(p.ci[0])}–${pct(p.ci[1])}` : '—'}</td><td class="num">${isNum(p.correct) ? `${int(p.correct)}/${int(p.checked)}` : ''}</td><td class="num">${int(p.costPerProblem?.policyTokens)}</td><td class="num">${int(p.costPerProblem?.judgeTokens)}</td><td class="num">${int(xOf(p))}</td><td class="num">${fmt(p.costPerProblem?.policyCalls)}</td><td class="num">${fmt(p.costPerProblem?.judgeCalls)}</td></tr>`,
    )
    .join('');
  return `<div class="card"><div class="row">${kpi('problems', int(data.problems))}${data.policy ? kpi('policy', esc(data.policy)) : ''}${data.judge ? kpi('judge', esc(data.judge)) : ''}${isNum(data.seconds) ? kpi('took', `${fmt(data.seconds)} s`) : ''}</div></div>
    <div id="acc-chart">${svg}</div><p class="muted small">Numbers next to points: the strategy's budget (N, attempts per chunk, or children per node). Bars: 95% Wilson interval of the accuracy over the problems. <a id="chart-svg" href="${chartHref(root, path)}" target="_blank" rel="noopener">the chart as SVG</a></p>
    <table id="acc-table"><thead><tr><th>Strategy</th><th class="num">Budget</th><th class="num">Accuracy</th><th class="num">95% interval</th><th class="num">Correct</th><th class="num">Policy tokens / problem</th><th class="num">Judge tokens / problem</th><th class="num">Total tokens / problem</th><th class="num">Policy calls / problem</th><th class="num">Judge calls / problem</th></tr></thead><tbody>${rows}</tbody></table>`;
}

// ---------- chunk-level judge evaluation ----------
function evalChunksView(
  /** @type {ChunkEvalReport} */ d,
  /** @type {RootRef} */ root,
  /** @type {string} */ reportPath,
) {
  const tp =
    isNum(d.recall_positive) && isNum(d.positives) ? Math.round(d.recall_positive * d.positives) : null;
  const tn =
    isNum(d.recall_negative) && isNum(d.negatives) ? Math.round(d.recall_negative * d.negatives) : null;
  const rowsPath =
    typeof d.chunkRows === 'string' && d.chunkRows !== ''
      ? dirOf(reportPath) + d.chunkRows.split('/').pop()
      : null;
  const cal = d.calibration;
  return `<div class="card"><div class="row">${kpi('judge', esc(d.judge))}${kpi('label signal', esc(d.signal))}${kpi('solutions', int(d.solutions))}${kpi('chunks compared', int(d.n))}</div></div>
    <div class="card"><div class="row">${kpi('accuracy', pct(d.accuracy))}${kpi('balanced accuracy', pct(d.balanced_accuracy))}${kpi('recall on positive chunks', pct(d.recall_positive))}${kpi('recall on negative chunks', pct(d.recall_negative))}${kpi('first error exact', pct(d.first_error_accuracy))}${kpi('abstained', int(d.abstained))}${kpi('format failures', int(d.formatFailures))}</div></div>
    <table id="eval-table" class="compact"><thead><tr><th>Rollout label</th><th class="num">chunks</th><th class="num">judge agrees</th><th class="num">judge disagrees or abstains</th></tr></thead><tbody>
      <tr><td><span class="badge pos">positive</span></td><td class="num">${int(d.positives)}</td><td class="num">${int(tp)}</td><td class="num">${tp === null ? '—' : int(d.positives - tp)}</td></tr>
      <tr><td><span class="badge neg">negative</span></td><td class="num">${int(d.negatives)}</td><td class="num">${int(tn)}</td><td class="num">${tn === null ? '—' : int(d.negatives - tn)}</td></tr></tbody></table>
    <p class="muted small">Judge cost: ${plural(d.cost?.judge?.calls, 'call')}, ${int((d.cost?.judge?.promptTokens ?? 0) + (d.cost?.judge?.completionTokens ?? 0))} tokens.</p>
    <h2>Calibration: judge score vs Q̂</h2>
    ${cal && Array.isArray(cal.bins) ? calibrationView(cal) : '<p class="muted" id="calibration">This report has no calibration (written by an older stepwise).</p>'}
    <h2>Per chunk</h2>
    ${rowsPath ? `<p><a id="chunk-rows" href="${fileHref(root, rowsPath)}">every chunk: the judge's verdict and score beside the rollout label and Q̂</a></p>` : '<p class="muted">No per-chunk rows next to this report (eval chunks writes them with --out).</p>'}`;
}

/**
 * Judge score (x, mean of the bin) against the rollout value Q̂ (y, mean of the bin): a judge whose
 * scores mean what Q̂ means sits on the diagonal. Circle area and number: chunks in the bin.
 */
function calibrationView(/** @type {Calibration} */ cal) {
  // Bins with chunks, a mean score and a mean Q̂: the ones drawn as circles.
  const bins = cal.bins.flatMap((b) =>
    isNum(b.n) && b.n > 0 && isNum(b.meanScore) && isNum(b.meanQ)
      ? [{ ...b, meanScore: b.meanScore, meanQ: b.meanQ }]
      : [],
  );
  if (!bins.length) return '<p class="muted" id="calibration">No chunk has both a judge score and a Q̂.</p>';
  const W = 440;
  const H = 400;
  const m = { l: 56, r: 20, t: 16, b: 82 };
  const w = W - m.l - m.r;
  const h = H - m.t - m.b;
  const X = (/** @type {number} */ v) => m.l + Math.max(0, Math.min(1, v)) * w;
  const Y = (/** @type {number} */ v) => m.t + (1 - Math.max(0, Math.min(1, v))) * h;
  const max = Math.max(1, ...bins.map((b) => b.n));
  let svg = `<svg width="${W}" height="${H}" role="img" aria-label="judge score versus rollout value" class="calibration">`;
  svg += `<rect x="${m.l}" y="${m.t}" width="${w}" height="${h}" fill="#fff" stroke="#e2e2e0"/>`;
  for (let t = 0; t <= 1.0001; t += 0.2) {
    svg += `<line x1="${m.l}" x2="${m.l + w}" y1="${Y(t)}" y2="${Y(t)}" stroke="#f0f0ee"/><text x="${m.l - 8}" y="${Y(t) + 4}" text-anchor="end">${t.toFixed(1)}</text>`;
    svg += `<text x="${X(t)}" y="${m.t + h + 16}" text-anchor="middle">${t.toFixed(1)}</text>`;
  }
  svg += `<line x1="${X(0)}" y1="${Y(0)}" x2="${X(1)}" y2="${Y(1)}" stroke="#c8c8c4" stroke-dasharray="3 3"/>`;
  // Counts per bin as bars under the plot: where the judge's scores fall.
  const barTop = m.t + h + 26;
  const barH = 26;
  for (const b of cal.bins) {
    if (!isNum(b.n) || b.n <= 0) continue;
    const bh = (barH * b.n) / max;
    svg += `<rect class="count-bar" x="${(X(b.lo) + 1).toFixed(1)}" y="${(barTop + barH - bh).toFixed(1)}" width="${Math.max(1, X(b.hi) - X(b.lo) - 2).toFixed(1)}" height="${bh.toFixed(1)}" fill="#b9c7ef"><title>${int(b.n)} chunks with a score in [${fmt(b.lo, 1)}, ${fmt(b.hi, 1)})</title></rect>`;
  }
  for (const b of bins) {
    const r = 5 + 11 * Math.sqrt(b.n / max);
    const gap = Math.abs(b.meanScore - b.meanQ);
    svg += `<circle class="bin" cx="${X(b.meanScore).toFixed(1)}" cy="${Y(b.meanQ).toFixed(1)}" r="${r.toFixed(1)}" fill="${gap <= 0.1 ? '#1f8a4c' : '#b3261e'}" fill-opacity="0.7"><title>judge score ${fmt(b.lo, 1)}–${fmt(b.hi, 1)}: ${plural(b.n, 'chunk')}, mean score ${fmt(b.meanScore, 2)}, mean Q̂ ${fmt(b.meanQ, 2)}</title></circle>`;
    svg += `<text x="${X(b.meanScore).toFixed(1)}" y="${(Y(b.meanQ) + 4).toFixed(1)}" text-anchor="middle" class="count">${int(b.n)}</text>`;
  }
  svg += `<text x="${m.l + w / 2}" y="${H - 6}" text-anchor="middle" class="axis-title">judge score (bars: chunks per bin)</text>`;
  svg += `<text x="14" y="${m.t + h / 2}" text-anchor="middle" transform="rotate(-90 14 ${m.t + h / 2})" class="axis-title">Q̂ (rollout value)</text>`;
  svg += '</svg>';
  const rows = cal.bins
    .filter((b) => isNum(b.n) && b.n > 0)
    .map(
      (b) =>
        `<tr><td>${fmt(b.lo, 1)}–${fmt(b.hi, 1)}</td><td class="num">${int(b.n)}</td><td class="num">${fmt(b.meanScore, 3)}</td><td class="num">${fmt(b.meanQ, 3)}</td><td class="num">${pct(b.positiveShare)}</td></tr>`,
    )
    .join('');
  return `<div id="calibration"><div class="legend"><span><span class="swatch pos-sw"></span>bin within 0.1 of the diagonal</span><span><span class="swatch neg-sw"></span>further</span><span>circle size and number: chunks; dashed: score = Q̂</span><span>${plural(num(cal.n), 'chunk')} with a score and a Q̂; mean |score − Q̂| ${fmt(cal.gap, 3)}</span></div>${svg}
    <table id="calibration-table" class="compact"><thead><tr><th>Judge score</th><th class="num">chunks</th><th class="num">mean score</th><th class="num">mean Q̂</th><th class="num">labelled positive</th></tr></thead><tbody>${rows}</tbody></table></div>`;
}

/** `eval chunks` per-chunk rows: the judge's verdict and score beside the rollout label and Q̂. */
/** @returns {RecordParts} */
function chunkJudgmentsView(/** @type {PageCtx} */ ctx, /** @type {ChunkJudgmentFileSummary | null} */ s) {
  const summary = s
    ? `<div class="card summary" id="summary"><div class="row">${kpi('chunks', int(s.chunks))}${kpi('solutions', int(s.solutions))}${kpi('judge agrees', int(s.agree))}${kpi('judge disagrees', int(s.disagree))}${kpi('judge positive, label negative', int(s.falsePositive))}${kpi('judge negative, label positive', int(s.falseNegative))}${kpi('abstained or not ruled', int(s.abstained))}${kpi('no label', int(s.unlabelled))}</div>
      ${s.disagreements.length ? `<p>Disagreements: ${s.disagreements.map((i) => recordLink(ctx, i, `#${i}`)).join(' ')}${s.disagree > s.disagreements.length ? ' …' : ''}</p>` : ''}</div>`
    : '';
  const label = (/** @type {unknown} */ l) =>
    l === true
      ? '<span class="badge pos">positive</span>'
      : l === false
        ? '<span class="badge neg">negative</span>'
        : '<span class="badge und">none</span>';
  const rows = recordsOf(ctx, 'chunk-judgments')
    .map((r, i) => {
      const verdict =
        typeof r.verdict === 'string'
          ? `<span class="badge ${own(VERDICT_CLASS, r.verdict, 'und')}">${esc(r.verdict)}</span>`
          : '<span class="muted">not judged</span>';
      const agree =
        r.agrees === true
          ? '<span class="badge pos">agrees</span>'
          : r.agrees === false
            ? '<span class="badge neg">disagrees</span>'
            : '<span class="badge und">not compared</span>';
      return `<tr class="chunk-row ${r.agrees === false ? 'disagree' : ''}" data-index="${indexAt(ctx, i)}"><td class="num">${int(indexAt(ctx, i))}</td><td>${esc(r.solution)}</td><td class="num">${esc(r.chunk)}</td><td><div class="chunk-text">${esc(r.text)}</div>${r.rationale ? `<details class="rationale"><summary>judge's rationale</summary><pre>${esc(r.rationale)}</pre></details>` : ''}</td><td>${label(r.label)}</td><td class="num q-cell" data-css="background:${qBackground(r.q)};color:${qColor(r.q)}">${isNum(r.q) ? fmt(r.q, 2) : '—'}</td><td>${verdict}</td><td class="num">${isNum(r.score) ? fmt(r.score, 2) : '—'}</td><td>${agree}</td></tr>`;
    })
    .join('');
  return [
    summary,
    `<table id="chunk-rows-table"><thead><tr><th class="num">#</th><th>Solution</th><th class="num">chunk</th><th>Text</th><th>Rollout label</th><th class="num">Q̂</th><th>Judge</th><th class="num">score</th><th></th></tr></thead><tbody>${rows}</tbody></table>`,
  ];
}

// ---------- select ----------
/** `stepwise select`: each problem's judge pick among its correct responses, beside the outcome-only pick. */
/** @returns {RecordParts} */
function selectionView(/** @type {PageCtx} */ ctx, /** @type {SelectionFileSummary | null} */ s) {
  const summary = s
    ? `<div class="card summary" id="summary"><div class="row">${kpi('problems', int(s.problems))}${kpi('with a pick', int(s.picked))}${kpi("judge's pick differs from the outcome-only pick", int(s.differ))}${kpi('correct responses judged', int(s.candidates))}${kpi('judge calls', int(s.judgeCalls))}${kpi('judge tokens', int(s.judgeTokens))}</div>
      <p class="muted small">The judge's pick: the correct response whose chunks have the highest mean judge score. The outcome-only pick: a correct response drawn at random (seeded), what selection by the final answer alone would keep.</p></div>`
    : '';
  return [
    summary,
    recordsOf(ctx, 'selection')
      .map((r, i) => selectionCard(r, indexAt(ctx, i)))
      .join(''),
  ];
}

function selectionCard(/** @type {SelectionRow} */ rec, /** @type {number} */ index) {
  const chosen = rec.chosen && typeof rec.chosen === 'object' ? rec.chosen : null;
  const outcome = rec.outcomeOnly && typeof rec.outcomeOnly === 'object' ? rec.outcomeOnly : null;
  const same = chosen && outcome && num(chosen.index) === num(outcome.index);
  const candidates = (Array.isArray(rec.candidates) ? rec.candidates : [])
    .map((c) => {
      const marks = `${chosen && num(c.index) === num(chosen.index) ? '<span class="badge pos">judge pick</span>' : ''}${outcome && num(c.index) === num(outcome.index) ? '<span class="badge">outcome-only pick</span>' : ''}`;
      const share = isNum(c.meanScore) ? Math.max(0, Math.min(1, c.meanScore)) : 0;
      return `<tr class="candidate"><td>response ${int(num(c.index))}</td><td class="num">${fmt(c.meanScore, 3)}</td><td><span class="progress"><span data-css="width:${(share * 100).toFixed(1)}%"></span></span></td><td>${marks}</td></tr>`;
    })
    .join('');
  return `<section class="card selection" data-id="${esc(rec.id)}" data-index="${index}">
    <h3>#${index} · ${esc(rec.id)} ${chosen ? (same ? '<span class="badge">same pick as outcome-only</span>' : '<span class="badge neu">judge picks another response</span>') : '<span class="badge neg">no correct response</span>'}</h3>
    <details><summary>problem</summary><pre>${esc(rec.question)}</pre></details>
    ${candidates ? `<table class="compact candidates"><thead><tr><th>Correct response</th><th class="num">mean judge score</th><th></th><th></th></tr></thead><tbody>${candidates}</tbody></table>` : '<p class="muted">No correct response to choose from.</p>'}
    ${chosen ? `<h4>Judge's pick: response ${int(num(chosen.index))} (mean score ${fmt(chosen.meanScore, 3)})</h4><pre class="pick">${esc(chosen.text)}</pre>` : ''}
    ${outcome && !same ? `<details class="outcome-pick"><summary>outcome-only pick: response ${int(num(outcome.index))}</summary><pre>${esc(outcome.text)}</pre></details>` : ''}
  </section>`;
}

// ---------- two runs side by side ----------
/** @returns {Promise<CompareResponse>} */
const getCompare = (/** @type {string} */ query) => api(`/api/compare?${query}`);

/** The four parameters that name the two files of a comparison, as an address query. */
const pairQuery = (/** @type {URLSearchParams} */ p) =>
  ['aroot', 'apath', 'broot', 'bpath'].map((k) => `${k}=${encodeURIComponent(p.get(k) ?? '')}`).join('&');

/** A paired difference in words: mean (B − A) and its 95% interval. */
function diffText(/** @type {PairedDifference} */ d, /** @type {(v: unknown) => string} */ show) {
  if (!isNum(d.mean)) return '—';
  const sign = (/** @type {number} */ v) => (v > 0 ? '+' : '');
  const ci =
    isNum(d.low) && isNum(d.high)
      ? ` <small class="muted">[95% ${sign(d.low)}${show(d.low)} to ${sign(d.high)}${show(d.high)}]</small>`
      : '';
  return `${sign(d.mean)}${show(d.mean)}${ci}`;
}

/**
 * Two search outputs over the same problems: pick them, then per problem each side's answer,
 * correctness, tokens and resets, and the paired difference of accuracy with its 95% interval.
 */
async function comparePage(/** @type {URLSearchParams} */ params) {
  const { files, roots } = await getFiles();
  const searches = files.filter((f) => f.kind === 'search' && f.path.endsWith('.jsonl'));
  const key = (/** @type {FileEntry} */ f) => `${f.root}:${f.path}`;
  const chosen = (/** @type {'a' | 'b'} */ side) =>
    `${params.get(`${side}root`) ?? ''}:${params.get(`${side}path`) ?? ''}`;
  const picker = (/** @type {'a' | 'b'} */ side) =>
    `<label>${side.toUpperCase()} <select id="compare-${side}"><option value="">choose a search output</option>${searches
      .map(
        (f) =>
          `<option value="${esc(key(f))}"${key(f) === chosen(side) ? ' selected' : ''}>${esc(servedName(f, roots))}</option>`,
      )
      .join('')}</select></label>`;
  const head = `<h1>Compare two runs</h1><form class="card tools" id="compare-form" autocomplete="off"><div class="row">${picker('a')}${picker('b')}<span class="muted small">Two search outputs over the same problems, paired by problem id.</span></div></form>`;
  if (!params.get('apath') || !params.get('bpath')) {
    setHtml(
      app,
      `${head}${searches.length < 2 ? '<p class="muted empty">The served folders hold fewer than two search outputs.</p>' : ''}`,
    );
    return;
  }
  const offset = Math.max(0, Math.floor(Number(params.get('offset') || 0)) || 0);
  const only = params.get('only') ?? '';
  const c = await getCompare(
    `${pairQuery(params)}&offset=${offset}&limit=${PAGE}${only ? `&only=${encodeURIComponent(only)}` : ''}`,
  );
  const name = (/** @type {CompareResponse['a']} */ m) =>
    `<a href="${fileHref(m.root, m.path)}">${esc(m.path)}</a>`;
  const strategyOf = (/** @type {'a' | 'b'} */ side) =>
    esc(c.rows.find((r) => r[side].strategy)?.[side].strategy ?? '');
  const accA = c.checked ? c.correctA / c.checked : null;
  const accB = c.checked ? c.correctB / c.checked : null;
  const sideCells = (/** @type {CompareSide} */ x) =>
    `<td>${esc(x.answer ?? 'none')}</td><td>${x.correct === null ? '<span class="badge und">unchecked</span>' : x.correct ? '<span class="badge pos">correct</span>' : '<span class="badge neg">wrong</span>'}</td><td class="num">${int(x.tokens)}</td><td class="num">${int(x.resets)}</td>`;
  const rows = c.rows
    .map((r) => {
      const differ = r.a.correct !== r.b.correct;
      const both =
        r.id === null
          ? ''
          : `<a class="both-traces" href="#/compare/problem?${pairQuery(params)}&id=${encodeURIComponent(r.id)}">both traces</a>`;
      return `<tr class="pair${differ ? ' differ' : ''}" data-id="${esc(r.id)}"><td>${esc(r.id)}<div class="muted small question">${esc(r.question ?? '')}</div></td>${sideCells(r.a)}${sideCells(r.b)}<td>${both}</td></tr>`;
    })
    .join('');
  const onlyChoices = [
    ['', 'every paired problem'],
    ['differ', 'correctness differs'],
    ['a', 'only A correct'],
    ['b', 'only B correct'],
    ['same', 'same correctness'],
  ]
    .map(([v, t]) => `<option value="${v}"${v === only ? ' selected' : ''}>${t}</option>`)
    .join('');
  const pq = new URLSearchParams(params);
  const go = (/** @type {number} */ to) => {
    pq.set('offset', String(to));
    return `#/compare?${pq.toString()}`;
  };
  const pager = `<nav class="pager"><a ${offset > 0 ? `href="${go(Math.max(0, offset - PAGE))}"` : 'aria-disabled="true"'} class="prev">‹ previous</a><span class="muted page-info">problems ${c.matched ? offset + 1 : 0}–${Math.min(c.matched, offset + PAGE)} of ${int(c.matched)}</span><a ${offset + PAGE < c.matched ? `href="${go(offset + PAGE)}"` : 'aria-disabled="true"'} class="next">next ›</a></nav>`;
  setHtml(
    app,
    `${head}${simulatedBanner(c.a.simulated || c.b.simulated)}
    <div class="card summary" id="compare-summary"><div class="row">
      ${kpi('A', `${name(c.a)} <small class="muted">${strategyOf('a')}</small>`)}${kpi('B', `${name(c.b)} <small class="muted">${strategyOf('b')}</small>`)}
      ${kpi('problems in both', int(c.paired))}${kpi('only in A / only in B', `${int(c.onlyA)} / ${int(c.onlyB)}`)}
    </div><div class="row">
      ${kpi('accuracy A', `${pct(accA)} <small class="muted">(${int(c.correctA)}/${int(c.checked)})</small>`)}
      ${kpi('accuracy B', `${pct(accB)} <small class="muted">(${int(c.correctB)}/${int(c.checked)})</small>`)}
      <span class="kpi" id="paired-difference"><span class="muted">B − A, paired over ${plural(c.accuracy.n, 'problem')}</span><b>${diffText(c.accuracy, (v) => pct(v))}</b></span>
      <span class="kpi" id="token-difference"><span class="muted">tokens per problem, B − A</span><b>${diffText(c.tokens, int)}</b></span>
    </div>
    <table class="compact" id="compare-table2x2"><thead><tr><th></th><th class="num">B correct</th><th class="num">B wrong</th></tr></thead><tbody>
      <tr><th>A correct</th><td class="num">${int(c.bothCorrect)}</td><td class="num">${int(c.onlyACorrect)}</td></tr>
      <tr><th>A wrong</th><td class="num">${int(c.onlyBCorrect)}</td><td class="num">${int(c.neitherCorrect)}</td></tr></tbody></table>
    <p class="muted small">The difference is the mean over problems of (B correct) − (A correct), with a 95% interval from the per-problem differences (t interval); only the discordant problems (${int(c.onlyACorrect + c.onlyBCorrect)}) move it.</p></div>
    <div class="row controls"><label>Show <select id="compare-only">${onlyChoices}</select></label></div>
    ${pager}<table id="compare-rows"><thead><tr><th>Problem</th><th>A answer</th><th>A</th><th class="num">A tokens</th><th class="num">A resets</th><th>B answer</th><th>B</th><th class="num">B tokens</th><th class="num">B resets</th><th></th></tr></thead><tbody>${rows}</tbody></table>${pager}`,
  );
}

/** One problem of a comparison: both searches' cards (final solution, rejected attempts, tree) side by side. */
async function comparePairPage(/** @type {URLSearchParams} */ params) {
  const id = params.get('id') ?? '';
  const [a, b, statuses] = await Promise.all([
    getFile(params.get('aroot') ?? '0', params.get('apath') ?? '', `&id=${encodeURIComponent(id)}&limit=1`),
    getFile(params.get('broot') ?? '0', params.get('bpath') ?? '', `&id=${encodeURIComponent(id)}&limit=1`),
    traceLegend(),
  ]);
  treeData.clear();
  const card = (/** @type {FileResponse} */ f, /** @type {number} */ slot) => {
    const rec = 'records' in f ? /** @type {SearchCardRecord | undefined} */ (f.records[0]) : undefined;
    return `<div class="side" data-side="${slot ? 'b' : 'a'}"><h2>${slot ? 'B' : 'A'}: <a href="${fileHref(f.root, f.path)}">${esc(f.path)}</a></h2>${rec ? searchCard(rec, 'records' in f ? f.offset : 0, slot, statuses) : '<p class="muted">not in this file</p>'}</div>`;
  };
  setHtml(
    app,
    `<h1>${esc(id)}: both runs</h1>${simulatedBanner(a.simulated || b.simulated)}<p><a id="back-to-compare" href="#/compare?${pairQuery(params)}">back to the comparison</a></p><div class="side-by-side pair-traces">${card(a, 0)}${card(b, 1)}</div>`,
  );
  drawTrees(statuses);
}

// ---------- demo report ----------
function demoView(
  /** @type {DemoReport} */ d,
  /** @type {RootRef} */ root,
  /** @type {string} */ reportPath,
) {
  const dir = dirOf(reportPath);
  const files = Object.entries(d.files || {})
    .map(([k, v]) => {
      const target = dir + String(v);
      // The chart `bench search` wrote beside its report is drawn again by the server from the report.
      const link = /\.(json|jsonl)$/.test(target)
        ? `<a href="${fileHref(root, target)}">${esc(v)}</a>`
        : /\.svg$/.test(target) && d.files?.accuracyVsCompute
          ? `<a class="svg-link" href="${chartHref(root, dir + String(d.files.accuracyVsCompute))}" target="_blank" rel="noopener">${esc(v)}</a>`
          : `${esc(v)}`;
      return `<li>${esc(k)}: ${link}</li>`;
    })
    .join('');
  const search = (d.search || [])
    .map(
      (s) =>
        `<tr><td>${esc(s.label ?? s.strategy)}</td><td class="num">${pct(s.accuracy)}</td><td class="num">${Array.isArray(s.ci95) ? `${pct(s.ci95[0])}–${pct(s.ci95[1])}` : ''}</td><td class="num">${int(s.tokensPerProblem)}</td><td class="num">${fmt(s.policyCallsPerProblem)}</td><td class="num">${fmt(s.judgeCallsPerProblem)}</td></tr>`,
    )
    .join('');
  // The sweep of `bench search` in the demo: several budgets per strategy, one line each.
  const curve = (Array.isArray(d.accuracyVsCompute) ? d.accuracyVsCompute : [])
    .filter((p) => p && typeof p === 'object' && isNum(p.accuracy))
    .map((p) => ({
      strategy: String(p.strategy),
      knob: p.knob,
      budget: p.budget,
      accuracy: p.accuracy,
      costPerProblem: { totalTokens: num(p.tokensPerProblem) },
      ci: intervalOf(p.ci95),
    }));
  const curveHtml = curve.length
    ? `<h2>Accuracy vs compute</h2><p class="muted small">From the demo's <code>bench search</code> sweep on the same problems: each strategy at several budgets (numbers next to the points: N, or attempts per chunk).${d.files?.accuracyVsCompute ? ` <a id="demo-curve-table" href="${fileHref(root, dir + String(d.files.accuracyVsCompute))}">every point with its cost</a>` : ''}</p><div id="demo-curve">${accuracyChart(curve)}</div>`
    : '';
  // The simulated world has its banner above; the tiny world says what its networks are and are not.
  const world =
    d.world === 'tiny'
      ? `<div class="banner tiny-banner" role="note"><b>Tiny world.</b> ${esc(d.notice)}</div>`
      : '';
  return `${world}<div class="card"><div class="row">${kpi('world', esc(d.world ?? (d.simulated === false ? 'real' : 'sim')))}${kpi('policy', esc(d.policy))}${kpi('judge', esc(d.judge))}${kpi('took', `${fmt(d.seconds)} s`)}</div></div>
    <table id="demo-table" class="compact"><tbody>
      ${
        d.sample
          ? `<tr><th>sample</th><td>${int(d.sample.problems)} problems × ${int(d.sample.samplesPerProblem)} samples: accuracy ${pct(d.sample.accuracy)}${Object.entries(
              d.sample.passAtK || {},
            )
              .map(([k, v]) => `, ${esc(k)} ${pct(v)}`)
              .join('')}</td></tr>`
          : ''
      }
      ${
        d.label
          ? `<tr><th>label</th><td>${int(d.label.solutions)} solutions, ${int(d.label.chunks)} chunks, M = ${int(d.label.rollouts)} rollouts per prefix; positive share ${Object.entries(
              d.label.positiveShare || {},
            )
              .map(([k, v]) => `${esc(k)} ${pct(v)}`)
              .join(', ')}</td></tr>`
          : ''
      }
      ${d.evalChunks ? `<tr><th>judge, chunk level</th><td>vs ${esc(d.evalChunks.signal)} labels: accuracy ${pct(d.evalChunks.accuracy)}, balanced ${pct(d.evalChunks.balancedAccuracy)}</td></tr>` : ''}
      ${d.processbench ? `<tr><th>judge, ProcessBench format</th><td>${int(d.processbench.rows)} rows: error acc ${fmt(d.processbench.errorAcc)}, correct acc ${fmt(d.processbench.correctAcc)}, F1 ${fmt(d.processbench.f1)}</td></tr>` : ''}
    </tbody></table>
    ${curveHtml}
    ${search ? `<h2>Search</h2><table id="demo-search"><thead><tr><th>Strategy</th><th class="num">Accuracy</th><th class="num">95% interval</th><th class="num">Tokens / problem</th><th class="num">Policy calls / problem</th><th class="num">Judge calls / problem</th></tr></thead><tbody>${search}</tbody></table>` : ''}
    ${files ? `<h2>Outputs</h2><ul id="demo-files">${files}</ul>` : ''}
    <details><summary>report.json</summary><pre>${esc(JSON.stringify(d, null, 2))}</pre></details>`;
}

// ---------- router ----------
async function route() {
  const mine = ++routing;
  const { path, params } = parseHash();
  statusEl.textContent = '';
  try {
    if (path === '/' || path === '/runs') await runsPage(params);
    else if (path === '/files') await filesPage();
    else if (path.startsWith('/run/')) await runPage(decodeURIComponent(path.slice(5)));
    else if (path === '/file') await filePage(params);
    else if (path === '/compare') await comparePage(params);
    else if (path === '/compare/problem') await comparePairPage(params);
    else setHtml(app, '<h1>Not found</h1><p><a href="#/">Back to runs</a></p>');
    if (mine === routing) document.title = `stepwise · ${document.querySelector('h1')?.textContent ?? ''}`;
  } catch (e) {
    if (!(e instanceof Stale) && mine === routing)
      setHtml(
        app,
        `<h1>Could not load this page</h1><p class="error">${esc(e instanceof Error ? e.message : e)}</p><p><a href="#/">Back to runs</a></p>`,
      );
  }
}

app.addEventListener('change', (e) => {
  if (!(e.target instanceof HTMLSelectElement) || e.target.id !== 'color-by') return;
  const { params } = parseHash();
  params.set('color', e.target.value);
  location.hash = `#/file?${params.toString()}`;
});

/** Go to the file page the address describes, with `changes` applied (a filter changed: back to its first page). */
function setFileParams(/** @type {Record<string, string | null>} */ changes) {
  const { params } = parseHash();
  for (const [k, v] of Object.entries(changes)) {
    if (v === null || v === '') params.delete(k);
    else params.set(k, v);
  }
  location.hash = `#/file?${params.toString()}`;
}

// The filter bar: every change goes into the address (shareable), which draws the page again.
app.addEventListener('change', (e) => {
  const t = e.target;
  if (!(t instanceof HTMLInputElement || t instanceof HTMLSelectElement)) return;
  if (t.classList.contains('page-jump')) {
    const n = Math.max(1, Math.floor(Number(t.value)) || 1);
    setFileParams({ offset: String((n - 1) * PAGE) });
    return;
  }
  if (t.id === 'find-id') {
    const id = t.value.trim();
    if (id !== '') setFileParams({ id, offset: null });
    return;
  }
  const param = t.dataset.param;
  if (!param || !t.closest('#filters')) return;
  /** @type {Record<string, string | null>} */
  const changes = { [param]: t.value, offset: null, id: null };
  // The first-error choices belong to one signal: a new signal starts them over.
  if (param === 'signal') changes.fe = null;
  setFileParams(changes);
});
// The comparison's pickers and filter: into the address too.
app.addEventListener('change', (e) => {
  const t = e.target;
  if (!(t instanceof HTMLSelectElement) || !/^compare-(a|b|only)$/.test(t.id)) return;
  const { params } = parseHash();
  if (t.id === 'compare-only') {
    if (t.value) params.set('only', t.value);
    else params.delete('only');
  } else {
    const side = t.id.slice(-1);
    const at = t.value.indexOf(':');
    params.set(`${side}root`, t.value.slice(0, at));
    params.set(`${side}path`, t.value.slice(at + 1));
  }
  params.delete('offset');
  location.hash = `#/compare?${params.toString()}`;
});
app.addEventListener('submit', (e) => {
  // Enter in a search box: its change event does the work; the form itself goes nowhere.
  e.preventDefault();
});

window.addEventListener('hashchange', () => {
  route();
  window.scrollTo(0, 0);
});
route();
// Running jobs move: refresh the runs list and a running run's page while something runs.
setInterval(() => {
  const { path } = parseHash();
  if (
    (path === '/' || path === '/runs' || path.startsWith('/run/')) &&
    document.querySelector('.badge.running')
  )
    route();
  // A file a job is still writing: its page is read again (the server extends its index).
  else if (
    path === '/file' &&
    document.getElementById('growing-file') &&
    !document.activeElement?.closest('#filters')
  )
    route();
}, 3000);
