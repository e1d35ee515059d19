import { createRng } from '../../src/core/rng.js';

/** Export inputs of every kind, varied enough to exercise balancing, filters and pairing (seeded). */

/** Label records with varied lengths, first errors, unlabeled tails, soft labels, tags, kept rollouts. */
export function labelRows(count: number, options: { simulated?: boolean; long?: boolean } = {}): unknown[] {
  const rng = createRng(`labels-${count}`);
  const rows: unknown[] = [];
  for (let s = 0; s < count; s++) {
    const n = rng.int(1, 6);
    const bad = rng.chance(0.45) ? rng.int(0, n - 1) : -1;
    const unlabeledFrom = rng.chance(0.1) ? rng.int(0, n - 1) : n;
    const tags = s % 7 === 3;
    const chunks = Array.from({ length: n }, (_, i) => {
      const wrong = bad >= 0 && i >= bad;
      const text =
        `Step ${i + 1}: from ${s} we add ${i} to get ${s + i}.` +
        (options.long && rng.chance(0.2) ? ' and then'.repeat(rng.int(50, 400)) : '');
      return {
        text,
        q: wrong ? 0 : 0.5 + rng.next() / 2,
        labels:
          i >= unlabeledFrom
            ? {}
            : {
                'abs-q': !wrong,
                sorm: !wrong || rng.chance(0.1),
                'ms-soft': wrong ? rng.next() / 3 : 0.5 + rng.next() / 2,
                'rel-effective': rng.chance(0.7),
              },
        ...(s % 5 === 0
          ? {
              rollouts: [
                { text: `wrong after ${s}.${i}`, correct: false },
                { text: `right after ${s}.${i} \\boxed{${s + 3}}`, correct: s % 3 !== 0 },
              ],
            }
          : {}),
      };
    });
    rows.push({
      id: `q${Math.floor(s / 3)}#${s % 3}`,
      problem: `Problem ${Math.floor(s / 3)}: what is ${s} + 3?`,
      answer: String(s + 3),
      ...(tags ? { segmentation: 'tags' } : {}),
      ...(s % 5 === 0 ? { emptyPrefixRollouts: [{ text: `scratch ${s}`, correct: s % 2 === 0 }] } : {}),
      chunks,
      firstError: { 'abs-q': bad },
      ...(options.simulated ? { simulated: true } : {}),
    });
  }
  return rows;
}

/** `stepwise sample` rows: K solutions each, some correct, some under tags with a malformed one. */
export function sampleRows(count: number): unknown[] {
  const rng = createRng('samples');
  return Array.from({ length: count }, (_, p) => {
    const tags = p % 4 === 1;
    const k = rng.int(1, 6);
    return {
      id: `prob-${p}`,
      ...(p % 6 === 5 ? { problem: `Problem ${p}?` } : { question: `Question ${p}?` }),
      ...(tags ? { segmentation: 'tags' } : {}),
      samples: Array.from({ length: k }, (_, j) => ({
        text: `solution ${p}.${j} \\boxed{${rng.int(0, 3)}}`,
        correct: rng.chance(0.5),
        ...(tags && j === 0 ? { segmentation: 'paragraph', written: `<chunk>torn ${p}` } : {}),
      })),
    };
  });
}

/** selfseg rows: given taggings and `stepwise segment` rows (llm and paragraph), interleaved. */
export function selfsegRows(count: number): unknown[] {
  const rng = createRng('selfseg');
  return Array.from({ length: count }, (_, i) => {
    const parts = Array.from({ length: rng.int(1, 4) }, (_, j) => `part ${i}.${j} of the answer`);
    const text = parts.join('\n\n');
    if (i % 3 === 0) {
      const tagged = parts.map((p) => `<chunk>${p}</chunk>`).join('\n\n');
      return { id: `t${i}`, problem: `P${i}`, text, tagged: i % 9 === 0 ? `${tagged}x` : tagged };
    }
    let at = 0;
    const chunks = parts.map((p) => {
      const start = text.indexOf(p, at);
      at = start + p.length;
      return { text: p, span: { start, end: at } };
    });
    return { id: `s${i}`, problem: `P${i}`, text, method: i % 5 === 0 ? 'paragraph' : 'llm', chunks };
  });
}
