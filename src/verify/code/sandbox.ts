import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmdirSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { availableParallelism, homedir, tmpdir, userInfo } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import pLimit, { type LimitFunction } from 'p-limit';
import { StepwiseError } from '../../core/errors.js';

/**
 * A verdict for one test (or for the program itself):
 * - `passed` — ran to the end without an exception;
 * - `failed` — an `assert` failed (AssertionError);
 * - `error` — any other exception, a crash (signal), or the process exiting early;
 * - `timeout` — the wall-clock limit per test, or the CPU-time limit, was reached;
 * - `memory` — MemoryError under the address-space cap;
 * - `fork-limit` — a process could not be created because of the process cap;
 * - `network-blocked` — the code tried to use the network;
 * - `output-limit` — the code wrote more than the output cap;
 * - `not-run` — the test was never reached (after a failure, with `failFast`).
 * When the program itself fails (syntax error, exception at top level), every test gets its status.
 */
export type SandboxStatus =
  | 'passed'
  | 'failed'
  | 'error'
  | 'timeout'
  | 'memory'
  | 'fork-limit'
  | 'network-blocked'
  | 'output-limit'
  | 'not-run';

/** One test: Python code executed after the program, in the program's global namespace. */
export interface SandboxTest {
  /** Shown in verdicts; default `test <i>`. */
  name?: string;
  code: string;
}

/** Limits of one run. Every field has a default (see {@link DEFAULT_SANDBOX_LIMITS}). */
export interface SandboxLimits {
  /** Wall-clock limit per test, ms. */
  timeoutMs: number;
  /** Wall-clock limit for executing the program itself (definitions, top-level code), ms. */
  programTimeoutMs: number;
  /** Address-space cap (RLIMIT_AS), MiB. */
  memoryMb: number;
  /** Processes the candidate may start (its own process not counted). */
  maxProcesses: number;
  /** Bytes the candidate may write to stdout, to stderr, or to any one file (RLIMIT_FSIZE). */
  outputBytes: number;
  /** Bytes of stdout / stderr kept in the result. */
  captureBytes: number;
  /** Stop at the first test that does not pass (the rest are `not-run`): enough for pass/fail, much cheaper for hanging candidates. */
  failFast: boolean;
}

export const DEFAULT_SANDBOX_LIMITS: Readonly<SandboxLimits> = {
  timeoutMs: 5000,
  programTimeoutMs: 5000,
  memoryMb: 1024,
  maxProcesses: 8,
  outputBytes: 1 << 20,
  captureBytes: 16 << 10,
  failFast: false,
};

/** A program and its tests. */
export interface SandboxRequest {
  /** Code executed first (imports, definitions); the tests see its globals. */
  program: string;
  tests: readonly SandboxTest[];
  limits?: Partial<SandboxLimits>;
}

/** Verdict of one test or of the program. */
export interface SandboxVerdict {
  name: string;
  status: SandboxStatus;
  /** Exception or reason, e.g. `AssertionError`, `wall-clock limit (5000 ms) exceeded`. */
  message: string | null;
  /** Time inside the test, ms (null when the process died during it). */
  durationMs: number | null;
}

/** What enforces each limit on this machine (found by probing once per {@link Sandbox}). */
export interface SandboxEnforcement {
  python: string;
  pythonVersion: string;
  /** `namespace` = empty network namespace (`unshare -n`), kernel-enforced; `audit-hook` = Python-level refusal only. */
  network: 'namespace+audit-hook' | 'audit-hook';
  /** `cgroup-pids` = kernel pids.max; `rlimit-nproc` = RLIMIT_NPROC (not enforced for root); `audit-hook` = Python-level cap only. */
  processes: 'cgroup-pids+audit-hook' | 'rlimit-nproc+audit-hook' | 'audit-hook';
  /** `pid-namespace`: every process the candidate left dies with the run; otherwise the worker's process group is killed. */
  cleanup: 'pid-namespace' | 'process-group';
  memory: 'rlimit-as';
  cpu: 'rlimit-cpu';
  wallClock: 'supervisor-kill';
  output: 'rlimit-fsize';
  /**
   * `read-only-namespace`: in its own mount namespace the candidate sees the filesystem read-only
   * except its fresh work folder and private /tmp and /dev/shm; home folders, /run, the store and
   * output folders are hidden; it holds no capabilities to undo that. `unprotected`: the
   * candidate can write wherever the job's user can (only with `unsafeFilesystem`).
   */
  filesystem: 'read-only-namespace' | 'unprotected';
}

