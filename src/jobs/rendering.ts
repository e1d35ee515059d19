import { existsSync } from 'node:fs';
import { UsageError } from '../core/errors.js';
import { streamJsonl } from './lines.js';
import { recordedSettings } from './settings.js';

/**
 * An input made by `stepwise sample` records (in its job settings) which chat template rendered
 * its prompts; rollouts from its prefixes must be rendered the same way, or they continue text
 * the model never wrote that way.
 */
export function assertInputRendering(file: string, chatTemplate: string | undefined): void {
  if (!existsSync(file)) return;
  // Rows of one output share one job's settings (jobs/settings): the first row with them says it.
  for (const { line, value } of streamJsonl(file, { skipInvalid: true })) {
    const job = recordedSettings(value);
    if (job?.command !== 'sample') return;
    const had = job.settings.chatTemplate;
    if (had === chatTemplate) return;
    throw new UsageError(
      `${file}, line ${line}: sampled with ${typeof had === 'string' ? `--chat-template ${had}` : 'no --chat-template'}, ` +
        `but this run uses ${chatTemplate ? `--chat-template ${chatTemplate}` : 'none'}: rollouts must continue ` +
        'the prompts the samples were drawn from (pass the same --chat-template)',
    );
  }
}
