import { existsSync } from 'node:fs';
import { type Command, Option } from 'commander';
import { UsageError } from '../../core/errors.js';
import { defaultStorePath, openStore, storeBytes } from '../../store/db.js';
import { getRun, listRuns, type RunStatus } from '../../store/runs.js';
import { jsonOption } from '../option-groups.js';

/** `stepwise runs`: list recorded runs, newest first. */
export function register(program: Command): void {
  program
    .command('runs')
    .description('List recorded runs (command, status, start/end, counts), newest first')
    .addOption(jsonOption('print one JSON object per run per line'))
    .option('--limit <n>', 'show at most n runs', '20')
    .option('--command <name>', 'only runs of this command (e.g. label, search)')
    .option(
      '--id <run>',
      'only this run (`stepwise runs --id ID --json > run.json` is what `--config run.json` replays)',
    )
    .addOption(
      new Option('--status <status>', 'only runs with this status').choices([
        'running',
        'done',
        'failed',
        'interrupted',
      ]),
    )
    .option(
      '--store <file>',
      'SQLite store to read (default $STEPWISE_HOME/store.sqlite, ./.stepwise/store.sqlite)',
    )
    .action(
      (opts: {
        json?: boolean;
        limit: string;
        store?: string;
        command?: string;
        status?: RunStatus;
        id?: string;
      }) => {
        const limit = Number(opts.limit);
        if (!Number.isInteger(limit) || limit < 1)
          throw new UsageError(`--limit must be a positive integer, not "${opts.limit}"`);
        const storePath = opts.store ?? defaultStorePath();
        // Listing must not create a store where none exists.
        let runs = existsSync(storePath)
          ? opts.id === undefined
            ? listRuns(openStore(storePath), limit, { command: opts.command, status: opts.status })
            : [getRun(openStore(storePath), opts.id)].filter((r) => r !== null)
          : [];
        if (opts.id !== undefined) {
          if (runs.length === 0)
            throw new UsageError(`no run ${opts.id} in ${storePath} (see \`stepwise runs\`)`);
          runs = runs.filter(
            (r) =>
              (opts.command === undefined || r.command === opts.command) &&
              (opts.status === undefined || r.status === opts.status),
          );
        }
        if (opts.json) {
          for (const r of runs) process.stdout.write(`${JSON.stringify(r)}\n`);
          return;
        }
        if (runs.length === 0) {
          process.stdout.write('no runs recorded yet\n');
          return;
        }
        // The model-call cache lives in the same file: its size is what a long job grows.
        const size = storeBytes(storePath);
        const mb = (b: number) => `${(b / 1e6).toFixed(1)} MB`;
        const footer = `store ${storePath}: ${mb(size.file + size.wal)} (model-call cache and runs${
          size.wal ? `; ${mb(size.wal)} of it in the WAL` : ''
        })`;
        const rows = runs.map((r) => [
          r.id,
          r.name ?? '-',
          r.command,
          r.status,
          r.startedAt.replace('T', ' ').slice(0, 19),
          r.endedAt ? r.endedAt.replace('T', ' ').slice(0, 19) : '-',
          Object.entries(r.counts)
            .map(([k, v]) => `${k}=${v}`)
            .join(' '),
        ]);
        const header = ['id', 'name', 'command', 'status', 'started', 'ended', 'counts'];
        const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i].length)));
        for (const row of [header, ...rows])
          process.stdout.write(
            `${row
              .map((cell, i) => cell.padEnd(widths[i]))
              .join('  ')
              .trimEnd()}\n`,
          );
        process.stdout.write(`${footer}\n`);
      },
    );
}
