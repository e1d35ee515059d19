import { describe, expect, it } from 'vitest';
import { StepwiseError, UsageError } from '../../src/core/errors.js';
import {
  parseCriticAnswer,
  parseJudgeVerdict,
  parseOrmPrompt,
  parseOrmVerdict,
  prefixFromChunks,
  renderCriticMessages,
  renderGlobalRefineMessages,
  renderJudgeMessages,
  renderLocalRefineMessages,
  renderOrmMessages,
  renderPolicyMessages,
  renderPolicyPrompt,
  renderQwenPrmInput,
} from '../../src/prompts/index.js';
import { PROMPT_READERS } from '../../src/prompts/readers.js';
import {
  applyOp,
  countSimTokens,
  createSimModel,
  DEFAULT_SIM_OPTIONS,
  describeOp,
  exactValue,
  finishSimSample,
  formatSimSpec,
  generateSimProblems,
  isSimSolutionCorrect,
  parseSimSpec,
  replaySimChunks,
  sampleSimSolution,
  simChunksOf,
  truncateSimTokens,
} from '../../src/sim/index.js';

const [problem] = generateSimProblems({ count: 1, seed: 21, minSteps: 6, maxSteps: 6 });
const solution = sampleSimSolution(problem, DEFAULT_SIM_OPTIONS, 5);

describe('spec syntax', () => {
  it('parses names, options, aliases and judge=perfect', () => {
    expect(parseSimSpec('sim').options).toEqual(DEFAULT_SIM_OPTIONS);
    const s = parseSimSpec('sim:strict?step_error=0.2&sens=0.7&spec=0.6&seed=4&prm=step');
    expect(s.name).toBe('strict');
    expect(s.options).toMatchObject({
      stepError: 0.2,
      sensitivity: 0.7,
      specificity: 0.6,
      seed: 4,
      prmTarget: 'step',
    });
    expect(parseSimSpec('sim?judge=perfect').options).toMatchObject({
      sensitivity: 1,
      specificity: 1,
      formatFailure: 0,
    });
    // The server reads per-request options from the model field, with or without a name.
    expect(parseSimSpec('sensitivity=0.5').options.sensitivity).toBe(0.5);
    expect(parseSimSpec('my-model').name).toBe('my-model');
    expect(() => parseSimSpec('sim?sensitivty=0.9')).toThrow(UsageError);
    expect(() => parseSimSpec('sim?step_error=2')).toThrow(/step_error|stepError/);
    expect(() => parseSimSpec('sim?min_steps=5&max_steps=3')).toThrow(UsageError);
    expect(parseSimSpec(formatSimSpec({ stepError: 0.3, catchRate: 0.1 })).options).toMatchObject({
      stepError: 0.3,
      catchRate: 0.1,
    });
  });
});

describe('tokenizer', () => {
  it('counts words, numbers and symbols; whitespace is free', () => {
    expect(countSimTokens('Step 1: add 5. 7 + 5 = 12.')).toBe(12);
    expect(countSimTokens('\\boxed{36}')).toBe(5); // \ boxed { 36 }
    expect(countSimTokens('  \n\n ')).toBe(0);
    expect(truncateSimTokens('a b c d', 2)).toEqual({ text: 'a b', truncated: true, tokens: 2 });
    expect(truncateSimTokens('a b', 2)).toEqual({ text: 'a b', truncated: false, tokens: 2 });
  });
});

