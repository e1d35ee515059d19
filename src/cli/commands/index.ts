import type { Command } from 'commander';
import { register as bench } from './bench.js';
import { register as data } from './data.js';
import { register as demo } from './demo.js';
import { register as evaluate } from './eval.js';
import { register as exportData } from './export.js';
import { register as label } from './label.js';
import { register as labelCode } from './label-code.js';
import { register as merge } from './merge.js';
import { register as runs } from './runs.js';
import { register as sample } from './sample.js';
import { register as search } from './search.js';
import { register as segment } from './segment.js';
import { register as select } from './select.js';
import { register as serve } from './serve.js';
import { register as serveWeb } from './serve-web.js';
import { register as sim } from './sim.js';
import { register as solve } from './solve.js';
import { register as verify } from './verify.js';

/**
 * Every CLI command, one file each. To add one: create `./<name>.ts` exporting
 * `register(program: Command): void`, import it here and add it to the list.
 */
const commands: Array<(program: Command) => void> = [
  segment,
  data,
  runs,
  sample,
  label,
  labelCode,
  merge,
  exportData,
  select,
  serve,
  serveWeb,
  sim,
  evaluate,
  verify,
  solve,
  search,
  bench,
  demo,
];

export function registerCommands(program: Command): void {
  for (const register of commands) register(program);
}
