import { afterAll, describe, expect, it } from 'vitest';
import { Sandbox } from '../../src/verify/code/sandbox.js';

// Limits small enough to keep the suite fast, large enough for a loaded CI machine.
const sandbox = new Sandbox({ limits: { timeoutMs: 1500, programTimeoutMs: 4000 } });
afterAll(() => sandbox.close());

const program = 'def add(a, b):\n    return a + b\n';
const ok = { name: 'ok', code: 'assert add(2, 3) == 5' };

describe('sandbox', () => {
  it('reports what enforces each limit on this machine (bubblewrap, and as root: own uid, cgroups, a tmpfs per run)', () => {
    const e = sandbox.enforcement();
    expect(e.pythonVersion).toMatch(/^3\./);
    expect(e.isolation).toBe('bubblewrap');
    expect(e.bwrap).toMatch(/^bubblewrap \d/);
    expect(e.network).toBe('namespace+audit-hook');
    expect(e.cleanup).toBe('pid-namespace');
    expect(e.userNamespaces).toBe('disabled');
    expect(e.filesystem).toBe('read-only-namespace');
    expect(e.verdicts).toBe('trusted-comparison');
    if (process.getuid?.() === 0) {
      expect(e.user).toBe('own-uid');
      expect(e.workFolder).toBe('run-tmpfs');
      expect(e.processes).toMatch(/rlimit-nproc/);
    }
  });

  it('gives one verdict per test: passed, failed, error', async () => {
    const r = await sandbox.run({
      program,
      tests: [ok, { code: 'assert add(2, 2) == 5' }, { code: 'add(1)' }, { code: 'raise SystemExit(0)' }],
    });
    expect(r.tests.map((t) => t.status)).toEqual(['passed', 'failed', 'error', 'error']);
    expect(r.tests[2].message).toMatch(/TypeError/);
    expect(r.tests[3].message).toMatch(/SystemExit/);
    expect(r.passed).toBe(false);
    expect(r.status).toBe('failed');
  });

  it('marks every test with the program status when the program does not compile', async () => {
    const r = await sandbox.run({ program: 'def add(a, b)\n    return a + b\n', tests: [ok, ok] });
    expect(r.program.status).toBe('error');
    expect(r.program.message).toMatch(/SyntaxError/);
    expect(r.tests.map((t) => t.status)).toEqual(['error', 'error']);
  });

  it('ends an endless loop, a 10 GB allocation, a fork bomb and a network connection with clear statuses, and the run goes on', async () => {
    const hostile = [
      { name: 'loop', code: 'while True:\n    pass' },
      { name: 'memory', code: 'block = bytearray(10 * 1024 ** 3)' },
      { name: 'fork', code: 'import os\nwhile True:\n    os.fork()' },
      { name: 'network', code: 'import socket\nsocket.create_connection(("93.184.216.34", 80), timeout=5)' },
    ];
    const started = performance.now();
    // All in one run (each followed by a passing test), and also one run each, concurrently with a normal run.
    const [together, ...alone] = await Promise.all([
      sandbox.run({ program, tests: hostile.flatMap((t) => [t, ok]) }),
      ...hostile.map((t) => sandbox.run({ program, tests: [t, ok] })),
      sandbox.run({ program, tests: [ok] }),
    ]);
    const normal = alone.pop()!;
    const expected = ['timeout', 'memory', 'fork-limit', 'network-blocked'];
    expect(together.tests.map((t) => t.status)).toEqual(expected.flatMap((s) => [s, 'passed']));
    expect(alone.map((r) => r.tests[0].status)).toEqual(expected);
    expect(alone.map((r) => r.tests[1].status)).toEqual(['passed', 'passed', 'passed', 'passed']);
    expect(normal.passed).toBe(true);
    expect(together.tests[0].message).toMatch(/wall-clock limit/);
    expect(together.tests[2].message).toMatch(/MemoryError/);
    expect(together.tests[4].message).toMatch(/process/);
    expect(together.tests[6].message).toMatch(/network/);
    // The loops are cut at the per-test limit, not left to run.
    expect(performance.now() - started).toBeLessThan(30_000);
  });

  it('catches a fork bomb that swallows the refusal, and one that forks below Python (ctypes)', async () => {
    const r = await sandbox.run({
      program,
      tests: [
        { code: 'import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass' },
        ok,
      ],
    });
    expect(r.tests.map((t) => t.status)).toEqual(['fork-limit', 'passed']);
    if (sandbox.enforcement().processes.startsWith('cgroup')) {
      const c = await sandbox.run({
        program,
        tests: [{ code: 'import ctypes\nlibc = ctypes.CDLL(None)\nwhile True:\n    libc.fork()' }, ok],
      });
      expect(c.tests.map((t) => t.status)).toEqual(['fork-limit', 'passed']);
    }
  });

  it('caps output and crashes, and fail-fast skips the rest', async () => {
    const r = await sandbox.run({
      program,
      tests: [
        { code: 'print("x" * 5_000_000)' },
        { code: 'import ctypes\nctypes.string_at(0)' },
        { code: 'print("hello")' },
        ok,
      ],
      limits: { outputBytes: 100_000, captureBytes: 1000 },
    });
    expect(r.tests.map((t) => t.status)).toEqual(['output-limit', 'error', 'passed', 'passed']);
    expect(r.tests[1].message).toMatch(/SIGSEGV/);
    expect(r.stdout.length).toBeLessThanOrEqual(1000);
    expect(r.outputTruncated).toBe(true);
    const fast = await sandbox.run({
      program,
      tests: [{ code: 'assert False' }, ok],
      limits: { failFast: true },
    });
    expect(fast.tests.map((t) => t.status)).toEqual(['failed', 'not-run']);
  });

  it('does not wait for a process the candidate left behind in a new session', async () => {
    const started = performance.now();
    const r = await sandbox.run({
      program,
      tests: [{ code: 'import os, time\nif os.fork() == 0:\n    os.setsid()\n    time.sleep(60)\n' }, ok],
    });
    expect(r.tests.map((t) => t.status)).toEqual(['passed', 'passed']);
    expect(performance.now() - started).toBeLessThan(15_000);
  });

  it('runs in its own work folder (/work) and forbids replacing the test process', async () => {
    const r = await sandbox.run({
      program: 'import os\ncwd = os.getcwd()\n',
      tests: [
        { code: "assert cwd == '/work', cwd" },
        { code: 'import os\nos.execv("/bin/true", ["true"])' },
        { code: 'assert 1 + 1 == 2' },
      ],
    });
    expect(r.tests.map((t) => t.status)).toEqual(['passed', 'error', 'passed']);
  });
});
