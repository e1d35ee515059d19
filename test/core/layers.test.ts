import { readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SRC, sourceFiles, withoutComments } from '../support/source-code.js';

/**
 * The layers the README promises, checked on every import of every file in src/. A directory
 * may import itself and any directory of a lower layer; an import to the same layer ("across")
 * only where ACROSS lists it, with the reason. Files directly in src/ (`index.ts`, the library
 * entry, is the top; `version.ts` the bottom) have their own entries.
 */
const LAYERS: string[][] = [
  ['core', 'version.ts'],
  ['prompts', 'data', 'store', 'jobs'],
  ['verify'],
  ['models'],
  // The methods, and the simulated world beside them: no method knows the sim exists.
  ['sim', 'sample', 'segment', 'label', 'judge', 'search', 'evaluate', 'train', 'code'],
  // Composition roots and servers: they wire backends (the sim among them) to methods.
  ['providers', 'server'],
  ['cli'],
  ['index.ts'],
];

const ACROSS: Record<string, { to: string[]; why: string }> = {
  judge: { to: ['label'], why: 'the rollout judge estimates Q-values with the labeler' },
  evaluate: { to: ['judge', 'label'], why: 'ProcessBench and chunk evaluation run judges and labels' },
  train: { to: ['judge', 'label'], why: 'exports and the reward server read labels and run judges' },
  search: { to: ['judge'], why: 'the search runtime scores steps with a judge' },
  code: { to: ['judge', 'search'], why: 'code search runs the search strategies with a code domain and PRM' },
};

/**
 * Imports narrower than the layers: `from` may reach directory `to` only through the files
 * listed (paths inside `to`).
 */
const THROUGH: Record<string, Record<string, { files: string[]; why: string }>> = {
  sim: {
    prompts: {
      files: ['protocol.ts'],
      why: 'the sim reads requests through the declared protocol, its readers handed in by the composition root; importing a prompt module would let a prompt edit change the simulated world unseen',
    },
  },
};

