/**
 * The Batch API file format as vLLM reads and writes it, from vllm-project/vllm,
 * vllm/entrypoints/openai/run_batch.py (commit 0056ae7b2144abbc7b4916a43491c154567e0b76):
 * - input line `BatchRequestInput`: `custom_id` (str, unique per batch), `method` ("POST"),
 *   `url`, `body`. `create_request_task` there dispatches `/v1/chat/completions`,
 *   `/v1/embeddings`, `*\/score` and `*\/rerank`; any other URL (including `/v1/completions`)
 *   is answered with an error line: "URL … was used. Supported endpoints: …".
 * - output line `BatchRequestOutput`: `id` (str), `custom_id`, `response`
 *   (`BatchResponseData`: `status_code` int = 200, `request_id` str, `body` or null), `error`
 *   (null, or the failure: a message string from `make_error_request_output`, which sets
 *   status_code 400 and no body; or an `ErrorResponse` with status_code = its error code).
 */

/** The fields of one input line, exactly. */
export const VLLM_BATCH_INPUT_FIELDS = ['body', 'custom_id', 'method', 'url'];

/** Output lines shaped as run_batch.py writes them: one answer, one unsupported-URL error. */
export function vllmBatchOutputLines(okId: string, failedId: string): string[] {
  return [
    JSON.stringify({
      id: 'vllm-5a1e0c2f',
      custom_id: okId,
      response: {
        status_code: 200,
        request_id: 'vllm-batch-9d1f',
        body: {
          id: 'chatcmpl-1',
          object: 'chat.completion',
          created: 1,
          model: 'policy',
          choices: [
            {
              index: 0,
              message: { role: 'assistant', content: 'The answer is \\boxed{4}.' },
              finish_reason: 'stop',
            },
          ],
          usage: { prompt_tokens: 20, completion_tokens: 8, total_tokens: 28 },
        },
      },
      error: null,
    }),
    JSON.stringify({
      id: 'vllm-77aa',
      custom_id: failedId,
      response: { status_code: 400, request_id: 'vllm-batch-77ab', body: null },
      error:
        'URL /v1/completions was used. Supported endpoints: /v1/chat/completions, /v1/embeddings, /score, /rerank.',
    }),
  ];
}
