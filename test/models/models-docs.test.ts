import { readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createDefaultRegistry } from '../../src/providers/default.js';
import { withProviderDocs } from '../../src/providers/docs.js';

const DOCS = resolve(import.meta.dirname, '../../docs/models.md');

describe("docs/models.md: each provider's settings are its schema", () => {
  it('the generated block equals what the registry gives (STEPWISE_WRITE_DOCS=1 rewrites it)', () => {
    const text = readFileSync(DOCS, 'utf8');
    const generated = withProviderDocs(text, createDefaultRegistry());
    if (process.env.STEPWISE_WRITE_DOCS === '1' && generated !== text) writeFileSync(DOCS, generated);
    else expect(text, 'docs/models.md drifted from the providers').toBe(generated);
    // Every provider and every setting is there, with its default.
    for (const row of [
      '| `timeout_ms` | 600000 |',
      '| `threads` |',
      '| `step_error` | 0.1 |',
      '| — (`--base-url` only) |',
    ])
      expect(text).toContain(row);
  });
});
