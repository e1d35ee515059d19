import { type Command, Option } from 'commander';
import { UsageError } from '../../core/errors.js';
import type { Problem } from '../../core/types.js';
import { parseFieldMapping } from '../../data/jsonl.js';
import { assertDatasetName, type DatasetRecord, loadDatasetRecords } from '../../data/load.js';
import { dataCacheDir, dataRoots } from '../../data/locate.js';
import { PULL_SOURCES, pullDataset } from '../../data/pull.js';
import { DATASET_NAMES, type LoadOptions } from '../../data/types.js';
import { jsonOption, quietOption } from '../option-groups.js';
import { createProgressBar } from '../progress.js';
import { addAlias, msOption } from '../vocabulary.js';

const NAMES = DATASET_NAMES.join('|');

function positiveInt(value: string, flag: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1)
    throw new UsageError(`${flag} must be a positive integer, not "${value}"`);
  return n;
}

/** One short human-readable line per record (the default, non-JSON output). */
function preview(record: DatasetRecord): string {
  const short = (s: string) => {
    const flat = s.replace(/\s+/g, ' ').trim();
    return flat.length > 70 ? `${flat.slice(0, 69)}…` : flat;
  };
  if ('domain' in record) {
    const p = record as Problem;
    return `${p.id}\t${short(p.question)}\t→ ${short(p.answer)}`;
  }
  if ('subset' in record)
    return `${record.id}\t${record.steps.length} steps\tlabel ${record.label}\t${short(record.problem)}`;
  if ('ratings' in record)
    return `${record.id}\t${record.steps.length} steps\tfirst error ${record.firstError}\t${short(record.problem)}`;
  return `${record.id}\t${record.steps.length} steps\tfirst error ${record.firstError}\t${short(record.question)}`;
}

/**
 * Print one line per record to stdout in ~1 MB writes, waiting when the pipe is full (a big set
 * never becomes one giant string). A reader that goes away (`| head`) ends the output quietly.
 */
async function writeLines<T>(records: readonly T[], format: (record: T) => string): Promise<void> {
  const out = process.stdout;
  let closed = false;
  out.on('error', () => {
    closed = true; // EPIPE and friends: nobody is reading any more
  });
  let buffer = '';
  const flush = async () => {
    if (buffer === '' || closed) return;
    const ok = out.write(buffer);
    buffer = '';
    if (!ok)
      await new Promise<void>((resolve) => {
        out.once('drain', resolve);
        out.once('close', resolve);
      });
  };
  for (const record of records) {
    if (closed) return;
    buffer += `${format(record)}\n`;
    if (buffer.length >= 1 << 20) await flush();
  }
  await flush();
}

interface ShowOptions {
  path?: string;
  limit?: string;
  skipInvalid?: boolean;
  json?: boolean;
  split?: string;
  neutralAs?: 'positive' | 'negative';
  fields?: string;
  domain?: 'math' | 'code';
}

