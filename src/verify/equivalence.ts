import { normalizeAnswer } from './normalize.js';

/** Grader policies on which public graders disagree. */
export interface EquivalenceOptions {
  /** How `x%` relates to `x` and `x/100`. Default `'flexible'`: `10\%` equals `10` and `0.1`. */
  percent?: 'flexible' | 'strict';
  /** Whether lists of several answers must match in order. Default `'unordered'` for bare lists. */
  listOrder?: 'unordered' | 'ordered';
  /** Relative tolerance for comparing numbers. Default 1e-6. */
  floatTolerance?: number;
  /** Time cap per comparison in milliseconds. Default 1000. */
  timeoutMs?: number;
}

/** Verdict and how it was reached. */
export interface EquivalenceExplanation {
  equal: boolean;
  method: string;
  gold: string;
  pred: string | null;
  reason?: string;
}

/** Compare two answers; see {@link explainEquivalence} for the method used. Never throws. */
export function isEquivalent(gold: string, pred: string | null, options?: EquivalenceOptions): boolean {
  return explainEquivalence(gold, pred, options).equal;
}

/** Compare two answers and report the method and both normalised forms. Never throws. */
export function explainEquivalence(
  gold: string,
  pred: string | null,
  options: EquivalenceOptions = {},
): EquivalenceExplanation {
  try {
    if (pred === null || pred === undefined)
      return { equal: false, method: 'none', gold, pred: null, reason: 'no prediction' };
    const g = normalizeAnswer(String(gold));
    const p = normalizeAnswer(String(pred));
    if (g === p) return { equal: true, method: 'string', gold: g, pred: p };
    const gn = Number(g);
    const pn = Number(p);
    const tol = options.floatTolerance ?? 1e-6;
    if (g !== '' && p !== '' && Number.isFinite(gn) && Number.isFinite(pn)) {
      const equal = Math.abs(gn - pn) <= tol * Math.max(1, Math.abs(gn));
      return { equal, method: 'number', gold: g, pred: p };
    }
    return { equal: false, method: 'string', gold: g, pred: p };
  } catch (err) {
    return {
      equal: false,
      method: 'error',
      gold: String(gold),
      pred: pred === null ? null : String(pred),
      reason: (err as Error).message,
    };
  }
}