/** Relative module specifiers a file imports (static, re-export, side-effect and dynamic), with lines. */
function importsOf(text: string): Array<{ spec: string; line: number }> {
  const out: Array<{ spec: string; line: number }> = [];
  const code = withoutComments(text);
  const pattern = /(?:\bfrom\s*|\bimport\s*\(?\s*)(['"])(\.{1,2}\/[^'"]+)\1/g;
  for (const m of code.matchAll(pattern))
    out.push({ spec: m[2]!, line: code.slice(0, m.index).split('\n').length });
  return out;
}

/** The unit of a src file: its top directory, or its own name for files directly in src/. */
function unitOf(file: string): string {
  return relative(SRC, file).split(/[\\/]/)[0]!.replace(/\.js$/, '.ts');
}

function layerOf(unit: string): number {
  const i = LAYERS.findIndex((l) => l.includes(unit));
  if (i < 0) throw new Error(`src/${unit} is in no layer: add it to LAYERS in test/core/layers.test.ts`);
  return i;
}

/**
 * Every import of src/ that goes upward or across without leave, or into a directory other than
 * through the files THROUGH lists, as `file:line → target`.
 */
function layerViolations(files: Array<{ path: string; text: string }>): string[] {
  const bad: string[] = [];
  for (const { path, text } of files) {
    const from = unitOf(path);
    for (const { spec, line } of importsOf(text)) {
      const target = resolve(dirname(path), spec);
      const to = unitOf(target);
      if (to === from || to.startsWith('..')) continue;
      const [lf, lt] = [layerOf(from), layerOf(to)];
      const allowed = lt < lf || (lt === lf && (ACROSS[from]?.to.includes(to) ?? false));
      if (!allowed)
        bad.push(
          `src/${relative(SRC, path)}:${line} imports ${spec} (${from} → ${to}: ${lt > lf ? 'upward' : 'across'})`,
        );
      const through = THROUGH[from]?.[to];
      const inside = relative(join(SRC, to), target).replace(/\.js$/, '.ts');
      if (allowed && through && !through.files.includes(inside))
        bad.push(
          `src/${relative(SRC, path)}:${line} imports ${spec} (${from} → ${to}: only through ${through.files.join(', ')})`,
        );
    }
  }
  return bad;
}

/** The methods (and the sim beside them): libraries that report progress, never record runs. */
const METHOD_LAYER = LAYERS[4]!;

/**
 * Every place a method writes the run store (`file:line name`): recording a run is its command's
 * business (`stepwise runs` and the web view read what commands record), the library reports
 * progress through callbacks.
 */
function runStoreWriters(files: Array<{ path: string; text: string }>): string[] {
  const bad: string[] = [];
  for (const { path, text } of files) {
    if (!METHOD_LAYER.includes(unitOf(path))) continue;
    const code = withoutComments(text);
    for (const m of code.matchAll(/\b(startRun|finishRun|updateRunCounts|interruptActiveRuns)\b/g))
      bad.push(`src/${relative(SRC, path)}:${code.slice(0, m.index).split('\n').length} ${m[1]}`);
  }
  return bad;
}

const files = sourceFiles(SRC).map((path) => ({ path, text: readFileSync(path, 'utf8') }));

describe('layers', () => {
  it('every directory of src/ sits in a layer', () => {
    for (const f of files) expect(() => layerOf(unitOf(f.path))).not.toThrow();
  });

  it('no import goes upward or across (models and prompts never import sim, prompts never import models, methods never import sim or cli), and the sim reaches the prompts only through their protocol', () => {
    expect(layerViolations(files)).toEqual([]);
  });

  it('no method writes the run store: its command records the run', () => {
    expect(runStoreWriters(files)).toEqual([]);
    const at = (p: string, text: string) => ({ path: join(SRC, p), text });
    expect(
      runStoreWriters([
        at('search/x.ts', "import { startRun } from '../store/runs.js';\n// finishRun(db, id)"),
        at('cli/x.ts', "import { startRun } from '../store/runs.js';"),
      ]),
    ).toEqual(['src/search/x.ts:1 startRun']);
  });

  it('the allowed cross-method imports form no cycle', () => {
    for (const [from, { to }] of Object.entries(ACROSS))
      for (const t of to) expect(ACROSS[t]?.to ?? [], `${from} ↔ ${t}`).not.toContain(from);
  });

  it('catches an upward, an across and a dynamic import, and ignores comments', () => {
    const at = (p: string, text: string) => ({ path: join(SRC, p), text });
    expect(
      layerViolations([
        at('models/x.ts', "import { createSimModel } from '../sim/model.js';"),
        at('prompts/x.ts', "import type { LanguageModel } from '../models/types.js';"),
        at('search/x.ts', "\n\nconst m = await import('../sim/index.js');"),
        at('label/x.ts', "export { main } from '../cli/main.js';"),
        at('code/x.ts', "import '../sim/provider.js';"),
        at('judge/x.ts', "// import { x } from '../sim/model.js';\n/* from '../cli/main.js' */"),
        at('judge/y.ts', "import { estimate } from '../label/estimate.js';"),
        at('sim/x.ts', "import { parsePolicyPrompt } from '../prompts/policy.js';"),
        at('sim/y.ts', "import type { PromptReaders } from '../prompts/protocol.js';"),
        at('sim/z.ts', "\nexport * from '../prompts/index.js';"),
        at('sim/deep/w.ts', "import { PROMPT_READERS } from '../../prompts/readers.js';"),
      ]),
    ).toEqual([
      'src/models/x.ts:1 imports ../sim/model.js (models → sim: upward)',
      'src/prompts/x.ts:1 imports ../models/types.js (prompts → models: upward)',
      'src/search/x.ts:3 imports ../sim/index.js (search → sim: across)',
      'src/label/x.ts:1 imports ../cli/main.js (label → cli: upward)',
      'src/code/x.ts:1 imports ../sim/provider.js (code → sim: across)',
      'src/sim/x.ts:1 imports ../prompts/policy.js (sim → prompts: only through protocol.ts)',
      'src/sim/z.ts:2 imports ../prompts/index.js (sim → prompts: only through protocol.ts)',
      'src/sim/deep/w.ts:1 imports ../../prompts/readers.js (sim → prompts: only through protocol.ts)',
    ]);
  });

  it('a command never imports another command: what two commands share lives beside them in src/cli', () => {
    expect(commandCrossImports(files)).toEqual([]);
    const at = (p: string, text: string) => ({ path: join(SRC, p), text });
    expect(
      commandCrossImports([
        at('cli/commands/bench.ts', "import { addStrategyOptions } from './search.js';"),
        at('cli/commands/demo.ts', "\nconst m = await import('../commands/search.js');"),
        at('cli/commands/index.ts', "import { register as label } from './label.js';"),
        at('cli/commands/solve.ts', "import { buildSearchDeps } from '../search-setup.js';"),
      ]),
    ).toEqual([
      'src/cli/commands/bench.ts:1 imports ./search.js',
      'src/cli/commands/demo.ts:2 imports ../commands/search.js',
    ]);
  });

  it("no shim: a file other than an area's index.ts declares something of its own (a second path to the same names is not one)", () => {
    expect(reexportShims(files)).toEqual([]);
    const at = (p: string, text: string) => ({ path: join(SRC, p), text });
    expect(
      reexportShims([
        at('models/spec.ts', "/** moved */\nexport { createModel, type ModelSpec } from './registry.js';"),
        at('models/types.ts', "export type * from '../core/model.js';"),
        at(
          'providers/index.ts',
          "import '../models/providers.js';\nexport { createModel } from '../models/registry.js';",
        ),
        at('models/index.ts', "export * from './cache.js';"),
        at('models/ok.ts', "export { x } from './y.js';\nexport const z = 1;"),
      ]),
    ).toEqual(['src/models/spec.ts', 'src/models/types.ts', 'src/providers/index.ts']);
  });
});

/**
 * Files whose code only imports and re-exports (`export … from`): shims that give importers a
 * second path to names another module owns. An area's `index.ts` that lists its own directory's
 * files (its public API) is not one; the library entry `src/index.ts` neither.
 */
function reexportShims(files: Array<{ path: string; text: string }>): string[] {
  return files
    .filter(({ path, text }) => {
      if (path === join(SRC, 'index.ts')) return false;
      const code = withoutComments(text);
      const ownBarrel =
        path.endsWith(`${sep}index.ts`) && importsOf(code).every(({ spec }) => spec.startsWith('./'));
      if (ownBarrel) return false;
      const rest = code
        .replace(/\bexport\s+(?:type\s+)?(?:\*|\{[^}]*\})(?:\s+as\s+\w+)?\s+from\s+['"][^'"]+['"];?/g, '')
        .replace(/\bimport\s+(?:type\s+)?(?:[^'";]*?\s+from\s+)?['"][^'"]+['"];?/g, '');
      return rest.trim() === '';
    })
    .map(({ path }) => `src/${relative(SRC, path)}`);
}

/**
 * Imports from one command file (src/cli/commands/*.ts) to another, as `file:line imports spec`;
 * `index.ts`, the list of every command, is the one file that imports them all.
 */
function commandCrossImports(files: Array<{ path: string; text: string }>): string[] {
  const commands = join(SRC, 'cli', 'commands');
  const bad: string[] = [];
  for (const { path, text } of files) {
    if (dirname(path) !== commands || path.endsWith('index.ts')) continue;
    for (const { spec, line } of importsOf(text))
      if (dirname(resolve(dirname(path), spec)) === commands)
        bad.push(`src/${relative(SRC, path)}:${line} imports ${spec}`);
  }
  return bad;
}
