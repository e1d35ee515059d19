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
/** The scripts that make the judge: its data, one judge's training, the committed judge. */
const SCRIPTS = ['python/tiny/judge_data.sh', 'python/tiny/judge_run.sh', 'python/tiny/train_judge.sh'];

const read = (rel: string) => readFileSync(join(ROOT, rel), 'utf8');

/**
 * What each path may run with python: `-m tiny.<module>` and nothing else (no `-c`, no script file,
 * no stdin), each module then checked by test/tiny/lineage_lint.py. tiny.task may only write
 * problem rows (question and final answer) of the training split; build_judge and
 * selection_compare run after training, to package and score the finished model.
 */
const JUDGE_MODULES = [
  'task',
  'from_gguf',
  'judge_analyses',
  'train_judge',
  'grpo_judge',
  'export_gguf',
  'signals',
  'build_judge',
];
const SELECTION_MODULES = ['task', 'from_gguf', 'select_sft', 'export_gguf', 'selection_compare'];
const AFTER_TRAINING = ['build_judge', 'selection_compare'];

/** A python interpreter on a shell line: the binary, or $PY (not PYTHONPATH=python, not a path). */
const PYTHON = /(?<![\w=:/.-])(?:\/usr\/bin\/)?python[0-9.]*(?![\w/.:-])|\$\{?PY\b\}?/g;

/** The logical lines of a script (continuations joined, comments dropped). */
function logicalLines(script: string): string[] {
  return read(script)
    .replace(/\\\n/g, ' ')
    .split('\n')
    .filter((l) => !l.trimStart().startsWith('#') && l.trim() !== '');
}

/** Every python invocation of a script, as the module it runs; anything else is an error. */
function pythonRuns(script: string): { module: string; line: string }[] {
  const runs: { module: string; line: string }[] = [];
  for (const line of logicalLines(script)) {
    // The one line that names the interpreter for $PY.
    if (/^PY="nice -n \d+ \/usr\/bin\/python3"$/.test(line.trim())) continue;
    for (const m of line.matchAll(PYTHON)) {
      const rest = line.slice((m.index ?? 0) + m[0].length);
      const run = /^\s+-m\s+tiny\.(\w+)(?=\s|$)/.exec(rest);
      if (!run) throw new Error(`${script}: python run other than \`-m tiny.<module>\`: ${line.trim()}`);
      runs.push({ module: run[1], line });
    }
    // Other shells run only the checked scripts.
    for (const m of line.matchAll(/(?:^|[;&|]\s*|\s)(?:sh|bash|source|\.)\s+(\S+)/g))
      if (!SCRIPTS.includes(m[1]) && m[1] !== '"$0"')
        throw new Error(`${script}: runs ${m[1]}: ${line.trim()}`);
    if (/\b(?:sh|bash)\s+-c\b|(?:^|[;&|]\s*)eval\s/.test(line))
      throw new Error(`${script}: shell code from a string: ${line.trim()}`);
  }
  return runs;
}

type Lint = Record<string, { closure: string[]; problems: string[] }>;
/** grpo_judge loads the project's verl reward hook from this file; it is linted like a module. */
const REWARD_HOOK = join(ROOT, 'integrations/verl/stepwise_reward.py');
function lint(modules: string[]): Lint {
  const run = spawnSync(
    '/usr/bin/python3',
    [
      join(ROOT, 'test/tiny/lineage_lint.py'),
      PY,
      ...modules,
      '--after',
      ...AFTER_TRAINING,
      '--file',
      REWARD_HOOK,
    ],
    { encoding: 'utf8', timeout: 60_000 },
  );
  if (run.status !== 0) throw new Error(run.stderr);
  return JSON.parse(run.stdout) as Lint;
}

/**
 * Prepended to the python that runs training code in these tests: tiny.task and tiny.truth cannot
 * be imported by any route (a finder first on sys.meta_path, so importlib.import_module too), and
 * an audit hook records every file opened in the project outside python/ and the reward hook
 * (build/, models/, data)
 * and every file under /work/shared or named like a truth set. Records are kept even when the
 * code catches the error, and printed as VIOLATIONS at the end.
 */
