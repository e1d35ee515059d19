import { readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { withJudgeDocs } from '../../src/cli/judge-docs.js';
import { withSettingsDocs } from '../../src/cli/settings-docs.js';

const DOCS = resolve(import.meta.dirname, '../../docs/cli.md');
const JUDGES = resolve(import.meta.dirname, '../../docs/judges.md');

describe('docs/cli.md: the option tables of the method settings are the schemas', () => {
  it('each generated table equals what its schema gives (STEPWISE_WRITE_DOCS=1 rewrites them)', () => {
    const text = readFileSync(DOCS, 'utf8');
    const generated = withSettingsDocs(text);
    if (process.env.STEPWISE_WRITE_DOCS === '1' && generated !== text) writeFileSync(DOCS, generated);
    else expect(text, 'docs/cli.md drifted from the settings schemas').toBe(generated);
  });

  it("docs/judges.md: the judge kinds and their settings are the kinds' schemas", () => {
    const text = readFileSync(JUDGES, 'utf8');
    const generated = withJudgeDocs(text);
    if (process.env.STEPWISE_WRITE_DOCS === '1' && generated !== text) writeFileSync(JUDGES, generated);
    else expect(text, 'docs/judges.md drifted from the judge kinds').toBe(generated);
  });
});
