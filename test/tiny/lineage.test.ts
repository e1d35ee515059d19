import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderJudgeMessages } from '../../src/prompts/judge.js';
import { type ServerCli, startServerCli } from '../support/server-cli.js';
import { tempDir } from '../support/temp.js';

/**
 * Exact truth is for scoring only (issue 30): no training target, filter, checkpoint or recipe
 * choice of the tiny judge may see it. In the tiny world the exact truth lives in two modules,
 * `tiny.task` (first_error, the problem's operations) and `tiny.truth` (ProcessBench rows with
 * exact first errors). This file checks the judge's training path two ways: statically (what the
 * committed scripts run, and every module those import, transitively) and by running the
 * training code with both modules made unimportable (a lazy or hidden import fails the run).
 */

const ROOT = new URL('../../', import.meta.url).pathname;
const PY = join(ROOT, 'python');
const TRUTH = new Set(['task', 'truth']);
/** The scripts that make the judge: its data, one judge's training, the committed judge. */
const SCRIPTS = ['python/tiny/judge_data.sh', 'python/tiny/judge_run.sh', 'python/tiny/train_judge.sh'];

const read = (rel: string) => readFileSync(join(ROOT, rel), 'utf8');

/** Modules of python/tiny a module imports (`from .x import`, `from tiny.x import`, `import tiny.x`). */
function imports(module: string): string[] {
  const text = readFileSync(join(PY, 'tiny', `${module}.py`), 'utf8');
  const found = new Set<string>();
  for (const m of text.matchAll(/^\s*from\s+(?:\.|tiny\.)(\w+)\s+import|^\s*import\s+tiny\.(\w+)/gm))
    found.add(m[1] ?? m[2]);
  for (const m of text.matchAll(/^\s*from\s+(?:\.|tiny)\s+import\s+([\w, ]+)/gm))
    for (const name of m[1].split(',')) found.add(name.trim());
  return [...found];
}

function closure(module: string): Set<string> {
  const seen = new Set<string>();
  const todo = [module];
  while (todo.length) {
    const m = todo.pop() as string;
    if (seen.has(m)) continue;
    seen.add(m);
    todo.push(...imports(m));
  }
  return seen;
}

/** Modules of python/tiny a script runs (`-m tiny.x`, `from tiny.x import`). */
function modulesRun(script: string): Set<string> {
  const run = new Set<string>();
  for (const m of read(script).matchAll(/-m tiny\.(\w+)|from tiny\.(\w+) import/g)) run.add(m[1] ?? m[2]);
  return run;
}

