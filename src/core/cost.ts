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

/**
 * A running account of calls and tokens by role. Strategies, labelers and evaluators record
 * every model call here so results are comparable at matched compute.
 */
export class CostLedger {
  private readonly cost: Cost = emptyCost();

  /** Record one call's usage (cached calls are recorded by the caller's choice: they cost nothing). */
  record(
    role: Role,
    usage: { calls?: number; samples?: number; promptTokens: number; completionTokens: number },
  ): void {
    const c = this.cost[role];
    c.calls += usage.calls ?? 1;
    c.samples += usage.samples ?? 1;
    c.promptTokens += usage.promptTokens;
    c.completionTokens += usage.completionTokens;
  }

  /** Add a whole cost (e.g. a judge's cost) to this ledger. */
  add(cost: Cost): void {
    const sum = addCosts(this.cost, cost);
    Object.assign(this.cost.policy, sum.policy);
    Object.assign(this.cost.judge, sum.judge);
  }

  /** A snapshot copy. */
  snapshot(): Cost {
    return addCosts(this.cost);
  }
}
