/**
 * Exact answer checking (issue #27): speed and verdicts of today's checker against the checker
 * before exact arithmetic (main@ea7ccab), in one process, as JSON.
 *
 *   npx tsx bench/verify-exact.ts [--rounds N] [--baseline COMMIT]
 *
 * The baseline's src/ is extracted with `git archive` into a temporary directory (removed at the
 * end) and imported beside ours. Each round times one pass of each checker over the 453 peer
 * cases (../shared/eval/answer-equiv), parse caches emptied before every case as in
 * bench/verify.ts, alternating which checker goes first. The headline takes each case's fastest
 * time over the rounds (load from other jobs only adds time) and sums them; `speedRatio` is
 * baseline time / ours (`pass`: ≥ 0.8, i.e. within 20%). The median whole pass is reported beside it. Both checkers are also scored on the
 * peer cases and on the held-out exactness suite (test/fixtures/verify/exactness.jsonl).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';

interface Case {
  id: string;
  gold: string;
  pred: string;
  equal: boolean;
  kind: string;
  extract_side?: 'pred' | 'gold' | 'both';
}

interface Checker {
  extractAnswer(text: string): string | null;
  isEquivalent(gold: string, pred: string | null): boolean;
  warmUpVerifier(): void;
  clearParseCaches(): void;
}

function argValue(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

const repo = fileURLToPath(new URL('..', import.meta.url));
const baselineCommit = argValue('--baseline') ?? 'ea7ccab';
const rounds = Number(argValue('--rounds') ?? 9);
const dataRoot = process.env.STEPWISE_DATA ?? join(repo, '..', 'shared', 'data');
const read = (file: string): Case[] =>
  readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as Case);
const peer = read(join(dataRoot, '..', 'eval', 'answer-equiv', 'answer_equiv_cases.jsonl'));
const exactness = read(join(repo, 'test', 'fixtures', 'verify', 'exactness.jsonl'));

async function load(root: string): Promise<Checker> {
  const index = await import(join(root, 'src', 'verify', 'index.ts'));
  const numeric = await import(join(root, 'src', 'verify', 'numeric.ts'));
  return { ...index, clearParseCaches: numeric.clearParseCaches } as Checker;
}

function compareOne(k: Checker, c: Case): boolean {
  let gold: string | null = c.gold;
  let pred: string | null = c.pred;
  if (c.kind === 'extract') {
    const side = c.extract_side ?? 'pred';
    if (side === 'pred' || side === 'both') pred = k.extractAnswer(pred);
    if (side === 'gold' || side === 'both') gold = k.extractAnswer(gold);
    if (gold === null || pred === null) return false;
  }
  return k.isEquivalent(gold, pred);
}

/** One pass, caches emptied before each case (not timed): milliseconds per case. */
function timedPass(k: Checker, cases: Case[]): number[] {
  return cases.map((c) => {
    k.clearParseCaches();
    const t = performance.now();
    compareOne(k, c);
    return performance.now() - t;
  });
}

/** Per case, the fastest of the rounds (other jobs' load only ever adds time), summed. */
function sumOfMinima(passes: number[][]): number {
  let total = 0;
  for (let i = 0; i < passes[0].length; i++) total += Math.min(...passes.map((p) => p[i]));
  return total;
}

function score(k: Checker, cases: Case[]) {
  let agree = 0;
  const falsePositives: string[] = [];
  const falseNegatives: string[] = [];
  for (const c of cases) {
    const v = compareOne(k, c);
    if (v === c.equal) agree++;
    else (v ? falsePositives : falseNegatives).push(c.id);
  }
  return { total: cases.length, agree, falsePositives, falseNegatives };
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

const tmp = mkdtempSync(join(tmpdir(), 'stepwise-verify-baseline-'));
try {
  const tar = execFileSync('git', ['-C', repo, 'archive', baselineCommit, 'src'], { maxBuffer: 1 << 28 });
  execFileSync('tar', ['-x', '-C', tmp], { input: tar });
  symlinkSync(join(repo, 'node_modules'), join(tmp, 'node_modules'));
  const before = await load(tmp);
  const after = await load(repo);
  for (const k of [before, after]) {
    k.warmUpVerifier();
    for (let i = 0; i < 20; i++) k.isEquivalent(`\\frac{7}{9}+${i}`, `0.7777777778+${i}`);
  }
  const ms = { before: [] as number[][], after: [] as number[][] };
  for (let r = 0; r < rounds; r++) {
    const order = r % 2 === 0 ? (['before', 'after'] as const) : (['after', 'before'] as const);
    for (const name of order) ms[name].push(timedPass(name === 'before' ? before : after, peer));
  }
  const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
  const perSecond = (ms: number) => Math.round((peer.length / (ms / 1000)) * 10) / 10;
  const best = { before: sumOfMinima(ms.before), after: sumOfMinima(ms.after) };
  const medians = { before: median(ms.before.map(sum)), after: median(ms.after.map(sum)) };
  const ratio = best.before / best.after;
  console.log(
    JSON.stringify(
      {
        measure:
          'median over rounds of one pass over the peer cases, parse caches emptied before each case, checkers alternating',
        baseline: baselineCommit,
        rounds,
        comparisonsPerSecond: { before: perSecond(best.before), after: perSecond(best.after) },
        speedRatio: Math.round(ratio * 1000) / 1000,
        pass: ratio >= 0.8,
        medianPass: {
          note: 'median over rounds of the whole pass (load spikes included)',
          comparisonsPerSecond: { before: perSecond(medians.before), after: perSecond(medians.after) },
          speedRatio: Math.round((medians.before / medians.after) * 1000) / 1000,
        },
        passMs: {
          before: ms.before.map((x) => Math.round(sum(x))),
          after: ms.after.map((x) => Math.round(sum(x))),
        },
        peer: { before: score(before, peer), after: score(after, peer) },
        exactness: { before: score(before, exactness), after: score(after, exactness) },
      },
      null,
      2,
    ),
  );
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
