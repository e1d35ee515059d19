import { z } from 'zod';
import { splitWritten } from '../core/segment.js';
import { setting } from '../core/settings-schema.js';
import type { Problem } from '../core/types.js';
import {
  rebuiltDraft,
  renderGlobalRefineMessages,
  renderLocalRefineMessages,
  type WrittenDraft,
} from '../prompts/refine.js';
import { argmaxBy } from './aggregate.js';
import { SearchRuntime } from './runtime.js';
import type { StrategyConfig } from './settings.js';
import type { SearchChunk, SearchDeps, SearchResult, TraceNode } from './types.js';

interface Refinement {
  label: 'draft' | 'global' | 'local';
  text: string;
  chunks: string[];
  score: number;
  node: TraceNode;
}

/** GLoRe's own settings. */
export const REFINE_SETTINGS = z.object({
  refineBelow: setting(z.number().min(0).max(1).default(0.5), {
    help: 'refine a draft whose outcome score is below s',
    arg: 's',
  }),
  draftTemperature: setting(z.number().min(0).max(10).optional(), {
    help: "temperature of the draft (0 = greedy drafts, as behind the paper's refinement numbers)",
    arg: 't',
    defaultText: '--temperature',
  }),
  refinements: setting(z.enum(['both', 'global', 'local']).default('both'), {
    help: 'which refinements to try',
    arg: 'which',
  }),
});

/**
 * GLoRe refinement (METHODS §5). A draft is sampled; the outcome model (ORM) scores it and
 * decides *when* to refine: only a draft scoring below `refineBelow` is refined. The step judge
 * decides *where*: its first negative step. Global refinement rewrites from (question, draft);
 * local refinement sends the draft with `[BAD]` before the first negative step and continues from
 * the good prefix (the prefix plus the continuation is the local solution). The ORM then reranks
 * {draft, global, local}; ties go to the draft, then global. When the step judge finds no negative
 * step, local refinement is skipped. Without an outcome model, the step judge's product of step
 * scores stands in for it. Under `--segmentation tags` the prompts ask for `<chunk>`s and quote the
 * draft as the policy wrote it, and the local prefix is the policy's own text up to a `</chunk>`.
 */
export async function gloreRefine(
  problem: Problem,
  config: StrategyConfig<typeof REFINE_SETTINGS>,
  deps: SearchDeps,
): Promise<SearchResult> {
  const rt = new SearchRuntime('refine', problem, config, deps);
  const split = (t: string): string[] => rt.split(t);
  const make = async (label: Refinement['label'], text: string): Promise<Refinement> => {
    const chunks = split(text);
    const score = await rt.outcomeScore(chunks);
    const node = rt.node({
      parent: null,
      depth: 0,
      text,
      status: 'pruned',
      final: true,
      label,
      score,
      answer: rt.answerOf(text),
    });
    return { label, text, chunks, score, node };
  };

  const [draftText = ''] = await rt.sampleSolutions(1, config.draftTemperature ?? config.temperature);
  const draft = await make('draft', draftText);
  const options: Refinement[] = [draft];
  let firstError = -1;
  let draftRulings: SearchChunk[] = [];
  const refined = draft.score < config.refineBelow;
  if (refined) {
    if (config.refinements !== 'local') {
      const text = await rt.generateMessages(
        renderGlobalRefineMessages(problem.question, draft.text, config.segmentation),
      );
      options.push(await make('global', text));
    }
    if (config.refinements !== 'global') {
      const fe = await rt.firstError(draft.chunks);
      firstError = fe.firstError;
      draftRulings = fe.rulings.map((r, index) => ({
        index,
        text: draft.chunks[index],
        verdict: r.verdict,
        score: r.score,
        attempts: 1,
        node: draft.node.id,
      }));
      if (firstError >= 0 && firstError < draft.chunks.length) {
        const written = writtenDraft(draft.text, draft.chunks, config.segmentation);
        const continuation = await rt.generateMessages(
          renderLocalRefineMessages(problem.question, written, firstError, config.segmentation),
        );
        const prefix = firstError > 0 ? written.text.slice(0, written.ends[firstError - 1]) : '';
        // Under tags the prefix ends right after `</chunk>` and the continuation is kept as written.
        const text =
          config.segmentation === 'tags' ? prefix + continuation : prefix + continuation.trimStart();
        options.push(await make('local', text));
      }
    }
  }
  const chosen = options[argmaxBy(options, (o) => o.score)];
  chosen.node.status = 'accepted';
  const chunks: SearchChunk[] =
    chosen === draft && draftRulings.length > 0
      ? draft.chunks.map(
          (text, index) => draftRulings[index] ?? { index, text, attempts: 1, node: draft.node.id },
        )
      : chosen.chunks.map((text, index) => ({ index, text, attempts: 1, node: chosen.node.id }));
  return rt.finish(chosen.text, chunks, {
    refined,
    chosen: chosen.label,
    draftScore: draft.score,
    firstError,
    options: options.length,
  });
}

/**
 * The draft as the prompts quote it. Under tags: the policy's own text when its tags are well
 * formed, else its chunks (the paragraphs of the tag-free text) rebuilt in `<chunk>`s, since the
 * policy was asked for tags. Under paragraph: the chunks joined by blank lines.
 */
function writtenDraft(
  text: string,
  chunks: string[],
  segmentation: StrategyConfig<typeof REFINE_SETTINGS>['segmentation'],
): WrittenDraft {
  if (segmentation !== 'tags') return rebuiltDraft(chunks, 'paragraph');
  const split = splitWritten(text, 'tags');
  if (split.method === 'tags') return { text, chunks: split.chunks.map((c) => c.text), ends: split.ends };
  return rebuiltDraft(chunks, 'tags');
}
