/**
 * Published ProcessBench averages (METHODS §4), printed beside a run's own numbers. Only the
 * average F1 is listed: per-subset published numbers are not part of the project's reference
 * sheet, and the table does not quote numbers it cannot source.
 */
export interface PublishedResult {
  model: string;
  /** Mean F1 over the four subsets, percent. */
  averageF1: number;
  kind: 'PRM' | 'critic' | 'generative judge';
  note?: string;
}

export const PUBLISHED_PROCESSBENCH: readonly PublishedResult[] = [
  { model: 'Math-Shepherd-PRM-7B', averageF1: 31.5, kind: 'PRM' },
  { model: 'Skywork-PRM-7B', averageF1: 42.1, kind: 'PRM' },
  { model: 'Qwen2.5-Math-7B-PRM800K', averageF1: 56.5, kind: 'PRM' },
  { model: 'GPT-4o', averageF1: 61.9, kind: 'critic' },
  { model: 'QwQ-32B', averageF1: 71.5, kind: 'critic' },
  { model: 'o1-mini', averageF1: 87.9, kind: 'critic' },
  { model: 'StepWiser 7B (Rel-Effective)', averageF1: 61.9, kind: 'generative judge' },
  { model: 'StepWiser 7B (Rel-Effective, Maj@8)', averageF1: 64.1, kind: 'generative judge' },
  {
    model: 'discriminative 7B baselines (StepWiser paper)',
    averageF1: 35.7,
    kind: 'PRM',
    note: 'range 35.7–39.7',
  },
];
