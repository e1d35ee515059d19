import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseSegmenterPrompt } from '../../src/prompts/segment.js';

/**
 * An OpenAI-compatible chat server on 127.0.0.1 that plays an LLM segmenter: it answers the
 * segmenter prompt with the solution, each sentence wrapped in `<chunk>…</chunk>` and the
 * whitespace between sentences kept outside the tags. Every `alterEvery`-th reply (counted over
 * all requests) has one digit changed, so it no longer gives back the original.
 */
export interface TaggingServer {
  url: string;
  /** Replies sent, and which of them were altered. */
  replies: Array<{ text: string; altered: boolean }>;
  close(): Promise<void>;
}

/** Sentence ranges: from a non-space character through `.`, `!` or `?` before whitespace (or the end). */
export function sentenceRanges(text: string): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  const re = /\S[\s\S]*?(?:[.!?](?=\s|$)|$)/g;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    if (m[0] === '') {
      re.lastIndex++;
      continue;
    }
    out.push([m.index, m.index + m[0].length]);
  }
  return out;
}

export function tagSentences(text: string): string {
  let out = '';
  let last = 0;
  for (const [s, e] of sentenceRanges(text)) {
    out += `${text.slice(last, s)}<chunk>${text.slice(s, e)}</chunk>`;
    last = e;
  }
  return out + text.slice(last);
}

/** `delayMs`: each chat reply waits this long (a job that is still running when a test stops it). */
export async function startTaggingServer(
  options: { alterEvery?: number; delayMs?: number } = {},
): Promise<TaggingServer> {
  const alterEvery = options.alterEvery ?? 3;
  const replies: TaggingServer['replies'] = [];
  const server = http.createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => {
      const json = (status: number, value: unknown): void => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(value));
      };
      if (req.method === 'GET' && req.url === '/v1/models') {
        json(200, { object: 'list', data: [{ id: 'm', object: 'model' }] });
        return;
      }
      const body = JSON.parse(Buffer.concat(parts).toString('utf8') || '{}') as {
        messages?: Array<{ role: 'system' | 'user' | 'assistant'; content: string }>;
      };
      const text =
        req.url === '/v1/chat/completions' && body.messages ? parseSegmenterPrompt(body.messages) : null;
      if (text === null) {
        json(400, { error: { message: 'not a segmenter prompt' } });
        return;
      }
      let reply = tagSentences(text);
      const altered = (replies.length + 1) % alterEvery === 0 && /\d/.test(reply);
      if (altered) reply = reply.replace(/\d/, (d) => String((Number(d) + 1) % 10));
      replies.push({ text: reply, altered });
      const send = (): void =>
        json(200, {
          id: `chatcmpl-${replies.length}`,
          object: 'chat.completion',
          choices: [{ index: 0, message: { role: 'assistant', content: reply }, finish_reason: 'stop' }],
          usage: { prompt_tokens: 100, completion_tokens: 100, total_tokens: 200 },
        });
      if (options.delayMs) setTimeout(send, options.delayMs);
      else send();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    replies,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
