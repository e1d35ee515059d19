/**
 * The CLI's one warning sink: every warning a command or a model gives reaches the user here, on
 * stderr, as `stepwise: warning: <message>` (the models' warnings come through the registry's
 * warning middleware, each once per model).
 */
export function warn(message: string): void {
  process.stderr.write(`stepwise: warning: ${message}\n`);
}