describe("the tiny judge's training path never reads exact truth", () => {
  it('the scripts run no truth module (tiny.task only writes the problem rows) and no filter against an oracle', () => {
    for (const script of SCRIPTS) {
      const text = read(script);
      expect(text, script).not.toMatch(/consistent-only/);
      const lines = text.split('\n').filter((l) => !l.trimStart().startsWith('#'));
      for (const line of lines) {
        expect(line, `${script}: ${line}`).not.toMatch(/tiny\.truth|from tiny import truth/);
        // tiny.task appears only as the writer of question/answer rows of the training split.
        if (/tiny\.task/.test(line)) expect(line, script).toMatch(/-m tiny\.task --split train /);
        // The exact-truth ProcessBench set is read only by the final scoring of a finished judge.
        if (/build\/tiny\/loop|pb\.jsonl/.test(line))
          expect(line, script).toMatch(/--path build\/tiny\/loop\/pb\.jsonl/);
      }
    }
  });

  it('every module the scripts run imports neither tiny.task nor tiny.truth, directly or through another', () => {
    const run = new Set<string>();
    for (const script of SCRIPTS) for (const m of modulesRun(script)) run.add(m);
    run.delete('task');
    // The training path as it stands (a module added to it is checked the same way).
    for (const m of ['train_judge', 'grpo_judge', 'judge_analyses', 'from_gguf', 'signals', 'build_judge'])
      expect(run.has(m), `tiny.${m} is on the judge's path`).toBe(true);
    for (const m of run) {
      const reached = [...closure(m)].filter((x) => TRUTH.has(x));
      expect(reached, `tiny.${m} reaches ${reached.join(', ')}`).toEqual([]);
    }
  });

  describe('running the training code with tiny.task and tiny.truth unimportable', () => {
    const dir = tempDir('stepwise-tiny-lineage-');
    let server: ServerCli | undefined;
    beforeAll(async () => {
      server = await startServerCli(['serve', 'rewards', '--kind', 'judge-agreement', '--port', '0'], dir);
    }, 60_000);
    afterAll(async () => {
      await server?.stop();
    });

    it('judge SFT (verdict and generative targets), the policy-written analyses and GRPO through the reward server run and learn nothing from truth', () => {
      const rows = [
        { history: [], chunk: '7×3=21\n21×3=63', label: 'Positive' },
        { history: ['7×3=21\n21×3=63'], chunk: '63-3=50 \\boxed{50}', label: 'Negative' },
        { history: [], chunk: '11+8=19', label: 'Positive' },
        { history: ['11+8=19'], chunk: '19×3=57 \\boxed{57}', label: 'Negative' },
      ].map((r, i) => ({
        id: `fixture/${i}`,
        prompt: renderJudgeMessages({
          problem:
            i < 2
              ? 'Start with 7. Multiply by 3, then multiply by 3, then subtract 3. What is the final number?'
              : 'Start with 11. Add 8, then multiply by 3. What is the final number?',
          history: r.history,
          chunk: r.chunk,
          segmentation: 'tags',
        }),
        label: r.label,
      }));
      const data = join(dir, 'judge-rl.jsonl');
      writeFileSync(data, `${rows.map((r) => JSON.stringify(r)).join('\n')}\n`);
      const script = `
import importlib.abc, json, sys
class NoTruth(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name in ("tiny.task", "tiny.truth"):
            raise ImportError("exact truth reached the judge's training path: " + name)
        return None
sys.meta_path.insert(0, NoTruth())
import torch
from tiny import grpo_judge, judge_analyses, train_judge
from tiny.model import Config, Decoder
from tiny.vocab import policy_vocab
d = sys.argv[1]
torch.manual_seed(0)
policy = Decoder(Config(vocab=len(policy_vocab()), dim=16, layers=1, heads=2, ffn=32))
torch.save({"model": policy.state_dict(), "config": policy.cfg.to_dict()}, d + "/policy.pt")
rows = [json.loads(l) for l in open(d + "/judge-rl.jsonl")]
with open(d + "/analyses.jsonl", "w") as f:
    for r, a in zip(rows, judge_analyses.rederive(policy, policy_vocab(), rows)):
        f.write(json.dumps({"id": r["id"], "analysis": a}) + "\\n")
common = ["--data", d + "/judge-rl.jsonl", "--init", d + "/policy.pt", "--steps", "2", "--eval-every", "2", "--batch", "2"]
sys.argv = ["train_judge", *common, "--out", d + "/verdict", "--target", "verdict"]
train_judge.main()
sys.argv = ["train_judge", *common, "--out", d + "/gen", "--target", "generative", "--analyses", d + "/analyses.jsonl"]
train_judge.main()
sys.argv = ["grpo_judge", "--data", d + "/judge-rl.jsonl", "--init", d + "/gen/ckpt-2.pt", "--out", d + "/rl",
            "--steps", "2", "--prompts", "2", "--max-new", "6", "--eval-every", "2"]
grpo_judge.main()
print(json.dumps({"loaded": sorted(m for m in sys.modules if m.startswith("tiny."))}))
`;
      const run = spawnSync('/usr/bin/python3', ['-c', script, dir], {
        env: { ...process.env, PYTHONPATH: PY, STEPWISE_REWARD_URL: server!.url, OPENBLAS_NUM_THREADS: '1' },
        encoding: 'utf8',
        timeout: 300_000,
      });
      expect(run.status, run.stderr).toBe(0);
      const loaded = JSON.parse(run.stdout.trim().split('\n').pop() as string).loaded as string[];
      expect(loaded).toContain('tiny.grpo_judge');
      expect(loaded.filter((m) => m === 'tiny.task' || m === 'tiny.truth')).toEqual([]);
      // GRPO asked the reward server: its log names it and records rewards and format rates.
      const log = readFileSync(join(dir, 'rl', 'log.jsonl'), 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l));
      expect(log[0].start.rewardUrl).toBe(server!.url);
      expect(log.some((r) => r.eval)).toBe(true);
    }, 300_000);
  });
});

