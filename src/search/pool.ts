import { addCosts, emptyCost } from '../core/cost.js';
import type { Cost } from '../core/types.js';
import type { SearchRuntime, StepRuling } from './runtime.js';

/**
 * The pool of whole solutions that sampling strategies share (search-and-learn: sample N once per
 * problem, score every n ≤ N and every aggregation from it). Member i is drawn with its own seed,
 * a function of the search seed, the problem and i only — not of the strategy or of N — so the n=2
 * candidates are the first two of the n=4 pool, and plain sampling is member 0: best-of-1 =
 * majority@1 = plain sampling exactly, also across separate runs. Each member is judged at most
 * once, with its own seed, so best-of-n and weighted vote at every n read the same rulings.
 */

/** One drawn solution and what drawing it cost. */
export interface PoolMember {
  text: string;
  cost: Cost;
  /** The reply came from the simulated world (a marked sim-server reply). */
  simulated: boolean;
}

/** The judge's rulings on one member's chunks and what they cost. */
export interface PoolJudgment {
  rulings: StepRuling[];
  cost: Cost;
  formatFailures: number;
  replies: number;
}

/** One problem's pool: members drawn and judged on demand, each once. */
export class SolutionPool {
  private readonly members: Array<Promise<PoolMember>> = [];
  private readonly judgments: Array<Promise<PoolJudgment>> = [];
  /** What the pool itself cost (each member drawn and judged once), whatever reads it. */
  private spent: Cost = emptyCost();

  /** Member i (drawn now through `rt` if it was not drawn yet). */
  member(rt: SearchRuntime, i: number): Promise<PoolMember> {
    let m = this.members[i];
    if (!m) {
      m = rt.drawPoolMember(i).then((x) => {
        this.spent = addCosts(this.spent, x.cost);
        return x;
      });
      this.members[i] = m;
    }
    return m;
  }

  /** The judge's rulings on member i's chunks (judged now if they were not yet). */
  judgment(rt: SearchRuntime, i: number, chunks: readonly string[]): Promise<PoolJudgment> {
    let j = this.judgments[i];
    if (!j) {
      j = rt.judgePoolMember(i, chunks).then((x) => {
        this.spent = addCosts(this.spent, x.cost);
        return x;
      });
      this.judgments[i] = j;
    }
    return j;
  }

  /** Members drawn so far. */
  get size(): number {
    return this.members.length;
  }

  /** What drawing and judging the pool cost, once per member. */
  cost(): Cost {
    return addCosts(this.spent);
  }
}

/**
 * Pools by problem id, shared by the strategies of one sweep (`bench search`): every (strategy, n)
 * point reads its first n members from the same pool. Holds every pool until {@link clear}.
 */
export class SolutionPools {
  private readonly pools = new Map<string, SolutionPool>();

  get(problemId: string): SolutionPool {
    let p = this.pools.get(problemId);
    if (!p) {
      p = new SolutionPool();
      this.pools.set(problemId, p);
    }
    return p;
  }

  /** Members drawn and what they cost, summed over problems. */
  totals(): { problems: number; samples: number; cost: Cost } {
    let samples = 0;
    let cost = emptyCost();
    for (const p of this.pools.values()) {
      samples += p.size;
      cost = addCosts(cost, p.cost());
    }
    return { problems: this.pools.size, samples, cost };
  }

  clear(): void {
    this.pools.clear();
  }
}
