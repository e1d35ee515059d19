/**
 * A small dependency-free SVG line chart (accuracy vs compute for `stepwise bench search`).
 * Pure: data in, SVG text out.
 */

export interface ChartPoint {
  x: number;
  y: number;
  /** Shown as the point's tooltip (e.g. `N = 16`). */
  label?: string;
  /** An interval around y (e.g. its 95% interval), drawn as an error bar and kept inside the y range. */
  yLow?: number;
  yHigh?: number;
}

export interface ChartSeries {
  name: string;
  points: ChartPoint[];
}

export interface LineChartOptions {
  title: string;
  xLabel: string;
  yLabel: string;
  series: ChartSeries[];
  /** Logarithmic x axis (compute budgets grow geometrically). Needs x > 0. Default false. */
  logX?: boolean;
  /** Fixed y range; default: the data's range padded, within [0, 1] when all y lie there. */
  yRange?: [number, number];
  /** Format of y tick labels. Default: percent when the range lies within [0, 1]. */
  yFormat?: (y: number) => string;
  /** A line under the title (e.g. "simulated world — not real model results"). */
  subtitle?: string;
  width?: number;
  height?: number;
}

const PALETTE = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b', '#e377c2', '#17becf'];

/** Escape text for SVG/XML. */
export function escapeXml(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/** Round tick values: 1, 2, 5 × 10^k steps covering [lo, hi] with about `count` ticks. */
export function niceTicks(lo: number, hi: number, count = 5): number[] {
  if (!(hi > lo)) return [lo];
  const raw = (hi - lo) / count;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * mag).find((s) => s >= raw) ?? 10 * mag;
  const out: number[] = [];
  for (let v = Math.ceil(lo / step) * step; v <= hi + step * 1e-9; v += step)
    out.push(Number(v.toPrecision(12)));
  return out;
}

/** Ticks of a log axis: 1, 2, 5 × 10^k within [lo, hi] (only powers of ten when the range is wide). */
export function logTicks(lo: number, hi: number): number[] {
  const out: number[] = [];
  const wide = Math.log10(hi / lo) > 3;
  for (let e = Math.floor(Math.log10(lo)); e <= Math.ceil(Math.log10(hi)); e++) {
    for (const m of wide ? [1] : [1, 2, 5]) {
      const v = m * 10 ** e;
      if (v >= lo * (1 - 1e-9) && v <= hi * (1 + 1e-9)) out.push(v);
    }
  }
  return out;
}

function formatTick(v: number): string {
  if (Math.abs(v) >= 1e6) return `${Number((v / 1e6).toPrecision(3))}M`;
  if (Math.abs(v) >= 1e3) return `${Number((v / 1e3).toPrecision(3))}k`;
  return String(Number(v.toPrecision(3)));
}

