import type { World } from './model.js';
import type { Cost, Role, RoleCost } from './types.js';

/** A zero cost. */
export function emptyRoleCost(): RoleCost {
  return { calls: 0, samples: 0, promptTokens: 0, completionTokens: 0 };
}

export function emptyCost(): Cost {
  return { policy: emptyRoleCost(), judge: emptyRoleCost() };
}

/** Sum of costs, role by role. */
export function addCosts(...costs: Cost[]): Cost {
  const out = emptyCost();
  for (const c of costs) {
    for (const role of ['policy', 'judge'] as const) {
      out[role].calls += c[role].calls;
      out[role].samples += c[role].samples;
      out[role].promptTokens += c[role].promptTokens;
      out[role].completionTokens += c[role].completionTokens;
    }
  }
  return out;
}

/** Total tokens (prompt + completion) of one role or of both. */
export function totalTokens(cost: Cost, role?: Role): number {
  const roles: Role[] = role ? [role] : ['policy', 'judge'];
  return roles.reduce((s, r) => s + cost[r].promptTokens + cost[r].completionTokens, 0);
}

/** Worlds from the least real: a result is as real as the least real work in it. */
const WORLDS: readonly World[] = ['sim', 'tiny', 'real'];

/** The least real of `worlds` (undefined when there is none). */
function leastRealWorld(worlds: Iterable<World | undefined>): World | undefined {
  const seen = new Set(worlds);
  return WORLDS.find((w) => seen.has(w));
}

/**
 * A running account of calls and tokens by role, and of the worlds (`real`, `tiny`, `sim`) of
 * the models that did the work. Strategies, labelers and evaluators record every model call here
 * so results are comparable at matched compute, and so every row and summary says which world
 * its numbers came from by reading it here instead of carrying a flag of its own.
 */
export class CostLedger {
  private readonly cost: Cost = emptyCost();
  private readonly worlds = new Set<World>();

  /**
   * Record one call's usage (cached calls are recorded by the caller's choice: they cost
   * nothing) and, when known, the world of the model that answered.
   */
  record(
    role: Role,
    usage: { calls?: number; samples?: number; promptTokens: number; completionTokens: number },
    world?: World,
  ): void {
    const c = this.cost[role];
    c.calls += usage.calls ?? 1;
    c.samples += usage.samples ?? 1;
    c.promptTokens += usage.promptTokens;
    c.completionTokens += usage.completionTokens;
    if (world) this.worlds.add(world);
  }

  /** Add a whole cost (e.g. a judge's cost) to this ledger, with the world(s) that did it. */
  add(cost: Cost, world?: World | readonly World[]): void {
    const sum = addCosts(this.cost, cost);
    Object.assign(this.cost.policy, sum.policy);
    Object.assign(this.cost.judge, sum.judge);
    this.saw(world);
  }

  /** Note the world of work that cost nothing here (a cached reply, a call another ledger paid). */
  saw(world: World | readonly World[] | undefined): void {
    if (world === undefined) return;
    for (const w of typeof world === 'string' ? [world] : world) this.worlds.add(w);
  }

  /** The least real world of the work recorded (`sim` when any of it was simulated), if any was said. */
  get world(): World | undefined {
    return leastRealWorld(this.worlds);
  }

  /** Every world recorded, least real first. */
  get allWorlds(): World[] {
    return WORLDS.filter((w) => this.worlds.has(w));
  }

  /** Whether any of the work was the simulated world's. */
  get simulated(): boolean {
    return this.worlds.has('sim');
  }

  /** A snapshot copy of the cost (the world is not part of it: cost records keep their shape). */
  snapshot(): Cost {
    return addCosts(this.cost);
  }
}
