import { describe, expect, it } from 'vitest';
import type { ProcessBenchReport } from '../../src/evaluate/processbench.js';
import { formatProcessBenchReport } from '../../src/evaluate/table.js';

const zero = { calls: 0, samples: 0, promptTokens: 0, completionTokens: 0 };

function report(subsets: ProcessBenchReport['subsets'], averageF1: number): ProcessBenchReport {
  const samples = Object.values(subsets).reduce((n, m) => n + m.n, 0);
  return {
    benchmark: 'ProcessBench',
    judge: 'generative:gguf:models/tiny/judge.gguf',
    simulated: false,
    threshold: { mode: 'verdict', value: null },
    votes: null,
    samples,
    formatFailures: 0,
    replies: samples,
    formatFailureRate: 0,
    abstained: 0,
    cost: { policy: zero, judge: zero },
    predictions: 'p.jsonl',
    createdAt: '2026-01-01T00:00:00.000Z',
    subsets,
    average_f1: averageF1,
  };
}

describe('the printed ProcessBench report beside published results', () => {
  it("a run on another set (the tiny world's 300 samples) is printed beside the ranked list, not inside it", () => {
    const text = formatProcessBenchReport(
      report({ pb: { error_acc: 48.1, correct_acc: 77.1, f1: 59.2, n: 300 } }, 59.2),
    );
    expect(text).not.toMatch(/→/);
    const list = text.slice(text.indexOf('Published average F1'));
    // The published models are ranked; the run is a separate line after them that says why.
    expect(list.split('\n')[1]).toMatch(/^ {2}o1-mini\s+87\.9$/);
    expect(list.split('\n').filter((l) => /^ {2}\S/.test(l))).toHaveLength(9);
    expect(list).toMatch(
      /This run: generative:gguf:models\/tiny\/judge\.gguf, average F1 59\.2 on pb \(300 samples\) — not the full four ProcessBench subsets, so not ranked/,
    );
  });

  it('a run over the full four subsets is ranked among the published averages', () => {
    const m = (n: number) => ({ error_acc: 50, correct_acc: 50, f1: 50, n });
    const text = formatProcessBenchReport(
      report({ gsm8k: m(400), math: m(1000), olympiadbench: m(1000), omnimath: m(1000) }, 50),
    );
    const lines = text.split('\n');
    const at = lines.findIndex((l) => l.startsWith('→ this run'));
    expect(at).toBeGreaterThan(0);
    expect(lines[at - 1]).toMatch(/Qwen2\.5-Math-7B-PRM800K\s+56\.5/);
    expect(lines[at + 1]).toMatch(/Skywork-PRM-7B\s+42\.1/);
  });
});
