import { describe, expect, it } from 'vitest';
import { emptyCost } from '../../src/core/cost.js';
import type { Problem } from '../../src/core/types.js';
import type { StepJudge } from '../../src/judge/types.js';
import { loadChatTemplate } from '../../src/prompts/chat-template.js';
import { policyUserMessage, renderPolicyPrompt } from '../../src/prompts/policy.js';
import { problemOfPrompt, startRewardServer } from '../../src/train/reward-server.js';
import { sharedData } from '../support/shared-data.js';

/**
 * `serve rewards --kind judge` as OpenRLHF drives it. With `--apply_chat_template` OpenRLHF's
 * `prompts[i]` is the templated prompt and `query[i]` that text followed by the response
 * (OpenRLHF remote_rm_utils.py posts {query, prompts, labels}); the judge must see the problem, not
 * the template. One failed judge call costs its sample, never the batch.
 */

async function post(url: string, body: unknown) {
  const res = await fetch(`${url}/get_reward`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}

/** A judge that records the problems it is asked about; `fail` makes a problem's call throw. */
function recordingJudge(fail: (p: Problem) => boolean = () => false): { judge: StepJudge; seen: string[] } {
  const seen: string[] = [];
  const judge: StepJudge = {
    name: 'recording',
    scalar: true,
    async judge(problem, chunks) {
      seen.push(problem.question);
      if (fail(problem)) throw new Error(`judge server unreachable for ${problem.id}`);
      const judgments = chunks.map((_, i) => ({ chunkIndex: i, verdict: 'positive' as const, score: 0.8 }));
      return { judgments, firstError: -1, cost: emptyCost(), formatFailures: 0 };
    },
  };
  return { judge, seen };
}

const QUESTION = 'Tom has 3 apples and buys 4 more. How many apples does he have?';
const TEMPLATES = [
  'Qwen-Qwen2.5-7B-Instruct.jinja',
  'meta-llama-Llama-3.1-8B-Instruct.jinja',
  'deepseek-ai-DeepSeek-R1-Distill-Qwen-32B.jinja',
  'Qwen-QwQ-32B.jinja',
];

describe('serve rewards --kind judge under OpenRLHF', () => {
  it("takes the problem out of a chat-templated prompt, for each model family's template", async () => {
    const { judge, seen } = recordingJudge();
    const s = await startRewardServer({ kind: 'judge', judge });
    try {
      const prompts = TEMPLATES.flatMap((file) => {
        const template = loadChatTemplate(sharedData(`chat-templates/${file}`));
        return [
          // The policy prompt stepwise writes into its judge-rl / sample rows …
          template.render([{ role: 'user', content: policyUserMessage(QUESTION) }], {
            addGenerationPrompt: true,
          }),
          // … and a bare question under a system prompt.
          template.render(
            [
              { role: 'system', content: 'You are a careful solver.' },
              { role: 'user', content: QUESTION },
            ],
            { addGenerationPrompt: true },
          ),
        ];
      });
      // Without a template: our raw policy prompt, or the question itself (what verl's integration sends).
      prompts.push(renderPolicyPrompt(QUESTION), QUESTION);
      const response = '3 + 4 = 7.\n\nSo he has \\boxed{7} apples.';
      const { status, json } = await post(s.url, {
        query: prompts.map((p) => p + response),
        prompts,
        labels: prompts.map(() => '7'),
      });
      expect(status).toBe(200);
      expect(json.rewards).toEqual(prompts.map(() => 0.8));
      expect(seen).toEqual(prompts.map(() => QUESTION));
    } finally {
      await s.close();
    }
  });

  it('a failed judge call gives that sample the failure reward and a logged reason; the batch is answered', async () => {
    const { judge } = recordingJudge((p) => p.id === 'req-1');
    const lines: string[] = [];
    const s = await startRewardServer({ kind: 'judge', judge, log: (l) => lines.push(l) });
    try {
      const { status, json } = await post(s.url, {
        query: ['P\n\nfine', 'P\n\nfine too', 'P\n\nalso fine'],
        prompts: ['P', 'P', 'P'],
        labels: ['1', '2', '3'],
      });
      expect(status).toBe(200);
      expect(json.rewards).toEqual([0.8, 0, 0.8]);
      expect((json.extra_logs as Record<string, number[]>).judge_failed).toEqual([0, 1, 0]);
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(
        /sample 1 of 3: the judge failed \(judge server unreachable for req-1\); reward 0/,
      );
    } finally {
      await s.close();
    }
  });

  it('a hostile prompt of unclosed turn markers is read in linear time', () => {
    const hostile = '<|im_start|>user\n'.repeat(200_000);
    expect(problemOfPrompt(hostile)).toBe('');
    const mixed = `${'[INST]<|user|>\n<start_of_turn>user\n'.repeat(50_000)}x`;
    expect(problemOfPrompt(mixed)).toBe('x');
  });
});
