"""stepwise sandbox supervisor: runs one Python program and its tests, one verdict per test.

Read a JSON config on stdin, write one JSON result line on stdout. Started by
src/verify/code/sandbox.ts, usually inside fresh network and PID namespaces (`unshare -n -p -f`),
where this process is PID 1: when it exits, the kernel kills every process the candidate left.

The supervisor forks a *worker* that executes the program and then the tests in order, reporting
each start and end on a pipe. The supervisor enforces each test's wall-clock deadline from
outside (SIGKILL to the worker's process group), reads how a dead worker died (CPU limit,
file-size limit, crash), and starts a fresh worker for the remaining tests, so one hanging or
crashing test does not take the others with it.

Limits inside the worker: RLIMIT_AS (memory), RLIMIT_CPU, RLIMIT_FSIZE (output files),
RLIMIT_CORE = 0, RLIMIT_NPROC when not root (root ignores it); a pids cgroup when the caller
made one; and an audit hook that caps process creation and refuses network calls, so those
failures get a clear status even where the kernel does not enforce them.

Filesystem (when the config has `filesystem`): each worker enters its own mount namespace, sees
everything read-only but its work folder and a private /tmp and /dev/shm, a /dev without disks, finds the hidden
folders (homes, /run, the store, outputs) empty, and drops every capability (confine_filesystem).
"""

import errno
import json
import os
import resource
import select
import signal
import sys
import time

CONFIG = {}
TESTS = []
WORK_DIR = RUN_DIR = TIMEOUT = PROGRAM_TIMEOUT = MEMORY = CPU_SECONDS = MAX_PROCESSES = OUTPUT_BYTES = None


def configure(config):
    """Set the run's limits (module globals: each run is its own forked process)."""
    global CONFIG, TESTS, WORK_DIR, RUN_DIR, TIMEOUT, PROGRAM_TIMEOUT, MEMORY, CPU_SECONDS, MAX_PROCESSES, OUTPUT_BYTES
    CONFIG = config
    TESTS = config["tests"]
    WORK_DIR = config["workDir"]
    # The supervisor's files (captured output, the result) live beside the work folder, out of the candidate's reach.
    RUN_DIR = config.get("runDir") or WORK_DIR
    TIMEOUT = config["timeoutMs"] / 1000.0
    PROGRAM_TIMEOUT = config["programTimeoutMs"] / 1000.0
    MEMORY = config["memoryBytes"]
    CPU_SECONDS = config["cpuSeconds"]
    MAX_PROCESSES = config["maxProcesses"]
    OUTPUT_BYTES = config["outputBytes"]
    os.environ["HOME"] = WORK_DIR
    os.environ["TMPDIR"] = WORK_DIR


MESSAGE_CHARS = 2000
AF_UNIX = 1  # Linux value; local sockets (multiprocessing) stay allowed


def clip(text, limit=MESSAGE_CHARS):
    return text if len(text) <= limit else text[:limit] + "…"


def join_cgroup():
    path = CONFIG.get("cgroup")
    if not path:
        return None
    try:
        with open(os.path.join(path, "cgroup.procs"), "w") as f:
            f.write("0")
        return path
    except OSError as e:
        return "failed: " + str(e)


def count_own_processes():
    uid = os.getuid()
    n = 0
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if os.stat("/proc/" + entry).st_uid == uid:
                    n += 1
            except OSError:
                pass
    return n


# ------------------------------------------------------------------------------------- filesystem

MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 32, 4096, 16384, 1 << 18
MS_NOATIME, MS_NODIRATIME, MS_RELATIME = 1024, 2048, 1 << 21
CLONE_NEWNS = 0x00020000
SYS_MOUNT_SETATTR = 442  # same number on every Linux architecture but alpha
AT_FDCWD, AT_RECURSIVE, MOUNT_ATTR_RDONLY = -100, 0x8000, 0x1
# Directories never hidden, whatever the caller asks: the interpreter and the system need them.
SYSTEM_DIRS = {"/", "/usr", "/etc", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/opt", "/var",
               "/proc", "/sys", "/dev", "/boot", "/nix", "/snap"}


class Confinement(Exception):
    """The filesystem could not be confined (the worker must not run the candidate then)."""


