import type { Command } from 'commander';
import { mergeJsonl, missingShardsPhrase } from '../../jobs/merge.js';
import { jsonOption } from '../option-groups.js';
import { JSON_HELP, reportJob } from '../summary.js';
import { warn } from '../warn.js';

/** `stepwise merge`: join the outputs of a job's shards (or of reruns) into one file. */
export function register(program: Command): void {
  program
    .command('merge')
    .description('Join JSONL outputs of one job (e.g. its --shard parts): each key once, in input order')
    .argument('<files...>', 'JSONL outputs to join (the first record of a key wins)')
    .requiredOption('--out <file>', 'merged JSONL output')
    .option('--input <file>', "the job's input: records follow its order (else the files' order)")
    .option('--key <field>', 'field holding the record key', 'id')
    .option(
      '--allow-missing',
      'write the merge even when a part is missing: records of the --input, or (without it) shards of the job (default: exit 1 naming them)',
    )
    .addHelpText(
      'after',
      '\nWith --input, a record keyed <id>#<k> (one sample of a `stepwise sample` row), <id>/<i> (an export\n' +
        '--task judge-rl row) or <id>@<k> (an export --task sorm row) follows the row <id>, in order of k.\n' +
        'Parquet parts (export --format verl) are refused: give verl the parts as one list of files.\n' +
        'Summary: records, duplicates, conflicts (same key, different content), missing (records the input\n' +
        'calls for that no file holds: one per solution <id>#<k> of a sample row when the files hold solutions,\n' +
        'else one per input id; any missing exits 1 unless --allow-missing), notInInput; as JSON on stdout\n' +
        'with --json. Without --input, rows written with --shard K/N record their part (job.shard): merge\n' +
        'exits 1 naming the parts of 1..N no file holds (missingShards) unless --allow-missing; files whose\n' +
        'rows record no shard are listed (uncheckedFiles): only --input can check them. A whole merge drops\n' +
        'job.shard, so it is byte for byte the unsharded output. See docs/scale.md.',
    )
    .addOption(jsonOption(JSON_HELP))
    .action(
      (
        files: string[],
        flags: { out: string; input?: string; key: string; json?: boolean; allowMissing?: boolean },
      ) => {
        const summary = mergeJsonl({
          files,
          out: flags.out,
          input: flags.input,
          keyField: flags.key,
          allowMissing: flags.allowMissing,
        });
        if (summary.conflicts > 0)
          warn(
            `${summary.conflicts} keys have different records in different files; the first file's was kept`,
          );
        if (summary.missingShards.length > 0)
          warn(`${missingShardsPhrase(summary.missingShards)}; merged what there is (--allow-missing)`);
        if (flags.input === undefined && summary.uncheckedFiles.length > 0)
          process.stderr.write(
            `note: ${summary.uncheckedFiles.join(', ')} ${summary.uncheckedFiles.length === 1 ? 'records' : 'record'} no shard (unsharded output, export rows, or rows written before rows recorded their shard): whether every part is here cannot be checked without --input\n`,
          );
        if (summary.missing > 0)
          warn(
            `${summary.missing} of ${summary.expected} ${summary.missingUnit} of the input have no record in any file (--allow-missing)`,
          );
        reportJob(
          {
            command: 'merge',
            headline: `${summary.records} records from ${summary.files} files`,
            lines: [
              ['duplicates', String(summary.duplicates)],
              ['conflicts', String(summary.conflicts)],
              ...(flags.input !== undefined
                ? [
                    [
                      'missing',
                      `${summary.missing} of ${summary.expected} ${summary.missingUnit} with no record`,
                    ] as const,
                    ['not in input', String(summary.notInInput)] as const,
                  ]
                : summary.shardedJobs > 0
                  ? [
                      [
                        'shards',
                        summary.missingShards.length > 0
                          ? missingShardsPhrase(summary.missingShards)
                          : `every part of ${summary.shardedJobs === 1 ? 'the job' : `${summary.shardedJobs} jobs`} given`,
                      ] as const,
                    ]
                  : []),
            ],
            wrote: [summary.out],
          },
          summary,
          flags,
        );
      },
    );
}
