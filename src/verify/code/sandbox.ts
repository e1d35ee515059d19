import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import {
  chmodSync,
  type Dirent,
  existsSync,
  readdirSync,
  readFileSync,
  rmdirSync,
  unlinkSync,
} from 'node:fs';
import { availableParallelism, homedir, tmpdir, userInfo } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import pLimit, { type LimitFunction } from 'p-limit';
import { StepwiseError } from '../../core/errors.js';
import type { SANDBOX_STATUS_NAMES } from '../../data/record-kinds.js';

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
export type SandboxStatus = (typeof SANDBOX_STATUS_NAMES)[number];

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
  /** Bytes the candidate may keep in its work folder, /tmp and /dev/shm together (within `memoryMb` where no root tmpfs). */
  diskBytes: number;
  /** Files and folders the candidate may create there (enforced where stepwise runs as root: `workFolder: 'run-tmpfs'`). */
  maxFiles: number;
}

export const DEFAULT_SANDBOX_LIMITS: Readonly<SandboxLimits> = {
  timeoutMs: 5000,
  programTimeoutMs: 5000,
  memoryMb: 1024,
  maxProcesses: 8,
  outputBytes: 1 << 20,
  captureBytes: 16 << 10,
  failFast: false,
  diskBytes: 64 << 20,
  maxFiles: 10_000,
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
  /**
   * Tests only: `trusted` = planned as calls and expected values, the candidate's values compared
   * outside the sandbox (it cannot forge a pass); `sandbox` = run as code, the harness next to the
   * candidate decided (a hostile candidate could forge it).
   */
  decidedBy?: 'trusted' | 'sandbox';
}