_PREPARED = {}


def prepare_confinement():
    """Load ctypes, look up the C functions and the interpreter's folders once, before forking:
    done per run these cost tens of milliseconds on a loaded machine."""
    if not _PREPARED:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong, ctypes.c_char_p]
        libc.syscall.restype = ctypes.c_long
        for name in ("unshare", "prctl", "capset"):
            getattr(libc, name)
        _PREPARED.update(ctypes=ctypes, libc=libc, keep=_outermost(interpreter_paths()))
    return _PREPARED


def _check(ret, what):
    if ret != 0:
        import ctypes

        err = ctypes.get_errno()
        raise Confinement("%s: %s" % (what, os.strerror(err)))


def _mount(libc, source, target, fstype, flags, data=None):
    enc = lambda x: None if x is None else x.encode()  # noqa: E731
    _check(libc.mount(enc(source), enc(target), enc(fstype), flags, enc(data)), "mount %s" % target)


def _under(path, root):
    return path == root or path.startswith(root.rstrip("/") + "/")


def _outermost(paths):
    """The paths that have no ancestor in the list (sorted)."""
    out = []
    for p in sorted(set(paths)):
        if not any(_under(p, q) for q in out):
            out.append(p)
    return out


def interpreter_paths():
    """What the candidate's imports need: the interpreter, its prefixes and every import folder."""
    script_dir = os.path.dirname(os.path.realpath(__file__))
    paths = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix,
             os.path.dirname(os.path.realpath(sys.executable))}
    paths.update(p for p in sys.path if p)
    real = set()
    for p in paths:
        p = os.path.realpath(p)
        if os.path.isdir(p) and p != script_dir:
            real.add(p)
        elif os.path.isfile(p):  # a zip on sys.path
            real.add(os.path.dirname(p))
    return sorted(real)


def _set_readonly(ctypes, libc, path, recursive, readonly=True):
    """mount_setattr: (un)set read-only on the mount at path (recursively: every mount below too)."""
    attr = (ctypes.c_uint64 * 4)(MOUNT_ATTR_RDONLY if readonly else 0, 0 if readonly else MOUNT_ATTR_RDONLY, 0, 0)
    flags = AT_RECURSIVE if recursive else 0
    ret = libc.syscall(SYS_MOUNT_SETATTR, AT_FDCWD, path.encode(), flags, ctypes.byref(attr), ctypes.sizeof(attr))
    if ret == 0:
        return
    err = ctypes.get_errno()
    if err != errno.ENOSYS or not recursive:
        raise Confinement("mount_setattr %s: %s" % (path, os.strerror(err)))
    # Kernels before 5.12: remount each mount read-only, keeping the flags it has (a user namespace
    # may not drop nosuid/nodev/noexec).
    with open("/proc/self/mountinfo") as f:
        mounts = [line.split() for line in f]
    names = {"nosuid": MS_NOSUID, "nodev": MS_NODEV, "noexec": MS_NOEXEC, "noatime": MS_NOATIME,
             "nodiratime": MS_NODIRATIME, "relatime": MS_RELATIME}
    for fields in mounts:
        point = fields[4].replace("\\040", " ")
        if not _under(point, path):
            continue
        flags = MS_REMOUNT | MS_BIND | MS_RDONLY
        for option in fields[5].split(","):
            flags |= names.get(option, 0)
        _mount(libc, None, point, None, flags)


def drop_privileges(ctypes, libc):
    """No capabilities left, none to gain by exec: the candidate cannot undo the mounts."""
    for cap in range(64):
        if libc.prctl(24, cap, 0, 0, 0) != 0:  # PR_CAPBSET_DROP; EINVAL past the last capability
            break
    libc.prctl(47, 4, 0, 0, 0)  # PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL
    _check(libc.prctl(38, 1, 0, 0, 0), "no_new_privs")  # PR_SET_NO_NEW_PRIVS
    header = (ctypes.c_uint32 * 2)(0x20080522, 0)  # _LINUX_CAPABILITY_VERSION_3, this process
    data = (ctypes.c_uint32 * 6)()
    _check(libc.capset(ctypes.byref(header), ctypes.byref(data)), "capset")
    libc.prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE 0: other candidates cannot ptrace this one