const GUARD = `
import importlib.abc, json, os, sys
VIOLATIONS = []
ROOT = ${JSON.stringify(ROOT.replace(/\/$/, ''))}
CODE = os.path.join(ROOT, "python") + os.sep
HOOK = os.path.join(ROOT, "integrations", "verl") + os.sep
class NoTruth(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name in ("tiny.task", "tiny.truth"):
            VIOLATIONS.append("import " + name)
            raise ImportError("exact truth reached a training path: " + name)
        return None
sys.meta_path.insert(0, NoTruth())
def audit(event, args):
    if event == "open" and isinstance(args[0], (str, bytes, os.PathLike)):
        p = os.path.realpath(os.fsdecode(args[0]))
        name = os.path.basename(p)
        # The project's code, and grpo_judge's reward hook (its source and bytecode), may be read.
        code = p.startswith(CODE) or (p.startswith(HOOK) and name.startswith("stepwise_reward."))
        inside = p.startswith(ROOT + os.sep) and not code
        if inside or p.startswith("/work/shared/") or "truth" in name or name.startswith("pb"):
            VIOLATIONS.append("open " + p)
sys.addaudithook(audit)
`;

/**
 * A random tiny policy, saved as <dir>/policy.pt (the --init of the training entry points): a
 * snippet of a guarded script, after \`d = sys.argv[1]\`.
 */
const TINY_POLICY = `import torch
from tiny.model import Config, Decoder
from tiny.vocab import policy_vocab
torch.manual_seed(0)
policy = Decoder(Config(vocab=len(policy_vocab()), dim=16, layers=1, heads=2, ffn=32))
torch.save({"model": policy.state_dict(), "config": policy.cfg.to_dict()}, d + "/policy.pt")`;

/**
 * Runs \`script\` after GUARD with /usr/bin/python3, \`dir\` as sys.argv[1] and the tiny package
 * importable; it must exit 0. Returns its last stdout line, parsed (the script prints it as JSON).
 */
function runGuarded<T>(script: string, dir: string, env: Record<string, string> = {}, timeout = 300_000): T {
  const run = spawnSync('/usr/bin/python3', ['-c', `${GUARD}\n${script}`, dir], {
    env: { ...process.env, PYTHONPATH: PY, ...env },
    encoding: 'utf8',
    timeout,
  });
  expect(run.status, run.stderr).toBe(0);
  return JSON.parse(run.stdout.trim().split('\n').pop() as string) as T;
}

