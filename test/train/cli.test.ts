import { spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { labeledFixture, tempDir, writeJsonlFile } from './fixtures.js';

const bin = new URL('../../bin/stepwise.js', import.meta.url).pathname;
const dir = tempDir();
const env = { ...process.env, STEPWISE_HOME: dir, STEPWISE_QUIET: '1' };

describe('training-data CLI', () => {
  it('stepwise export writes a 50/50 judge RL set and reports it as JSON', () => {
    const from = writeJsonlFile(
      dir,
      'labels.jsonl',
      labeledFixture(10, (s) => (s < 5 ? 1 : -1)),
    );
    const out = join(dir, 'rl.jsonl');
    const r = spawnSync(
      'node',
      [
        bin,
        'export',
        '--from',
        from,
        '--task',
        'judge-rl',
        '--format',
        'trl',
        '--signal',
        'abs-q',
        '--out',
        out,
        '--json',
      ],
      { env, encoding: 'utf8' },
    );
    expect(r.stderr).toMatch(/^export: 30 judge-rl rows as trl \(signal abs-q\)$/m);
    expect(r.status).toBe(0);
    const summary = JSON.parse(r.stdout);
    expect(summary.rows).toBe(30);
    const rows = readFileSync(out, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(rows.filter((x) => x.label === 'Positive')).toHaveLength(15);
  });

  it('export --task prm --format openrlhf --signal ms-hard writes rows whose label is a list (issue 13, acceptance 5)', () => {
    const from = writeJsonlFile(
      dir,
      'labels-mshard.jsonl',
      labeledFixture(4, (s) => (s < 2 ? 1 : -1)).map((r) => ({
        ...r,
        chunks: r.chunks.map((c) => ({ ...c, labels: { 'ms-hard': c.labels['abs-q'] } })),
      })),
    );
    const out = join(dir, 'prm.openrlhf.jsonl');
    const r = spawnSync(
      'node',
      [
        bin,
        'export',
        '--from',
        from,
        '--task',
        'prm',
        '--format',
        'openrlhf',
        '--signal',
        'ms-hard',
        '--out',
        out,
      ],
      { env, encoding: 'utf8' },
    );
    expect(r.status).toBe(0);
    const rows = readFileSync(out, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(rows).toHaveLength(4);
    for (const row of rows) expect(Array.isArray(row.label)).toBe(true);
    expect(rows[0].label).toEqual(['+', '-', '-', '-']);
    expect(rows[3].label).toEqual(['+', '+', '+', '+']);
  });

  it('bad flags and bad input exit 2 with a message, no stack trace', () => {
    const r1 = spawnSync(
      'node',
      [bin, 'export', '--from', 'x', '--task', 'nope', '--format', 'trl', '--out', 'y'],
      { env, encoding: 'utf8' },
    );
    expect(r1.status).toBe(2);
    expect(r1.stderr).toMatch(/--task must be one of/);
    const bad = join(dir, 'bad.jsonl');
    writeJsonlFile(dir, 'bad.jsonl', [{ id: 'a', problem: 'p', chunks: [] }, { id: 'b' }]);
    const r2 = spawnSync(
      'node',
      [bin, 'export', '--from', bad, '--task', 'prm', '--format', 'trl', '--out', join(dir, 'z')],
      { env, encoding: 'utf8' },
    );
    expect(r2.status).toBe(2);
    expect(r2.stderr).toMatch(/bad\.jsonl, line 2, field "problem"/);
    expect(r2.stderr).not.toMatch(/\n\s+at /);
  });

  it('serve rewards refuses a non-loopback bind without a token', () => {
    const r = spawnSync(
      'node',
      [bin, 'serve', 'rewards', '--kind', 'outcome', '--host', '0.0.0.0', '--port', '0'],
      { env, encoding: 'utf8', timeout: 20_000 },
    );
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/without a token/);
  });

  it('serve rewards answers OpenRLHF requests', async () => {
    const child = spawn('node', [bin, 'serve', 'rewards', '--kind', 'outcome', '--port', '0'], { env });
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let err = '';
        child.stderr.on('data', (d) => {
          err += String(d);
          const m = /listening on (http:\/\/\S+)\/get_reward/.exec(err);
          if (m) resolve(m[1]);
        });
        child.on('exit', (code) => reject(new Error(`exited ${code}: ${err}`)));
      });
      const res = await fetch(`${url}/get_reward`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query: ['so \\boxed{12}'], prompts: [''], labels: ['12'] }),
      });
      expect(await res.json()).toEqual({ rewards: [1], scores: [1], extra_logs: { format_ok: [1] } });
    } finally {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    }
  });
});