/** Outcome of one run. */
export interface SandboxResult {
  /** True when the program and every test passed. */
  passed: boolean;
  /** `passed`, else the status of the program if it failed, else of the first test that did not pass. */
  status: SandboxStatus;
  program: SandboxVerdict;
  tests: SandboxVerdict[];
  stdout: string;
  stderr: string;
  /** True when stdout/stderr were cut to `captureBytes`. */
  outputTruncated: boolean;
  /** Wall-clock time of the whole run including process start-up, ms. */
  wallMs: number;
  /** Worker processes used (more than 1 when a test crashed or hung and the rest ran in a fresh one). */
  workers: number;
}

export interface SandboxOptions {
  /** Python interpreter (default `$STEPWISE_PYTHON`, else `python3` on PATH). */
  python?: string;
  /** Runs at a time (default: the number of cores). */
  concurrency?: number;
  /** Default limits for every run (each request may override). */
  limits?: Partial<SandboxLimits>;
  /** `auto` (default) uses namespaces and a pids cgroup when this machine allows; `none` never does. */
  isolation?: 'auto' | 'none';
  /** Load site-packages (numpy, …) in the candidate's interpreter. Default true; false starts ~20 ms faster. */
  sitePackages?: boolean;
  /**
   * Run candidates even where the filesystem cannot be made read-only (then they can delete or
   * overwrite whatever the job's user can). Default false: such a sandbox refuses to run.
   */
  unsafeFilesystem?: boolean;
  /** Folders to hide from candidates besides the defaults (see {@link hiddenPaths}), e.g. output folders. */
  hide?: readonly string[];
}

let sandboxDefaults: Pick<SandboxOptions, 'unsafeFilesystem' | 'hide'> = {};

/** Defaults for every {@link Sandbox} created afterwards (the CLI sets them from its flags). */
export function configureSandboxDefaults(defaults: Pick<SandboxOptions, 'unsafeFilesystem' | 'hide'>): void {
  sandboxDefaults = { ...defaults };
}

/**
 * What candidates never see (each replaced by an empty folder): every home folder, /run (sockets
 * such as an ssh agent's or docker's), the store (`$STEPWISE_HOME`, default `./.stepwise`), the
 * working directory (where outputs usually go), the temporary folder (other runs' work folders),
 * password hashes, and `extra`. The interpreter's own folders stay readable wherever they lie.
 */
export function hiddenPaths(extra: readonly string[] = []): string[] {
  const homes = ['/home', '/root', homedir(), process.env.HOME];
  try {
    homes.push(userInfo().homedir);
  } catch {
    // no passwd entry for this user id
  }
  const store = process.env.STEPWISE_HOME ?? join(process.cwd(), '.stepwise');
  const all = [
    ...homes,
    '/run',
    '/var/run',
    store,
    process.cwd(),
    tmpdir(),
    '/etc/shadow',
    '/etc/gshadow',
    ...extra,
  ];
  return [
    ...new Set(all.filter((p): p is string => typeof p === 'string' && p !== '').map((p) => resolve(p))),
  ];
}

interface Probe {
  enforcement: SandboxEnforcement;
  python: string;
  /** `unshare` flags that work here, or null when namespaces are not available. */
  unshare: string[] | null;
  cgroupBase: string | null;
  /** Why the filesystem cannot be confined here (null when it can). */
  filesystemProblem: string | null;
}

interface SupervisorOutcome {
  program: { status: SandboxStatus; message: string | null; durationMs: number | null } | null;
  tests: Array<{ status: SandboxStatus; message: string | null; durationMs: number | null }>;
  stdout: string;
  stderr: string;
  outputTruncated: boolean;
  workers: number;
}

/** Walk up from this module to the package root (the folder with package.json and python/). */
function findPythonDir(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    if (existsSync(join(dir, 'python', 'stepwise_sandbox.py')) && existsSync(join(dir, 'package.json')))
      return join(dir, 'python');
    dir = dirname(dir);
  }
  throw new StepwiseError(
    'stepwise: python/stepwise_sandbox.py not found next to the package (broken install?)',
  );
}

/** Absolute path of a helper script shipped in the package's `python/` folder. */
export function pythonAsset(name: string): string {
  return join(findPythonDir(), name);
}

