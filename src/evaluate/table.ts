import type { ProcessBenchScore } from './metrics.js';
import type { ProcessBenchReport } from './processbench.js';
import { PUBLISHED_PROCESSBENCH } from './published.js';

/** Sizes of the full subsets: only a run over all of them is comparable with published numbers. */
const FULL_SIZES: Record<string, number> = { gsm8k: 400, math: 1000, olympiadbench: 1000, omnimath: 1000 };

function pct(v: number | null | undefined): string {
  return v === null || v === undefined ? '—' : v.toFixed(1);
}

/** The per-subset table of a score: subset, n, error_acc, correct_acc, F1, then the average. */
export function formatScoreTable(score: ProcessBenchScore): string {
  const rows = Object.entries(score.subsets).map(([name, m]) => [
    name,
    String(m.n),
    pct(m.error_acc),
    pct(m.correct_acc),
    pct(m.f1),
  ]);
  const header = ['subset', 'n', 'error_acc', 'correct_acc', 'F1'];
  const all = [header, ...rows, ['average F1', '', '', '', pct(score.average_f1)]];
  const widths = header.map((_, c) => Math.max(...all.map((r) => r[c].length)));
  const line = (r: string[]) =>
    r.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]) : cell.padStart(widths[c]))).join('  ');
  return [
    line(header),
    line(widths.map((w) => '-'.repeat(w))),
    ...rows.map(line),
    line(all[all.length - 1]),
  ].join('\n');
}

/** The published averages, ranked, with no run among them. */
function publishedList(): string[] {
  const width = Math.max(...PUBLISHED_PROCESSBENCH.map((p) => p.model.length));
  return [
    'Published average F1 of real models (docs/methods.md §4; all four subsets):',
    ...[...PUBLISHED_PROCESSBENCH]
      .sort((a, b) => b.averageF1 - a.averageF1)
      .map(
        (p) => `  ${p.model.padEnd(width)}  ${pct(p.averageF1).padStart(5)}${p.note ? `  (${p.note})` : ''}`,
      ),
  ];
}

/** Which samples a run covered, e.g. "pb (300 samples)". */
function describeSubsets(report: ProcessBenchReport): string {
  return Object.entries(report.subsets)
    .map(([name, m]) => `${name} (${m.n} samples)`)
    .join(', ');
}

/**
 * The printed report: the simulation notice when simulated, the threshold, the per-subset table,
 * format failures and cost, and this run's average F1 placed among the published averages.
 */
export function formatProcessBenchReport(report: ProcessBenchReport): string {
  const out: string[] = [];
  const tag = report.simulated ? ' [SIMULATED — not a real model]' : '';
  out.push(`ProcessBench — judge ${report.judge}${tag}`);
  if (report.notice) out.push(report.notice);
  const t = report.threshold;
  if (t.mode === 'auto')
    out.push(
      `threshold: auto = ${t.value?.toFixed(4)} (max F1 on ${t.chosenOn}: ${pct(t.f1OnChosenSubset)})`,
    );
  else if (t.mode === 'fixed') out.push(`threshold: ${t.value}`);
  else out.push("threshold: the judge's own verdicts, early exit at the first negative");
  out.push('');
  out.push(formatScoreTable(report));
  out.push('');
  const c = report.cost.judge;
  out.push(
    `samples ${report.samples} · format failures ${report.formatFailures} (${(100 * report.formatFailureRate).toFixed(1)}% of replies)` +
      ` · abstained ${report.abstained} · judge cost: ${c.calls} calls, ${c.samples} samples, ${c.promptTokens} prompt + ${c.completionTokens} completion tokens`,
  );
  out.push('');
  if (report.simulated) {
    // A simulator's F1 describes the simulator: it is never placed among real models' results.
    out.push(...publishedList());
    out.push(`This SIMULATED run: average F1 ${pct(report.average_f1)} — not ranked among them.`);
    return out.join('\n');
  }
  const complete = Object.entries(FULL_SIZES).every(([s, n]) => report.subsets[s]?.n === n);
  if (!complete) {
    // A run on another set (a part of ProcessBench, the tiny world's own ProcessBench-format
    // samples) measures something else: its F1 is printed beside the published list, never
    // ranked inside it, so a tiny network's score is not read as a place among 7B models.
    out.push(...publishedList());
    out.push(
      `This run: ${report.judge}, average F1 ${pct(report.average_f1)} on ${describeSubsets(report)}` +
        ' — not the full four ProcessBench subsets, so not ranked among them.',
    );
    return out.join('\n');
  }
  out.push('Average F1 beside published results (docs/methods.md §4; all four subsets):');
  const mine = {
    model: `this run: ${report.judge}`,
    averageF1: report.average_f1,
    note: undefined as string | undefined,
  };
  const rows = [
    ...PUBLISHED_PROCESSBENCH.map((p) => ({
      model: p.model,
      averageF1: p.averageF1 as number | null,
      note: p.note,
    })),
    mine,
  ].sort((a, b) => (b.averageF1 ?? -1) - (a.averageF1 ?? -1));
  const width = Math.max(...rows.map((r) => r.model.length));
  for (const r of rows) {
    const marker = r === mine ? '→ ' : '  ';
    out.push(
      `${marker}${r.model.padEnd(width)}  ${pct(r.averageF1).padStart(5)}${r.note ? `  (${r.note})` : ''}`,
    );
  }
  return out.join('\n');
}
