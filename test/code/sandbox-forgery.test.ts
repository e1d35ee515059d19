import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { removeRunFolder, Sandbox } from '../../src/verify/code/sandbox.js';

// Each attack is a wrong answer (add returns 0) plus a trick; none may pass. The tests are
// HumanEval-shaped (a check function) and MBPP-shaped (one assert each), with expected values
// that no single constant matches.
const sandbox = new Sandbox({ concurrency: 2, limits: { timeoutMs: 4000, programTimeoutMs: 4000 } });
const made: string[] = [];
afterAll(() => {
  sandbox.close();
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

const wrong = 'def add(a, b):\n    return 0\n';
const right = 'def add(a, b):\n    return a + b\n';
const humaneval = {
  name: 'check',
  code: 'METADATA = {}\n\ndef check(candidate):\n    assert candidate(2, 3) == 5\n    assert candidate(40, 2) == 42\n    assert candidate(-1, 1) == 0\n\ncheck(add)\n',
};
const mbpp = [
  { name: 'assert 0', code: 'assert add(2, 3) == 5' },
  { name: 'assert 1', code: 'assert add(40, 2) == 42' },
];
const tests = [humaneval, ...mbpp];

async function verdicts(program: string) {
  const r = await sandbox.run({ program, tests });
  return { r, statuses: r.tests.map((t) => t.status), decidedBy: r.tests.map((t) => t.decidedBy) };
}

/** Forged report lines: the program, then every test "passed", with values guessed as 0. */
const forgedLines = [
  { event: 'end', test: -1, status: 'passed', message: null, durationMs: 1 },
  ...[0, 1, 2].flatMap((t) => [
    { event: 'start', test: t },
    { event: 'value', test: t, check: 0, value: ['i', '0'] },
    { event: 'end', test: t, status: 'passed', message: null, durationMs: 1 },
  ]),
]
  .map((l) => JSON.stringify(l))
  .join('\n');

const attacks: Record<string, string> = {
  'builtins.exec and eval replaced': `${wrong}import builtins\nbuiltins.exec = lambda *a, **k: None\nbuiltins.eval = lambda *a, **k: 5\nbuiltins.compile = lambda *a, **k: None\n`,
  'sys.exit(0) in the program': `${wrong}import sys\nsys.exit(0)\n`,
  'os._exit(0) in the program': `${wrong}import os\nos._exit(0)\n`,
  'os._exit(0) inside the tested call': 'def add(a, b):\n    import os\n    os._exit(0)\n',
  'sys.exit(0) inside the tested call': 'def add(a, b):\n    raise SystemExit(0)\n',
  'printed fake verdict lines': `${wrong}print(${JSON.stringify(forgedLines)})\n`,
  'writes to the verdict channel': `${wrong}import os\nfor fd in sorted(int(n) for n in os.listdir("/proc/self/fd") if int(n) > 2):\n    try:\n        os.write(fd, (${JSON.stringify(forgedLines)} + "\\n").encode())\n    except OSError:\n        pass\nos._exit(0)\n`,
  'always-equal return object':
    'class Same:\n    def __eq__(self, other):\n        return True\n    __hash__ = object.__hash__\ndef add(a, b):\n    return Same()\n',
  'int subclass that equals everything':
    'class Num(int):\n    def __eq__(self, other):\n        return True\n    __hash__ = int.__hash__\ndef add(a, b):\n    return Num(0)\n',
  'reads the tests from memory (lookup table)': [
    'import gc, re',
    'table = {}',
    'for o in gc.get_objects():',
    '    if isinstance(o, dict) and "tests" in o:',
    '        text = repr(o)',
    '        for a, b, e in re.findall(r"candidate\\((-?\\d+), (-?\\d+)\\) == (-?\\d+)", text):',
    '            table[(int(a), int(b))] = int(e)',
    '        for a, b, e in re.findall(r"add\\((-?\\d+), (-?\\d+)\\) == (-?\\d+)", text):',
    '            table[(int(a), int(b))] = int(e)',
    'def add(a, b):',
    '    return table.get((a, b), 0)',
  ].join('\n'),
};

describe('verdicts the candidate cannot forge', () => {
  it('an honest answer passes every test, each decided outside the sandbox', async () => {
    const { statuses, decidedBy } = await verdicts(right);
    expect(statuses).toEqual(['passed', 'passed', 'passed']);
    expect(decidedBy).toEqual(['trusted', 'trusted', 'trusted']);
  });

  for (const [name, program] of Object.entries(attacks)) {
    it(`a wrong answer that ${name} fails`, async () => {
      const { r, statuses } = await verdicts(program);
      expect(r.passed).toBe(false);
      expect(statuses.filter((s) => s === 'passed')).toEqual([]);
    });
  }

  it('the expected values never enter the sandbox: a search of the whole process memory does not find them', async () => {
    const r = await sandbox.run({
      // The needle is computed, so the program's own text does not contain it.
      program: `${right}import gc\ndef scan():\n    n = str(int("987653") + 1)\n    return [repr(o)[:80] for o in gc.get_objects() if isinstance(o, (dict, list, tuple)) and n in repr(o)]\nprint(scan())\n`,
      tests: [{ code: 'assert add(987000, 654) == 987654' }],
    });
    expect(r.tests[0].status).toBe('passed');
    expect(r.stdout.trim()).toBe('[]');
  });

  it('a test that cannot be planned runs the old way and says so (decidedBy: sandbox)', async () => {
    const r = await sandbox.run({
      program: right,
      tests: [{ code: 'for x in range(3):\n    assert add(x, 1) == x + 1' }],
    });
    expect(r.tests[0]).toMatchObject({ status: 'passed', decidedBy: 'sandbox' });
  });

  it('compares like Python for plain data: tuples are not lists, 1 == 1.0, sets ignore order, floats within tolerance', async () => {
    const r = await sandbox.run({
      program:
        'class Liar(dict):\n    def items(self):\n        return [("a", 1)]\n    def __eq__(self, other):\n        return True\ndef f(x):\n    return x\n',
      tests: [
        { code: 'assert f((1, 2)) == [1, 2]' },
        { code: 'assert f(1) == 1.0' },
        { code: 'assert f({3, 1, 2}) == {1, 2, 3}' },
        { code: 'import math\nassert math.isclose(f(0.1 + 0.2), 0.3)' },
        { code: 'assert abs(f(3.14159) - 3.1416) < 1e-3' },
        { code: 'assert not f([])' },
        { code: 'assert f({"a": [1, (2, b"x")]}) == {"a": [1, (2, b"x")]}' },
        { code: 'assert f(10 ** 30) == 10 ** 30' },
        // Standard-library containers compare as their base type (MBPP references return them);
        // a subclass is read through the base type's own methods, so its __eq__ and items() do not count.
        { code: 'import collections\nassert f(collections.Counter("aab")) == {"a": 2, "b": 1}' },
        { code: 'import collections\nassert f(collections.namedtuple("P", "x y")(1, 2)) == (1, 2)' },
        { code: 'assert f(Liar(b=2)) == {"a": 1}' },
      ],
    });
    expect(r.tests.map((t) => t.status)).toEqual([
      'failed',
      'passed',
      'passed',
      'passed',
      'passed',
      'passed',
      'passed',
      'passed',
      'passed',
      'passed',
      'failed',
    ]);
    expect(r.tests.every((t) => t.decidedBy === 'trusted')).toBe(true);
  });
});

describe('runs cannot touch each other', () => {
  it('a lingering killer from one run reaches no other run, concurrent or later', async () => {
    const killer = [
      wrong,
      'import os, signal, time',
      'if os.fork() == 0:',
      '    os.setsid()',
      '    if os.fork() == 0:',
      '        for _ in range(400):',
      '            for pid in range(2, 5000):',
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
      'time.sleep(0.5)',
    ].join('\n');
    const first = await sandbox.run({ program: killer, tests });
    expect(first.passed).toBe(false);
    const honest = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        i % 3 === 0 ? sandbox.run({ program: killer, tests }) : sandbox.run({ program: right, tests }),
      ),
    );
    honest.forEach((r, i) => {
      expect(r.passed, `run ${i}: ${r.status} ${r.program.message}`).toBe(i % 3 !== 0);
    });
  });

  it("a run sees no other run's processes or work folder (/proc/<pid>/cwd)", async () => {
    const sleeper = sandbox.run({
      program: 'import time\nopen("marker-of-A", "w").write("A")\ntime.sleep(3)',
      tests: [],
    });
    await new Promise((r) => setTimeout(r, 500));
    const looker = await sandbox.run({
      program: [
        'import os',
        'seen = []',
        'for pid in os.listdir("/proc"):',
        '    if pid.isdigit():',
        '        try:',
        '            seen += os.listdir("/proc/%s/cwd" % pid)',
        '        except OSError:',
        '            pass',
        'print(len([p for p in os.listdir("/proc") if p.isdigit()]), "marker-of-A" in seen)',
      ].join('\n'),
      tests: [],
    });
    await sleeper;
    const [count, found] = looker.stdout.trim().split(' ');
    expect(found).toBe('False');
    expect(Number(count)).toBeLessThanOrEqual(3);
  });

  it('no uid-0 reads, no new user namespaces, nothing above the work folder', async () => {
    const dir = mkdtempSync('/var/tmp/stepwise-forgery-');
    made.push(dir);
    writeFileSync(join(dir, '.env'), 'API_KEY=secret\n');
    const r = await sandbox.run({
      program: 'import os, ctypes',
      tests: [
        ...['/etc/shadow', '/etc/shadow-', '/etc/gshadow', '/etc/gshadow-', join(dir, '.env'), '../.env'].map(
          (p) => ({
            name: p,
            code: `try:\n    open(${JSON.stringify(p)}).read()\n    raise AssertionError("read")\nexcept (PermissionError, FileNotFoundError):\n    pass`,
          }),
        ),
        { name: 'uid', code: 'assert os.getuid() != 0 and os.geteuid() != 0' },
        {
          name: 'user namespace',
          code: 'assert ctypes.CDLL(None, use_errno=True).unshare(0x10000000) == -1',
        },
        { name: 'parent of the work folder', code: 'assert os.listdir("/") and "work" in os.listdir("/")' },
      ],
    });
    expect(r.tests.map((t) => `${t.name}: ${t.status} ${t.message ?? ''}`.trim())).toEqual(
      r.tests.map((t) => `${t.name}: passed`),
    );
  });
});