/** Resolve the interpreter to its real executable (pyenv shims are slow shell scripts). */
export function resolvePython(python?: string): { executable: string; version: string } {
  const candidate = python ?? process.env.STEPWISE_PYTHON ?? 'python3';
  const probe = spawnSync(
    candidate,
    ['-c', 'import sys; print(sys.executable); print(sys.version.split()[0])'],
    {
      encoding: 'utf8',
      timeout: 30_000,
    },
  );
  if (probe.status !== 0 || !probe.stdout) {
    throw new StepwiseError(
      `cannot run Python (${candidate}): ${probe.error?.message ?? probe.stderr?.trim() ?? 'no output'}; install python3 or set STEPWISE_PYTHON`,
    );
  }
  const [executable, version] = probe.stdout.trim().split('\n');
  if (!version?.startsWith('3.') || Number(version.split('.')[1]) < 8)
    throw new StepwiseError(`Python ${version} at ${executable} is too old: the sandbox needs Python ≥ 3.8`);
  return { executable, version };
}

/**
 * Empty network namespace, own PID namespace (and a /proc that shows it), own IPC namespace (no
 * System V shared memory or semaphores of the job's user's other programs), killed with its parent.
 */
const UNSHARE_FLAGS = ['-n', '-i', '-p', '-f', '-m', '--mount-proc', '--kill-child'];

let cgroupRunCounter = 0;

/**
 * The parent cgroup for sandbox runs under the pids controller (v1 layout), or null where not
 * allowed. Run cgroups are named `<pid>-<n>`; leftovers of processes that no longer exist (a
 * killed job) are removed here, so they do not pile up.
 */
function makeCgroupBase(): string | null {
  const root = '/sys/fs/cgroup/pids';
  if (!existsSync(join(root, 'cgroup.procs'))) return null;
  const base = join(root, 'stepwise-sandbox');
  try {
    mkdirSync(base, { recursive: true });
    if (!existsSync(join(base, 'pids.max'))) return null;
    // The parent may exist (made by another user): check that runs can be placed under it.
    const probeDir = join(base, `${process.pid}-probe`);
    mkdirSync(probeDir);
    writeFileSync(join(probeDir, 'pids.max'), '1');
    rmdirSync(probeDir);
  } catch {
    return null;
  }
  try {
    for (const entry of readdirSync(base)) {
      const owner = /^(\d+)-\d+$/.exec(entry)?.[1];
      if (owner && !existsSync(`/proc/${owner}`)) rmdirSync(join(base, entry));
    }
  } catch {
    // busy or already gone: another process's business
  }
  return base;
}

/** Try the filesystem confinement (python/stepwise_sandbox.py --probe-filesystem) under `command`. */
function probeFilesystem(command: string, args: string[]): { ran: boolean; problem: string | null } {
  const r = spawnSync(command, args, { timeout: 30_000, encoding: 'utf8', cwd: tmpdir() });
  if (r.status !== 0)
    return { ran: false, problem: r.error?.message ?? (r.stderr.trim() || `exit ${r.status}`) };
  try {
    const answer = JSON.parse(r.stdout) as { ok: boolean; error: string | null };
    return { ran: true, problem: answer.ok ? null : (answer.error ?? 'unknown failure') };
  } catch {
    return { ran: true, problem: `unexpected probe output: ${r.stdout.slice(0, 200)}` };
  }
}

