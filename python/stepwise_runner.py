"""stepwise sandbox runner: the untrusted side of a run, inside bubblewrap.

Started by the supervisor (python/stepwise_sandbox.py) as `python -I -S -B -c <this file>` in a
fresh bubblewrap sandbox. Reads the run's work from descriptor 3 (the program, then per test
either the test's code or the expressions whose values the test compares), reports on
descriptor 4 one JSON line per event, and never decides a verdict that counts: for tests of
kind `values` it only sends the serialized plain value of each expression, and the trusted
supervisor, which alone holds the expected values, compares them. Everything here runs in the
same process as the candidate, so the candidate can change any of it; the design does not rely
on it behaving.
"""

import errno
import json
import os
import resource
import sys
import time

CONFIG_FD, REPORT_FD = 3, 4
AF_UNIX = 1  # Linux value; local sockets (multiprocessing) stay allowed
MESSAGE_CHARS = 2000
# Bounds of one serialized value (a candidate could return a list of a billion items).
VALUE_NODES, VALUE_CHARS, VALUE_DEPTH = 200_000, 4_000_000, 100


def read_config():
    chunks = []
    while True:
        chunk = os.read(CONFIG_FD, 1 << 20)
        if not chunk:
            break
        chunks.append(chunk)
    os.close(CONFIG_FD)
    return json.loads(b"".join(chunks).decode("utf-8"))


def close_descriptors(keep):
    """Close every descriptor but `keep`: bubblewrap leaves the ones it was handed open, and a
    descriptor of a folder outside the sandbox would lead out of its mount view."""
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


def clip(text, limit=MESSAGE_CHARS):
    return text if len(text) <= limit else text[:limit] + "…"


class NotPlain(Exception):
    pass


def encode(value):
    """A plain value (None, bool, int, float, complex, str, bytes, list, tuple, set, frozenset,
    dict of those; numbers and strings of exact types) as JSON-ready tagged lists. Anything else
    raises NotPlain: an object with its own __eq__ never reaches the comparison."""
    budget = [VALUE_NODES, VALUE_CHARS]

    def enc(v, depth):
        budget[0] -= 1
        if budget[0] < 0 or depth > VALUE_DEPTH:
            raise NotPlain("value too large (more than %d items or %d levels)" % (VALUE_NODES, VALUE_DEPTH))
        t = type(v)
        if v is None:
            return ["n"]
        if t is bool:
            return ["b", v]
        if t is int:
            s = str(v) if -(10 ** 18) < v < 10 ** 18 else format(v, "x")
            budget[1] -= len(s)
            return ["i", s] if -(10 ** 18) < v < 10 ** 18 else ["I", s]
        if t is float:
            return ["f", repr(v)]
        if t is complex:
            return ["c", repr(v.real), repr(v.imag)]
        if t is str:
            budget[1] -= len(v)
            if budget[1] < 0:
                raise NotPlain("value too large (more than %d characters)" % VALUE_CHARS)
            return ["s", v]
        if t is bytes:
            budget[1] -= 2 * len(v)
            if budget[1] < 0:
                raise NotPlain("value too large (more than %d characters)" % VALUE_CHARS)
            return ["y", v.hex()]
        if t is list or t is tuple or t is set or t is frozenset:
            tag = {list: "l", tuple: "t", set: "S", frozenset: "F"}[t]
            return [tag, [enc(x, depth + 1) for x in v]]
        if t is dict:
            return ["d", [[enc(k, depth + 1), enc(x, depth + 1)] for k, x in v.items()]]
        # Containers of the standard library (Counter, defaultdict, OrderedDict, namedtuples) and
        # other subclasses go as their base type, read through the base type's own methods: what
        # is compared is then a plain dict, tuple or list, whatever the subclass says of itself.
        if isinstance(v, dict):
            return ["d", [[enc(k, depth + 1), enc(x, depth + 1)] for k, x in dict.items(v)]]
        if isinstance(v, tuple):
            return ["t", [enc(x, depth + 1) for x in tuple.__iter__(v)]]
        if isinstance(v, list):
            return ["l", [enc(x, depth + 1) for x in list.__iter__(v)]]
        raise NotPlain("returned a %s, not plain data" % getattr(t, "__qualname__", "object"))

    return enc(value, 0)


