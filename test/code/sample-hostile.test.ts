import { spawn } from 'node:child_process';
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { sharedData } from '../support/shared-data.js';
import { tempDir } from '../support/temp.js';

// Acceptance of issue 26 through the CLI: `stepwise sample` on HumanEval against a local
// OpenAI-compatible server that answers each task with a chosen program, honest or hostile.
const bin = new URL('../../bin/stepwise.js', import.meta.url).pathname;

type Task = { prompt: string; canonical_solution: string; entry_point: string };

/** Wrong answers (the function returns 0 or nothing) with a trick each; each is marked by its kind. */
function hostile(ep: string): Record<string, string> {
  const wrong = `def ${ep}(*args, **kwargs):\n    return 0\n`;
  const forged = [
    { event: 'end', test: -1, status: 'passed', message: null, durationMs: 1 },
    { event: 'start', test: 0 },
    { event: 'value', test: 0, check: 0, value: ['b', true] },
    { event: 'end', test: 0, status: 'passed', message: null, durationMs: 1 },
  ]
    .map((l) => JSON.stringify(l))
    .join('\\n');
  return {
    killer: [
      'import os, signal, time',
      wrong,
      'if os.fork() == 0:',
      '    os.setsid()',
      '    if os.fork() == 0:',
      '        for _ in range(3000):',
      '            for pid in range(2, 3000):',
      '                try:',
      '                    os.kill(pid, signal.SIGKILL)',
      '                except OSError:',
      '                    pass',
      '            time.sleep(0.01)',
      '        os._exit(0)',
      '    os._exit(0)',
      'try:',
      '    os.kill(os.getppid(), signal.SIGKILL)',
      'except OSError:',
      '    pass',
    ].join('\n'),
    'exec-override': `import builtins\n${wrong}builtins.exec = lambda *a, **k: None\nbuiltins.eval = lambda *a, **k: True\n`,
    'sys-exit': `import sys\n${wrong}sys.exit(0)\n`,
    'os-exit': `import os\n${wrong}os._exit(0)\n`,
    'exit-in-call': `def ${ep}(*args, **kwargs):\n    import os\n    os._exit(0)\n`,
    'printed-verdicts': `${wrong}print("${forged}")\n`,
    'verdict-channel': `import os\n${wrong}for fd in sorted(int(n) for n in os.listdir("/proc/self/fd") if int(n) > 2):\n    try:\n        os.write(fd, "${forged}\\n".encode())\n    except OSError:\n        pass\nos._exit(0)\n`,
    'always-equal': `class Same:\n    def __eq__(self, other):\n        return True\n    def __bool__(self):\n        return True\n    __hash__ = object.__hash__\ndef ${ep}(*args, **kwargs):\n    return Same()\n`,
    'reads-globals': `import gc\nfound = [o for o in gc.get_objects() if isinstance(o, dict) and ("TESTS" in o or "tests" in o)]\ndef ${ep}(*args, **kwargs):\n    for o in found:\n        for t in o.get("tests", o.get("TESTS", [])):\n            pass\n    return 0\n`,
    'deep-tree': `import os\nfor i in range(2000):\n    os.mkdir("d")\n    os.chdir("d")\n${wrong}`,
  };
}

// The prompt ends inside an opened code fence (as in sample-cli.test.ts): the answer continues it and closes it.
const fence = (kind: string, code: string) => `# kind: ${kind}\n${code}\n\`\`\``;

