import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, startCli } from '../support/cli.js';
import { tempDir } from '../support/temp.js';

/**
 * Ctrl-C in a real terminal (tmux, a pane 60 columns wide): the progress bar turns line wrap off
 * while it draws, and a job stopped mid-bar used to leave it off until `reset` — the resume hint
 * and every later long line were cut at the pane's width. After Ctrl-C the hint is whole, each
 * part on its own line, and a long line printed afterwards in the same terminal wraps.
 */
const WIDTH = 60;
const AFTER = `after-${'x'.repeat(90)}-END`;

describe('Ctrl-C on a job in a terminal: line wrap back on, the whole resume hint', () => {
  let dir: string;
  let socket: string;
  const tmux = (...args: string[]): string =>
    execFileSync('tmux', ['-S', socket, ...args], { encoding: 'utf8', timeout: 30_000 });
  beforeAll(async () => {
    if (!existsSync(BIN)) throw new Error('bin/stepwise.js missing: run `npm run build` first');
    execFileSync('tmux', ['-V']); // a missing tmux fails here, loudly
    dir = tempDir('stepwise-tty-');
    socket = join(dir, 'tmux.sock');
    const sampled = await startCli(
      [
        'sample',
        '--dataset',
        'sim',
        '--limit',
        '400',
        '--policy',
        'sim',
        '--n',
        '1',
        '--out',
        join(dir, 'S.jsonl'),
      ],
      join(dir, 'home'),
    ).done;
    expect(sampled.code, sampled.stderr).toBe(0);
  }, 120_000);
  afterAll(() => {
    try {
      tmux('kill-server');
    } catch {
      // already gone
    }
  });

  /** Run `args` in a tmux pane, press C-c once `bar` draws and `out` has rows, and check the pane. */
  async function interruptInPane(session: string, args: string, out: string, bar: RegExp): Promise<void> {
    const command = [
      'env -u STEPWISE_QUIET',
      `STEPWISE_HOME=${join(dir, 'home')}`,
      process.execPath,
      BIN,
      args,
      '--out',
      out,
      `; printf '%s\\n' ${AFTER}; printf 'SHELL-DONE\\n'; sleep 600`,
    ].join(' ');
    tmux('new-session', '-d', '-x', String(WIDTH), '-y', '40', '-s', session, command);
    const screen = (): string => tmux('capture-pane', '-p', '-t', session, '-S', '-200');
    const until = async (what: () => boolean, ms: number): Promise<void> => {
      const deadline = Date.now() + ms;
      while (!what()) {
        if (Date.now() > deadline) throw new Error(`timed out; the pane shows:\n${screen()}`);
        await new Promise((r) => setTimeout(r, 200));
      }
    };
    // The bar is drawing and some rows are written.
    await until(() => bar.test(screen()) && existsSync(out) && readFileSync(out, 'utf8').length > 0, 120_000);
    tmux('send-keys', '-t', session, 'C-c');
    await until(() => screen().includes('SHELL-DONE'), 60_000);
    const rows = screen().split('\n');
    const joined = tmux('capture-pane', '-p', '-J', '-t', session, '-S', '-200');
    // The hint, whole: its parts on their own lines, the long output path unbroken once joined.
    expect(joined).toContain('stepwise: interrupted');
    expect(joined).toMatch(/recorded as interrupted/);
    expect(joined).toContain(`finished work is kept in ${out}`);
    expect(joined).toContain('rerun the same command to resume');
    // Wrap is on: the long line printed after the job spans rows and its end is there.
    expect(joined).toContain(AFTER);
    expect(rows.some((r) => r.startsWith('after-x') && r.length === WIDTH)).toBe(true);
  }

  it('label stopped by C-c mid-bar', async () => {
    await interruptInPane(
      'label',
      `label --input ${join(dir, 'S.jsonl')} --dataset sim --policy sim --rollouts 64 --concurrency 1`,
      join(dir, 'labels-of-the-interrupted-run-with-a-long-name.jsonl'),
      /label \[/,
    );
  }, 240_000);

  it('search stopped by C-c mid-bar (the job harness: runSearchCommand)', async () => {
    await interruptInPane(
      'search',
      'search --dataset sim --count 400 --policy sim --judge sim:generative --strategy chunk-reset --concurrency 1',
      join(dir, 'search-of-the-interrupted-run-with-a-long-name.jsonl'),
      /search chunk-reset \[/,
    );
  }, 240_000);
});