def main():
    config = read_config()
    close_descriptors(keep={0, 1, 2, REPORT_FD})
    tests = config["tests"]
    first_test = config["firstTest"]
    max_processes = config["maxProcesses"]
    memory = config["memoryBytes"]

    def limit(which, value, hard=None):
        try:
            resource.setrlimit(which, (value, value if hard is None else hard))
        except (ValueError, OSError):
            pass

    limit(resource.RLIMIT_CORE, 0)
    limit(resource.RLIMIT_FSIZE, config["outputBytes"])
    limit(resource.RLIMIT_CPU, config["cpuSeconds"], config["cpuSeconds"] + 1)
    if config.get("nprocRlimit"):
        # This run's user id is its own: RLIMIT_NPROC counts exactly this run's processes
        # (the two of bubblewrap and this one are already running).
        limit(resource.RLIMIT_NPROC, max_processes + 3)

    worker_pid = os.getpid()
    state = {"forks": 0, "fork_denied": False, "fork_seen": False, "network": False, "noted": set()}

    def send(message):
        os.write(REPORT_FD, (json.dumps(message) + "\n").encode())

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
                deny_fork()
                raise BlockingIOError(errno.EAGAIN, "sandbox: child processes may not start processes")
            state["forks"] += 1
            if state["forks"] > max_processes:
                deny_fork()
                raise BlockingIOError(errno.EAGAIN, "sandbox: process limit reached (%d)" % max_processes)
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

    # Where site-packages live (the interpreter starts with -S: site.py costs more than the run).
    for path in config.get("sysPath", []):
        if path not in sys.path:
            sys.path.append(path)
    import builtins

    sys.addaudithook(audit)
    # The memory cap comes last: the hook above and the imports it needs are already in place.
    limit(resource.RLIMIT_AS, memory)

    namespace = {"__name__": "__candidate__", "__builtins__": builtins}
    # Our own references, taken before the candidate can replace the builtins (it can still
    # reach them; a forged value is only a value, and the comparison is elsewhere).
    run_exec, run_eval, run_compile = exec, eval, compile

    def classify(exc):
        if isinstance(exc, MemoryError):
            return "memory"
        if state["fork_denied"] or (isinstance(exc, OSError) and exc.errno == errno.EAGAIN and state["fork_seen"]):
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
            return "MemoryError (memory cap %d MB)" % (memory // (1 << 20))
        if isinstance(exc, AssertionError):
            detail = str(exc)
            return "AssertionError" + (": " + detail if detail else "")
        import traceback  # only when there is an exception to describe: it costs milliseconds to import

        return "".join(traceback.format_exception_only(type(exc), exc)).strip()

    def flush():
        # The candidate's prints sit in Python's buffers: the worker ends with os._exit, which drops them.
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except BaseException:  # noqa: B902 — a closed or replaced stream; the output limit kills us here
                pass

    def attempt(label, action):
        state.update(fork_seen=False, fork_denied=False, network=False, noted=set())
        start = time.perf_counter()
        status, message = "passed", None
        try:
            action()
        except BaseException as exc:  # noqa: B902 — SystemExit and KeyboardInterrupt are verdicts too
            if os.getpid() != worker_pid:
                os._exit(0)
            try:
                status, message = classify(exc), clip(describe(exc))
            except MemoryError:
                status, message = "memory", "MemoryError"
        flush()
        if os.getpid() != worker_pid:
            os._exit(0)  # a forked child that ran off the end of the test has nothing to report
        return {"event": "end", "test": label, "status": status, "message": message,
                "durationMs": (time.perf_counter() - start) * 1000.0, "forked": state["forks"] > 0}

    def run_values(i, test):
        """Evaluate each expression the test compares and send its value; the comparison is not here."""
        run_exec(run_compile(test.get("setup", ""), "<test %d setup>" % i, "exec"), namespace)
        scope = dict(namespace)
        for name, source in test.get("bind", []):
            scope[name] = run_eval(run_compile(source, "<test %d>" % i, "eval"), namespace)
        for j, source in enumerate(test["actuals"]):
            value = run_eval(run_compile(source, "<test %d>" % i, "eval"), scope)
            try:
                payload = {"event": "value", "test": i, "check": j, "value": encode(value)}
            except NotPlain as e:
                payload = {"event": "value", "test": i, "check": j, "notPlain": clip(str(e))}
            except RecursionError:
                payload = {"event": "value", "test": i, "check": j, "notPlain": "value nested too deeply"}
            send(payload)

    try:
        send({"event": "start", "test": -1})
        result = attempt(-1, lambda: run_exec(run_compile(config.get("program", ""), "<candidate>", "exec"), namespace))
        send(result)
        if result["status"] != "passed":
            os._exit(0)
        for i in range(first_test, len(tests)):
            test = tests[i]
            send({"event": "start", "test": i})
            if test["kind"] == "values":
                result = attempt(i, lambda: run_values(i, test))
            else:
                result = attempt(i, lambda: run_exec(run_compile(test["code"], "<test %d>" % i, "exec"), namespace))
            send(result)
            if result["status"] != "passed" and config.get("failFast"):
                send({"event": "yield"})
                os._exit(0)
            if result["forked"] and i + 1 < len(tests):
                # Start the next test in a fresh sandbox: whatever this one left dies with this one.
                send({"event": "yield"})
                os._exit(0)
    except BaseException:  # noqa: B902
        pass
    os._exit(0)


main()
