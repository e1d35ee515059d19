import { describe, expect, it } from 'vitest';
import {
  parseCriticAnswer,
  parseCriticPrompt,
  parseJudgePrompt,
  parseJudgeVerdict,
  parsePolicyPrompt,
  parseQwenPrmInput,
  parseRefinePrompt,
  renderCriticMessages,
  renderJudgeMessages,
  renderLocalRefineMessages,
  renderPolicyMessages,
  renderPolicyPrompt,
  renderQwenPrmInput,
} from '../../src/prompts/index.js';

describe('prompt templates invert', () => {
  it('policy raw and chat forms', () => {
    expect(parsePolicyPrompt(renderPolicyPrompt('What is 2+2?', 'Step one.\n\n'))).toEqual({
      question: 'What is 2+2?',
      prefix: 'Step one.\n\n',
      segmentation: 'paragraph',
    });
    expect(parsePolicyPrompt(renderPolicyMessages('Q?', 'abc'))).toEqual({
      question: 'Q?',
      prefix: 'abc',
      segmentation: 'paragraph',
    });
    expect(parsePolicyPrompt('hello')).toBeNull();
  });

  it('policy prompts under tags ask for <chunk> tags and say so when parsed', () => {
    const prefix = '<chunk>One.</chunk>\n<chunk>Two.</chunk>';
    const raw = renderPolicyPrompt('Q?', prefix, 'tags');
    expect(raw).toContain('<chunk> and </chunk>');
    expect(parsePolicyPrompt(raw)).toEqual({ question: 'Q?', prefix, segmentation: 'tags' });
    expect(parsePolicyPrompt(renderPolicyMessages('Q?', prefix, 'tags'))).toEqual({
      question: 'Q?',
      prefix,
      segmentation: 'tags',
    });
  });

  it('judge prompt under tags shows the previous chunks as tagged chunks', () => {
    const a = { problem: 'P', history: ['one', 'two\nlines'], chunk: 'three', segmentation: 'tags' as const };
    const text = renderJudgeMessages(a)[1].content;
    expect(text).toContain('<chunk>one</chunk>\n<chunk>two\nlines</chunk>');
    expect(text).not.toContain('[Step 1]');
    expect(parseJudgePrompt(renderJudgeMessages(a))).toEqual(a);
  });

  it('judge prompt with and without history', () => {
    const a = { problem: 'P', history: ['one', 'two\n\nlines'], chunk: 'three' };
    expect(parseJudgePrompt(renderJudgeMessages(a))).toEqual(a);
    const b = { problem: 'P', history: [], chunk: 'first' };
    expect(parseJudgePrompt(renderJudgeMessages(b))).toEqual(b);
  });

  it('judge verdicts, last one wins, missing is null', () => {
    expect(parseJudgeVerdict('analysis... \\boxed{Negative} no wait \\boxed{Positive}')).toBe('Positive');
    expect(parseJudgeVerdict('\\boxed{\\text{negative}}')).toBe('Negative');
    expect(parseJudgeVerdict('I think it is fine.')).toBeNull();
  });

  it('critic prompt and answer', () => {
    const steps = ['a', 'b\nc', 'd'];
    expect(parseCriticPrompt(renderCriticMessages('Prob', steps))).toEqual({ problem: 'Prob', steps });
    expect(parseCriticAnswer('so \\boxed{-1}')).toBe(-1);
    expect(parseCriticAnswer('\\boxed{2} hmm \\boxed{ 1 }')).toBe(1);
    expect(parseCriticAnswer('none')).toBeNull();
  });

  it('qwen prm input', () => {
    expect(parseQwenPrmInput(renderQwenPrmInput('P', ['s1', 's2']))).toEqual({
      problem: 'P',
      steps: ['s1', 's2'],
    });
  });

  it('local refine marks the first bad chunk and continues the good prefix', () => {
    const msgs = renderLocalRefineMessages('Q', ['a', 'b', 'c'], 1);
    expect(msgs[0].content).toContain('a\n\n[BAD] b\n\nc');
    expect(msgs[1]).toEqual({ role: 'assistant', content: 'a\n\n' });
    expect(parseRefinePrompt(msgs)?.kind).toBe('local');
  });
});
