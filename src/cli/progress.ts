import cliProgress from 'cli-progress';

/**
 * A progress bar on stderr (stdout stays clean for JSON). Shown in CI logs too
 * (`noTTYOutput`), throttled there so logs stay short. `--quiet` / STEPWISE_QUIET hide it.
 */
export interface ProgressBar {
  update(done: number, total: number, extra?: string): void;
  stop(): void;
}

export function createProgressBar(label: string, options: { quiet?: boolean } = {}): ProgressBar {
  if (options.quiet || process.env.STEPWISE_QUIET) return { update() {}, stop() {} };
  const tty = Boolean(process.stderr.isTTY);
  const bar = new cliProgress.SingleBar(
    {
      stream: process.stderr,
      format: `${label} [{bar}] {percentage}% | {value}/{total} | eta {eta_formatted} {extra}`,
      noTTYOutput: !tty,
      notTTYSchedule: 5000,
      hideCursor: tty,
      clearOnComplete: false,
    },
    cliProgress.Presets.shades_classic,
  );
  let started = false;
  return {
    update(done, total, extra = '') {
      if (!started) {
        bar.start(total, done, { extra });
        started = true;
      } else {
        bar.setTotal(total);
        bar.update(done, { extra });
      }
    },
    stop() {
      if (started) bar.stop();
    },
  };
}
