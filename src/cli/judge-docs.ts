import { defaultTextOf, requirementOf, settingFields } from '../core/settings-schema.js';
import { queryKeyOf } from '../core/spec-query.js';
import { JUDGE_KIND_DEFINITIONS } from '../judge/kinds.js';

/**
 * What `--help` and docs/judges.md say of the judge kinds and their settings, generated from the
 * kinds' schemas (src/judge/kinds.ts): a setting added to a kind appears in both.
 */

/** `votes=K`: a setting as written in a spec's query. */
function keyOf(key: string, arg: string | undefined): string {
  return `${queryKeyOf(key)}=${(arg ?? 'v').toUpperCase()}`;
}

/** The `--judge` help: each kind, then its settings with their defaults. */
export function judgeSpecHelp(): string {
  const lines = [
    '',
    'Judge specs (<kind>:<model spec>[?key=value&…]; settings of each kind below; docs/judges.md):',
  ];
  for (const k of JUDGE_KIND_DEFINITIONS) {
    lines.push(`  ${k.kind.padEnd(11)} ${k.help}`);
    const settings = settingFields(k.settings).map((f) => {
      const dflt = defaultTextOf(f);
      return `${keyOf(f.key, f.meta.arg)}${dflt === undefined ? '' : ` (default ${dflt})`}`;
    });
    lines.push(`  ${''.padEnd(11)} ${settings.join('; ')}`);
  }
  lines.push('Model specs: openai:<served model> (with --base-url), gguf:<file>, sim[?k=v] (simulated).', '');
  return lines.join('\n');
}

function cell(text: string): string {
  return text.replace(/\|/g, '\\|').replace(/</g, '&lt;').replace(/\n/g, ' ');
}

/** One table per kind: its settings as query keys, with default, valid values and meaning. */
export function judgeKindsTable(): string {
  const out: string[] = [];
  for (const k of JUDGE_KIND_DEFINITIONS) {
    out.push(`**\`${k.kind}\`** — ${cell(k.help)}`, '');
    out.push('| key | default | value | meaning |', '| --- | --- | --- | --- |');
    for (const f of settingFields(k.settings)) {
      const help = `${f.meta.help}${f.meta.runOnly ? '; changes how fast, never a verdict' : ''}`;
      out.push(
        `| \`${keyOf(f.key, f.meta.arg)}\` | ${cell(defaultTextOf(f) ?? '—')} | ${cell(requirementOf(f))} | ${cell(help)} |`,
      );
    }
    out.push('');
  }
  return out.join('\n').trimEnd();
}

const BEGIN = '<!-- judge kinds (generated from src/judge/kinds.ts: do not edit by hand) -->';
const END = '<!-- /judge kinds -->';

/** `text` (docs/judges.md) with its generated block of judge kinds replaced by the current one. */
export function withJudgeDocs(text: string): string {
  const a = text.indexOf(BEGIN);
  const b = text.indexOf(END);
  if (a < 0 || b < a) throw new Error('docs/judges.md: no generated block of judge kinds');
  return `${text.slice(0, a)}${BEGIN}\n${judgeKindsTable()}\n${END}${text.slice(b + END.length)}`;
}