function probe(options: SandboxOptions): Probe {
  const { executable, version } = resolvePython(options.python);
  let unshare: string[] | null = null;
  let cgroupBase: string | null = null;
  let filesystemProblem: string | null =
    process.platform !== 'linux'
      ? `no mount namespaces on ${process.platform}`
      : 'isolation is off (isolation: none)';
  if (options.isolation !== 'none' && process.platform === 'linux') {
    const script = pythonAsset('stepwise_sandbox.py');
    const probeArgs = [executable, '-B', '-s', script, '--probe-filesystem'];
    // As root the plain flags work; an unprivileged user needs a user namespace (-r) for the rest.
    // Prefer the first set under which the filesystem can be confined too.
    for (const flags of [UNSHARE_FLAGS, ['-r', ...UNSHARE_FLAGS]]) {
      const u = probeFilesystem('unshare', [...flags, '--', ...probeArgs]);
      if (!u.ran) {
        filesystemProblem = `unshare ${flags.join(' ')} failed: ${u.problem}`;
        continue;
      }
      if (unshare === null || u.problem === null) {
        unshare = flags;
        filesystemProblem = u.problem;
      }
      if (u.problem === null) break;
    }
    if (unshare === null) {
      // No `unshare` here: a root process can still enter a mount namespace of its own.
      const direct = probeFilesystem(executable, probeArgs.slice(1));
      filesystemProblem = direct.problem === null ? null : `${filesystemProblem}; ${direct.problem}`;
    }
    cgroupBase = makeCgroupBase();
  }
  const root = typeof process.getuid === 'function' && process.getuid() === 0;
  return {
    python: executable,
    unshare,
    cgroupBase,
    filesystemProblem,
    enforcement: {
      python: executable,
      pythonVersion: version,
      network: unshare ? 'namespace+audit-hook' : 'audit-hook',
      // RLIMIT_NPROC binds everyone but root; in a fresh user namespace it counts that namespace's processes,
      // which the namespace's own /proc shows, so the Python side can set it to what it sees + the cap.
      processes: cgroupBase
        ? 'cgroup-pids+audit-hook'
        : !root && (unshare === null || unshare.includes('-r'))
          ? 'rlimit-nproc+audit-hook'
          : 'audit-hook',
      cleanup: unshare ? 'pid-namespace' : 'process-group',
      memory: 'rlimit-as',
      cpu: 'rlimit-cpu',
      wallClock: 'supervisor-kill',
      output: 'rlimit-fsize',
      filesystem: filesystemProblem === null ? 'read-only-namespace' : 'unprotected',
    },
  };
}

function firstFailure(program: SandboxVerdict, tests: readonly SandboxVerdict[]): SandboxStatus {
  if (program.status !== 'passed') return program.status;
  return tests.find((t) => t.status !== 'passed')?.status ?? 'passed';
}

/**
 * Runs Python programs against tests in a separate process per run, in a temporary directory,
 * with wall-clock, CPU, memory, process-count, network and output limits, a pool of
 * `concurrency` runs at a time, and one verdict per test. A run never throws for anything the
 * candidate does: every outcome is a status.
 */
export class Sandbox {
  private readonly options: SandboxOptions;
  private readonly limit: LimitFunction;
  private probed: Probe | undefined;

  constructor(options: SandboxOptions = {}) {
    this.options = {
      ...options,
      unsafeFilesystem: options.unsafeFilesystem ?? sandboxDefaults.unsafeFilesystem,
      hide: [...(sandboxDefaults.hide ?? []), ...(options.hide ?? [])],
    };
    this.limit = pLimit(Math.max(1, options.concurrency ?? availableParallelism()));
  }

  /** Runs at a time. */
  get concurrency(): number {
    return this.limit.concurrency;
  }

  /** What enforces each limit here (probes the machine on first use). */
  enforcement(): SandboxEnforcement {
    return this.ensureProbe().enforcement;
  }

  private server: SandboxServer | undefined;

  private ensureServer(p: Probe): SandboxServer {
    if (this.server && !this.server.dead) return this.server;
    const pythonArgs = ['-B', '-s', ...(this.options.sitePackages === false ? ['-S'] : [])];
    const script = pythonAsset('stepwise_sandbox.py');
    const [command, args] = p.unshare
      ? ['unshare', [...p.unshare, '--', p.python, ...pythonArgs, script, '--serve']]
      : [p.python, [...pythonArgs, script, '--serve']];
    this.server = new SandboxServer(command, args, {
      PATH: '/usr/local/bin:/usr/bin:/bin',
      LANG: 'C.UTF-8',
      PYTHONHASHSEED: '0',
      PYTHONIOENCODING: 'utf-8',
    });
    return this.server;
  }

  /** Stop the Python server (runs in flight end as errors). Idle sandboxes do not keep a process alive anyway. */
  close(): void {
    this.server?.close();
    this.server = undefined;
  }

  private hiddenList: string[] | undefined;

  private hidden(): string[] {
    this.hiddenList ??= hiddenPaths(this.options.hide);
    return this.hiddenList;
  }

  private ensureProbe(): Probe {
    this.probed ??= probe(this.options);
    return this.probed;
  }