/** Render the chart as a standalone SVG document. */
export function renderLineChart(o: LineChartOptions): string {
  const W = o.width ?? 720;
  const H = o.height ?? 440;
  const m = { top: o.subtitle ? 64 : 48, right: 190, bottom: 56, left: 64 };
  const pw = W - m.left - m.right;
  const ph = H - m.top - m.bottom;
  const pts = o.series.flatMap((s) => s.points).filter((p) => Number.isFinite(p.x) && Number.isFinite(p.y));
  const logX = o.logX === true && pts.every((p) => p.x > 0);
  const xs = pts.map((p) => p.x);
  const ys = pts.flatMap((p) => [p.y, p.yLow, p.yHigh].filter((v): v is number => Number.isFinite(v)));
  let [xLo, xHi] = xs.length ? [Math.min(...xs), Math.max(...xs)] : [0, 1];
  if (xLo === xHi) [xLo, xHi] = logX ? [xLo / 2, xHi * 2] : [xLo - 1, xHi + 1];
  if (logX) [xLo, xHi] = [xLo / 1.15, xHi * 1.15];
  const unitY = ys.every((y) => y >= 0 && y <= 1);
  let [yLo, yHi] = o.yRange ?? (ys.length ? [Math.min(...ys), Math.max(...ys)] : [0, 1]);
  if (!o.yRange) {
    const pad = Math.max(0.02, (yHi - yLo) * 0.1);
    yLo -= pad;
    yHi += pad;
    if (unitY) [yLo, yHi] = [Math.max(0, yLo), Math.min(1, yHi)];
  }
  const yFmt = o.yFormat ?? (unitY ? (y: number) => `${Math.round(y * 100)}%` : formatTick);
  const sx = (x: number): number =>
    m.left + (logX ? Math.log(x / xLo) / Math.log(xHi / xLo) : (x - xLo) / (xHi - xLo)) * pw;
  const sy = (y: number): number => m.top + (1 - (y - yLo) / (yHi - yLo)) * ph;
  const f = (v: number): string => v.toFixed(1);
  const parts: string[] = [];
  parts.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif" font-size="12">`,
    `<rect width="${W}" height="${H}" fill="white"/>`,
    `<text x="${m.left}" y="24" font-size="16" font-weight="bold">${escapeXml(o.title)}</text>`,
  );
  if (o.subtitle) parts.push(`<text x="${m.left}" y="44" fill="#a33">${escapeXml(o.subtitle)}</text>`);
  for (const t of niceTicks(yLo, yHi, 5)) {
    const y = sy(t);
    parts.push(
      `<line x1="${m.left}" x2="${m.left + pw}" y1="${f(y)}" y2="${f(y)}" stroke="#e5e5e5"/>`,
      `<text x="${m.left - 6}" y="${f(y + 4)}" text-anchor="end">${escapeXml(yFmt(t))}</text>`,
    );
  }
  for (const t of logX ? logTicks(xLo, xHi) : niceTicks(xLo, xHi, 6)) {
    const x = sx(t);
    parts.push(
      `<line x1="${f(x)}" x2="${f(x)}" y1="${m.top}" y2="${m.top + ph}" stroke="#f0f0f0"/>`,
      `<text x="${f(x)}" y="${m.top + ph + 16}" text-anchor="middle">${escapeXml(formatTick(t))}</text>`,
    );
  }
  parts.push(
    `<rect x="${m.left}" y="${m.top}" width="${pw}" height="${ph}" fill="none" stroke="#333"/>`,
    `<text x="${m.left + pw / 2}" y="${H - 14}" text-anchor="middle">${escapeXml(o.xLabel)}${logX ? ' (log scale)' : ''}</text>`,
    `<text transform="translate(16 ${m.top + ph / 2}) rotate(-90)" text-anchor="middle">${escapeXml(o.yLabel)}</text>`,
  );
  o.series.forEach((s, i) => {
    const color = PALETTE[i % PALETTE.length];
    const sp = s.points.filter((p) => Number.isFinite(p.x) && Number.isFinite(p.y) && (!logX || p.x > 0));
    const sorted = [...sp].sort((a, b) => a.x - b.x);
    if (sorted.length > 1)
      parts.push(
        `<polyline fill="none" stroke="${color}" stroke-width="2" points="${sorted.map((p) => `${f(sx(p.x))},${f(sy(p.y))}`).join(' ')}"/>`,
      );
    for (const p of sorted) {
      if (Number.isFinite(p.yLow) && Number.isFinite(p.yHigh)) {
        const x = sx(p.x);
        const [a, b] = [sy(p.yLow as number), sy(p.yHigh as number)];
        parts.push(
          `<path d="M${f(x)},${f(a)} V${f(b)} M${f(x - 4)},${f(a)} h8 M${f(x - 4)},${f(b)} h8" stroke="${color}" stroke-width="1.2" fill="none"/>`,
        );
      }
      const interval =
        Number.isFinite(p.yLow) && Number.isFinite(p.yHigh)
          ? ` [95% ${yFmt(p.yLow as number)}–${yFmt(p.yHigh as number)}]`
          : '';
      const tip = `${s.name}${p.label ? ` (${p.label})` : ''}: ${yFmt(p.y)}${interval} at ${formatTick(p.x)}`;
      parts.push(
        `<circle cx="${f(sx(p.x))}" cy="${f(sy(p.y))}" r="4" fill="${color}"><title>${escapeXml(tip)}</title></circle>`,
      );
    }
    const ly = m.top + 10 + i * 20;
    parts.push(
      `<line x1="${m.left + pw + 16}" x2="${m.left + pw + 40}" y1="${ly}" y2="${ly}" stroke="${color}" stroke-width="2"/>`,
      `<circle cx="${m.left + pw + 28}" cy="${ly}" r="4" fill="${color}"/>`,
      `<text x="${m.left + pw + 46}" y="${ly + 4}">${escapeXml(s.name)}</text>`,
    );
  });
  parts.push('</svg>');
  return `${parts.join('\n')}\n`;
}