# The devices a program may need; the rest (disks, consoles, the kernel log) stay out of sight.
DEV_NODES = ["null", "zero", "full", "random", "urandom", "tty"]


def minimal_dev(libc, tmp_size):
    """A fresh /dev holding only DEV_NODES, a private /dev/shm and the usual links. A read-only
    mount does not stop writes to a device, so a candidate running as root could otherwise open
    /dev/sda and overwrite the disk, or read every hidden file off it."""
    nodes = [(n, os.open("/dev/" + n, os.O_PATH)) for n in DEV_NODES if os.path.exists("/dev/" + n)]
    _mount(libc, "tmpfs", "/dev", "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "mode=0755,size=64k")
    for name, fd in nodes:
        target = "/dev/" + name
        os.close(os.open(target, os.O_WRONLY | os.O_CREAT, 0o644))
        _mount(libc, "/proc/self/fd/%d" % fd, target, None, MS_BIND)
        os.close(fd)
    for name, dest in [("fd", "/proc/self/fd"), ("stdin", "/proc/self/fd/0"), ("stdout", "/proc/self/fd/1"),
                       ("stderr", "/proc/self/fd/2")]:
        os.symlink(dest, "/dev/" + name)
    os.mkdir("/dev/shm")
    _mount(libc, "tmpfs", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777," + tmp_size)


def confine_filesystem(spec, work_dir):
    """Give this process (the worker) its own view of the filesystem, then drop every capability.

    Everything is read-only except `work_dir` and fresh, private /tmp and /dev/shm; `spec["hide"]`
    folders (home folders, the store, the caller's outputs, /run) are replaced by empty ones. The
    interpreter's own folders stay readable where they lie inside a hidden folder; the folders
    leading to them are then traversable but not listable. Runs in the mount namespace the server
    entered (`unshare -m`); each worker takes its own copy, so runs do not see each other.
    """
    prepared = prepare_confinement()
    ctypes, libc = prepared["ctypes"], prepared["libc"]
    _check(libc.unshare(CLONE_NEWNS), "unshare(CLONE_NEWNS)")
    _mount(libc, None, "/", None, MS_REC | MS_PRIVATE)
    wanted = [os.path.realpath(p) for p in spec.get("hide", [])]
    hide = [p for p in wanted if p not in SYSTEM_DIRS and os.path.isdir(p)]
    hide_files = [p for p in wanted if os.path.isfile(p)]
    keep = prepared["keep"]
    tmp_size = "size=%dm" % max(16, int(spec.get("tmpMb", 256)))
    work_dir = os.path.realpath(work_dir)
    # Open what is put back before covering it: a bind from the open folder reaches it underneath.
    restore = [(k, os.open(k, os.O_RDONLY | os.O_DIRECTORY)) for k in keep
               if any(_under(k, h) for h in hide) and not _under(k, work_dir)]
    work_fd = os.open(work_dir, os.O_RDONLY | os.O_DIRECTORY)
    outer = _outermost(hide + ["/tmp"])
    made = []  # folders created inside hiding tmpfs mounts, to close for listing afterwards
    for h in outer:
        if h == "/tmp":
            _mount(libc, "tmpfs", h, "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777," + tmp_size)
        else:
            _mount(libc, "tmpfs", h, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=64k")

    def make_parents(path):
        parent = os.path.dirname(path)
        chain = []
        while not os.path.isdir(parent):
            chain.append(parent)
            parent = os.path.dirname(parent)
        for p in reversed(chain):
            os.mkdir(p, 0o755)
            made.append(p)
        if parent in outer or parent in made:
            made.append(parent)
        if not os.path.isdir(path):
            os.mkdir(path, 0o755)

    for path, fd in restore:
        make_parents(path)
        _mount(libc, "/proc/self/fd/%d" % fd, path, None, MS_BIND | MS_REC)
        os.close(fd)
    # Hidden folders that a restored one brought back (e.g. a store inside the interpreter's prefix).
    for h in hide:
        if h not in outer and any(_under(h, k) for k, _ in restore) and os.path.isdir(h):
            _mount(libc, "tmpfs", h, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=64k")
    for f in hide_files:
        if os.path.isfile(f):  # not inside a folder hidden already
            _mount(libc, "/dev/null", f, None, MS_BIND)
    if os.path.isdir("/dev"):
        minimal_dev(libc, tmp_size)
    make_parents(work_dir)
    _mount(libc, "/proc/self/fd/%d" % work_fd, work_dir, None, MS_BIND)
    os.close(work_fd)
    for p in set(made):
        if p != "/tmp":
            os.chmod(p, 0o111)
    _set_readonly(ctypes, libc, "/", recursive=True)
    for writable in ["/tmp", "/dev/shm", work_dir]:
        if os.path.isdir(writable):
            _set_readonly(ctypes, libc, writable, recursive=False, readonly=False)
    drop_privileges(ctypes, libc)


# ----------------------------------------------------------------------------------------- worker


def close_descriptors(keep):
    """Close every open descriptor but `keep` (listed in /proc: a range up to the limit can be a
    million close calls on Pythons before 3.10)."""
    try:
        fds = [int(name) for name in os.listdir("/proc/self/fd")]
    except OSError:
        fds = range(min(resource.getrlimit(resource.RLIMIT_NOFILE)[0], 1 << 16))
    for fd in fds:
        if fd not in keep:
            try:
                os.close(fd)
            except OSError:
                pass


def run_worker(first_test, report_fd, out_path, err_path):
    """Runs in the forked child. Never returns: ends with os._exit."""
    os.setpgid(0, 0)
    if CONFIG.get("parentDeathSignal"):
        try:
            import ctypes

            ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
        except Exception:
            pass
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.dup2(os.open(out_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), 1)
    os.dup2(os.open(err_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), 2)
    # A descriptor inherited from whoever started stepwise (`40>>file` in bash) would let the
    # candidate write past the read-only view: keep only stdio and the report pipe.
    close_descriptors(keep={0, 1, 2, report_fd})
    if CONFIG.get("filesystem"):
        try:
            confine_filesystem(CONFIG["filesystem"], WORK_DIR)
        except (Confinement, OSError) as e:
            # Never run the candidate with the filesystem open when it was meant to be confined.
            message = "sandbox: cannot make the filesystem read-only: %s" % e
            os.write(report_fd, (json.dumps({"event": "start", "test": -1}) + "\n").encode())
            os.write(report_fd, (json.dumps({"event": "end", "test": -1, "status": "error", "message": message,
                                             "durationMs": 0, "forked": False}) + "\n").encode())
            os._exit(0)
    os.chdir(WORK_DIR)

    def limit(which, value, hard=None):
        try:
            resource.setrlimit(which, (value, value if hard is None else hard))
        except (ValueError, OSError):
            pass

    limit(resource.RLIMIT_CORE, 0)
    limit(resource.RLIMIT_FSIZE, OUTPUT_BYTES)
    limit(resource.RLIMIT_CPU, CPU_SECONDS, CPU_SECONDS + 1)
    if CONFIG.get("nprocRlimit"):
        limit(resource.RLIMIT_NPROC, count_own_processes() + MAX_PROCESSES)

    worker_pid = os.getpid()
    state = {"forks": 0, "fork_denied": False, "fork_seen": False, "network": False, "noted": set()}

    def send(message):
        os.write(report_fd, (json.dumps(message) + "\n").encode())

    def note(kind):
        # Tell the supervisor at once, so a test that then hangs still gets the clear status.
        if kind not in state["noted"]:
            state["noted"].add(kind)
            try:
                send({"event": "note", "kind": kind})
            except OSError:
                pass

    def deny_fork():
        state["fork_denied"] = True
        note("fork-limit")

    def audit(event, args):
        if event in ("os.fork", "os.forkpty", "os.posix_spawn", "os.spawn", "os.system", "subprocess.Popen"):
            state["fork_seen"] = True
            if os.getpid() != worker_pid:
                # Children may not create processes: bounds the total without shared state.
                deny_fork()
                raise BlockingIOError(errno.EAGAIN, "sandbox: child processes may not start processes")
            state["forks"] += 1
            if state["forks"] > MAX_PROCESSES:
                deny_fork()
                raise BlockingIOError(errno.EAGAIN, "sandbox: process limit reached (%d)" % MAX_PROCESSES)
        elif event == "os.exec" and os.getpid() == worker_pid:
            raise PermissionError(errno.EPERM, "sandbox: replacing the test process is not allowed")
        elif event in ("socket.connect", "socket.bind", "socket.sendto", "socket.sendmsg"):
            if getattr(args[0], "family", None) != AF_UNIX:
                state["network"] = True
                note("network-blocked")
                raise PermissionError(errno.EACCES, "sandbox: network access is blocked")
        elif event in ("socket.getaddrinfo", "socket.gethostbyname", "socket.gethostbyaddr"):
            state["network"] = True
            note("network-blocked")
            raise PermissionError(errno.EACCES, "sandbox: network access is blocked")

    sys.addaudithook(audit)
    # The memory cap comes last: the hook above and the imports it needs are already in place.
    limit(resource.RLIMIT_AS, MEMORY)

    import builtins
    import traceback

    namespace = {"__name__": "__candidate__", "__builtins__": builtins}

    def classify(exc):
        if isinstance(exc, MemoryError):
            return "memory"
        if state["fork_denied"] or (
            isinstance(exc, OSError) and exc.errno == errno.EAGAIN and state["fork_seen"]
        ):
            return "fork-limit"
        if state["network"]:
            return "network-blocked"
        if isinstance(exc, AssertionError):
            return "failed"
        if isinstance(exc, OSError) and exc.errno == errno.EFBIG:
            return "output-limit"
        return "error"

    def describe(exc):
        if isinstance(exc, MemoryError):
            return "MemoryError (memory cap %d MB)" % (MEMORY // (1 << 20))
        if isinstance(exc, AssertionError):
            detail = str(exc)
            return "AssertionError" + (": " + detail if detail else "")
        lines = traceback.format_exception_only(type(exc), exc)
        return "".join(lines).strip()

    def run(label, source, filename):
        state["fork_seen"] = False
        state["fork_denied"] = False
        state["network"] = False
        state["noted"] = set()
        start = time.perf_counter()
        status, message = "passed", None
        try:
            exec(compile(source, filename, "exec"), namespace)
        except BaseException as exc:  # noqa: B902 — SystemExit and KeyboardInterrupt are verdicts too
            if os.getpid() != worker_pid:
                os._exit(0)
            try:
                status, message = classify(exc), clip(describe(exc))
            except MemoryError:
                status, message = "memory", "MemoryError"
        # The candidate's prints sit in Python's buffers: the worker ends with os._exit, which drops them.
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except BaseException:  # noqa: B902 — a closed or replaced stream; the output limit kills us here
                pass
        if os.getpid() != worker_pid:
            # A forked child that ran off the end of the test: it has nothing to report.
            os._exit(0)
        elapsed = (time.perf_counter() - start) * 1000.0
        return {"event": "end", "test": label, "status": status, "message": message,
                "durationMs": elapsed, "forked": state["forks"] > 0}

    try:
        # Every worker runs the program first: the tests need the names it defines.
        send({"event": "start", "test": -1})
        result = run(-1, CONFIG.get("program", ""), "<candidate>")
        send(result)
        if result["status"] != "passed":
            os._exit(0)
        for i in range(first_test, len(TESTS)):
            send({"event": "start", "test": i})
            result = run(i, TESTS[i]["code"], "<test %d>" % i)
            send(result)
            if result["status"] != "passed" and CONFIG.get("failFast"):
                send({"event": "yield"})
                os._exit(0)
            if result["forked"] and i + 1 < len(TESTS):
                # Start the next test in a clean process group: the supervisor kills strays.
                send({"event": "yield"})
                os._exit(0)
    except BaseException:
        pass
    os._exit(0)


# ------------------------------------------------------------------------------------- supervisor

def death_status(wait_status, was_killed_for_time):
    if was_killed_for_time:
        return None
    if os.WIFSIGNALED(wait_status):
        sig = os.WTERMSIG(wait_status)
        if sig == signal.SIGXCPU:
            return ("timeout", "CPU time limit (%d s) exceeded" % CPU_SECONDS)
        if sig == signal.SIGXFSZ:
            return ("output-limit", "output limit (%d bytes) exceeded" % OUTPUT_BYTES)
        if sig == signal.SIGKILL:
            return ("timeout", "killed (SIGKILL): CPU time hard limit or out of memory")
        try:
            name = signal.Signals(sig).name
        except ValueError:
            name = str(sig)
        return ("error", "crashed with signal " + name)
    code = os.WEXITSTATUS(wait_status) if os.WIFEXITED(wait_status) else -1
    return ("error", "process exited (code %d) before the test finished" % code)


def cgroup_refusals(cgroup):
    """How often the kernel refused a fork in our pids cgroup (`max` in pids.events)."""
    if not cgroup or cgroup.startswith("failed"):
        return 0
    try:
        with open(os.path.join(cgroup, "pids.events")) as f:
            for line in f:
                key, _, value = line.partition(" ")
                if key == "max":
                    return int(value)
    except (OSError, ValueError):
        pass
    return 0


def kill_group(pid):
    try:
        os.killpg(pid, signal.SIGKILL)
    except OSError:
        pass
    try:
        os.kill(pid, signal.SIGKILL)
    except OSError:
        pass


def read_head(path, limit):
    try:
        with open(path, "rb") as f:
            data = f.read(limit + 1)
        return data[:limit].decode("utf-8", "replace"), len(data) > limit
    except OSError:
        return "", False


def supervise():
    cgroup = join_cgroup()
    results = [None] * len(TESTS)
    program = None
    next_test = 0
    workers = 0
    stdout_parts, stderr_parts = [], []
    truncated = False
    keep = CONFIG.get("captureBytes", 65536)

    def stopped():
        return CONFIG.get("failFast") and any(r is not None and r["status"] != "passed" for r in results)

    while program is None or (program_ok(program) and next_test < len(TESTS) and not stopped()):
        out_path = os.path.join(RUN_DIR, ".stdout-%d" % workers)
        err_path = os.path.join(RUN_DIR, ".stderr-%d" % workers)
        read_fd, write_fd = os.pipe()
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            os.close(read_fd)
            try:
                run_worker(next_test, write_fd, out_path, err_path)
            finally:
                os._exit(0)
        workers += 1
        os.close(write_fd)
        current = None  # test index in progress (-1 = program)
        deadline = None
        buffer = b""
        timed_out = False
        yielded = False
        notes = set()
        kernel_refusals = cgroup_refusals(cgroup)
        worker_status = None
        drained = 0
        while True:
            remaining = None if deadline is None else deadline - time.monotonic()
            if remaining is not None and remaining <= 0:
                timed_out = True
                break
            if worker_status is not None:
                wait = 0.0
            else:
                wait = 0.1 if remaining is None else min(remaining, 0.1)
            ready, _, _ = select.select([read_fd], [], [], wait)
            if not ready:
                if worker_status is not None:
                    break
                done, status = os.waitpid(pid, os.WNOHANG)
                if done == pid:
                    # The worker is gone and what it wrote is in the pipe; a process it left behind
                    # may hold the pipe open, so drain what is there instead of waiting for the end.
                    worker_status = status
                continue
            chunk = os.read(read_fd, 65536)
            if not chunk:
                break
            if worker_status is not None:
                drained += 1
                if drained > 64:
                    break
            buffer += chunk
            while b"\n" in buffer:
                line, buffer = buffer.split(b"\n", 1)
                try:
                    message = json.loads(line)
                except ValueError:
                    continue
                if not isinstance(message, dict):
                    continue
                index = message.get("test")
                if message.get("event") == "yield":
                    yielded = True
                elif message.get("event") == "note":
                    notes.add(message.get("kind"))
                elif message.get("event") == "start" and isinstance(index, int):
                    current = index
                    notes = set()
                    kernel_refusals = cgroup_refusals(cgroup)
                    deadline = time.monotonic() + (PROGRAM_TIMEOUT if index == -1 else TIMEOUT)
                elif message.get("event") == "end" and index == current:
                    verdict = {k: message.get(k) for k in ("status", "message", "durationMs")}
                    if index == -1:
                        program = verdict
                    else:
                        results[index] = verdict
                        next_test = index + 1
                    current, deadline = None, None
        kill_group(pid)
        if worker_status is None:
            _, wait_status = os.waitpid(pid, 0)
        else:
            wait_status = worker_status
        os.close(read_fd)
        if current is not None:
            if timed_out:
                limit_ms = (PROGRAM_TIMEOUT if current == -1 else TIMEOUT) * 1000.0
                verdict = {"status": "timeout", "message": "wall-clock limit (%d ms) exceeded" % limit_ms,
                           "durationMs": limit_ms}
            else:
                status, message = death_status(wait_status, False)
                verdict = {"status": status, "message": message, "durationMs": None}
            if "fork-limit" in notes or cgroup_refusals(cgroup) > kernel_refusals:
                verdict = {"status": "fork-limit", "durationMs": verdict["durationMs"],
                           "message": "process cap (%d) reached, then: %s" % (MAX_PROCESSES, verdict["message"])}
            elif "network-blocked" in notes:
                verdict = {"status": "network-blocked", "durationMs": verdict["durationMs"],
                           "message": "network access blocked, then: %s" % verdict["message"]}
            if current == -1:
                program = verdict
            else:
                results[current] = verdict
                next_test = current + 1
        elif program is not None and program_ok(program) and next_test < len(TESTS) and not (timed_out or yielded):
            # The worker ended between tests without a report: count it against the next test.
            status, message = death_status(wait_status, False)
            results[next_test] = {"status": status, "message": message, "durationMs": None}
            next_test += 1
        if program is None:
            status, message = death_status(wait_status, False)
            program = {"status": status, "message": message, "durationMs": None}
        out, cut_out = read_head(out_path, keep)
        err, cut_err = read_head(err_path, keep)
        stdout_parts.append(out)
        stderr_parts.append(err)
        truncated = truncated or cut_out or cut_err

    if not program_ok(program):
        for i in range(len(TESTS)):
            if results[i] is None:
                results[i] = {"status": program["status"], "message": "program failed: " + (program["message"] or ""),
                              "durationMs": None}
    for i in range(len(TESTS)):
        if results[i] is None:
            results[i] = {"status": "not-run", "message": None, "durationMs": None}
    kill_descendants()
    return {
        "program": program,
        "tests": results,
        "stdout": "".join(stdout_parts)[:keep],
        "stderr": "".join(stderr_parts)[:keep],
        "outputTruncated": truncated,
        "workers": workers,
        "cgroup": cgroup,
    }


def kill_descendants():
    """Kill what the candidate left behind, including processes that left the worker's group.

    The supervisor is a child subreaper, so orphans are re-parented to it: kill and reap our
    children until none are left. Needs a /proc that shows our own PID namespace.
    """
    try:
        if int(os.readlink("/proc/self")) != os.getpid():
            return
    except (OSError, ValueError):
        return
    me = os.getpid()
    for _ in range(50):
        found = False
        for entry in os.listdir("/proc"):
            if not entry.isdigit() or int(entry) == me:
                continue
            try:
                with open("/proc/%s/stat" % entry) as f:
                    stat = f.read()
                ppid = int(stat[stat.rindex(")") + 2:].split()[1])
            except (OSError, ValueError, IndexError):
                continue
            if ppid == me:
                found = True
                try:
                    os.kill(int(entry), signal.SIGKILL)
                except OSError:
                    pass
        while True:
            try:
                pid, _ = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break
        if not found:
            return
        time.sleep(0.005)


def become_subreaper():
    try:
        import ctypes

        ctypes.CDLL(None).prctl(36, 1)  # PR_SET_CHILD_SUBREAPER
    except Exception:
        pass


def program_ok(program):
    return program is None or program["status"] == "passed"


# ------------------------------------------------------------------------------------------ server


def serve():
    """Long-lived mode: one request per stdin line (`{"id", "config"}` or `{"kill": id}`).

    Each request is run by a forked supervisor (a warm fork costs milliseconds, where a fresh
    interpreter in fresh namespaces costs ~100 ms). The supervisor writes its outcome to
    `<workDir>/.result.json`; this process prints `{"id", "exit"}` when it has ended.
    """
    import builtins  # noqa: F401 — warm the imports every worker needs
    import traceback  # noqa: F401

    try:
        prepare_confinement()
    except Exception:
        pass  # reported by the run that needs it
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    os.set_blocking(wake_r, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    running = {}  # supervisor pid -> request id
    by_id = {}
    pending = b""
    stdin_open = True

    def reap():
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            rid = running.pop(pid, None)
            if rid is not None:
                by_id.pop(rid, None)
                code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else -os.WTERMSIG(status)
                os.write(1, (json.dumps({"id": rid, "exit": code}) + "\n").encode())

    while stdin_open or running:
        try:
            ready, _, _ = select.select([0, wake_r] if stdin_open else [wake_r], [], [], 1.0)
        except InterruptedError:
            ready = []
        if wake_r in ready:
            try:
                while os.read(wake_r, 4096):
                    pass
            except BlockingIOError:
                pass
        reap()
        if 0 not in ready:
            continue
        data = os.read(0, 1 << 20)
        if not data:
            stdin_open = False
            for pid in list(running):
                kill_group(pid)
            continue
        pending += data
        while b"\n" in pending:
            line, pending = pending.split(b"\n", 1)
            if not line.strip():
                continue
            request = json.loads(line)
            if "kill" in request:
                pid = by_id.get(request["kill"])
                if pid is not None:
                    kill_group(pid)
                continue
            sys.stdout.flush()
            pid = os.fork()
            if pid == 0:
                try:
                    signal.set_wakeup_fd(-1)
                    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
                    os.close(wake_r)
                    os.close(wake_w)
                    os.setpgid(0, 0)
                    null = os.open(os.devnull, os.O_RDWR)
                    os.dup2(null, 0)
                    os.dup2(null, 1)
                    become_subreaper()
                    configure(request["config"])
                    outcome = supervise()
                    path = os.path.join(RUN_DIR, ".result.json")
                    with open(path + ".tmp", "w") as f:
                        json.dump(outcome, f)
                    os.rename(path + ".tmp", path)
                    os._exit(0)
                except BaseException:
                    os._exit(70)
            running[pid] = request["id"]
            by_id[request["id"]] = pid


def probe_filesystem():
    """Try the confinement in a child and check that it holds, without writing outside; print `{"ok", "error"}`."""
    import shutil
    import tempfile

    run_dir = tempfile.mkdtemp(prefix="stepwise-sbx-probe-")
    work_dir = os.path.join(run_dir, "work")
    os.mkdir(work_dir)
    marker = os.path.join(run_dir, "hidden")
    open(marker, "w").close()
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read_fd)
        error = None
        try:
            confine_filesystem({"hide": [run_dir]}, work_dir)
            with open(os.path.join(work_dir, "inside"), "w") as f:
                f.write("x")
            with open("/proc/self/status") as f:
                caps = [line.split()[1] for line in f if line.startswith("CapEff:")]
            if not os.statvfs("/").f_flag & os.ST_RDONLY:
                error = "/ is still writable"
            elif os.statvfs(work_dir).f_flag & os.ST_RDONLY:
                error = "the work folder is read-only"
            elif os.path.exists(marker):
                error = "a hidden folder is still visible"
            elif not caps or int(caps[0], 16) != 0:
                error = "capabilities were not dropped"
        except BaseException as e:  # noqa: B902
            error = str(e) or type(e).__name__
        os.write(write_fd, json.dumps({"ok": error is None, "error": error}).encode())
        os._exit(0)
    os.close(write_fd)
    data = b""
    while True:
        chunk = os.read(read_fd, 4096)
        if not chunk:
            break
        data += chunk
    os.waitpid(pid, 0)
    shutil.rmtree(run_dir, ignore_errors=True)
    try:
        result = json.loads(data.decode())
    except ValueError:
        result = {"ok": False, "error": "the probe died"}
    sys.stdout.write(json.dumps(result) + "\n")


if __name__ == "__main__":
    if "--serve" in sys.argv:
        serve()
    elif "--probe-filesystem" in sys.argv:
        probe_filesystem()
    else:
        configure(json.loads(sys.stdin.read()))
        become_subreaper()
        sys.stdout.write(json.dumps(supervise()) + "\n")
