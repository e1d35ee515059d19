import { isEquivalent } from '../verify/index.js';

/** One group of equivalent answers with its summed weight and the index of its first member. */
export interface VoteGroup {
  answer: string;
  weight: number;
  count: number;
  first: number;
  members: number[];
}

/**
 * Group answers by mathematical equivalence (each answer against the group's first answer) and sum
 * their weights. Null answers (none extracted) do not vote. Groups come in order of first appearance.
 */
export function tallyVotes(
  answers: readonly (string | null)[],
  weights: readonly number[],
  same: (a: string, b: string) => boolean = (a, b) => a === b || isEquivalent(a, b),
): VoteGroup[] {
  const groups: VoteGroup[] = [];
  answers.forEach((a, i) => {
    if (a === null) return;
    const g = groups.find((x) => same(x.answer, a));
    if (g) {
      g.weight += weights[i];
      g.count++;
      g.members.push(i);
    } else groups.push({ answer: a, weight: weights[i], count: 1, first: i, members: [i] });
  });
  return groups;
}

/** The winning group: highest weight, then most votes, then earliest. Undefined when nobody voted. */
export function winningGroup(groups: readonly VoteGroup[]): VoteGroup | undefined {
  let best: VoteGroup | undefined;
  for (const g of groups) {
    if (!best || g.weight > best.weight || (g.weight === best.weight && g.count > best.count)) best = g;
  }
  return best;
}