describe('in-process model', () => {
  const model = createSimModel('sim?seed=3', PROMPT_READERS);

  it('declares its provider and capabilities', () => {
    expect(model.provider).toBe('sim');
    expect(model.capabilities).toMatchObject({
      n: true,
      logprobs: false,
      continueAssistant: true,
      pooling: true,
    });
  });

  it('continues any prefix, in raw and chat form, to a boxed answer', async () => {
    for (let i = 0; i <= solution.length - 1; i++) {
      const prefix = prefixFromChunks(solution.slice(0, i));
      const raw = await model.generate({
        prompt: renderPolicyPrompt(problem.question, prefix),
        n: 3,
        seed: 1,
      });
      const chat = await model.generate({
        messages: renderPolicyMessages(problem.question, prefix),
        n: 3,
        seed: 1,
      });
      for (const s of [...raw.samples, ...chat.samples]) {
        expect(s.finishReason).toBe('stop');
        expect(s.stopReason).toBeNull();
        const chunks = simChunksOf(prefix + s.text);
        expect(chunks.slice(0, i)).toEqual(solution.slice(0, i));
        expect(chunks.at(-1)).toMatch(/\\boxed\{-?\d+\}/);
        expect(replaySimChunks(problem, chunks).state.phase).toBe('done');
      }
    }
  });

  it('continues a prefix with a rewritten chunk consistently with its exact value', async () => {
    // Replace the first operation by a wrong one, then by a right one: the policy and the exact
    // value both follow the text of the prefix, not the history of how it was produced.
    const op0 = problem.ops[0];
    const right = applyOp(problem.start, op0);
    const sym = op0.kind === 'add' ? '+' : op0.kind === 'subtract' ? '-' : '×';
    for (const result of [right + 2, right]) {
      const chunks = [`Step 1: ${describeOp(op0)}. ${problem.start} ${sym} ${op0.operand} = ${result}.`];
      const prefix = prefixFromChunks(chunks);
      const M = 4000;
      const r = await model.generate({ prompt: renderPolicyPrompt(problem.question, prefix), n: M, seed: 9 });
      const q = r.samples.filter((s) => isSimSolutionCorrect(problem, prefix + s.text)).length / M;
      const exact = exactValue(problem, chunks);
      expect(Math.abs(q - exact)).toBeLessThan(4 * Math.sqrt((exact * (1 - exact)) / M));
    }
  });

  it('a prefix without the trailing blank line gets the separator first', async () => {
    const r = await model.generate({
      prompt: renderPolicyPrompt(problem.question, solution[0]),
      seed: 2,
      stop: ['\n\n'],
    });
    expect(r.samples[0].text.startsWith('\n\n')).toBe(true);
    expect(r.samples[0].text.trim()).not.toBe('');
    expect(r.samples[0].text.slice(2)).not.toContain('\n\n');
  });

  it('is deterministic by seed and sample index; differs across seeds and unseeded calls', async () => {
    const req = { prompt: renderPolicyPrompt(problem.question, ''), n: 6, seed: 42 };
    const a = await model.generate(req);
    const b = await createSimModel('sim?seed=3', PROMPT_READERS).generate(req);
    expect(b.samples).toEqual(a.samples);
    const first = await model.generate({ ...req, n: 2 });
    expect(first.samples).toEqual(a.samples.slice(0, 2));
    const other = await model.generate({ ...req, seed: 43 });
    expect(other.samples.map((s) => s.text)).not.toEqual(a.samples.map((s) => s.text));
    const u1 = await model.generate({ ...req, seed: undefined });
    const u2 = await model.generate({ ...req, seed: undefined });
    expect(u1.samples.map((s) => s.text)).not.toEqual(u2.samples.map((s) => s.text));
    const greedy = await model.generate({ ...req, temperature: 0 });
    expect(new Set(greedy.samples.map((s) => s.text)).size).toBe(1);
  });

  it('stops at stop strings, one chunk at a time, and truncates at max_tokens', async () => {
    const r = await model.generate({
      prompt: renderPolicyPrompt(problem.question, ''),
      n: 20,
      seed: 7,
      stop: ['\n\n'],
    });
    for (const s of r.samples) {
      expect(s.text).not.toContain('\n\n');
      if (s.stopReason === null) expect(s.text).toMatch(/\\boxed/);
      else expect(s.stopReason).toBe('\n\n');
    }
    const inc = await model.generate({
      prompt: renderPolicyPrompt(problem.question, ''),
      seed: 7,
      stop: ['\n\n'],
      extra: { include_stop_str_in_output: true },
    });
    expect(inc.samples[0].text).toBe(`${r.samples[0].text}\n\n`);
    const cut = await model.generate({
      prompt: renderPolicyPrompt(problem.question, ''),
      n: 5,
      seed: 7,
      maxTokens: 7,
    });
    for (const s of cut.samples) {
      expect(s.finishReason).toBe('length');
      expect(s.completionTokens).toBe(7);
      expect(countSimTokens(s.text)).toBe(7);
    }
    expect(finishSimSample('one two\n\nthree', 0, ['two', 'one two'], undefined)).toMatchObject({
      text: '',
      stopReason: 'one two',
    });
  });

  it('reports usage: prompt tokens once per request, completion tokens summed', async () => {
    const prompt = renderPolicyPrompt(problem.question, '');
    const r = await model.generate({ prompt, n: 4, seed: 1 });
    expect(r.usage.calls).toBe(1);
    expect(r.usage.promptTokens).toBe(countSimTokens(prompt));
    expect(r.usage.completionTokens).toBe(r.samples.reduce((s, x) => s + countSimTokens(x.text), 0));
    const messages = renderPolicyMessages(problem.question, 'We start with 3.\n\n');
    const c = await model.generate({ messages, seed: 1 });
    expect(c.usage.promptTokens).toBe(messages.reduce((s, m) => s + countSimTokens(m.content) + 2, 0));
    expect((await model.generate({ prompt, logprobs: 1 })).warnings[0]?.details).toMatch(/logprobs/);
  });

  it('routes judge, critic, outcome-model and refine prompts', async () => {
    const judge = await model.generate({
      messages: renderJudgeMessages({
        problem: problem.question,
        history: solution.slice(0, 1),
        chunk: solution[1],
      }),
      n: 5,
      seed: 1,
    });
    for (const s of judge.samples) expect(parseJudgeVerdict(s.text)).not.toBeNull();
    const critic = await model.generate({
      messages: renderCriticMessages(problem.question, solution),
      seed: 1,
    });
    const idx = parseCriticAnswer(critic.samples[0].text);
    expect(idx).not.toBeNull();
    expect(idx!).toBeGreaterThanOrEqual(-1);
    expect(idx!).toBeLessThan(solution.length);
    const orm = await model.generate({
      messages: renderOrmMessages(problem.question, solution.join('\n\n')),
      seed: 1,
    });
    expect(parseOrmVerdict(orm.samples[0].text)).not.toBeNull();

    const global = await model.generate({
      messages: renderGlobalRefineMessages(problem.question, solution.join('\n\n')),
      seed: 1,
    });
    const g = simChunksOf(global.samples[0].text);
    expect(replaySimChunks(problem, g).state.phase).toBe('done');

    const local = renderLocalRefineMessages(problem.question, solution, 2);
    const l = await model.generate({ messages: local, seed: 1 });
    const full = simChunksOf(`${local.at(-1)!.content}${l.samples[0].text}`);
    expect(full.slice(0, 2)).toEqual(solution.slice(0, 2));
    expect(replaySimChunks(problem, full).state.phase).toBe('done');
    // Raw-text local refinement has no assistant turn: the reply holds the good prefix too.
    const rawLocal = await model.generate({ prompt: local[0].content, seed: 1 });
    expect(simChunksOf(rawLocal.samples[0].text).slice(0, 2)).toEqual(solution.slice(0, 2));
  });

  it('answers /pooling-style PRM input, one score per step, deterministically', async () => {
    const input = renderQwenPrmInput(problem.question, solution);
    const a = await model.pool!(input);
    expect(a.data).toHaveLength(solution.length);
    for (const [neg, pos] of a.data) expect(neg + pos).toBeCloseTo(1, 12);
    expect((await model.pool!(input)).data).toEqual(a.data);
    await expect(model.pool!('plain text')).rejects.toThrow(StepwiseError);
  });

  it('rejects prompts it cannot answer, and answers non-sim questions with a labelled guess', async () => {
    await expect(model.generate({ prompt: 'Tell me a story.' })).rejects.toThrow(StepwiseError);
    await expect(model.generate({})).rejects.toThrow(UsageError);
    const r = await model.generate({ prompt: renderPolicyPrompt('What is 2 + 2?', ''), seed: 1 });
    expect(r.samples[0].text).toMatch(/not from the simulated world/);
    expect(isSimSolutionCorrect(problem, r.samples[0].text)).toBe(false);
  });
});

describe('outcome-model prompt (src/prompts/orm.ts)', () => {
  it('round-trips and parses verdicts', () => {
    const messages = renderOrmMessages('P?', 'a\n\nb \\boxed{3}');
    expect(parseOrmPrompt(messages)).toEqual({ problem: 'P?', solution: 'a\n\nb \\boxed{3}' });
    expect(parseOrmPrompt(messages[0].content)).toEqual({ problem: 'P?', solution: 'a\n\nb \\boxed{3}' });
    expect(parseOrmPrompt('hello')).toBeNull();
    expect(parseOrmVerdict('so \\boxed{Correct} ... no, \\boxed{\\text{Incorrect}}')).toBe('Incorrect');
    expect(parseOrmVerdict('no verdict')).toBeNull();
  });
});
