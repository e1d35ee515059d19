import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';

/** Issue 15 acceptance 4: bench/segmentation.ts prints JSON for both modes on the sim world. */
describe('bench/segmentation.ts', () => {
  it('prints chunks per solution and requests per labeled solution, paragraph vs tags, on the sim world', () => {
    const script = new URL('../../bench/segmentation.ts', import.meta.url).pathname;
    const r = spawnSync(
      process.execPath,
      ['--import', 'tsx', script, '--problems', '12', '--n', '2', '--rollouts', '2'],
      { encoding: 'utf8', timeout: 120_000 },
    );
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    const report = JSON.parse(r.stdout);
    expect(report.simulated).toBe(true);
    for (const mode of ['paragraph', 'tags']) {
      expect(report[mode].chunksPerSolution).toBeGreaterThan(1);
      expect(report[mode].label.requestsPerLabeledSolution).toBeGreaterThan(1);
      expect(report[mode].chunkReset.judgeCallsPerSolution).toBeGreaterThan(1);
      expect(report[mode].brokenTags).toBe(0);
    }
    // Self-segmented chunks group steps: fewer chunks, so fewer label requests.
    expect(report.tags.chunksPerSolution).toBeLessThan(report.paragraph.chunksPerSolution);
    expect(report.tags.label.requestsPerLabeledSolution).toBeLessThan(
      report.paragraph.label.requestsPerLabeledSolution,
    );
    expect(report.tagsOverParagraph.chunksPerSolution).toBeLessThan(1);
  }, 150_000);

  it('--world tiny: the tiny real policy and judge in process, both segmentations, with accuracy intervals', () => {
    const script = new URL('../../bench/segmentation.ts', import.meta.url).pathname;
    const r = spawnSync(
      process.execPath,
      ['--import', 'tsx', script, '--world', 'tiny', '--problems', '4', '--n', '1', '--rollouts', '2'],
      { encoding: 'utf8', timeout: 240_000 },
    );
    expect(r.status, r.stderr).toBe(0);
    const report = JSON.parse(r.stdout);
    expect(report).toMatchObject({ world: 'tiny', simulated: false, problems: 4 });
    for (const mode of ['paragraph', 'tags']) {
      expect(report[mode].brokenTags).toBe(0);
      expect(report[mode].label.requestsPerLabeledSolution).toBe(report[mode].chunksPerSolution);
      expect(report[mode].chunkReset.judgeCallsPerSolution).toBeGreaterThan(0);
      const [lo, hi] = report[mode].sampleAccuracyInterval;
      expect(lo).toBeLessThanOrEqual(report[mode].sampleAccuracy);
      expect(hi).toBeGreaterThanOrEqual(report[mode].sampleAccuracy);
    }
    // The tiny policy's tags chunks group a run of one family of operations: fewer chunks.
    expect(report.tags.chunksPerSolution).toBeLessThan(report.paragraph.chunksPerSolution);
    expect(report.accuracyDifference.chunkReset.interval).toHaveLength(2);
  }, 300_000);
});