/** `stepwise data`: show normalised records of a data set, download sets, list where they are. */
export function register(program: Command): void {
  const data = program
    .command('data')
    .description('Load, validate and show data sets (GSM8K, MATH, ProcessBench, PRM800K, …); download them')
    .addHelpText(
      'after',
      `
<name> is one of ${NAMES}.
Without --path, loaders look under $STEPWISE_DATA, then in the pull cache
(${dataCacheDir()}; set $STEPWISE_CACHE to move it).
A bad record stops the load with file, line (or array index) and field, exit code 2;
--skip-invalid skips and counts bad records instead.

data show <name> flags: --path <file-or-dir>, --limit <n>, --skip-invalid, --json,
  --split <split>, --neutral-as positive|negative (prm800k), --fields, --domain (jsonl).
  Run \`stepwise data show --help\` for details.

Examples:
  stepwise data show processbench --path ../shared/data/processbench --json
  stepwise data show gsm8k --path ../shared/data/gsm8k/test.jsonl --limit 5
  stepwise data show jsonl --path mine.jsonl --fields question=problem,answer=gold --json
  stepwise data pull gsm8k`,
    );

  data
    .command('show')
    .description(
      "Print a data set's records, validated and normalised (one JSON object per line with --json)",
    )
    .argument('<name>', `data set: ${NAMES}`)
    .option('--path <file-or-dir>', 'file or folder to read (default: $STEPWISE_DATA, then the pull cache)')
    .option('--limit <n>', 'stop after n records')
    .option('--skip-invalid', 'skip bad records and report how many, instead of stopping at the first')
    .addOption(jsonOption('print one normalised JSON object per line'))
    .option(
      '--split <split>',
      'part of the set: gsm8k test|train|test_socratic; processbench gsm8k|math|olympiadbench|omnimath; prm800k phase1_train|phase1_test|phase2_train|phase2_test|examples; mbpp test|train|validation|prompt',
    )
    .addOption(
      new Option('--neutral-as <label>', 'prm800k: the label of a neutral (0) rating')
        .choices(['positive', 'negative'])
        .default('positive'),
    )
    .option(
      '--fields <mapping>',
      'jsonl: where id, question and answer are, e.g. question=problem,answer=gold,id=uid',
    )
    .addOption(
      new Option('--domain <domain>', "jsonl: the problems' domain")
        .choices(['math', 'code'])
        .default('math'),
    )
    .action(async (nameArg: string, opts: ShowOptions) => {
      const name = assertDatasetName(nameArg);
      const options: LoadOptions = {
        path: opts.path,
        limit: opts.limit === undefined ? undefined : positiveInt(opts.limit, '--limit'),
        skipInvalid: opts.skipInvalid,
        split: opts.split,
        neutralAs: opts.neutralAs,
        fields: opts.fields === undefined ? undefined : parseFieldMapping(opts.fields),
        domain: opts.domain,
      };
      const { records, skipped, path } = await loadDatasetRecords(name, options);
      await writeLines(records, (r) => (opts.json ? JSON.stringify(r) : preview(r)));
      process.stderr.write(
        `${records.length} ${name} records from ${path}${opts.skipInvalid ? `, ${skipped} invalid skipped` : ''}\n`,
      );
    });

  const cmd = data
    .command('pull')
    .description('Download a data set from its public home into the pull cache (needs internet)')
    .argument('<name>', `data set: ${Object.keys(PULL_SOURCES).join('|')}`)
    .option('--split <split>', "download only this split (default: the set's usual files)")
    .option(
      '--dest <dir>',
      'cache folder to write into (default: $STEPWISE_CACHE/data or ~/.cache/stepwise/data)',
    )
    .option('--timeout-ms <ms>', 'give up on a file after this many milliseconds', msOption, 600_000)
    .addOption(quietOption('no progress bar'))
    .action(
      async (
        nameArg: string,
        opts: { split?: string; dest?: string; timeoutMs: number; quiet?: boolean },
      ) => {
        const name = assertDatasetName(nameArg);
        const timeoutMs = opts.timeoutMs;
        const bar = createProgressBar(`pull ${name}`, { quiet: opts.quiet });
        try {
          const { files } = await pullDataset(name, {
            split: opts.split,
            dest: opts.dest,
            timeoutMs,
            onProgress: (file, received, total) =>
              bar.update(Math.round(received / 1024), Math.round((total ?? received) / 1024), `KiB ${file}`),
          });
          bar.stop();
          for (const f of files) process.stdout.write(`${f}\n`);
        } catch (err) {
          bar.stop();
          throw err;
        }
      },
    );
  // The old --timeout was in seconds: it still is.
  addAlias(cmd, '--timeout-ms', '--timeout', {
    placeholder: '<seconds>',
    parse: (v) => msOption(v) * 1000,
  });

  data
    .command('where')
    .description('Show the folders searched for data sets when no --path is given')
    .addOption(jsonOption('print {"roots": [...], "cache": "..."}'))
    .action((opts: { json?: boolean }) => {
      const roots = dataRoots();
      if (opts.json) process.stdout.write(`${JSON.stringify({ roots, cache: dataCacheDir() })}\n`);
      else process.stdout.write(`${roots.join('\n')}\n`);
    });
}