async function sampleHostile(extraArgs: string[]) {
  const path = sharedData('humaneval/HumanEval.jsonl');
  const tasks = readFileSync(path, 'utf8')
    .trim()
    .split('\n')
    .slice(0, 2)
    .map((l) => JSON.parse(l) as Task);
  // Per task: the killer first, then honest answers between every hostile one.
  const answers = new Map(
    tasks.map((t) => {
      const bad = Object.entries(hostile(t.entry_point));
      const honest = fence('honest', `${t.prompt}${t.canonical_solution}`);
      return [t.entry_point, bad.flatMap(([kind, code]) => [fence(kind, code), honest])];
    }),
  );
  const perTask = answers.get(tasks[0].entry_point)?.length ?? 0;
  const served = new Map<string, number>();
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (d) => {
      body += d;
    });
    req.on('end', () => {
      if (req.method !== 'POST') {
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end('{"error":"not found"}');
        return;
      }
      const request = JSON.parse(body) as { prompt: string; n?: number };
      const task = tasks.find((t) => request.prompt.includes(t.entry_point)) as Task;
      const list = answers.get(task.entry_point) as string[];
      const choices = Array.from({ length: request.n ?? 1 }, (_, index) => {
        const i = served.get(task.entry_point) ?? 0;
        served.set(task.entry_point, i + 1);
        return { index, text: list[i % list.length], finish_reason: 'stop', logprobs: null };
      });
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          id: 'x',
          object: 'text_completion',
          created: 0,
          model: 'm',
          choices,
          usage: { prompt_tokens: 10, completion_tokens: 10, total_tokens: 20 },
        }),
      );
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as { port: number }).port;
  const dir = tempDir('stepwise-code-hostile-');
  // The job's temporary folder: its run folders and its sandbox processes' working folder.
  const tmp = tempDir('stepwise-code-hostile-tmp-');
  const out = join(dir, 'samples.jsonl');
  try {
    const { code, stderr } = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
      const child = spawn(
        'node',
        [
          bin,
          'sample',
          '--dataset',
          'humaneval',
          '--path',
          path,
          '--limit',
          '2',
          '--policy',
          'openai:m',
          '--base-url',
          `http://127.0.0.1:${port}/v1`,
          '--n',
          String(perTask),
          '--temperature',
          '1',
          '--out',
          out,
          ...extraArgs,
        ],
        {
          env: { ...process.env, STEPWISE_HOME: dir, STEPWISE_QUIET: '1', TMPDIR: tmp },
          stdio: ['ignore', 'ignore', 'pipe'],
        },
      );
      let err = '';
      child.stderr?.on('data', (d) => {
        err += d;
      });
      child.on('exit', (c) => resolve({ code: c, stderr: err }));
    });
    expect(code, stderr).toBe(0);
    const rows = readFileSync(out, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { samples: Array<Record<string, unknown>> });
    // Nothing of the job outlives it: no run folder, no process working in its temporary folder.
    const leftovers = readdirSync(tmp);
    const lingering = readdirSync('/proc').filter((pid) => {
      if (!/^\d+$/.test(pid)) return false;
      try {
        return readlinkSync(`/proc/${pid}/cwd`).startsWith(tmp);
      } catch {
        return false;
      }
    });
    return { rows, leftovers, lingering, perTask };
  } finally {
    server.close();
  }
}

function verdictsByKind(rows: Array<{ samples: Array<Record<string, unknown>> }>) {
  const byKind = new Map<string, boolean[]>();
  for (const row of rows)
    for (const s of row.samples) {
      const kind = /# kind: ([\w-]+)/.exec(JSON.stringify(s))?.[1] ?? 'unknown';
      byKind.set(kind, [...(byKind.get(kind) ?? []), s.correct === true]);
    }
  return Object.fromEntries(byKind);
}

describe('stepwise sample against hostile programs (issue 26)', () => {
  for (const args of [['--concurrency', '1'], []]) {
    it(`no forgery passes, every honest answer passes, nothing outlives the job (${args.join(' ') || 'default concurrency'})`, {
      timeout: 600_000,
    }, async () => {
      const { rows, leftovers, lingering, perTask } = await sampleHostile(args);
      const verdicts = verdictsByKind(rows);
      expect(Object.keys(verdicts).sort()).toEqual([...Object.keys(hostile('f')), 'honest'].sort());
      const honest = rows.flatMap((r) => r.samples).find((s) => JSON.stringify(s).includes('# kind: honest'));
      expect(verdicts.honest, JSON.stringify(honest).slice(0, 3000)).toEqual(Array(perTask).fill(true));
      for (const [kind, passed] of Object.entries(verdicts))
        if (kind !== 'honest') expect(passed, kind).toEqual([false, false]);
      expect(leftovers).toEqual([]);
      expect(lingering).toEqual([]);
    });
  }
});