describe("the tiny judge's training path never reads exact truth", () => {
  it('the scripts run python only as `-m tiny.<module>` of the judge path (tiny.task only writes training problem rows) and no filter against an oracle', () => {
    const modules = new Set<string>();
    for (const script of SCRIPTS) {
      expect(read(script), script).not.toMatch(/consistent-only/);
      for (const { module, line } of pythonRuns(script)) {
        expect(JUDGE_MODULES, `${script}: tiny.${module} is not on the judge path`).toContain(module);
        // tiny.task appears only as the writer of question/answer rows of the training split.
        if (module === 'task') expect(line, script).toMatch(/-m tiny\.task --split train /);
        modules.add(module);
      }
      for (const line of logicalLines(script)) {
        expect(line, `${script}: ${line}`).not.toMatch(/truth/);
        // The exact-truth ProcessBench set is read only by the final scoring of a finished judge.
        if (/build\/tiny\/loop|pb\.jsonl/.test(line))
          expect(line, script).toMatch(/eval processbench .*--path build\/tiny\/loop\/pb\.jsonl/);
      }
    }
    // The training path as it stands (a module added to it must be added above, and is linted).
    expect([...modules].sort()).toEqual([...JUDGE_MODULES].sort());
  });

  it('every module the scripts run, and every python/tiny module it imports, has no route to exact truth (imports, dynamic code, truth files or functions)', () => {
    const report = lint(JUDGE_MODULES.filter((m) => m !== 'task'));
    expect(report.train_judge.closure).toEqual(expect.arrayContaining(['trainer', 'model', 'vocab']));
    expect(report.grpo_judge.closure).toContain('train_judge');
    expect(report[REWARD_HOOK]).toBeDefined();
    for (const [m, r] of Object.entries(report)) expect(r.problems, `tiny.${m}`).toEqual([]);
  });

  it("the row builders train on exactly the export's rows and Monte Carlo labels, including the labels exact truth would call wrong", () => {
    const dir = tempDir('stepwise-tiny-rows-lineage-');
    // Monte Carlo labels disagree with exact truth both ways here (a right chunk labelled Negative,
    // wrong chunks labelled Positive): a filter or flip against an oracle, imported or inline,
    // changes the rows.
    const problem =
      'Start with 7. Multiply by 3, then multiply by 3, then subtract 3. What is the final number?';
    const fixture = [
      { history: [], chunk: '7×3=21', label: 'Positive' }, // right, agrees
      { history: ['7×3=21'], chunk: '21×3=63', label: 'Negative' }, // right, labelled wrong
      { history: ['7×3=21'], chunk: '21×3=64', label: 'Positive' }, // wrong, labelled right
      { history: ['7×3=21', '21×3=63'], chunk: '63-3=60 \\boxed{60}', label: 'Positive' }, // right
      { history: ['7×3=21', '21×3=63'], chunk: '63-3=50 \\boxed{50}', label: 'Positive' }, // wrong, labelled right
      { history: ['7×3=22'], chunk: '22×3=66', label: 'Negative' }, // wrong prefix, agrees
    ];
    const rows = fixture.map((r, i) => ({
      id: `rows/${i}`,
      prompt: renderJudgeMessages({ problem, history: r.history, chunk: r.chunk, segmentation: 'tags' }),
      label: i % 2 === 0 ? r.label : r.label === 'Positive', // both label spellings of the export
    }));
    writeFileSync(join(dir, 'export.jsonl'), `${rows.map((r) => JSON.stringify(r)).join('\n')}\n`);
    writeFileSync(
      join(dir, 'analyses.jsonl'),
      `${rows.map((r, i) => JSON.stringify({ id: r.id, analysis: `analysis ${i}` })).join('\n')}\n`,
    );
    const picks = [
      { id: 'a', question: problem, chosen: { text: 'c1' }, outcomeOnly: { text: 'o1' } },
      { id: 'b', question: problem, chosen: { text: 'c2' }, outcomeOnly: { text: 'o2' } },
      { id: 'c', question: problem, chosen: null, outcomeOnly: null },
    ];
    writeFileSync(join(dir, 'selected.jsonl'), `${picks.map((r) => JSON.stringify(r)).join('\n')}\n`);
    const script = `from tiny import select_sft, train_judge
d = sys.argv[1]
out = {"verdict": train_judge.load_rows(d + "/export.jsonl", None),
       "generative": train_judge.load_rows(d + "/export.jsonl", d + "/analyses.jsonl"),
       "splits": [train_judge.split(train_judge.load_rows(d + "/export.jsonl", None), s) for s in (0, 1, 2)],
       "flat": [train_judge.flatten(json.loads(l)["prompt"]) for l in open(d + "/export.jsonl")],
       "picks": {p: select_sft.load_pairs(d + "/selected.jsonl", p) for p in ("chosen", "outcomeOnly")},
       "violations": VIOLATIONS}
print(json.dumps(out))
`;
    const out = runGuarded<ReturnType<typeof JSON.parse>>(script, dir, { OMP_NUM_THREADS: '1' }, 120_000);
    expect(out.violations).toEqual([]);
    const sorted = (xs: unknown[]) => xs.map((x) => JSON.stringify(x)).sort();
    const labels = fixture.map((r) => r.label);
    expect(out.verdict).toEqual(
      out.flat.map((p: string, i: number) => [p, `\\boxed{${labels[i]}}`, labels[i]]),
    );
    expect(out.generative).toEqual(
      out.flat.map((p: string, i: number) => [p, `analysis ${i}\n\\boxed{${labels[i]}}`, labels[i]]),
    );
    // Each split partitions the rows: none dropped, none changed.
    for (const [train, valid] of out.splits)
      expect(sorted([...train, ...valid])).toEqual(sorted(out.verdict));
    expect(out.picks).toEqual({
      chosen: [
        [problem, 'c1'],
        [problem, 'c2'],
      ],
      outcomeOnly: [
        [problem, 'o1'],
        [problem, 'o2'],
      ],
    });
  }, 120_000);

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
from tiny import grpo_judge, judge_analyses, train_judge
d = sys.argv[1]
${TINY_POLICY}
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
print(json.dumps({"loaded": sorted(m for m in sys.modules if m.startswith("tiny.")), "violations": VIOLATIONS}))
`;
      const run = runGuarded<{ loaded: string[]; violations: string[] }>(script, dir, {
        STEPWISE_REWARD_URL: server!.url,
        OPENBLAS_NUM_THREADS: '1',
      });
      const loaded = run.loaded;
      expect(loaded).toContain('tiny.grpo_judge');
      expect(loaded.filter((m) => m === 'tiny.task' || m === 'tiny.truth')).toEqual([]);
      expect(run.violations).toEqual([]);
      // GRPO asked the reward server: its log names it and records rewards and format rates.
      const log = readFileSync(join(dir, 'rl', 'log.jsonl'), 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l));
      expect(log[0].start.rewardUrl).toBe(server!.url);
      expect(log.some((r) => r.eval)).toBe(true);
      // Each run trained and validated on all four rows (one is a right chunk the Monte Carlo
      // label calls wrong): a filter in a training entry point, after the row builder, shows here.
      for (const run of ['verdict', 'gen', 'rl']) {
        const start = JSON.parse(readFileSync(join(dir, run, 'log.jsonl'), 'utf8').split('\n')[0]).start;
        expect(start, run).toMatchObject({ rows: 4 });
        expect(start.train + start.valid, run).toBe(4);
      }
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

  it('the script runs python only as `-m tiny.<module>`, writes training and held-out problem rows only, trains on the select output, and evaluates after training', () => {
    const lines = logicalLines(SCRIPT);
    const modules = new Set<string>();
    for (const { module, line } of pythonRuns(SCRIPT)) {
      expect(SELECTION_MODULES, `tiny.${module} is not on the data selection path`).toContain(module);
      if (module === 'task')
        expect(line).toMatch(/-m tiny\.task --split train |-m tiny\.task --split heldout --offset 1300 /);
      modules.add(module);
    }
    expect([...modules].sort()).toEqual([...SELECTION_MODULES].sort());
    const at = (re: RegExp) => lines.flatMap((l, i) => (re.test(l) ? [i] : []));
    for (const line of lines)
      expect(line, line).not.toMatch(/truth|selection_traces|consistent-only|pb\.jsonl|tiny\/loop/);
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

  it('no module the script runs has a route to exact truth (imports, dynamic code, truth files or functions)', () => {
    const report = lint(SELECTION_MODULES.filter((m) => m !== 'task'));
    expect(report.select_sft.closure).toContain('trainer');
    for (const [m, r] of Object.entries(report)) expect(r.problems, `tiny.${m}`).toEqual([]);
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
from tiny import select_sft, selection_compare
d = sys.argv[1]
${TINY_POLICY}
for pick in ("chosen", "outcomeOnly"):
    sys.argv = ["select_sft", "--selected", d + "/selected.jsonl", "--pick", pick, "--init", d + "/policy.pt",
                "--out", d + "/" + pick, "--steps", "2", "--batch", "2", "--warmup", "1"]
    select_sft.main()
print(json.dumps({"loaded": sorted(m for m in sys.modules if m.startswith("tiny.")), "violations": VIOLATIONS}))
`;
    const run = runGuarded<{ loaded: string[]; violations: string[] }>(script, dir, {
      OPENBLAS_NUM_THREADS: '1',
      OMP_NUM_THREADS: '1',
    });
    const loaded = run.loaded;
    expect(loaded).toContain('tiny.select_sft');
    expect(loaded.filter((m) => m === 'tiny.task' || m === 'tiny.truth')).toEqual([]);
    expect(run.violations).toEqual([]);
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
