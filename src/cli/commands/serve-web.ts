import { existsSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { StepwiseError } from '../../core/errors.js';
import { startWebServer } from '../../server/app.js';
import { listFiles } from '../../server/files.js';
import { defaultStorePath, openStore } from '../../store/db.js';
import { listRuns } from '../../store/runs.js';
import { intOption } from '../options.js';
import { serveCommand } from '../serve-command.js';
import { TOKEN_HELP, tokenFromFlags } from '../token.js';

/**
 * The folders to serve. Without --dir, the current folder, but only when stepwise wrote outputs
 * there: `stepwise serve` typed in a home folder must not publish it (its JSON files include
 * credentials and configuration of other tools, and data sets of every shape). A file counts when
 * stepwise recognisably wrote it — its first record carries a job's settings record (or it is the
 * demo's report), or a run recorded in the store (`storePath`, when it exists) wrote it — not when
 * it merely looks like something stepwise reads (problems, ProcessBench sets).
 */
export function servedRoots(
  dirs: string[] | undefined,
  cwd: string = process.cwd(),
  storePath: string = defaultStorePath(),
): string[] {
  if (dirs?.length) {
    for (const d of dirs) {
      let isDir = false;
      try {
        isDir = statSync(d).isDirectory();
      } catch {}
      if (!isDir) throw new StepwiseError(`--dir ${d}: no such folder`, { exitCode: 2 });
    }
    return dirs;
  }
  const files = listFiles([cwd]);
  if (files.some((f) => f.byStepwise)) return [cwd];
  // Reports (eval processbench, eval chunks, bench search) say who wrote them in the run store.
  if (files.length > 0 && existsSync(storePath)) {
    const here = resolve(cwd);
    const listed = new Set(files.map((f) => resolve(here, f.path)));
    if (
      listRuns(openStore(storePath), 10_000).some((r) => r.output !== null && listed.has(resolve(r.output)))
    )
      return [cwd];
  }
  const names = files.slice(0, 3).map((f) => f.path);
  const found =
    files.length === 0
      ? 'no JSON or JSONL file'
      : `${files.length}${files.length >= 2000 ? '+' : ''} JSON/JSONL file${files.length === 1 ? '' : 's'} (${names.join(', ')}${files.length > 3 ? ', …' : ''}), none of them written by stepwise (no job record, not the output of a recorded run)`;
  throw new StepwiseError(
    `the current folder ${cwd} holds no stepwise outputs: found ${found}. Pass --dir <folder> with the outputs to show (for example the --out folder of a run)`,
    { exitCode: 2 },
  );
}

/** A URL a browser on this machine can open: a wildcard bind is reached through loopback. */
function browsable(url: string, host: string): string {
  return host === '0.0.0.0' || host === '::' ? url.replace(host === '::' ? '[::]' : host, '127.0.0.1') : url;
}

/** `stepwise serve`: the web view and JSON API over the store and output folders. */
export function register(program: Command): void {
  serveCommand(program)
    .option('--port <n>', 'port (0 = any free port)', intOption('--port', 0), 8484)
    .option(
      '--host <host>',
      'address to bind; anything but loopback requires a token (and TLS or a tunnel in front)',
      '127.0.0.1',
    )
    .option(
      '--token <token>',
      `${TOKEN_HELP.token} (Bearer header, or type it once into the page's login form)`,
    )
    .option('--token-file <file>', TOKEN_HELP.tokenFile)
    .option(
      '--dir <folder...>',
      'folders whose JSON/JSONL outputs can be shown (default: the current folder, if it holds stepwise outputs)',
    )
    .option('--store <path>', 'SQLite store to read runs from (default $STEPWISE_HOME/store.sqlite)')
    .action(async (o) => {
      const token = tokenFromFlags(o);
      const roots = servedRoots(o.dir, process.cwd(), o.store ?? defaultStorePath());
      const server = await startWebServer({
        port: o.port,
        host: o.host,
        token,
        roots,
        storePath: o.store,
      });
      process.stderr.write(
        `stepwise web view on ${browsable(server.url, o.host)}/${token ? ' (log in with the token on the page)' : ''}\n` +
          `showing outputs under ${roots.map((r) => resolve(r)).join(', ')}; Ctrl-C stops it\n`,
      );
      const stop = async () => {
        // Whatever it is doing (a request in flight, a judge that does not answer), the server
        // is gone within a second.
        setTimeout(() => process.exit(0), 1000).unref();
        await server.close();
        process.exit(0);
      };
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
    });
}
