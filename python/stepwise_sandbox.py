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
WORK_DIR = TIMEOUT = PROGRAM_TIMEOUT = MEMORY = CPU_SECONDS = MAX_PROCESSES = OUTPUT_BYTES = None


def configure(config):
    """Set the run's limits (module globals: each run is its own forked process)."""
    global CONFIG, TESTS, WORK_DIR, TIMEOUT, PROGRAM_TIMEOUT, MEMORY, CPU_SECONDS, MAX_PROCESSES, OUTPUT_BYTES
    CONFIG = config
    TESTS = config["tests"]
    WORK_DIR = config["workDir"]
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


# ----------------------------------------------------------------------------------------- worker


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
        out_path = os.path.join(WORK_DIR, ".stdout-%d" % workers)
        err_path = os.path.join(WORK_DIR, ".stderr-%d" % workers)
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
        import ctypes  # noqa: F401
    except Exception:
        pass
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
                    path = os.path.join(WORK_DIR, ".result.json")
                    with open(path + ".tmp", "w") as f:
                        json.dump(outcome, f)
                    os.rename(path + ".tmp", path)
                    os._exit(0)
                except BaseException:
                    os._exit(70)
            running[pid] = request["id"]
            by_id[request["id"]] = pid


if __name__ == "__main__":
    if "--serve" in sys.argv:
        serve()
    else:
        configure(json.loads(sys.stdin.read()))
        become_subreaper()
        sys.stdout.write(json.dumps(supervise()) + "\n")