/** What enforces each limit on this machine (found by probing once per {@link Sandbox}). */
export interface SandboxEnforcement {
  python: string;
  pythonVersion: string;
  /** `bubblewrap`: each worker in its own bwrap sandbox (named with its version); `none`: no isolation (only with `unsafeFilesystem`). */
  isolation: 'bubblewrap' | 'none';
  /** `bwrap --version`, or null when not used. */
  bwrap: string | null;
  /** `namespace` = empty network namespace, kernel-enforced; `audit-hook` = Python-level refusal only. */
  network: 'namespace+audit-hook' | 'audit-hook';
  /** `cgroup-pids` = kernel pids.max per run; `rlimit-nproc` = RLIMIT_NPROC of the run's own user id; `audit-hook` = Python-level cap only. */
  processes:
    | 'cgroup-pids+rlimit-nproc+audit-hook'
    | 'cgroup-pids+audit-hook'
    | 'rlimit-nproc+audit-hook'
    | 'audit-hook';
  /** `pid-namespace`: every process of a worker dies with it; `process-group`: only its group is killed. */
  cleanup: 'pid-namespace' | 'process-group';
  /** `cgroup-memory`: one cap on all of a run's processes and its tmpfs (v1 `memory.limit_in_bytes` or v2 `memory.max`); `rlimit-as`: per process. */
  memory: 'cgroup-memory+rlimit-as' | 'rlimit-as';
  /**
   * Where the candidate writes (work folder, /tmp, /dev/shm): `run-tmpfs` = one tmpfs per run
   * capping bytes (`diskBytes`) and files (`maxFiles`); `bwrap-tmpfs` = bubblewrap's tmpfs mounts,
   * bytes capped, file count only through memory; `host-folder` = a folder on disk, uncapped.
   */
  workFolder: 'run-tmpfs' | 'bwrap-tmpfs' | 'host-folder';
  /** `own-uid`: a fresh unprivileged user id per run (stepwise runs as root); `invoking-user`: the job's own user id. */
  user: 'own-uid' | 'invoking-user';
  /** `disabled`: the candidate cannot create user namespaces (bwrap --disable-userns). */
  userNamespaces: 'disabled' | 'allowed';
  cpu: 'rlimit-cpu';
  wallClock: 'supervisor-kill';
  output: 'rlimit-fsize';
  /**
   * `read-only-namespace`: the candidate sees only the system folders and its interpreter,
   * read-only, plus its own tmpfs; everything else (homes, the working folder and the folders
   * above it, /run, /var, the store, other runs) is absent. `unprotected`: it can read and write
   * whatever the job's user can (only with `unsafeFilesystem`).
   */
  filesystem: 'read-only-namespace' | 'unprotected';
  /** Tests planned as calls and expected values are decided in the trusted supervisor; the others by the harness in the sandbox. */
  verdicts: 'trusted-comparison';
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
  /** `auto` (default) runs each worker under bubblewrap (refusing where bwrap is missing, unless `unsafeFilesystem`); `none` never does. */
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

interface ProbeAnswer {
  bwrap: string | null;
  bwrapVersion: string | null;
  disableUserns: boolean;
  root: boolean;
  cgroups: { memory?: string; pids?: string };
  problem: string | null;
}

interface Probe {
  enforcement: SandboxEnforcement;
  python: string;
  /** Why candidates cannot be isolated here (null when they can). */
  isolationProblem: string | null;
}

interface SupervisorOutcome {
  program: { status: SandboxStatus; message: string | null; durationMs: number | null } | null;
  tests: Array<{
    status: SandboxStatus;
    message: string | null;
    durationMs: number | null;
    decidedBy?: 'trusted' | 'sandbox';
  }>;
  stdout: string;
  stderr: string;
  outputTruncated: boolean;
  workers: number;
  warnings?: string[];
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
  if (!version?.startsWith('3.') || Number(version.split('.')[1]) < 9)
    throw new StepwiseError(`Python ${version} at ${executable} is too old: the sandbox needs Python ≥ 3.9`);
  return { executable, version };
}

/** What a run's config says about its limits (the Python side prepares spare runs with the defaults). */
function limitConfig(limits: SandboxLimits, testCount: number) {
  return {
    timeoutMs: limits.timeoutMs,
    programTimeoutMs: limits.programTimeoutMs,
    memoryBytes: limits.memoryMb * 1024 * 1024,
    cpuSeconds: Math.ceil((limits.programTimeoutMs + testCount * limits.timeoutMs) / 1000) + 1,
    maxProcesses: limits.maxProcesses,
    outputBytes: limits.outputBytes,
    captureBytes: limits.captureBytes,
    failFast: limits.failFast,
    diskBytes: limits.diskBytes,
    maxFiles: limits.maxFiles,
  };
}

/** Settings the Python side takes as its last argument. */
function pythonSettings(
  python: string,
  options: SandboxOptions,
  serve?: { limits: SandboxLimits; hide: string[]; spares: number },
): string {
  return JSON.stringify({
    ...(serve
      ? {
          defaults: { ...limitConfig(serve.limits, 1), hide: serve.hide },
          spares: serve.spares,
          tmpdir: tmpdir(),
        }
      : {}),
    python,
    isolation: options.isolation ?? 'auto',
    sitePackages: options.sitePackages !== false,
    // Where bubblewrap is (default: `bwrap` on PATH, else /usr/bin/bwrap); a path that is not there means none.
    bwrap: process.env.STEPWISE_BWRAP || undefined,
  });
}

function probe(options: SandboxOptions): Probe {
  const { executable, version } = resolvePython(options.python);
  const r = spawnSync(
    executable,
    ['-B', '-s', '-S', pythonAsset('stepwise_sandbox.py'), '--probe', pythonSettings(executable, options)],
    { encoding: 'utf8', timeout: 120_000, cwd: tmpdir(), env: { PATH: process.env.PATH ?? '/usr/bin:/bin' } },
  );
  let answer: ProbeAnswer;
  try {
    answer = JSON.parse(r.stdout) as ProbeAnswer;
  } catch {
    answer = {
      bwrap: null,
      bwrapVersion: null,
      disableUserns: false,
      root: false,
      cgroups: {},
      problem: `the sandbox probe failed: ${r.error?.message ?? (r.stderr.trim().slice(0, 500) || `exit ${r.status}`)}`,
    };
  }
  const bwrap = answer.bwrap !== null && answer.problem === null;
  let isolationProblem: string | null = null;
  if (options.isolation === 'none') isolationProblem = 'isolation is off (isolation: none)';
  else if (answer.bwrap === null)
    isolationProblem =
      "bubblewrap (bwrap) is not installed: install Debian's or your distribution's `bubblewrap` package";
  else if (answer.problem !== null) isolationProblem = `bubblewrap does not work here: ${answer.problem}`;
  const rootBwrap = bwrap && answer.root;
  const pids = rootBwrap && answer.cgroups.pids !== undefined;
  return {
    python: executable,
    isolationProblem,
    enforcement: {
      python: executable,
      pythonVersion: version,
      isolation: bwrap ? 'bubblewrap' : 'none',
      bwrap: bwrap ? answer.bwrapVersion : null,
      network: bwrap ? 'namespace+audit-hook' : 'audit-hook',
      processes: pids
        ? 'cgroup-pids+rlimit-nproc+audit-hook'
        : rootBwrap
          ? 'rlimit-nproc+audit-hook'
          : 'audit-hook',
      cleanup: bwrap ? 'pid-namespace' : 'process-group',
      memory: rootBwrap && answer.cgroups.memory !== undefined ? 'cgroup-memory+rlimit-as' : 'rlimit-as',
      workFolder: rootBwrap ? 'run-tmpfs' : bwrap ? 'bwrap-tmpfs' : 'host-folder',
      user: rootBwrap ? 'own-uid' : 'invoking-user',
      userNamespaces: bwrap && answer.disableUserns ? 'disabled' : 'allowed',
      cpu: 'rlimit-cpu',
      wallClock: 'supervisor-kill',
      output: 'rlimit-fsize',
      filesystem: bwrap ? 'read-only-namespace' : 'unprotected',
      verdicts: 'trusted-comparison',
    },
  };
}

function firstFailure(program: SandboxVerdict, tests: readonly SandboxVerdict[]): SandboxStatus {
  if (program.status !== 'passed') return program.status;
  return tests.find((t) => t.status !== 'passed')?.status ?? 'passed';
}

/** Entries a cleanup visits at most: a run that made more is left to the logged warning. */
const CLEANUP_MAX_ENTRIES = 200_000;

/**
 * Remove a run folder without recursion (a candidate can nest folders thousands deep) and within
 * a bounded number of entries; folders it cannot enter are made enterable first. Never throws:
 * returns what could not be removed, for the log.
 */
export function removeRunFolder(root: string, maxEntries = CLEANUP_MAX_ENTRIES): string | null {
  const stack: string[] = [root];
  const dirs: string[] = [];
  let visited = 0;
  try {
    while (stack.length > 0) {
      const dir = stack.pop() as string;
      dirs.push(dir);
      let entries: Dirent[];
      try {
        entries = readdirSync(dir, { withFileTypes: true });
      } catch {
        try {
          chmodSync(dir, 0o700);
          entries = readdirSync(dir, { withFileTypes: true });
        } catch {
          continue;
        }
      }
      for (const e of entries) {
        if (++visited > maxEntries) return `${root}: more than ${maxEntries} entries, left in place`;
        const path = join(dir, e.name);
        if (e.isDirectory()) stack.push(path);
        else
          try {
            unlinkSync(path);
          } catch {
            // reported below when its folder cannot be removed
          }
      }
    }
    for (let i = dirs.length - 1; i >= 0; i--) {
      try {
        rmdirSync(dirs[i]);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'ENOENT') return `${dirs[i]}: ${(e as Error).message}`;
      }
    }
    return null;
  } catch (e) {
    return `${root}: ${(e as Error).message}`;
  }
}

