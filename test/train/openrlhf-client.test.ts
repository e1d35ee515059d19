import { spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCli } from '../support/cli.js';
import { freePort } from '../support/free-port.js';
import { tempDir } from '../support/temp.js';

/**
 * Acceptance 4 of issue 13: OpenRLHF's remote reward client against `stepwise serve rewards`.
 * The Python below does what OpenRLHF/OpenRLHF openrlhf/utils/remote_rm_utils.py does
 * (read there, not copied): `remote_rm_fn(api_url, queries, prompts, labels)` posts
 * `{"query", "prompts", "labels"}` as JSON with `requests.post(..., headers={"Content-Type":
 * "application/json"}, timeout=180)`, calls `raise_for_status()`, requires the score key
 * `rewards` in the reply and returns its list (as a tensor). Labels are the data set's label
 * column passed through unchanged, so a numeric answer arrives as a number.
 */
const CLIENT = `
import json, sys, requests
url, payload = sys.argv[1], json.loads(sys.argv[2])
response = requests.post(url=url, json=payload, headers={"Content-Type": "application/json"}, timeout=180)
response.raise_for_status()
response = response.json()
assert "rewards" in response, response
print(json.dumps(response.get("rewards")))
`;

function openrlhfClient(url: string, queries: string[], prompts: string[], labels: unknown[]): unknown {
  const r = spawnSync('python3', ['-c', CLIENT, url, JSON.stringify({ query: queries, prompts, labels })], {
    encoding: 'utf8',
  });
  if (r.status !== 0) throw new Error(`python3 client failed (needs python3-requests): ${r.stderr}`);
  return JSON.parse(r.stdout);
}

describe('OpenRLHF remote reward client against `stepwise serve rewards --kind outcome`', () => {
  let home: string;
  let stop: () => Promise<void>;
  let url: string;
  beforeAll(async () => {
    home = tempDir('stepwise-openrlhf-');
    const port = await freePort();
    const { child, done } = startCli(['serve', 'rewards', '--kind', 'outcome', '--port', String(port)], home);
    await new Promise<void>((resolve, reject) => {
      let err = '';
      child.stderr?.on('data', (c) => {
        err += c;
        if (err.includes('listening on')) resolve();
      });
      done.then((r) => reject(new Error(`serve rewards exited: ${r.stderr}`)));
    });
    url = `http://127.0.0.1:${port}/get_reward`;
    stop = async () => {
      child.kill('SIGTERM');
      await done;
    };
  }, 30_000);
  afterAll(async () => {
    await stop?.();
    rmSync(home, { recursive: true, force: true });
  });

  const prompt = '<|im_start|>user\nWhat is 2 + 3?<|im_end|>\n<|im_start|>assistant\n';

  it('gets [1, 0] for a right and a wrong boxed answer with labels ["5", "5"]', () => {
    const rewards = openrlhfClient(
      url,
      [`${prompt}2 + 3 = 5, so \\boxed{5}.`, `${prompt}2 + 3 = 6, so \\boxed{6}.`],
      [prompt, prompt],
      ['5', '5'],
    );
    expect(rewards).toEqual([1, 0]);
  });

  it('gets [1] for a right answer with the numeric label [5]', () => {
    expect(openrlhfClient(url, [`${prompt}So \\boxed{5}.`], [prompt], [5])).toEqual([1]);
  });
});
