import { z } from 'zod';

/**
 * The shapes of OpenAI-compatible server replies stepwise reads, validated at the edge (zod):
 * `/v1/completions`, `/v1/chat/completions`, echo + logprobs scoring and vLLM `/pooling`. Only the
 * fields used are checked; unknown fields pass. Where servers differ the union is written out,
 * with the server that sends it. A reply that does not fit names the field
 * (`choices[0].text: expected string, got undefined`) instead of turning into an empty sample.
 */

/** A stop string (vLLM, llama.cpp), a stop token id (vLLM's integer `stop_reason`), or null. */
const StopReason = z.union([z.string(), z.number(), z.null()]).optional();

const TopLogprob = z.object({ token: z.string(), logprob: z.number() });

/** Chat-layout logprobs (`choices[].logprobs.content`, also llama.cpp's /v1/completions). */
const ChatLogprobEntry = z.object({
  token: z.string(),
  logprob: z.number(),
  top_logprobs: z.array(TopLogprob).optional(),
});
export type ChatLogprobEntry = z.infer<typeof ChatLogprobEntry>;

const CompletionLogprobs = z
  .object({
    tokens: z.array(z.string()).optional(),
    token_logprobs: z.array(z.number().nullable()).optional(),
    top_logprobs: z.array(z.record(z.string(), z.number()).nullable()).nullable().optional(),
    text_offset: z.array(z.number()).optional(),
    /** llama.cpp answers /v1/completions logprobs in the chat layout. */
    content: z.array(ChatLogprobEntry).nullable().optional(),
  })
  .nullable()
  .optional();
export type CompletionLogprobs = z.infer<typeof CompletionLogprobs>;

const ChatLogprobs = z
  .object({ content: z.array(ChatLogprobEntry).nullable().optional() })
  .nullable()
  .optional();
export type ChatLogprobs = z.infer<typeof ChatLogprobs>;

const Usage = z
  .object({ prompt_tokens: z.number().optional(), completion_tokens: z.number().optional() })
  .nullable()
  .optional();

const choiceCommon = {
  index: z.number().optional(),
  finish_reason: z.string().nullable().optional(),
  stop_reason: StopReason,
  /** SGLang's name for `stop_reason`. */
  matched_stop: StopReason,
};

export const CompletionChoice = z.object({ ...choiceCommon, text: z.string(), logprobs: CompletionLogprobs });
export const ChatChoice = z.object({
  ...choiceCommon,
  message: z.object({ content: z.string().nullable().optional() }),
  logprobs: ChatLogprobs,
});

/** `stepwise sim serve` marks its replies `simulated: true`. */
export const CompletionReply = z.object({
  choices: z.array(CompletionChoice),
  usage: Usage,
  simulated: z.boolean().optional(),
});
export const ChatReply = z.object({
  choices: z.array(ChatChoice),
  usage: Usage,
  simulated: z.boolean().optional(),
});
export type CompletionReply = z.infer<typeof CompletionReply>;
export type ChatReply = z.infer<typeof ChatReply>;

/** An echo + logprobs completion (scoring): the echoed prompt's tokens, offsets and log-probabilities. */
export const ScoreReply = z.object({
  choices: z
    .array(
      z.object({
        logprobs: z.object({
          tokens: z.array(z.string()),
          token_logprobs: z.array(z.number().nullable()),
          text_offset: z.array(z.number()),
        }),
      }),
    )
    .min(1),
  usage: Usage,
});
export type ScoreReply = z.infer<typeof ScoreReply>;

/** vLLM `/pooling`: `data[0].data` is one row of class probabilities per step tag (or one flat row). */
export const PoolingReply = z.object({
  data: z.array(z.object({ data: z.union([z.array(z.array(z.number())), z.array(z.number())]) })).min(1),
  usage: z.object({ prompt_tokens: z.number().optional() }).nullable().optional(),
});
export type PoolingReply = z.infer<typeof PoolingReply>;

/** A zod issue path as it reads in JSON: `choices[0].message.content`. */
function fieldPath(path: ReadonlyArray<PropertyKey>): string {
  let out = '';
  for (const p of path) out += typeof p === 'number' ? `[${p}]` : `${out === '' ? '' : '.'}${String(p)}`;
  return out === '' ? '(the reply)' : out;
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value;
}

/** The value at a path of a parsed JSON value (for saying what the server sent there). */
function at(value: unknown, path: ReadonlyArray<PropertyKey>): unknown {
  let v = value;
  for (const p of path)
    v = v !== null && typeof v === 'object' ? (v as Record<PropertyKey, unknown>)[p] : undefined;
  return v;
}

/**
 * Validate a reply against its schema. Returns the typed reply, or a description of the first
 * field that does not fit: `choices[0].text: expected string, got undefined`.
 */
export function checkReply<T>(
  schema: z.ZodType<T>,
  reply: unknown,
): { ok: true; value: T } | { ok: false; problem: string } {
  const parsed = schema.safeParse(reply);
  if (parsed.success) return { ok: true, value: parsed.data };
  const issue = parsed.error.issues[0]!;
  const got = describe(at(reply, issue.path));
  const expected = issue.code === 'invalid_type' ? `expected ${issue.expected}` : issue.message;
  return { ok: false, problem: `${fieldPath(issue.path)}: ${expected}, got ${got}` };
}
