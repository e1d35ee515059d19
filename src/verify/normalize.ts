/** String-level normalisation of a LaTeX answer (first, cheap stage of every comparison). */
export function normalizeAnswer(raw: string): string {
  let s = raw.trim();
  s = s.replace(/^\$+|\$+$/g, '');
  s = s.replace(/\\left|\\right|\\displaystyle/g, '');
  s = s.replace(/\\[dt]frac/g, '\\frac');
  s = s.replace(/\\[,;:! ]|\\q?quad/g, ' ');
  s = s.replace(/\\text\{([^{}]*)\}/g, '$1');
  s = s.replace(/\{,\}/g, '');
  s = s.replace(/(\d),(?=\d{3}\b)/g, '$1');
  s = s.replace(/\\frac\{(-?\d+)\}\{(\d+)\}/g, (_m, a: string, b: string) => String(Number(a) / Number(b)));
  s = s.replace(/\s+/g, '');
  s = s.replace(/[.]+$/, '');
  return s;
}