/**
 * The data selection ablation (python/tiny/data_selection.sh) trains policies: its training set is
 * what `stepwise select` picked among the policy's correct samples (final answers checked against
 * the problem's answer) by the committed judge's scores. Exact truth may score the result
 * (tiny.selection_traces, run by hand after training) and nothing else.
 */
describe('the data selection path never reads exact truth', () => {
  const SCRIPT = 'python/tiny/data_selection.sh';

  it('the script writes training and held-out problem rows only, trains on the select output, and evaluates after training', () => {
    const lines = read(SCRIPT)
      .split('\n')
      .filter((l) => !l.trimStart().startsWith('#'));
    const at = (re: RegExp) => lines.flatMap((l, i) => (re.test(l) ? [i] : []));
    for (const line of lines) {
      expect(line, line).not.toMatch(/tiny\.truth|selection_traces|from tiny import truth|consistent-only/);
      if (/tiny\.task/.test(line))
        expect(line).toMatch(/-m tiny\.task --split train |-m tiny\.task --split heldout --offset 1300 /);
    }
    // The fine-tune reads the select output and the committed policy's weights, nothing else.
    const sft = at(/-m tiny\.select_sft/);
    expect(sft.length).toBe(1);
    expect(lines[sft[0]]).toMatch(
      /--selected "\$OUT\/selected\.jsonl" --pick "\$PICK" --init "\$OUT\/base\/policy\.pt"/,
    );
    expect(lines.join('\n')).toMatch(
      /-m tiny\.from_gguf models\/tiny\/policy\.gguf "\$OUT\/base\/policy\.pt"/,
    );
    expect(lines.join('\n')).toMatch(
      /select --input "\$OUT\/samples\.jsonl" --judge generative:gguf:models\/tiny\/judge\.gguf/,
    );
    // Held-out problems are written after the last training line: they cannot feed a fine-tune.
    const heldout = at(/--split heldout/);
    expect(heldout.length).toBe(1);
    expect(heldout[0]).toBeGreaterThan(Math.max(...sft, ...at(/tiny\.export_gguf/)));
  });

  it('no module the script runs reaches tiny.task or tiny.truth', () => {
    const run = modulesRun(SCRIPT);
    run.delete('task');
    for (const m of ['select_sft', 'from_gguf', 'export_gguf', 'selection_compare'])
      expect(run.has(m), `tiny.${m} is on the data selection path`).toBe(true);
    for (const m of run) {
      const reached = [...closure(m)].filter((x) => TRUTH.has(x));
      expect(reached, `tiny.${m} reaches ${reached.join(', ')}`).toEqual([]);
    }
  });

  it('the fine-tune runs with tiny.task and tiny.truth unimportable and trains on exactly the pick it is given', () => {
    const dir = tempDir('stepwise-tiny-select-lineage-');
    const row = (id: string, chosen: string | null, outcome: string | null) => ({
      id,
      question: 'Start with 7. Add 4, then multiply by 2. What is the final number?',
      chosen: chosen === null ? null : { index: 0, text: chosen, meanScore: 1 },
      outcomeOnly: outcome === null ? null : { index: 1, text: outcome },
      candidates: [],
    });
    const rows = [
      row(
        'a',
        '<chunk>7+4=11</chunk>\n<chunk>11×2=22 \\boxed{22}</chunk>',
        '<chunk>7+4=11</chunk>\n<chunk>11×2=22 \\boxed{22}</chunk>',
      ),
      row(
        'b',
        '<chunk>7+4=11</chunk>\n<chunk>11×2=22 \\boxed{22}</chunk>',
        '<chunk>7+4=12</chunk>\n<chunk>11×2=22 \\boxed{22}</chunk>',
      ),
      row('c', null, null),
    ];
    writeFileSync(join(dir, 'selected.jsonl'), `${rows.map((r) => JSON.stringify(r)).join('\n')}\n`);
    writeFileSync(join(dir, 'bad.jsonl'), `${JSON.stringify({ id: 'x', question: 'q' })}\n`);
    const script = `
import importlib.abc, json, sys
class NoTruth(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name in ("tiny.task", "tiny.truth"):
            raise ImportError("exact truth reached the data selection path: " + name)
        return None
sys.meta_path.insert(0, NoTruth())
import torch
from tiny import select_sft, selection_compare
from tiny.model import Config, Decoder
from tiny.vocab import policy_vocab
d = sys.argv[1]
torch.manual_seed(0)
policy = Decoder(Config(vocab=len(policy_vocab()), dim=16, layers=1, heads=2, ffn=32))
torch.save({"model": policy.state_dict(), "config": policy.cfg.to_dict()}, d + "/policy.pt")
for pick in ("chosen", "outcomeOnly"):
    sys.argv = ["select_sft", "--selected", d + "/selected.jsonl", "--pick", pick, "--init", d + "/policy.pt",
                "--out", d + "/" + pick, "--steps", "2", "--batch", "2", "--warmup", "1"]
    select_sft.main()
print(json.dumps({"loaded": sorted(m for m in sys.modules if m.startswith("tiny."))}))
`;
    const run = spawnSync('/usr/bin/python3', ['-c', script, dir], {
      env: { ...process.env, PYTHONPATH: PY, OPENBLAS_NUM_THREADS: '1', OMP_NUM_THREADS: '1' },
      encoding: 'utf8',
      timeout: 300_000,
    });
    expect(run.status, run.stderr).toBe(0);
    const loaded = JSON.parse(run.stdout.trim().split('\n').pop() as string).loaded as string[];
    expect(loaded).toContain('tiny.select_sft');
    expect(loaded.filter((m) => m === 'tiny.task' || m === 'tiny.truth')).toEqual([]);
    const start = (pick: string) =>
      JSON.parse(readFileSync(join(dir, pick, 'log.jsonl'), 'utf8').split('\n')[0]).start as {
        rows: number;
        distinctResponses: number;
      };
    // Both sets cover the same two problems (none for the problem without a correct response);
    // the judge's pick repeats one text, the outcome-only pick holds two.
    expect(start('chosen')).toMatchObject({ rows: 2, distinctResponses: 1 });
    expect(start('outcomeOnly')).toMatchObject({ rows: 2, distinctResponses: 2 });
    // A file that is not a select output is refused, naming the file, line and field.
    const bad = spawnSync(
      '/usr/bin/python3',
      [
        '-m',
        'tiny.select_sft',
        '--selected',
        join(dir, 'bad.jsonl'),
        '--pick',
        'chosen',
        '--init',
        join(dir, 'policy.pt'),
        '--out',
        join(dir, 'bad'),
      ],
      { env: { ...process.env, PYTHONPATH: PY, OMP_NUM_THREADS: '1' }, encoding: 'utf8', timeout: 120_000 },
    );
    expect(bad.status).not.toBe(0);
    expect(bad.stderr).toContain(`${join(dir, 'bad.jsonl')}:1: no field 'chosen'`);
  }, 300_000);
});
