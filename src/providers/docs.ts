import { defaultTextOf, requirementOf, settingFields } from '../core/settings-schema.js';
import { queryKeyOf } from '../core/spec-query.js';
import type { ProviderRegistry } from '../models/registry.js';

/** A table cell: pipes escaped, one line. */
function cell(text: string): string {
  return text.replace(/\|/g, '\\|').replace(/\n/g, ' ');
}

/**
 * The settings of every provider of `registry`, as Markdown: one table per provider, each row a
 * setting with its spec key (`?timeout_ms=…`), default, valid values and meaning. This is
 * what docs/models.md shows between its `providers` markers (test/models/models-docs.test.ts
 * fails when the docs drift; `STEPWISE_WRITE_DOCS=1` rewrites them).
 */
export function providerSettingsDocs(registry: ProviderRegistry): string {
  const parts: string[] = [];
  for (const name of registry.names()) {
    const p = registry.provider(name)!;
    const aliases = Object.entries(p.aliases ?? {});
    parts.push(`### \`${p.usage}\``, '', `${p.description}.`, '');
    const rows = settingFields(p.settings).map((f) => {
      const key = p.notInSpec?.includes(f.key)
        ? `— (\`${f.flag}\` only)`
        : [queryKeyOf(f.key), ...aliases.filter(([, k]) => k === f.key).map(([a]) => a)]
            .map((k) => `\`${k}\``)
            .join(', ');
      const dflt = defaultTextOf(f) ?? '—';
      return `| ${key} | ${cell(dflt)} | ${cell(requirementOf(f))} | ${cell(f.meta.help)} |`;
    });
    if (rows.length === 0) parts.push('No settings.', '');
    else parts.push('| spec key | default | value | meaning |', '| --- | --- | --- | --- |', ...rows, '');
  }
  return parts.join('\n').trimEnd();
}

const BEGIN = '<!-- providers (generated from the provider registry: do not edit by hand) -->';
const END = '<!-- /providers -->';

/** `text` (docs/models.md) with its generated providers block replaced by `registry`'s current one. */
export function withProviderDocs(text: string, registry: ProviderRegistry): string {
  const a = text.indexOf(BEGIN);
  const b = text.indexOf(END);
  if (a < 0 || b < a) throw new Error(`docs/models.md: no generated block (${BEGIN} … ${END})`);
  return `${text.slice(0, a)}${BEGIN}\n${providerSettingsDocs(registry)}\n${text.slice(b)}`;
}