  /**
   * Run `program`, then each test in order; resolves with a verdict per test. Rejects (a
   * StepwiseError) where the filesystem cannot be made read-only, unless `unsafeFilesystem`.
   */
  run(request: SandboxRequest): Promise<SandboxResult> {
    const p = this.ensureProbe();
    if (p.filesystemProblem !== null && !this.options.unsafeFilesystem) {
      return Promise.reject(
        new StepwiseError(
          `the code sandbox cannot make the filesystem read-only here (${p.filesystemProblem}), so model-written code ` +
            'could delete or overwrite your files; refusing to run it. Run as root, or allow user namespaces ' +
            '(sysctl kernel.unprivileged_userns_clone=1 / user.max_user_namespaces), or accept the risk with ' +
            '--unsafe-filesystem (library: new Sandbox({ unsafeFilesystem: true }))',
        ),
      );
    }
    return this.limit(() => this.runNow(p, request));
  }

  private async runNow(p: Probe, request: SandboxRequest): Promise<SandboxResult> {
    const limits: SandboxLimits = { ...DEFAULT_SANDBOX_LIMITS, ...this.options.limits, ...request.limits };
    const names = request.tests.map((t, i) => t.name ?? `test ${i}`);
    const started = performance.now();
    // The candidate gets `work`; the supervisor's files (output, result) stay beside it, out of its reach.
    const runDir = mkdtempSync(join(tmpdir(), 'stepwise-sbx-'));
    const workDir = join(runDir, 'work');
    let cgroup: string | null = null;
    if (p.cgroupBase) {
      cgroup = join(p.cgroupBase, `${process.pid}-${cgroupRunCounter++}`);
      try {
        mkdirSync(cgroup);
        // +1: the supervisor itself lives in the cgroup; +2 slack for the worker's own process.
        writeFileSync(join(cgroup, 'pids.max'), String(limits.maxProcesses + 2));
      } catch {
        cgroup = null;
      }
    }
    const testCount = request.tests.length;
    const budgetMs = limits.programTimeoutMs + testCount * (limits.programTimeoutMs + limits.timeoutMs);
    const config = {
      workDir,
      runDir,
      filesystem: p.filesystemProblem === null ? { hide: this.hidden(), tmpMb: limits.memoryMb } : null,
      program: request.program,
      tests: request.tests.map((t) => ({ code: t.code })),
      timeoutMs: limits.timeoutMs,
      programTimeoutMs: limits.programTimeoutMs,
      memoryBytes: limits.memoryMb * 1024 * 1024,
      cpuSeconds: Math.ceil((limits.programTimeoutMs + testCount * limits.timeoutMs) / 1000) + 1,
      maxProcesses: limits.maxProcesses,
      outputBytes: limits.outputBytes,
      captureBytes: limits.captureBytes,
      failFast: limits.failFast,
      cgroup,
      nprocRlimit: p.enforcement.processes.startsWith('rlimit-nproc'),
      parentDeathSignal: true,
    };
    let outcome: SupervisorOutcome | null = null;
    let failure: string | null = null;
    try {
      mkdirSync(workDir);
      const server = this.ensureServer(p);
      const exit = await server.submit(config, budgetMs + 10_000);
      if (exit === 'killed')
        failure = `sandbox run exceeded its total budget (${budgetMs + 10_000} ms) and was killed`;
      else {
        try {
          outcome = JSON.parse(readFileSync(join(runDir, '.result.json'), 'utf8')) as SupervisorOutcome;
        } catch {
          failure = `sandbox supervisor failed (exit ${exit})${exit === 'lost' ? `: ${server.startupError || 'server died'}` : ''}`;
        }
      }
    } catch (e) {
      failure = `sandbox failed: ${(e as Error).message}`;
    } finally {
      rmSync(runDir, { recursive: true, force: true });
      if (cgroup) removeCgroupLater(cgroup);
    }
    const wallMs = performance.now() - started;
    if (!outcome) {
      const status: SandboxStatus = failure?.includes('total budget') ? 'timeout' : 'error';
      const program: SandboxVerdict = { name: 'program', status, message: failure, durationMs: null };
      const tests = names.map((name) => ({ name, status, message: failure, durationMs: null }));
      return {
        passed: false,
        status,
        program,
        tests,
        stdout: '',
        stderr: '',
        outputTruncated: false,
        wallMs,
        workers: 0,
      };
    }
    const program: SandboxVerdict = {
      name: 'program',
      ...(outcome.program ?? { status: 'error', message: 'program did not run', durationMs: null }),
    };
    const tests = outcome.tests.map((t, i) => ({ name: names[i], ...t }));
    const status = firstFailure(program, tests);
    return {
      passed: status === 'passed',
      status,
      program,
      tests,
      stdout: outcome.stdout,
      stderr: outcome.stderr,
      outputTruncated: outcome.outputTruncated,
      wallMs,
      workers: outcome.workers,
    };
  }
}

