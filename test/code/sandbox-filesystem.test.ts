import { spawnSync } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  closeSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { homedir, tmpdir, userInfo } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { resolvePython, Sandbox, type SandboxResult } from '../../src/verify/code/sandbox.js';

// The attacks are real: each target is a real file the candidate could reach if the protection
// were off. Targets live in /var/tmp, which candidates see (read-only), unlike the hidden /tmp.
const VISIBLE_TMP = '/var/tmp';
const repo = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const sandbox = new Sandbox({ limits: { timeoutMs: 4000, programTimeoutMs: 4000 } });
const made: string[] = [];
afterAll(() => {
  sandbox.close();
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

function tempDir(parent = VISIBLE_TMP): string {
  const dir = mkdtempSync(join(parent, 'stepwise-fs-test-'));
  made.push(dir);
  return dir;
}

const py = (s: string) => JSON.stringify(s);

/** A util-linux tool by absolute path (some tests run with an empty PATH). */
function tool(name: string): string {
  const found = spawnSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' }).stdout.trim();
  if (!found)
    throw new Error(`${name} (util-linux) not found: needed to test the sandbox as an unprivileged user`);
  return found;
}

/** util-linux `setpriv`, to become an unprivileged user when the suite runs as root (CI). */
function setpriv(): string {
  return tool('setpriv');
}

/**
 * How to run a command as `nobody` when this suite runs as root: the argv prefix, and where that
 * user finds this checkout. A clone may sit in a folder only root can enter (`mktemp -d` makes
 * 0700 folders), so the checkout is bind-mounted on a folder anyone can enter, in a mount
 * namespace of the command's own (the host sees an empty folder). Unprivileged: as is.
 */
function asNobody(): { prefix: string[]; repo: string } {
  if (process.getuid?.() !== 0) return { prefix: [], repo };
  const mountPoint = tempDir();
  chmodSync(mountPoint, 0o755);
  const prefix = [
    tool('unshare'),
    '--mount',
    '--propagation',
    'private',
    '--',
    '/bin/sh',
    '-c',
    `${tool('mount')} --bind "$0" "$1" && shift && exec "$@"`,
    repo,
    mountPoint,
    setpriv(),
    '--reuid=65534',
    '--regid=65534',
    '--clear-groups',
    '--',
  ];
  return { prefix, repo: mountPoint };
}

/** A folder with one file F, and a snapshot of both to compare with afterwards. */
function victim(parent?: string) {
  const dir = tempDir(parent);
  const file = join(dir, 'F.txt');
  writeFileSync(file, 'precious data\n');
  const snapshot = () => ({
    entries: readdirSync(dir),
    content: readFileSync(file, 'utf8'),
    mtimeMs: statSync(file).mtimeMs,
    dirMtimeMs: statSync(dir).mtimeMs,
  });
  return { dir, file, before: snapshot(), snapshot };
}

function attacks(file: string) {
  return {
    delete: `import os\nos.remove(${py(file)})`,
    overwrite: `with open(${py(file)}, "w") as f:\n    f.write("gone")`,
    writeNext: `with open(${py(join(dirname(file), 'new.txt'))}, "w") as f:\n    f.write("planted")`,
  };
}

describe('sandbox filesystem', () => {
  it('names the read-only mode in enforcement()', () => {
    expect(sandbox.enforcement().filesystem).toBe('read-only-namespace');
  });

  it('a candidate that deletes F, overwrites F or writes next to F fails and says why; F and its folder are unchanged', async () => {
    const v = victim();
    const a = attacks(v.file);
    const results = await Promise.all(
      [a.delete, a.overwrite, a.writeNext].map((program) =>
        sandbox.run({ program, tests: [{ code: 'pass' }] }),
      ),
    );
    for (const r of results) {
      expect(r.passed).toBe(false);
      expect(r.status).toBe('error');
      expect(r.program.message).toMatch(
        /^(OSError|PermissionError|FileNotFoundError): \[Errno (30|13|2)\] (Read-only file system|Permission denied|No such file or directory)/,
      );
      expect(r.tests[0].message).toMatch(/program failed: (OSError|PermissionError|FileNotFoundError)/);
    }
    expect(v.snapshot()).toEqual(v.before);
    expect(readdirSync(v.dir)).toEqual(['F.txt']);
  });

  it('the same attacks in a test (not the program), and through a subprocess and a shell, change nothing either', async () => {
    const v = victim();
    const a = attacks(v.file);
    const shell = `rm -f ${v.file}; echo x > ${v.file}; echo y > ${join(v.dir, 'shell.txt')}`;
    const r = await sandbox.run({
      program: 'import subprocess',
      tests: [
        { name: 'delete', code: a.delete },
        { name: 'overwrite', code: a.overwrite },
        { name: 'next', code: a.writeNext },
        {
          name: 'shell',
          code: `r = subprocess.run(["sh", "-c", ${py(shell)}], capture_output=True, text=True)\nassert r.returncode == 0, r.stderr`,
        },
      ],
    });
    expect(r.tests.map((t) => t.status)).toEqual(['error', 'error', 'error', 'failed']);
    // The victim's folder is not in the candidate's view at all (only system folders are).
    expect(r.tests[3].message).toMatch(/Read-only file system|nonexistent|No such file/);
    expect(v.snapshot()).toEqual(v.before);
  });

  it('a root candidate cannot undo the read-only view: no remount, no unmount, no capabilities', async () => {
    const v = victim();
    const r = await sandbox.run({
      program: [
        'import ctypes, os',
        'libc = ctypes.CDLL(None, use_errno=True)',
        'MS_REMOUNT, MS_BIND = 32, 4096',
        'results = {',
        '    "remount": libc.mount(None, b"/", None, MS_REMOUNT | MS_BIND, None),',
        `    "remount_dir": libc.mount(None, ${py(v.dir)}.encode(), None, MS_REMOUNT | MS_BIND, None),`,
        '    "umount_root": libc.umount2(b"/root", 2),',
        '    "umount_tmp": libc.umount2(b"/tmp", 2),',
        '}',
        'caps = [l for l in open("/proc/self/status") if l.startswith("CapEff")][0].split()[1]',
      ].join('\n'),
      tests: [
        { name: 'syscalls refused', code: 'assert all(v == -1 for v in results.values()), results' },
        { name: 'no capabilities', code: 'assert int(caps, 16) == 0, caps' },
        { name: 'still read-only', code: attacks(v.file).overwrite },
        {
          // A new user namespace brings capabilities back, but only over copies of the mounts,
          // which the kernel locks: they can be neither unmounted nor made writable.
          name: 'user namespace',
          code: [
            'import subprocess',
            `script = "umount -l /root; umount -l /tmp; mount -o remount,bind,rw /; mount -o remount,bind,rw ${v.dir}; rm -f ${v.file}; ls -A /root"`,
            'r = subprocess.run(["unshare", "-r", "-m", "sh", "-c", script], capture_output=True, text=True)',
            'print("escape:", r.returncode, repr(r.stdout))',
          ].join('\n'),
        },
        {
          name: 'another root through /proc',
          code: `import os\nfor pid in ["1", str(os.getppid())]:\n    try:\n        os.listdir("/proc/" + pid + "/root${v.dir}")\n        raise AssertionError("reached " + pid)\n    except (PermissionError, FileNotFoundError):\n        pass`,
        },
      ],
    });
    expect(r.tests.map((t) => t.status)).toEqual(['passed', 'passed', 'error', 'passed', 'passed']);
    expect(r.tests[2].message).toMatch(/Read-only file system|Permission denied|No such file/);
    expect(r.stdout).toMatch(/escape: \d+ ''/);
    expect(v.snapshot()).toEqual(v.before);
  });

  it("a file descriptor that stepwise inherited (`40>>file` in bash) is not the candidate's way out", () => {
    const v = victim();
    const dir = tempDir();
    const script = join(dir, 'inherited.mjs');
    // Write to every descriptor the candidate holds besides stdin, stdout and stderr.
    const program = [
      'import os',
      'for name in os.listdir("/proc/self/fd"):',
      '    if int(name) > 2:',
      '        try:',
      '            os.write(int(name), b"planted\\n")',
      '        except OSError:',
      '            pass',
    ].join('\n');
    writeFileSync(
      script,
      [
        `const { Sandbox } = await import(${py(pathToFileURL(join(repo, 'dist/verify/code/sandbox.js')).href)});`,
        'const sb = new Sandbox();',
        `const r = await sb.run({ program: ${JSON.stringify(program)}, tests: [] });`,
        'process.stdout.write(JSON.stringify(r));',
        'sb.close();',
      ].join('\n'),
    );
    // The job's parent left descriptor 40 open on F for appending, as `stepwise … 40>>F` in bash
    // would; Node passes such descriptors on to what it spawns.
    const fd = openSync(v.file, 'a');
    try {
      const stdio: Array<'ignore' | 'pipe' | number> = ['ignore', 'pipe', 'pipe'];
      while (stdio.length < 40) stdio.push('ignore');
      stdio.push(fd);
      const child = spawnSync(process.execPath, [script], {
        encoding: 'utf8',
        timeout: 120_000,
        stdio,
        // Not the test runner's IPC channel (NODE_CHANNEL_FD) or options.
        env: { PATH: process.env.PATH, HOME: process.env.HOME },
      });
      expect(child.stderr).toBe('');
      expect((JSON.parse(child.stdout) as SandboxResult).status).toBe('passed');
    } finally {
      closeSync(fd);
    }
    expect(v.snapshot()).toEqual(v.before);
  });

  it('a candidate finds no disks, consoles or kernel log in /dev (a read-only mount does not stop device writes)', async () => {
    const r = await sandbox.run({
      program: 'import os',
      tests: [
        {
          name: 'only harmless devices',
          // bubblewrap's /dev: these nodes, its own devpts (ptmx, pts) and links (core -> /proc/kcore, unreadable).
          code: 'names = set(os.listdir("/dev"))\nassert names <= {"null", "zero", "full", "random", "urandom", "tty", "fd", "stdin", "stdout", "stderr", "shm", "ptmx", "pts", "core"}, sorted(names)',
        },
        {
          name: 'kernel log',
          code: 'try:\n    os.close(os.open("/dev/kmsg", os.O_WRONLY))\n    raise AssertionError("/dev/kmsg opened for writing")\nexcept FileNotFoundError:\n    pass',
        },
        {
          name: 'the harmless ones work',
          code: 'open("/dev/null", "w").write("x")\nassert len(open("/dev/urandom", "rb").read(8)) == 8\nopen("/dev/shm/x", "w").write("y")\nimport multiprocessing\nq = multiprocessing.Queue()\nq.put(1)\nassert q.get() == 1',
        },
      ],
    });
    expect(r.tests.map((t) => `${t.name}: ${t.status}${t.message ? ` ${t.message}` : ''}`)).toEqual(
      r.tests.map((t) => `${t.name}: passed`),
    );
  });

  it("a candidate shares no System V shared memory or semaphores with the job's other programs", async () => {
    const r = await sandbox.run({ program: 'import os\nprint(os.readlink("/proc/self/ns/ipc"))', tests: [] });
    expect(r.stdout.trim()).toMatch(/^ipc:\[\d+\]$/);
    expect(r.stdout.trim()).not.toBe(readlinkSync('/proc/self/ns/ipc'));
  });

  it('a candidate that lists the real home folder of the user running stepwise sees none of its entries', async () => {
    const home = userInfo().homedir;
    // Make sure the home folder has at least one entry to find.
    const marker = mkdtempSync(join(home, '.stepwise-fs-test-'));
    made.push(marker);
    const real = readdirSync(home);
    expect(real.length).toBeGreaterThan(0);
    const r = await sandbox.run({
      program: [
        'import json, os',
        'seen = []',
        `for folder in [${py(home)}, os.path.expanduser("~"), "/home", "/root"]:`,
        '    try:',
        '        seen += [os.path.join(folder, name) for name in os.listdir(folder)]',
        '    except OSError:',
        '        pass',
        `print(json.dumps({"seen": seen, "marker": os.path.exists(${py(marker)})}))`,
      ].join('\n'),
      tests: [],
    });
    expect(r.passed).toBe(true);
    const out = JSON.parse(r.stdout) as { seen: string[]; marker: boolean };
    expect(out.marker).toBe(false);
    const realPaths = new Set(real.map((name) => join(home, name)));
    // Only the folders leading to the interpreter (bound read-only where it lies) may show.
    const python = sandbox.enforcement().python;
    expect(out.seen.filter((p) => realPaths.has(p) && !python.startsWith(`${p}/`))).toEqual([]);
  });

  it('hides ~/.ssh and ~/.config of a HOME, the store and output folders, and other runs; /tmp is private and writable', async () => {
    const home = tempDir();
    mkdirSync(join(home, '.ssh'));
    writeFileSync(join(home, '.ssh', 'id_ed25519'), 'PRIVATE KEY\n');
    mkdirSync(join(home, '.config'));
    writeFileSync(join(home, '.config', 'token'), 'sk-secret\n');
    const store = tempDir();
    writeFileSync(join(store, 'store.sqlite'), 'runs\n');
    const out = tempDir();
    writeFileSync(join(out, 'labels.jsonl'), '{"label": 1}\n');
    const hostTmp = mkdtempSync(join(tmpdir(), 'stepwise-fs-test-'));
    made.push(hostTmp);
    writeFileSync(join(hostTmp, 'other-run.py'), 'secret = 1\n');
    const saved = { HOME: process.env.HOME, STEPWISE_HOME: process.env.STEPWISE_HOME };
    process.env.HOME = home;
    process.env.STEPWISE_HOME = store;
    const own = new Sandbox({ hide: [out], limits: { timeoutMs: 4000, programTimeoutMs: 4000 } });
    try {
      const read = (p: string) =>
        `try:\n    data = open(${py(p)}).read()\nexcept OSError:\n    data = None\nassert data is None, data`;
      const list = (p: string) =>
        `try:\n    names = os.listdir(${py(p)})\nexcept OSError:\n    names = []\nassert names == [], names`;
      const r = await own.run({
        program: 'import os',
        tests: [
          { name: 'ssh key', code: read(join(home, '.ssh', 'id_ed25519')) },
          { name: 'config', code: read(join(home, '.config', 'token')) },
          { name: 'home', code: list(home) },
          { name: 'store', code: read(join(store, 'store.sqlite')) },
          { name: 'store folder', code: list(store) },
          { name: 'output', code: read(join(out, 'labels.jsonl')) },
          { name: 'host tmp', code: read(join(hostTmp, 'other-run.py')) },
          {
            name: 'tmp private',
            code: 'names = os.listdir("/tmp")\nassert all(os.getcwd().startswith(os.path.join("/tmp", n) + "/") for n in names), names',
          },
          {
            name: 'tmp writable',
            code: 'open("/tmp/scratch", "w").write("ok")\nassert open("/tmp/scratch").read() == "ok"',
          },
          {
            name: 'work folder writable',
            code: 'open("here.txt", "w").write("ok")\nassert os.listdir(".") == ["here.txt"]',
          },
          { name: 'shadow', code: read('/etc/shadow').replace('data is None', 'not data') },
        ],
      });
      expect(r.tests.map((t) => `${t.name}: ${t.status}${t.message ? ` ${t.message}` : ''}`)).toEqual(
        r.tests.map((t) => `${t.name}: passed`),
      );
      expect(readFileSync(join(home, '.ssh', 'id_ed25519'), 'utf8')).toBe('PRIVATE KEY\n');
    } finally {
      own.close();
      process.env.HOME = saved.HOME;
      if (saved.STEPWISE_HOME === undefined) delete process.env.STEPWISE_HOME;
      else process.env.STEPWISE_HOME = saved.STEPWISE_HOME;
    }
  });

  it('keeps the interpreter, the standard library and site-packages readable (read-only)', async () => {
    const r = await sandbox.run({
      program: 'import os, sys, sysconfig, json, decimal, sqlite3\npaths = sysconfig.get_paths()',
      tests: [
        { code: 'assert os.listdir(paths["stdlib"])' },
        { code: 'assert os.path.isdir(paths["purelib"]) and os.listdir(paths["purelib"]) is not None' },
        {
          code: 'import subprocess\nassert subprocess.run([sys.executable, "-c", "import json"]).returncode == 0',
        },
        {
          code: 'try:\n    open(os.path.join(paths["stdlib"], "planted.py"), "w")\n    raise AssertionError("stdlib writable")\nexcept OSError:\n    pass',
        },
      ],
    });
    expect(r.tests.map((t) => t.status)).toEqual(['passed', 'passed', 'passed', 'passed']);
  });

  it('refuses to run where the filesystem cannot be confined unless unsafeFilesystem, and says so', async () => {
    const open = new Sandbox({ isolation: 'none' });
    try {
      expect(open.enforcement().filesystem).toBe('unprotected');
      await expect(open.run({ program: 'x = 1', tests: [] })).rejects.toThrow(/--unsafe-filesystem/);
    } finally {
      open.close();
    }
    const unsafe = new Sandbox({ isolation: 'none', unsafeFilesystem: true });
    try {
      const r = await unsafe.run({ program: 'x = 1', tests: [{ code: 'assert x == 1' }] });
      expect(r.passed).toBe(true);
    } finally {
      unsafe.close();
    }
  });

  it('the CLI refuses to run code where bubblewrap is missing and says so; --unsafe-filesystem runs it', () => {
    const root = process.getuid?.() === 0;
    const { prefix: as, repo: reachable } = asNobody();
    const dir = tempDir();
    if (root) chownSync(dir, 65534, 65534);
    let python = resolvePython().executable;
    if (root && spawnSync(as[0], [...as.slice(1), 'sh', '-c', '"$0" -c pass', python]).status !== 0)
      python = '/usr/bin/python3';
    const data = process.env.STEPWISE_DATA ?? join(repo, '../shared/data');
    const run = (extra: string[]) =>
      spawnSync(
        as[0] ?? process.execPath,
        [
          ...as.slice(1),
          ...(root ? [process.execPath] : []),
          join(reachable, 'bin/stepwise.js'),
          'label-code',
          '--dataset',
          'humaneval',
          '--path',
          join(data, 'humaneval/HumanEval.jsonl'),
          '--limit',
          '1',
          '--max-attempts',
          '2',
          '--out',
          join(dir, 'labels.jsonl'),
          '--store',
          join(dir, 'store.sqlite'),
          '--quiet',
          ...extra,
        ],
        {
          cwd: dir,
          encoding: 'utf8',
          timeout: 120_000,
          // No `unshare` on PATH and not root: no way to confine the filesystem.
          env: {
            PATH: join(dir, 'empty-path'),
            HOME: dir,
            STEPWISE_PYTHON: python,
            STEPWISE_QUIET: '1',
            STEPWISE_BWRAP: join(dir, 'no-bwrap-here'),
          },
        },
      );
    const refused = run([]);
    expect(refused.stderr).toMatch(
      /cannot isolate model-written code.*bubblewrap \(bwrap\) is not installed.*refusing to run it.*--unsafe-filesystem/s,
    );
    expect(refused.status).toBe(1);
    const allowed = run(['--unsafe-filesystem', '--json']);
    expect(allowed.stderr).not.toMatch(/refusing/);
    expect(allowed.status).toBe(0);
    expect(JSON.parse(allowed.stdout).sandbox.filesystem).toBe('unprotected');
  });

  it('protects the same way when run by an unprivileged user (a user namespace)', () => {
    const root = process.getuid?.() === 0;
    // As root, become `nobody`; otherwise this process is unprivileged already.
    const { prefix: as, repo: reachable } = asNobody();
    const dir = tempDir();
    const home = join(dir, 'home');
    const target = join(dir, 'target');
    mkdirSync(join(home, '.ssh'), { recursive: true });
    writeFileSync(join(home, '.ssh', 'id_rsa'), 'PRIVATE KEY\n');
    mkdirSync(target);
    writeFileSync(join(target, 'F.txt'), 'precious data\n');
    const script = join(dir, 'attack.mjs');
    writeFileSync(
      script,
      [
        `const { Sandbox } = await import(${py(pathToFileURL(join(reachable, 'dist/verify/code/sandbox.js')).href)});`,
        'const sb = new Sandbox({ concurrency: 2 });',
        `const a = ${JSON.stringify(attacks(join(target, 'F.txt')))};`,
        `const list = 'import os\\ntry:\\n    print(os.listdir(${py(home)}))\\nexcept OSError as e:\\n    print([])';`,
        'const runs = await Promise.all([a.delete, a.overwrite, a.writeNext, list].map((program) => sb.run({ program, tests: [] })));',
        'process.stdout.write(JSON.stringify({ uid: process.getuid(), enforcement: sb.enforcement(), runs }));',
        'sb.close();',
      ].join('\n'),
    );
    if (root)
      for (const p of [
        dir,
        home,
        join(home, '.ssh'),
        join(home, '.ssh', 'id_rsa'),
        target,
        join(target, 'F.txt'),
        script,
      ])
        chownSync(p, 65534, 65534);
    chmodSync(dir, 0o755);
    // The user needs an interpreter it may run: this suite's, else Debian's.
    let python = resolvePython().executable;
    if (root && spawnSync(as[0], [...as.slice(1), 'sh', '-c', '"$0" -c pass', python]).status !== 0)
      python = '/usr/bin/python3';
    const child = spawnSync(
      as[0] ?? process.execPath,
      [...as.slice(1), ...(root ? [process.execPath] : []), script],
      {
        cwd: '/',
        encoding: 'utf8',
        timeout: 120_000,
        env: {
          PATH: process.env.PATH,
          HOME: home,
          STEPWISE_PYTHON: python,
          STEPWISE_HOME: join(dir, 'store'),
        },
      },
    );
    expect(child.stderr).toBe('');
    const out = JSON.parse(child.stdout) as {
      uid: number;
      enforcement: { filesystem: string };
      runs: SandboxResult[];
    };
    expect(out.uid).not.toBe(0);
    expect(out.enforcement.filesystem).toBe('read-only-namespace');
    for (const r of out.runs.slice(0, 3)) {
      expect(r.status).toBe('error');
      expect(r.program.message).toMatch(/Read-only file system|Permission denied|No such file/);
    }
    expect(out.runs[3].stdout.trim()).toBe('[]');
    expect(readdirSync(target)).toEqual(['F.txt']);
    expect(readFileSync(join(target, 'F.txt'), 'utf8')).toBe('precious data\n');
    expect(homedir()).not.toBe(home);
  });
});
