#!/usr/bin/env node
// An independent Batch API replayer: reads an OpenAI Batch API input file
// ({custom_id, method, url, body} per line), POSTs each body to BASE + url, and writes the
// output file the way `vllm run-batch` does ({id, custom_id, response: {status_code,
// request_id, body}, error} per line; vllm-project/vllm, vllm/entrypoints/openai/run_batch.py,
// BatchRequestOutput / BatchResponseData). It imports nothing from stepwise on purpose: it
// stands in for the engine a cluster would run.
//
// usage: node replay-batch.mjs BASE_URL INPUT OUTPUT   (BASE_URL without /v1, e.g. http://127.0.0.1:8000)
import { appendFileSync, createReadStream, writeFileSync } from 'node:fs';
import { createInterface } from 'node:readline';

const [base, input, output] = process.argv.slice(2);
if (!base || !input || !output) {
  process.stderr.write('usage: replay-batch.mjs BASE_URL INPUT OUTPUT\n');
  process.exit(2);
}
writeFileSync(output, '');
let n = 0;
for await (const line of createInterface({ input: createReadStream(input), crlfDelay: Infinity })) {
  if (line.trim() === '') continue;
  const req = JSON.parse(line);
  if (req.method !== 'POST') throw new Error(`line ${n + 1}: method ${req.method}`);
  const res = await fetch(base.replace(/\/$/, '') + req.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(req.body),
  });
  const text = await res.text();
  n++;
  const out = res.ok
    ? {
        id: `replay-${n}`,
        custom_id: req.custom_id,
        response: { status_code: res.status, request_id: `replay-req-${n}`, body: JSON.parse(text) },
        error: null,
      }
    : {
        id: `replay-${n}`,
        custom_id: req.custom_id,
        response: { status_code: res.status, request_id: `replay-req-${n}` },
        error: text,
      };
  appendFileSync(output, `${JSON.stringify(out)}\n`);
}
process.stderr.write(`replayed ${n} requests\n`);