function removeCgroupLater(path: string, attempt = 0): void {
  try {
    rmdirSync(path);
  } catch {
    // Processes of a killed PID namespace take a moment to leave the cgroup.
    if (attempt < 20) setTimeout(() => removeCgroupLater(path, attempt + 1), 50 * (attempt + 1)).unref();
  }
}

/**
 * The long-lived Python side: `stepwise_sandbox.py --serve`, started once per {@link Sandbox}
 * inside fresh network, PID and mount namespaces where available. It forks a supervisor per run
 * (milliseconds, where a fresh interpreter in fresh namespaces costs ~100 ms).
 */
class SandboxServer {
  private readonly child: ChildProcess;
  private readonly waiting = new Map<number, (exit: number | 'killed' | 'lost') => void>();
  private nextId = 0;
  private buffer = '';
  private stderr = '';
  dead = false;

  constructor(command: string, args: string[], env: NodeJS.ProcessEnv) {
    this.child = spawn(command, args, {
      env,
      cwd: tmpdir(),
      detached: true,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    this.child.stdout?.setEncoding('utf8');
    this.child.stdout?.on('data', (text: string) => {
      this.buffer += text;
      let nl = this.buffer.indexOf('\n');
      while (nl >= 0) {
        const line = this.buffer.slice(0, nl);
        this.buffer = this.buffer.slice(nl + 1);
        try {
          const message = JSON.parse(line) as { id: number; exit: number };
          this.waiting.get(message.id)?.(message.exit);
          this.waiting.delete(message.id);
        } catch {
          // not a protocol line: ignore
        }
        nl = this.buffer.indexOf('\n');
      }
    });
    this.child.stderr?.setEncoding('utf8');
    this.child.stderr?.on('data', (t: string) => {
      if (this.stderr.length < 4096) this.stderr += t;
    });
    this.child.stdin?.on('error', () => {
      // the server died; 'exit' settles every waiting run
    });
    const lose = () => {
      this.dead = true;
      for (const settle of this.waiting.values()) settle('lost');
      this.waiting.clear();
    };
    this.child.on('exit', lose);
    this.child.on('error', lose);
    this.idle();
  }

  /** Run one config; resolves with the supervisor's exit code, `killed` at the deadline, `lost` if the server died. */
  submit(config: object, deadlineMs: number): Promise<number | 'killed' | 'lost'> {
    if (this.dead) return Promise.resolve('lost');
    const id = this.nextId++;
    this.busy();
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.child.stdin?.write(`${JSON.stringify({ kill: id })}\n`);
        finish('killed');
      }, deadlineMs);
      const finish = (exit: number | 'killed' | 'lost') => {
        clearTimeout(timer);
        this.waiting.delete(id);
        if (this.waiting.size === 0) this.idle();
        resolve(exit);
      };
      this.waiting.set(id, finish);
      this.child.stdin?.write(`${JSON.stringify({ id, config })}\n`);
    });
  }

  get startupError(): string {
    return this.stderr.trim();
  }

  /** Keep the event loop alive only while runs are in flight, so an idle sandbox never holds a CLI open. */
  private busy(): void {
    this.child.ref();
    for (const s of [this.child.stdout, this.child.stderr, this.child.stdin])
      (s as unknown as { ref?: () => void } | null)?.ref?.();
  }

  private idle(): void {
    this.child.unref();
    for (const s of [this.child.stdout, this.child.stderr, this.child.stdin])
      (s as unknown as { unref?: () => void } | null)?.unref?.();
  }

  close(): void {
    this.child.stdin?.end();
    try {
      if (this.child.pid) process.kill(-this.child.pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
}

let shared: Sandbox | undefined;

/** The process-wide sandbox (one pool shared by every caller that does not bring its own). */
export function defaultSandbox(): Sandbox {
  shared ??= new Sandbox();
  return shared;
}
