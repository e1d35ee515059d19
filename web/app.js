// stepwise web view: a small single-page app over the JSON API (no build step, no framework).
// Every string from a file is escaped before it reaches the page: model outputs are untrusted text.

const app = document.getElementById('app');
const statusEl = document.getElementById('status');

const esc = (v) =>
  String(v ?? '').replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]);
const fmt = (n, d = 1) => (typeof n === 'number' && Number.isFinite(n) ? n.toFixed(d) : '—');
const int = (n) => (typeof n === 'number' ? n.toLocaleString('en-US') : '—');

async function api(path) {
  const res = await fetch(path, { credentials: 'same-origin' });
  const body = await res.json().catch(() => ({}));
  if (!res.ok) throw new Error(body.error || `HTTP ${res.status}`);
  return body;
}

const fileHref = (root, path, extra = '') =>
  `#/file?root=${encodeURIComponent(root)}&path=${encodeURIComponent(path)}${extra}`;

function parseHash() {
  const h = location.hash.replace(/^#/, '') || '/';
  const [path, query = ''] = h.split('?');
  return { path, params: new URLSearchParams(query) };
}

// ---------- colours ----------
const VERDICT_CLASS = { positive: 'pos', negative: 'neg', neutral: 'neu' };
/** Q-value in [0,1] → red (0) … amber … green (1). */
function qColor(q) {
  if (typeof q !== 'number') return '#d0d0cc';
  const h = Math.round(120 * Math.max(0, Math.min(1, q)));
  return `hsl(${h} 60% 42%)`;
}
function qBackground(q) {
  if (typeof q !== 'number') return '#fff';
  const h = Math.round(120 * Math.max(0, Math.min(1, q)));
  return `hsl(${h} 60% 95%)`;
}

function simulatedBanner(flag, text) {
  if (!flag) return '';
  return `<div class="banner" role="note"><b>Simulated.</b> ${esc(
    text || 'These numbers come from the stepwise simulated reasoning world, not from a real model.',
  )}</div>`;
}

// ---------- pages ----------
async function runsPage() {
  const [{ runs }, { files }] = await Promise.all([api('/api/runs'), api('/api/files')]);
  const rows = runs
    .map((r) => {
      const dur = r.endedAt ? `${((new Date(r.endedAt) - new Date(r.startedAt)) / 1000).toFixed(1)} s` : '';
      const counts = Object.entries(r.counts || {})
        .map(([k, v]) => `${esc(k)} ${esc(typeof v === 'number' ? int(v) : v)}`)
        .join(', ');
      const status = `<span class="badge ${r.status === 'done' ? 'pos' : r.status === 'failed' ? 'neg' : 'running'}">${esc(r.status)}</span>`;
      return `<tr data-run="${esc(r.id)}"><td><a href="#/run/${encodeURIComponent(r.id)}">${esc(r.id)}</a></td><td>${esc(r.command)}</td><td>${status}</td><td>${esc(new Date(r.startedAt).toLocaleString())}</td><td class="num">${dur}</td><td>${counts}</td></tr>`;
    })
    .join('');
  app.innerHTML = `<h1>Runs</h1>
    ${runs.length ? `<table id="runs"><thead><tr><th>Run</th><th>Command</th><th>Status</th><th>Started</th><th class="num">Took</th><th>Progress and counts</th></tr></thead><tbody>${rows}</tbody></table>` : '<p class="muted">No runs recorded yet. Run <code>npx stepwise demo</code>.</p>'}
    <h2>Outputs</h2>${filesTable(files)}`;
}

function filesTable(files) {
  if (!files.length) return '<p class="muted">No JSON or JSONL outputs in the served folders.</p>';
  const rows = files
    .map(
      (f) =>
        `<tr><td><a href="${fileHref(f.root, f.path)}">${esc(f.path)}</a></td><td><span class="badge">${esc(f.kind)}</span></td><td class="num">${int(f.size)}</td><td>${esc(new Date(f.mtime).toLocaleString())}</td></tr>`,
    )
    .join('');
  return `<table id="files"><thead><tr><th>File</th><th>Kind</th><th class="num">Bytes</th><th>Modified</th></tr></thead><tbody>${rows}</tbody></table>`;
}

async function filesPage() {
  const { roots, files } = await api('/api/files');
  app.innerHTML = `<h1>Files</h1><p class="muted">Served folders: ${roots.map(esc).join(', ')}</p>${filesTable(files)}`;
}

async function runPage(id) {
  const { run, output } = await api(`/api/runs/${encodeURIComponent(id)}`);
  app.innerHTML = `<h1>Run ${esc(run.id)}</h1>
    <div class="card"><div class="row">
      <span class="kpi"><span class="muted">command</span><b>${esc(run.command)}</b></span>
      <span class="kpi"><span class="muted">status</span><b>${esc(run.status)}</b></span>
      ${Object.entries(run.counts || {})
        .map(([k, v]) => `<span class="kpi"><span class="muted">${esc(k)}</span><b>${esc(typeof v === 'number' ? int(v) : v)}</b></span>`)
        .join('')}
    </div></div>
    <p>${output ? `Output: <a href="${fileHref(output.root, output.path)}">${esc(output.path)}</a> <span class="badge">${esc(output.kind)}</span>` : run.output ? `Output: ${esc(run.output)} <span class="muted">(outside the served folders)</span>` : ''}</p>
    <h2>Config</h2><pre>${esc(JSON.stringify(run.config, null, 2))}</pre>`;
}

const PAGE = 20;

async function filePage(params) {
  const root = params.get('root') || '0';
  const path = params.get('path') || '';
  const offset = Number(params.get('offset') || 0);
  const isJsonl = path.endsWith('.jsonl');
  const q = `/api/file?root=${encodeURIComponent(root)}&path=${encodeURIComponent(path)}${isJsonl ? `&offset=${offset}&limit=${PAGE}` : ''}`;
  const file = await api(q);
  const title = `<h1>${esc(path)} <span class="badge">${esc(file.kind)}</span></h1>`;
  const pager = isJsonl ? pagerHtml(root, path, offset, file.total) : '';
  const bad = file.badLines?.length ? `<p class="error">Lines that are not JSON: ${file.badLines.map(esc).join(', ')}</p>` : '';
  const views = {
    labels: () => file.records.map(labelCard).join(''),
    samples: () => file.records.map(sampleCard).join(''),
    search: () => file.records.map((r, i) => searchCard(r, offset + i)).join(''),
    predictions: () => predictionsView(file.records, file.total),
    'processbench-report': () => '',
    'accuracy-vs-compute': () => accuracyView(file.data),
    'demo-report': () => demoView(file.data, root),
  };
  const body = views[file.kind] ? views[file.kind]() : `<pre>${esc(JSON.stringify(file.records ?? file.data, null, 2))}</pre>`;
  app.innerHTML = `${title}${bad}${pager}<div id="view">${body}</div>${pager}`;
  if (file.kind === 'processbench-report') await processBenchView(file.data, root, path);
  if (file.kind === 'search') drawTrees();
}

function pagerHtml(root, path, offset, total) {
  const prev = Math.max(0, offset - PAGE);
  const next = offset + PAGE;
  return `<div class="pager"><a ${offset > 0 ? `href="${fileHref(root, path, `&offset=${prev}`)}"` : ''} class="prev">‹ previous</a>
    <span class="muted">records ${total ? offset + 1 : 0}–${Math.min(total, offset + PAGE)} of ${int(total)}</span>
    <a ${next < total ? `href="${fileHref(root, path, `&offset=${next}`)}"` : ''} class="next">next ›</a></div>`;
}

// ---------- solution view (labels) ----------
function labelCard(rec) {
  const signals = Object.keys(rec.firstError || {});
  const firstErrors = signals
    .map((s) => `<span class="badge ${rec.firstError[s] === -1 ? 'pos' : 'neg'}">${esc(s)}: ${rec.firstError[s] === -1 ? 'no error' : `first error at chunk ${rec.firstError[s]}`}</span>`)
    .join('');
  const fe = signals.length ? rec.firstError[signals[0]] : -1;
  const chunks = (rec.chunks || [])
    .map((c, i) => {
      const labels = Object.entries(c.labels || {})
        .map(([s, v]) => {
          const cls = v === true ? 'pos' : v === false ? 'neg' : typeof v === 'number' ? (v >= 0.5 ? 'pos' : 'neg') : '';
          const shown = typeof v === 'number' ? fmt(v, 2) : v === null ? '?' : v ? '+' : '−';
          return `<span class="badge ${cls}">${esc(s)} ${esc(shown)}</span>`;
        })
        .join('');
      return `<div class="chunk${i === fe ? ' first-error' : ''}" data-q="${esc(c.q)}" style="border-left-color:${qColor(c.q)};background:${qBackground(c.q)}">
        <div class="text">${esc(c.text)}</div>
        <div class="meta">chunk ${i} · Q̂ ${typeof c.q === 'number' ? fmt(c.q, 3) : 'not estimated'} · ${int(c.rollouts ?? 0)} rollouts ${labels}</div>
        ${c.rationale ? `<details><summary>judge's rationale</summary><pre>${esc(c.rationale)}</pre></details>` : ''}
      </div>`;
    })
    .join('');
  return `<section class="card solution" data-id="${esc(rec.id)}">
    <h3>${esc(rec.id)} ${rec.finalAnswerCorrect === undefined ? '' : `<span class="badge ${rec.finalAnswerCorrect ? 'pos' : 'neg'}">${rec.finalAnswerCorrect ? 'final answer correct' : 'final answer wrong'}</span>`}</h3>
    <details><summary>problem</summary><pre>${esc(rec.problem)}</pre></details>
    <div class="row">${firstErrors}<span class="muted">Q̂(empty prefix) ${fmt(rec.q0, 3)} · ${int(rec.cost?.rollouts)} rollouts, ${int(rec.cost?.tokens)} tokens</span></div>
    <div class="legend"><span><span class="swatch" style="background:${qColor(0)}"></span>Q̂ = 0</span><span><span class="swatch" style="background:${qColor(0.5)}"></span>0.5</span><span><span class="swatch" style="background:${qColor(1)}"></span>1</span></div>
    <div class="chunks">${chunks}</div>
  </section>`;
}

// ---------- samples ----------
function sampleCard(rec) {
  const samples = (rec.samples || [])
    .map((s, k) => {
      const chunks = (s.chunks || [{ text: s.text }])
        .map((c) => `<div class="chunk ${s.correct ? 'pos' : 'neg'}"><div class="text">${esc(typeof c === 'string' ? c : c.text)}</div></div>`)
        .join('');
      return `<details><summary>sample ${k} · answer ${esc(s.answer ?? 'none')} <span class="badge ${s.correct ? 'pos' : 'neg'}">${s.correct ? 'correct' : 'wrong'}</span></summary><div class="chunks">${chunks}</div></details>`;
    })
    .join('');
  const right = (rec.samples || []).filter((s) => s.correct).length;
  return `<section class="card" data-id="${esc(rec.id)}"><h3>${esc(rec.id)} <span class="muted">${right}/${(rec.samples || []).length} correct</span></h3>
    ${rec.question ? `<details><summary>problem</summary><pre>${esc(rec.question)}</pre></details>` : ''}${samples}</section>`;
}

// ---------- search view ----------
const STATUS_COLOR = {
  accepted: '#1f8a4c',
  rejected: '#b3261e',
  fallback: '#c77800',
  pruned: '#9a9a9a',
  backtracked: '#7b4fc9',
  finished: '#5a7bd3',
};

function searchCard(rec, index) {
  const chunks = (rec.chunks || [])
    .map(
      (c) => `<div class="chunk ${VERDICT_CLASS[c.verdict] || ''}"><div class="text">${esc(c.text)}</div>
      <div class="meta">chunk ${c.index} · ${esc(c.verdict ?? 'not judged')}${typeof c.score === 'number' ? ` · score ${fmt(c.score, 2)}` : ''} · ${int(c.attempts)} attempt${c.attempts === 1 ? '' : 's'}</div></div>`,
    )
    .join('');
  const cost = rec.cost || {};
  const rejected = (rec.trace || []).filter((n) => n.status === 'rejected').length;
  return `<section class="card search" data-id="${esc(rec.id)}">
    <h3>${esc(rec.id)} · ${esc(rec.strategy)} <span class="badge ${rec.correct ? 'pos' : rec.correct === false ? 'neg' : ''}">${rec.correct ? 'correct' : rec.correct === false ? 'wrong' : 'unchecked'}</span></h3>
    <div class="row muted">answer ${esc(rec.answer ?? 'none')} (gold ${esc(rec.gold ?? '?')}) · policy ${int(cost.policy?.calls)} calls, ${int((cost.policy?.promptTokens ?? 0) + (cost.policy?.completionTokens ?? 0))} tokens · judge ${int(cost.judge?.calls)} calls, ${int((cost.judge?.promptTokens ?? 0) + (cost.judge?.completionTokens ?? 0))} tokens · ${rejected} rejected attempts · ${(rec.backtracks || []).length} backtracks</div>
    <div class="chunks">${chunks}</div>
    ${rec.trace?.length ? `<h3>Search tree</h3><div class="legend">${Object.entries(STATUS_COLOR).map(([k, c]) => `<span><span class="swatch" style="background:${c}"></span>${k}</span>`).join('')}<span>- - backtrack</span></div><div class="tree" data-index="${index}"></div>` : ''}
    <script type="application/json" class="tree-data">${esc(JSON.stringify({ trace: rec.trace || [], backtracks: rec.backtracks || [] }))}</script>
  </section>`;
}

/** Lay the trace out as a tree: depth on x by parent chain, siblings stacked on y. */
function drawTrees() {
  for (const section of document.querySelectorAll('section.search')) {
    const holder = section.querySelector('.tree');
    const data = section.querySelector('.tree-data');
    if (!holder || !data) continue;
    const { trace, backtracks } = JSON.parse(data.textContent);
    const children = new Map();
    for (const n of trace) {
      const p = n.parent ?? -1;
      if (!children.has(p)) children.set(p, []);
      children.get(p).push(n);
    }
    const pos = new Map();
    let row = 0;
    const level = (id) => {
      let d = 0;
      let cur = trace.find((n) => n.id === id);
      while (cur && cur.parent !== null && cur.parent !== undefined) {
        d++;
        cur = trace.find((n) => n.id === cur.parent);
      }
      return d;
    };
    const place = (id) => {
      const kids = children.get(id) || [];
      if (id !== -1 && kids.length === 0) {
        pos.set(id, { x: level(id), y: row++ });
        return;
      }
      for (const k of kids) place(k.id);
      if (id !== -1) {
        const ys = kids.map((k) => pos.get(k.id).y);
        pos.set(id, { x: level(id), y: (Math.min(...ys) + Math.max(...ys)) / 2 });
      }
    };
    place(-1);
    const dx = 120;
    const dy = 26;
    const maxX = Math.max(0, ...[...pos.values()].map((p) => p.x));
    const w = (maxX + 1) * dx + 160;
    const h = Math.max(1, row) * dy + 30;
    const X = (p) => 60 + p.x * dx;
    const Y = (p) => 20 + p.y * dy;
    let svg = `<svg width="${w}" height="${h}" role="img" aria-label="search tree"><circle cx="20" cy="${h / 2}" r="6" fill="#444"><title>problem</title></circle>`;
    for (const n of trace) {
      const p = pos.get(n.id);
      if (!p) continue;
      const parent = n.parent === null || n.parent === undefined ? { x: -1, y: null } : pos.get(n.parent);
      const x1 = parent && parent.y !== null ? X(parent) : 20;
      const y1 = parent && parent.y !== null ? Y(parent) : h / 2;
      svg += `<line x1="${x1}" y1="${y1}" x2="${X(p)}" y2="${Y(p)}" stroke="#c8c8c4"/>`;
    }
    for (const b of backtracks) {
      const from = pos.get(b.from);
      const to = b.to === null ? { x: -1, y: null } : pos.get(b.to);
      if (!from) continue;
      const x2 = to && to.y !== null ? X(to) : 20;
      const y2 = to && to.y !== null ? Y(to) : h / 2;
      svg += `<path d="M${X(from)},${Y(from)} C${X(from) - 40},${Y(from) + 18} ${x2 + 40},${y2 + 18} ${x2},${y2}" stroke="#7b4fc9" stroke-dasharray="4 3" fill="none" class="backtrack"/>`;
    }
    for (const n of trace) {
      const p = pos.get(n.id);
      if (!p) continue;
      const label = `${n.label ?? `step ${n.depth}`}: ${n.status}${typeof n.score === 'number' ? ` (score ${n.score.toFixed(2)})` : ''}\n${n.text}`;
      svg += `<g class="node" data-status="${esc(n.status)}"><circle cx="${X(p)}" cy="${Y(p)}" r="${n.final ? 7 : 5}" fill="${STATUS_COLOR[n.status] || '#888'}"><title>${esc(label)}</title></circle>`;
      svg += `<text x="${X(p) + 9}" y="${Y(p) + 4}">${esc((n.text || '').slice(0, 14))}</text></g>`;
    }
    holder.innerHTML = `${svg}</svg>`;
  }
}

// ---------- ProcessBench ----------
async function processBenchView(report, root, reportPath) {
  const subsets = Object.entries(report.subsets || {});
  const table = `<table id="pb-table"><thead><tr><th>Subset</th><th class="num">n</th><th class="num">error acc</th><th class="num">correct acc</th><th class="num">F1</th></tr></thead><tbody>
    ${subsets.map(([name, s]) => `<tr><td>${esc(name)}</td><td class="num">${int(s.n)}</td><td class="num">${fmt(s.error_acc)}</td><td class="num">${fmt(s.correct_acc)}</td><td class="num">${fmt(s.f1)}</td></tr>`).join('')}
    <tr><th>average</th><td></td><td></td><td></td><th class="num">${fmt(report.average_f1)}</th></tr></tbody></table>`;
  const view = document.getElementById('view');
  view.innerHTML = `${simulatedBanner(report.simulated, report.notice)}
    <div class="card"><span class="kpi"><span class="muted">judge</span><b>${esc(report.judge)}</b></span>
      <span class="kpi"><span class="muted">average F1</span><b>${fmt(report.average_f1)}</b></span>
      <span class="kpi"><span class="muted">samples</span><b>${int(report.samples)}</b></span>
      <span class="kpi"><span class="muted">threshold</span><b>${esc(report.threshold?.mode)}${report.threshold?.value != null ? ` ${fmt(report.threshold.value, 3)}` : ''}</b></span>
      <span class="kpi"><span class="muted">judge calls</span><b>${int(report.cost?.judge?.calls)}</b></span></div>
    ${table}<h2>Predicted vs true first error</h2><div id="pb-chart" class="muted">Loading predictions…</div>`;
  const chart = document.getElementById('pb-chart');
  const predPath = predictionsPathFor(report.predictions, reportPath);
  try {
    const first = await api(`/api/file?root=${encodeURIComponent(root)}&path=${encodeURIComponent(predPath)}&limit=5000`);
    let records = first.records;
    for (let off = records.length; off < first.total; off += 5000) {
      const more = await api(`/api/file?root=${encodeURIComponent(root)}&path=${encodeURIComponent(predPath)}&offset=${off}&limit=5000`);
      records = records.concat(more.records);
    }
    chart.outerHTML = `<div id="pb-chart">${confusionChart(records)}<p><a href="${fileHref(root, predPath)}">predictions file</a></p></div>`;
  } catch (e) {
    chart.textContent = `The predictions file is not in the served folders (${e.message}).`;
  }
}

function predictionsPathFor(predictions, reportPath) {
  if (!predictions) return reportPath.replace(/\.json$/, '.predictions.jsonl');
  const base = predictions.split('/').pop();
  const dir = reportPath.includes('/') ? reportPath.slice(0, reportPath.lastIndexOf('/') + 1) : '';
  return dir + base;
}

function predictionsView(records, total) {
  return `<p class="muted">${int(total)} predictions (chart of this page).</p>${confusionChart(records)}`;
}

/** A grid: x = true first error (−1 = none), y = predicted; circle area = count; diagonal = right. */
function confusionChart(records) {
  const usable = records.filter((r) => typeof r.label === 'number');
  if (!usable.length) return '<p class="muted">No labelled predictions.</p>';
  const cap = 15;
  const bucket = (v) => (v === null || v === undefined ? null : Math.min(v, cap));
  const counts = new Map();
  let none = 0;
  for (const r of usable) {
    const t = bucket(r.label);
    const p = bucket(r.prediction);
    if (p === null) {
      none++;
      continue;
    }
    const k = `${t},${p}`;
    counts.set(k, (counts.get(k) || 0) + 1);
  }
  const max = Math.max(1, ...counts.values());
  const cell = 26;
  const n = cap + 2;
  const pad = 46;
  const size = pad + n * cell + 10;
  const xy = (v) => pad + (v + 1) * cell + cell / 2;
  let svg = `<svg width="${size}" height="${size}" role="img" aria-label="predicted versus true first error">`;
  for (let v = -1; v <= cap; v++) {
    const lab = v === cap ? `${cap}+` : String(v);
    svg += `<text x="${xy(v) - 6}" y="${size - 2}">${lab}</text><text x="4" y="${size - xy(v) + 4}">${lab}</text>`;
  }
  svg += `<line x1="${xy(-1)}" y1="${size - xy(-1)}" x2="${xy(cap)}" y2="${size - xy(cap)}" stroke="#c8c8c4" stroke-dasharray="3 3"/>`;
  for (const [k, c] of counts) {
    const [t, p] = k.split(',').map(Number);
    const r = 3 + 10 * Math.sqrt(c / max);
    svg += `<circle cx="${xy(t)}" cy="${size - xy(p)}" r="${r}" fill="${t === p ? '#1f8a4c' : '#b3261e'}" fill-opacity="0.7"><title>true ${t}, predicted ${p}: ${c}</title></circle>`;
  }
  svg += '</svg>';
  return `<div class="legend"><span>x: true first error (−1 = no error)</span><span>y: predicted</span><span><span class="swatch" style="background:#1f8a4c"></span>exact</span><span><span class="swatch" style="background:#b3261e"></span>wrong</span>${none ? `<span>${none} without a usable prediction</span>` : ''}</div>${svg}`;
}

// ---------- accuracy vs compute ----------
function accuracyView(data) {
  const points = data.points || [];
  const by = new Map();
  for (const p of points) {
    if (!by.has(p.strategy)) by.set(p.strategy, []);
    const x = p.costPerProblem?.totalTokens ?? p.tokens ?? 0;
    by.get(p.strategy).push({ x, y: p.accuracy, budget: p.budget });
  }
  const w = 720;
  const h = 380;
  const m = { l: 56, r: 150, t: 16, b: 42 };
  const xs = points.map((p) => p.costPerProblem?.totalTokens ?? 0).filter((x) => x > 0);
  const xmin = Math.max(1, Math.min(...xs, 1));
  const xmax = Math.max(...xs, 10);
  const lx = (x) => m.l + ((Math.log10(Math.max(x, xmin)) - Math.log10(xmin)) / Math.max(1e-9, Math.log10(xmax) - Math.log10(xmin))) * (w - m.l - m.r);
  const ly = (y) => h - m.b - y * (h - m.t - m.b);
  const palette = ['#2f5bd3', '#1f8a4c', '#b3261e', '#c77800', '#7b4fc9', '#00897b', '#6d4c41', '#d81b60'];
  let svg = `<svg width="${w}" height="${h}" role="img" aria-label="accuracy versus compute">`;
  for (let t = 0; t <= 1.0001; t += 0.25) svg += `<line x1="${m.l}" x2="${w - m.r}" y1="${ly(t)}" y2="${ly(t)}" stroke="#eee"/><text x="${m.l - 36}" y="${ly(t) + 4}">${Math.round(t * 100)}%</text>`;
  svg += `<text x="${m.l}" y="${h - 8}">tokens per problem (policy + judge, log scale): ${int(Math.round(xmin))} … ${int(Math.round(xmax))}</text>`;
  let i = 0;
  for (const [name, pts] of by) {
    const c = palette[i % palette.length];
    pts.sort((a, b) => a.x - b.x);
    svg += `<polyline fill="none" stroke="${c}" stroke-width="2" points="${pts.map((p) => `${lx(p.x)},${ly(p.y)}`).join(' ')}"/>`;
    for (const p of pts) svg += `<circle cx="${lx(p.x)}" cy="${ly(p.y)}" r="3.5" fill="${c}"><title>${esc(name)}${p.budget !== undefined ? ` @ ${p.budget}` : ''}: ${(p.y * 100).toFixed(1)}% at ${int(Math.round(p.x))} tokens</title></circle>`;
    svg += `<text x="${w - m.r + 10}" y="${m.t + 14 + i * 16}" fill="${c}">${esc(name)}</text>`;
    i++;
  }
  svg += '</svg>';
  const rows = points
    .map((p) => `<tr><td>${esc(p.strategy)}</td><td class="num">${esc(p.budget ?? '')}</td><td class="num">${fmt(p.accuracy * 100)}%</td><td class="num">${int(Math.round(p.costPerProblem?.policyTokens ?? 0))}</td><td class="num">${int(Math.round(p.costPerProblem?.judgeTokens ?? 0))}</td><td class="num">${fmt(p.costPerProblem?.policyCalls ?? 0)}</td><td class="num">${fmt(p.costPerProblem?.judgeCalls ?? 0)}</td></tr>`)
    .join('');
  return `${simulatedBanner(data.simulated, data.note)}<div id="acc-chart">${svg}</div>
    <table><thead><tr><th>Strategy</th><th class="num">Budget</th><th class="num">Accuracy</th><th class="num">Policy tokens / problem</th><th class="num">Judge tokens / problem</th><th class="num">Policy calls</th><th class="num">Judge calls</th></tr></thead><tbody>${rows}</tbody></table>`;
}

// ---------- demo report ----------
function demoView(data, root) {
  const files = Object.entries(data.files || {})
    .map(([k, v]) => `<li>${esc(k)}: <a href="${fileHref(root, String(v).split('/').pop())}">${esc(v)}</a></li>`)
    .join('');
  return `${simulatedBanner(true, data.notice)}${files ? `<ul>${files}</ul>` : ''}<pre>${esc(JSON.stringify(data, null, 2))}</pre>`;
}

// ---------- router ----------
async function route() {
  const { path, params } = parseHash();
  statusEl.textContent = '';
  try {
    if (path === '/' || path === '/runs') await runsPage();
    else if (path === '/files') await filesPage();
    else if (path.startsWith('/run/')) await runPage(decodeURIComponent(path.slice(5)));
    else if (path === '/file') await filePage(params);
    else app.innerHTML = '<h1>Not found</h1><p><a href="#/">Back to runs</a></p>';
    document.title = `stepwise · ${document.querySelector('h1')?.textContent ?? ''}`;
  } catch (e) {
    app.innerHTML = `<h1>Could not load this page</h1><p class="error">${esc(e.message)}</p><p><a href="#/">Back to runs</a></p>`;
  }
}

window.addEventListener('hashchange', route);
route();
// Running jobs move: refresh the runs page while one is running.
setInterval(() => {
  const { path } = parseHash();
  if ((path === '/' || path === '/runs') && document.querySelector('.badge.running')) route();
}, 3000);
