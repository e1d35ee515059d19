/**
 * What a job did, in one shape for every command: a headline, labelled lines, and the files it
 * wrote. The readable form goes to stderr (stdout stays free for `--json` and pipes).
 */
export interface JobSummary {
  /** The command, e.g. `sample` or `eval chunks`. */
  command: string;
  /** One line saying what was done, e.g. `5 problems × 2 samples`. */
  headline: string;
  /** Where the numbers come from when that is not a real model (e.g. `SIMULATED world`). */
  world?: string;
  /** Labelled lines: [label, text]. */
  lines?: ReadonlyArray<readonly [string, string]>;
  /** Files written. */
  wrote?: readonly string[];
  /** The run recorded in the store. */
  run?: string | number;
  /** A hint printed last (e.g. the next command to run). */
  next?: string;
}

/** The simulated world, as every summary names it. */
export const SIMULATED_WORLD = 'SIMULATED world — not real model results';

/** `--json`, the same on every job: the summary as one JSON object on stdout. */
export const JSON_HELP =
  'also print the summary as one JSON object on stdout (the readable one goes to stderr)';

const pct = (x: number): string => `${(100 * x).toFixed(1)}%`;

/** A share as `62.0% (31 of 50)`. */
export function share(part: number, whole: number): string {
  return whole === 0 ? `— (0 of 0)` : `${pct(part / whole)} (${part} of ${whole})`;
}

/** Cache counts as one phrase. */
export function cachePhrase(cache: { cachedCalls: number; calls: number } | undefined): string {
  return cache ? `${cache.cachedCalls} of ${cache.calls} model calls answered from the cache` : 'not cached';
}

/** The readable form of a job summary. */
export function formatSummary(s: JobSummary): string {
  const lines = [`${s.command}: ${s.headline}${s.world ? ` [${s.world}]` : ''}`];
  const width = Math.max(8, ...(s.lines ?? []).map(([k]) => k.length)) + 2;
  for (const [k, v] of s.lines ?? []) lines.push(`  ${k.padEnd(width)}${v}`);
  if (s.wrote?.length)
    lines.push(
      `  ${'wrote'.padEnd(width)}${s.wrote.join(', ')}${s.run !== undefined ? ` (run ${s.run})` : ''}`,
    );
  else if (s.run !== undefined) lines.push(`  ${'run'.padEnd(width)}${s.run}`);
  if (s.next) lines.push(s.next);
  return `${lines.join('\n')}\n`;
}

/** Print a job's summary: readable on stderr, and with `--json` the machine form on stdout. */
export function reportJob(s: JobSummary, json: unknown, flags: { json?: boolean }): void {
  process.stderr.write(formatSummary(s));
  if (flags.json) process.stdout.write(`${JSON.stringify(json)}\n`);
}
