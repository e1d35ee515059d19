import { LABEL_CODE_SETTINGS } from '../code/settings.js';
import type { SettingsSchema } from '../core/settings-schema.js';
import { EVAL_CHUNKS_SETTINGS, PROCESSBENCH_SETTINGS } from '../evaluate/settings.js';
import { LABEL_SETTINGS } from '../label/settings.js';
import { SAMPLE_SETTINGS } from '../sample/settings.js';
import { SEARCH_SETTINGS } from '../search/registry.js';
import { SEGMENT_SETTINGS } from '../segment/settings.js';
import { EXPORT_SETTINGS } from '../train/export-settings.js';
import { SELECT_SETTINGS } from '../train/select-settings.js';
import { settingsTable } from './settings-options.js';

/**
 * The methods whose settings are declared as a schema, with the command that takes them: their
 * option tables in docs/cli.md are generated from the schemas (test/cli/settings-docs.test.ts
 * fails when the docs drift; `STEPWISE_WRITE_DOCS=1` rewrites them).
 */
export function methodSettings(): ReadonlyArray<{ command: string; schema: SettingsSchema }> {
  return [
    { command: 'label', schema: LABEL_SETTINGS },
    { command: 'sample', schema: SAMPLE_SETTINGS },
    { command: 'select', schema: SELECT_SETTINGS },
    { command: 'label-code', schema: LABEL_CODE_SETTINGS },
    // The shared search settings and every strategy's own (search, solve and bench search take them).
    { command: 'search', schema: SEARCH_SETTINGS },
    { command: 'eval processbench', schema: PROCESSBENCH_SETTINGS },
    { command: 'eval chunks', schema: EVAL_CHUNKS_SETTINGS },
    { command: 'export', schema: EXPORT_SETTINGS },
    { command: 'segment', schema: SEGMENT_SETTINGS },
  ];
}

/** The generated block of one command in docs/cli.md, markers included. */
export function settingsDocsBlock(command: string, schema: SettingsSchema): string {
  return [
    `<!-- settings: ${command} (generated from its schema: do not edit by hand) -->`,
    settingsTable(schema),
    `<!-- /settings: ${command} -->`,
  ].join('\n');
}

/** `text` (docs/cli.md) with every generated block replaced by the schemas' current one. */
export function withSettingsDocs(text: string): string {
  let out = text;
  for (const { command, schema } of methodSettings()) {
    const begin = `<!-- settings: ${command} `;
    const end = `<!-- /settings: ${command} -->`;
    const a = out.indexOf(begin);
    const b = out.indexOf(end);
    if (a < 0 || b < a) throw new Error(`docs/cli.md: no generated settings block of ${command}`);
    out = out.slice(0, a) + settingsDocsBlock(command, schema) + out.slice(b + end.length);
  }
  // A block whose command no schema feeds any more would go stale unseen.
  const known = new Set(methodSettings().map((m) => m.command));
  for (const [, command] of out.matchAll(/<!-- settings: (.+?) \(generated/g))
    if (!known.has(command as string))
      throw new Error(
        `docs/cli.md: a generated settings block of ${command}, whose schema is not in methodSettings()`,
      );
  return out;
}