function logCleanup(problem: string): void {
  process.stderr.write(`stepwise: sandbox cleanup: ${problem}\n`);
}

/**
 * Runs Python programs against tests, each worker in its own bubblewrap sandbox, with
 * wall-clock, CPU, memory, process-count, network, output and disk limits, a pool of
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
    const script = pythonAsset('stepwise_sandbox.py');
    const limits = { ...DEFAULT_SANDBOX_LIMITS, ...this.options.limits };
    // Spare runs started ahead: one per run at a time, and one more for the next.
    const settings = pythonSettings(p.python, this.options, {
      limits,
      hide: this.hidden(),
      spares: this.concurrency + 1,
    });
    this.server = new SandboxServer(p.python, ['-B', '-s', '-S', script, '--serve', settings], {
      PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin',
      LANG: 'C.UTF-8',
    });
    return this.server;
  }

  /**
   * Stop the Python server: runs in flight end as errors; it removes their cgroups and folders
   * and those of its spare runs, then exits (awaiting the result waits for that).
   */
  close(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    return server ? server.close() : Promise.resolve();
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
   * StepwiseError) where candidates cannot be isolated (no working bubblewrap), unless `unsafeFilesystem`.
   */
  run(request: SandboxRequest): Promise<SandboxResult> {
    const p = this.ensureProbe();
    if (p.isolationProblem !== null && !this.options.unsafeFilesystem) {
      return Promise.reject(
        new StepwiseError(
          `the code sandbox cannot isolate model-written code here (${p.isolationProblem}), so it could read, ` +
            'delete or overwrite your files and disturb other runs; refusing to run it. Install bubblewrap ' +
            '(Debian: apt-get install bubblewrap; unprivileged users also need user namespaces allowed), or accept ' +
            'the risk with --unsafe-filesystem (library: new Sandbox({ unsafeFilesystem: true }))',
        ),
      );
    }
    return this.limit(() => this.runNow(p, request));
  }

  private async runNow(p: Probe, request: SandboxRequest): Promise<SandboxResult> {
    const limits: SandboxLimits = { ...DEFAULT_SANDBOX_LIMITS, ...this.options.limits, ...request.limits };
    const names = request.tests.map((t, i) => t.name ?? `test ${i}`);
    const started = performance.now();
    const testCount = request.tests.length;
    const budgetMs = limits.programTimeoutMs + testCount * (limits.programTimeoutMs + limits.timeoutMs);
    const config = {
      hide: this.hidden(),
      program: request.program,
      tests: request.tests.map((t) => ({ code: t.code })),
      ...limitConfig(limits, testCount),
    };
    let outcome: SupervisorOutcome | null = null;
    let failure: string | null = null;
    try {
      const server = this.ensureServer(p);
      const done = await server.submit(config, budgetMs + 30_000);
      if (done.exit === 'killed')
        failure = `sandbox run exceeded its total budget (${budgetMs + 30_000} ms) and was killed`;
      else {
        try {
          outcome = JSON.parse(
            readFileSync(join(done.runDir ?? '', '.result.json'), 'utf8'),
          ) as SupervisorOutcome;
        } catch {
          failure = `sandbox supervisor failed (exit ${done.exit})${done.exit === 'lost' ? `: ${server.startupError || 'server died'}` : ''}`;
        }
      }
      // The run's folder holds the supervisor's files (output, result); under bubblewrap the
      // candidate's files were in a tmpfs that went with the run.
      if (done.runDir) {
        const problem = removeRunFolder(done.runDir);
        if (problem) logCleanup(problem);
      }
    } catch (e) {
      failure = `sandbox failed: ${(e as Error).message}`;
    }
    for (const w of outcome?.warnings ?? []) logCleanup(w);
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

/** How a run ended on the server side: the supervisor's exit code and its run folder. */
interface RunDone {
  exit: number | 'killed' | 'lost';
  runDir?: string;
}

/**
 * The long-lived trusted Python side: `stepwise_sandbox.py --serve`, started once per
 * {@link Sandbox}. It forks a supervisor per run (milliseconds), which starts each worker under
 * bubblewrap and decides the verdicts.
 */
class SandboxServer {
  private readonly child: ChildProcess;
  private readonly waiting = new Map<number, (done: RunDone) => void>();
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
        let message: { id?: number; exit?: number; runDir?: string } = {};
        try {
          message = JSON.parse(line) as typeof message;
        } catch {
          // not a protocol line: ignore
        }
        const settle = message.id === undefined ? undefined : this.waiting.get(message.id);
        if (settle && typeof message.exit === 'number')
          settle({ exit: message.exit, runDir: message.runDir });
        else if (message.runDir) {
          // A run given up on (killed at its budget) ended later: its folder still goes.
          const problem = removeRunFolder(message.runDir);
          if (problem) logCleanup(problem);
        }
        if (message.id !== undefined) this.waiting.delete(message.id);
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
      for (const settle of this.waiting.values()) settle({ exit: 'lost' });
      this.waiting.clear();
    };
    this.child.on('exit', lose);
    this.child.on('error', lose);
    this.idle();
  }

  /** Run one config; resolves with the supervisor's exit code and run folder, `killed` at the deadline, `lost` if the server died. */
  submit(config: object, deadlineMs: number): Promise<RunDone> {
    if (this.dead) return Promise.resolve({ exit: 'lost' });
    const id = this.nextId++;
    this.busy();
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.child.stdin?.write(`${JSON.stringify({ kill: id })}\n`);
        finish({ exit: 'killed' });
      }, deadlineMs);
      const finish = (done: RunDone) => {
        clearTimeout(timer);
        this.waiting.delete(id);
        if (this.waiting.size === 0) this.idle();
        resolve(done);
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

  /** End the server's input: it kills the runs in flight, removes their cgroups and folders and exits (it also does when this process dies). */
  close(): Promise<void> {
    if (this.dead) return Promise.resolve();
    // Hold the event loop until the server has cleaned up and exited.
    this.busy();
    const exited = new Promise<void>((resolve) => this.child.once('exit', () => resolve()));
    this.child.stdin?.end();
    return exited;
  }
}

let shared: Sandbox | undefined;

/** The process-wide sandbox (one pool shared by every caller that does not bring its own). */
export function defaultSandbox(): Sandbox {
  shared ??= new Sandbox();
  return shared;
}

/** Stop the process-wide sandbox's server (a later {@link defaultSandbox} starts a new one). */
export async function closeDefaultSandbox(): Promise<void> {
  const sandbox = shared;
  shared = undefined;
  await sandbox?.close();
}