describe('a run always ends with its own status', () => {
  const deep = 'import os\nfor i in range(2000):\n    os.mkdir("d")\n    os.chdir("d")\n';
  it('a 2,000-deep tree, 20,000 files, a full disk: each run fails on its own and the next one passes', async () => {
    const runs = await Promise.all([
      sandbox.run({ program: `${deep}${right}`, tests: mbpp }),
      sandbox.run({
        program: `${right}import os\nfor i in range(20000):\n    open("f%d" % i, "w").close()\n`,
        tests: mbpp,
      }),
      sandbox.run({
        program: `${right}with open("big", "wb") as f:\n    for i in range(200):\n        f.write(b"x" * (1 << 20))\n`,
        tests: mbpp,
        limits: { outputBytes: 1 << 30, diskBytes: 32 << 20 },
      }),
    ]);
    expect(runs[0].status).toBe('passed');
    expect(runs[1].program.message).toMatch(/No space left on device/);
    expect(runs[2].program.message).toMatch(/No space left on device/);
    const after = await sandbox.run({ program: right, tests: mbpp });
    expect(after.passed).toBe(true);
  });

  it('without isolation (unsafe), the work folder on disk is removed however deep, and nothing is thrown', async () => {
    const tmp = mkdtempSync('/var/tmp/stepwise-forgery-');
    made.push(tmp);
    const saved = process.env.TMPDIR;
    process.env.TMPDIR = tmp;
    const unsafe = new Sandbox({ isolation: 'none', unsafeFilesystem: true });
    try {
      const r = await unsafe.run({ program: `${deep}os.chmod(".", 0)\n${right}`, tests: mbpp });
      expect(r.passed).toBe(true);
      await unsafe.close();
      expect(readdirSync(tmp)).toEqual([]);
    } finally {
      await unsafe.close();
      if (saved === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = saved;
    }
  });

  it('a job killed with SIGKILL mid-run leaves no run folder and no cgroup behind', async () => {
    const tmp = mkdtempSync('/var/tmp/stepwise-forgery-');
    made.push(tmp);
    const script = join(tmp, 'job.mjs');
    const module = new URL('../../dist/verify/code/sandbox.js', import.meta.url).href;
    writeFileSync(
      script,
      [
        `const { Sandbox } = await import(${JSON.stringify(module)});`,
        'const sb = new Sandbox();',
        "await sb.run({ program: 'x = 1', tests: [] });",
        "void sb.run({ program: 'import time\\ntime.sleep(30)', tests: [] });",
        "setTimeout(() => process.kill(process.pid, 'SIGKILL'), 1500);",
      ].join('\n'),
    );
    const work = join(tmp, 'tmp');
    mkdirSync(work);
    const { spawnSync } = await import('node:child_process');
    const child = spawnSync(process.execPath, [script], {
      env: { ...process.env, TMPDIR: work },
      timeout: 120_000,
    });
    expect(child.signal).toBe('SIGKILL');
    // The server sees its input close, kills the run and removes its folders and cgroups.
    let left = readdirSync(work);
    for (let i = 0; i < 100 && left.length > 0; i++) {
      await new Promise((r) => setTimeout(r, 200));
      left = readdirSync(work);
    }
    expect(left).toEqual([]);
    // No cgroup of a server that is gone (pids controller, where this machine has one).
    const bases = existsSync('/sys/fs/cgroup/pids') ? readdirSync('/sys/fs/cgroup/pids') : [];
    const orphans = bases.filter((name) => {
      const owner = /^stepwise-sandbox-(\d+)$/.exec(name)?.[1];
      return owner !== undefined && !existsSync(`/proc/${owner}`);
    });
    expect(orphans).toEqual([]);
  });

  it('removeRunFolder: no recursion, unreadable folders, a bounded number of entries, never throws', () => {
    const root = mkdtempSync('/var/tmp/stepwise-forgery-');
    made.push(root);
    let dir = root;
    for (let i = 0; i < 2000; i++) {
      dir = join(dir, 'd');
      mkdirSync(dir);
    }
    writeFileSync(join(dir, 'f'), 'x');
    expect(removeRunFolder(root)).toBeNull();
    const wide = mkdtempSync('/var/tmp/stepwise-forgery-');
    made.push(wide);
    for (let i = 0; i < 50; i++) writeFileSync(join(wide, `f${i}`), '');
    expect(removeRunFolder(wide, 10)).toMatch(/more than 10 entries/);
    expect(removeRunFolder(join(wide, 'missing'))).toBeNull();
  });
});

describe('caps that hold per run', () => {
  it('memory is capped across all of a run’s processes and its tmpfs (cgroup), not per process', {
    timeout: 180_000,
  }, async () => {
    const e = sandbox.enforcement();
    // This machine (root, cgroup memory controller) must give the cgroup cap; elsewhere the report says so.
    if (process.getuid?.() === 0) expect(e.memory).toBe('cgroup-memory+rlimit-as');
    if (e.memory !== 'cgroup-memory+rlimit-as') return;
    const program = [
      'import os, time',
      'kids = []',
      'for _ in range(3):',
      '    pid = os.fork()',
      '    if pid == 0:',
      '        block = bytearray(100 << 20)',
      '        for i in range(0, len(block), 4096):',
      '            block[i] = 1',
      '        time.sleep(1)',
      '        os._exit(0)',
      '    kids.append(pid)',
      'with open("/dev/shm/fill", "wb") as f:',
      '    f.write(b"y" * (40 << 20))',
      'for pid in kids:',
      '    assert os.waitpid(pid, 0)[1] == 0, "a process of this run was killed"',
    ].join('\n');
    // 3 × 100 MiB + 40 MiB of tmpfs: each process is under the 256 MiB cap, together they are not.
    const run = (memoryMb: number) =>
      sandbox.run({
        program,
        tests: [],
        limits: { memoryMb, diskBytes: 200 << 20, outputBytes: 1 << 30, programTimeoutMs: 60_000 },
      });
    const [capped, roomy] = await Promise.all([run(256), run(1024)]);
    expect(roomy.program.status, roomy.program.message ?? '').toBe('passed');
    expect(capped.program.status).not.toBe('passed');
  });
});
