import { readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { withSettingsDocs } from '../../src/cli/settings-docs.js';

const DOCS = resolve(import.meta.dirname, '../../docs/cli.md');

describe('docs/cli.md: the option tables of the method settings are the schemas', () => {
  it('each generated table equals what its schema gives (STEPWISE_WRITE_DOCS=1 rewrites them)', () => {
    const text = readFileSync(DOCS, 'utf8');
    const generated = withSettingsDocs(text);
    if (process.env.STEPWISE_WRITE_DOCS === '1' && generated !== text) writeFileSync(DOCS, generated);
    else expect(text, 'docs/cli.md drifted from the settings schemas').toBe(generated);
  });
});
