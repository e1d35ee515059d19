"""stepwise sandbox: the trusted side of running a Python program against its tests.

`--serve` (started once per Sandbox by src/verify/code/sandbox.ts): one request per stdin line.
Each request is run by a forked *supervisor*, which never runs candidate code itself. For each
*worker* it starts bubblewrap (Debian's `bwrap`, the sandbox Flatpak uses) around a fresh
interpreter running python/stepwise_runner.py: own user (a user id of its own when stepwise runs
as root), PID, mount, network, IPC and UTS namespaces, no capabilities, no new user namespaces,
killed with its parent, a new session, and a mount view of only the system folders and the
interpreter (read-only), a fresh /proc and /dev, and the run's own small tmpfs for the work
folder, /tmp and /dev/shm. A cgroup per run caps memory (tmpfs included) and processes where the
machine allows one.

Verdicts: a test whose code is a list of asserts comparing a call with a literal (MBPP's asserts,
HumanEval's `check`) is planned here (`plan_test`): the runner gets only the expressions to
evaluate and sends back their values as plain data; the expected values never leave this process,
and this process compares (`decide`). Other tests run as code in the sandbox, whose verdict the
candidate could forge (`decidedBy: sandbox` in the verdict says which).

`--probe`: what this machine allows, and one real run through the whole chain, as JSON.
"""

import ast
import errno
import json
import math
import os
import random
import select
import shutil
import signal
import sys
import time

MESSAGE_CHARS = 2000
REPORT_LINE_BYTES = 16 << 20  # a longer line on the report channel is a flood: the worker is killed
SANDBOX_UID = 1000  # the candidate's user id inside its user namespace
# Folders of the system the candidate's interpreter and its subprocesses need (read-only).
SYSTEM_BINDS = ["/usr", "/etc", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"]
CLONE_NEWNS = 0x00020000
MS_NOSUID, MS_NODEV, MS_REMOUNT, MS_MOVE, MS_BIND, MS_REC, MS_PRIVATE = 2, 4, 32, 8192, 4096, 16384, 1 << 18
RUN_MOUNT = "/tmp"  # where a run's tmpfs sits in its supervisor's mount namespace (anyone may enter /tmp)


def clip(text, limit=MESSAGE_CHARS):
    return text if len(text) <= limit else text[:limit] + "…"


def _under(path, root):
    return path == root or path.startswith(root.rstrip("/") + "/")


# ---------------------------------------------------------------------------- planning the tests


class Unsafe(Exception):
    """An expression that cannot be evaluated here without running test or candidate code."""


SAFE_CALLS = {"set": set, "frozenset": frozenset, "tuple": tuple, "list": list, "dict": dict, "float": float,
              "int": int, "str": str, "bool": bool, "complex": complex}
SAFE_CONSTANTS = {("math", "pi"): math.pi, ("math", "e"): math.e, ("math", "inf"): math.inf,
                  ("math", "nan"): math.nan}


def safe_value(node, depth=0):
    """The value of a literal expression (with unary minus, small arithmetic on numbers, and calls
    of set/tuple/float/… on literals), computed without running any code; Unsafe otherwise."""
    if depth > 50:
        raise Unsafe("too deep")
    if isinstance(node, ast.Constant) and node.value is not Ellipsis:
        return node.value
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        items = [safe_value(e, depth + 1) for e in node.elts]
        return tuple(items) if isinstance(node, ast.Tuple) else set(items) if isinstance(node, ast.Set) else items
    if isinstance(node, ast.Dict):
        if any(k is None for k in node.keys):
            raise Unsafe("dict unpacking")
        return {safe_value(k, depth + 1): safe_value(v, depth + 1) for k, v in zip(node.keys, node.values)}
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd, ast.Not)):
        v = safe_value(node.operand, depth + 1)
        if isinstance(node.op, ast.Not):
            return not v
        if type(v) not in (int, float, complex):
            raise Unsafe("sign of a non-number")
        return -v if isinstance(node.op, ast.USub) else v
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.Pow)):
        a, b = safe_value(node.left, depth + 1), safe_value(node.right, depth + 1)
        if type(a) not in (int, float, complex) or type(b) not in (int, float, complex):
            raise Unsafe("arithmetic on non-numbers")
        if isinstance(node.op, ast.Pow) and (abs(b) > 64 or abs(a) > 1 << 20):
            raise Unsafe("large power")
        try:
            return {ast.Add: lambda: a + b, ast.Sub: lambda: a - b, ast.Mult: lambda: a * b,
                    ast.Div: lambda: a / b, ast.Pow: lambda: a ** b}[type(node.op)]()
        except (ArithmeticError, ValueError) as e:
            raise Unsafe(str(e))
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        key = (node.value.id, node.attr)
        if key in SAFE_CONSTANTS:
            return SAFE_CONSTANTS[key]
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in SAFE_CALLS
            and not node.keywords and len(node.args) <= 1):
        try:
            return SAFE_CALLS[node.func.id](*[safe_value(a, depth + 1) for a in node.args])
        except (TypeError, ValueError) as e:
            raise Unsafe(str(e))
    raise Unsafe(type(node).__name__)


def _is_safe(node):
    try:
        safe_value(node)
        return True
    except Unsafe:
        return False
    except RecursionError:
        return False


COMPARE_OPS = {ast.Eq: "eq", ast.NotEq: "ne", ast.Lt: "lt", ast.LtE: "le", ast.Gt: "gt", ast.GtE: "ge",
               ast.Is: "is", ast.IsNot: "isnot"}
FLIPPED = {"eq": "eq", "ne": "ne", "lt": "gt", "le": "ge", "gt": "lt", "ge": "le", "is": "is", "isnot": "isnot"}


def plan_assert(test):
    """One assert's expression as (source evaluated in the sandbox, check decided here), or None
    when it is not a comparison of something with a literal. A constant assert gives ("", None)."""
    src = ast.unparse
    if _is_safe(test):
        return ("", None) if safe_value(test) else None
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and type(test.ops[0]) in COMPARE_OPS:
        op, left, right = COMPARE_OPS[type(test.ops[0])], test.left, test.comparators[0]
        # abs(actual - expected) < tol
        if op in ("lt", "le") and _is_safe(right) and isinstance(left, ast.Call) and isinstance(left.func, ast.Name) \
                and left.func.id == "abs" and len(left.args) == 1 and not left.keywords \
                and isinstance(left.args[0], ast.BinOp) and isinstance(left.args[0].op, ast.Sub):
            a, b = left.args[0].left, left.args[0].right
            tol = safe_value(right)
            if type(tol) in (int, float):
                if _is_safe(b) and not _is_safe(a):
                    return (src(a), {"op": "absdiff", "expected": safe_value(b), "tol": tol, "strict": op == "lt"})
                if _is_safe(a) and not _is_safe(b):
                    return (src(b), {"op": "absdiff", "expected": safe_value(a), "tol": tol, "strict": op == "lt"})
        if _is_safe(right):
            return (src(left), {"op": op, "expected": safe_value(right)})
        if _is_safe(left):
            return (src(right), {"op": FLIPPED[op], "expected": safe_value(left)})
        return None
    if isinstance(test, ast.Call) and not test.args[2:] and len(test.args) == 2:
        f = test.func
        name = f.attr if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id == "math" \
            else f.id if isinstance(f, ast.Name) else None
        if name == "isclose" and all(k.arg in ("rel_tol", "abs_tol") and _is_safe(k.value) for k in test.keywords):
            a, b = test.args
            tolerances = {k.arg: safe_value(k.value) for k in test.keywords}
            check = {"op": "isclose", "rel": tolerances.get("rel_tol", 1e-9), "abs": tolerances.get("abs_tol", 0.0)}
            if _is_safe(b) and not _is_safe(a):
                return (src(a), dict(check, expected=safe_value(b)))
            if _is_safe(a) and not _is_safe(b):
                return (src(b), dict(check, expected=safe_value(a)))
        return None
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return (src(test.operand), {"op": "falsy"})
    return (src(test), {"op": "truthy"})


def plan_test(code):
    """A test as calls and expected values where it is made only of imports, literal assignments
    (HumanEval's METADATA) and asserts of a plannable form, at top level or in a
    `def check(candidate)` that the test then calls once; else None (it runs as code)."""
    try:
        module = ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    setup, actuals, checks, bind = [], [], [], []
    check_fn = None

    def take(statements, inside):
        for s in statements:
            if isinstance(s, (ast.Import, ast.ImportFrom)):
                setup.append(ast.unparse(s))
            elif isinstance(s, ast.Pass) or (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant)):
                continue
            elif isinstance(s, ast.Assert):
                planned = plan_assert(s.test)
                if planned is None:
                    return False
                if planned[1] is not None:
                    actuals.append(planned[0])
                    checks.append(dict(planned[1], source=clip(planned[0], 300)))
            elif not inside and isinstance(s, ast.Assign) and all(isinstance(t, ast.Name) for t in s.targets) \
                    and _is_safe(s.value):
                continue
            else:
                return False
        return True

    body = list(module.body)
    if body and isinstance(body[-1], ast.Expr) and isinstance(body[-1].value, ast.Call) \
            and isinstance(body[-1].value.func, ast.Name) and body[-1].value.func.id == "check":
        call = body.pop().value
        fns = [s for s in body if isinstance(s, ast.FunctionDef) and s.name == "check"]
        if len(fns) != 1 or len(call.args) != 1 or call.keywords:
            return None
        check_fn = fns[0]
        a = check_fn.args
        if check_fn.decorator_list or len(a.args) != 1 or a.posonlyargs or a.kwonlyargs or a.vararg or a.kwarg:
            return None
        body.remove(check_fn)
        bind.append([a.args[0].arg, ast.unparse(call.args[0])])
    if not take(body, False):
        return None
    if check_fn is not None and not take(check_fn.body, True):
        return None
    if not checks:
        return None
    return {"setup": "\n".join(setup), "bind": bind, "actuals": actuals, "checks": checks}


# ------------------------------------------------------------------------------- deciding a test


class BadValue(Exception):
    pass


def decode(v, depth=0):
    """A tagged value from the runner back into plain Python data (nothing else can come out)."""
    if depth > 200 or not isinstance(v, list) or not v or not isinstance(v[0], str):
        raise BadValue("malformed value")
    tag = v[0]
    try:
        if tag == "n":
            return None
        if tag == "b" and isinstance(v[1], bool):
            return v[1]
        if tag == "i" and isinstance(v[1], str) and len(v[1]) < 40:
            return int(v[1])
        if tag == "I" and isinstance(v[1], str) and len(v[1]) < 1_000_000:
            return int(v[1], 16)
        if tag == "f" and isinstance(v[1], str) and len(v[1]) < 40:
            return float(v[1])
        if tag == "c":
            return complex(float(v[1]), float(v[2]))
        if tag == "s" and isinstance(v[1], str):
            return v[1]
        if tag == "y" and isinstance(v[1], str):
            return bytes.fromhex(v[1])
        if tag in ("l", "t", "S", "F") and isinstance(v[1], list):
            items = [decode(x, depth + 1) for x in v[1]]
            return {"l": list, "t": tuple, "S": set, "F": frozenset}[tag](items)
        if tag == "d" and isinstance(v[1], list):
            return {decode(k, depth + 1): decode(x, depth + 1) for k, x in v[1]}
    except (TypeError, ValueError, IndexError, OverflowError) as e:
        raise BadValue("malformed value: %s" % e)
    raise BadValue("malformed value")


def decide(check, value):
    """(passed, message) for one planned check and the plain value the candidate produced."""
    op, expected = check["op"], check.get("expected")
    try:
        if op == "eq":
            ok = value == expected
        elif op == "ne":
            ok = value != expected
        elif op == "lt":
            ok = value < expected
        elif op == "le":
            ok = value <= expected
        elif op == "gt":
            ok = value > expected
        elif op == "ge":
            ok = value >= expected
        elif op in ("is", "isnot"):
            same = type(value) is type(expected) and value == expected if expected is not None else value is None
            ok = same if op == "is" else not same
        elif op == "truthy":
            ok = bool(value)
        elif op == "falsy":
            ok = not value
        elif op == "isclose":
            ok = type(value) in (int, float, bool) and math.isclose(value, expected, rel_tol=check["rel"],
                                                                     abs_tol=check["abs"])
        elif op == "absdiff":
            d = abs(value - expected)
            ok = d < check["tol"] if check["strict"] else d <= check["tol"]
        else:
            return False, "unknown check"
    except (TypeError, ValueError, OverflowError, RecursionError) as e:
        return False, "AssertionError: %s returned %s (%s)" % (check["source"], clip(repr(value), 200),
                                                                type(e).__name__)
    if ok:
        return True, None
    if op in ("truthy", "falsy"):
        want = "a true value" if op == "truthy" else "a false value"
    else:
        want = "%s %s" % ({"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">=", "is": "is",
                           "isnot": "is not", "isclose": "close to", "absdiff": "within %r of" % check.get("tol")}[op],
                          clip(repr(expected), 300))
    return False, "AssertionError: %s returned %s, expected %s" % (check["source"], clip(repr(value), 300), want)


# ------------------------------------------------------------------------------ machine and paths


def interpreter_paths(python):
    """What the candidate's imports need: its interpreter's prefixes and import folders."""
    import subprocess

    out = subprocess.run([python, "-B", "-c", "import sys, json; print(json.dumps([sys.prefix, sys.base_prefix, "
                          "sys.exec_prefix, sys.base_exec_prefix, sys.executable, sys.path]))"],
                         capture_output=True, text=True, timeout=60)
    prefix, base, exec_prefix, base_exec, executable, path = json.loads(out.stdout)
    paths = {prefix, base, exec_prefix, base_exec, os.path.dirname(os.path.realpath(executable)),
             os.path.dirname(executable)}
    paths.update(p for p in path if p)
    real = set()
    for p in paths:
        p = os.path.realpath(p)
        if os.path.isdir(p):
            real.add(p)
        elif os.path.isfile(p):  # a zip on sys.path
            real.add(os.path.dirname(p))
    outer = []
    for p in sorted(real):
        if not any(_under(p, q) for q in outer):
            outer.append(p)
    site = [os.path.realpath(p) for p in path if p and "-packages" in p and os.path.isdir(p)]
    return [p for p in outer if not any(_under(p, s) for s in SYSTEM_BINDS if os.path.isdir(s)
                                        and not os.path.islink(s))], site


def find_bwrap(configured=None):
    if configured:  # $STEPWISE_BWRAP: this one or none
        return configured if os.access(configured, os.X_OK) else None
    for candidate in [shutil.which("bwrap"), "/usr/bin/bwrap"]:
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    return None


def own_cgroup(controller):
    """(mount point, our path) of a cgroup v1 controller, or of the v2 hierarchy for None."""
    try:
        with open("/proc/self/cgroup") as f:
            lines = [line.rstrip("\n").split(":", 2) for line in f]
        with open("/proc/self/mountinfo") as f:
            mounts = [line.split() for line in f]
    except OSError:
        return None
    for hid, controllers, path in lines:
        if (controller is None and hid == "0") or (controller is not None and controller in controllers.split(",")):
            for m in mounts:
                sep = m.index("-")
                fstype, options = m[sep + 1], m[-1]
                if controller is None and fstype == "cgroup2":
                    return m[4], path
                if controller is not None and fstype == "cgroup" and controller in options.split(","):
                    return m[4], path
    return None


def cgroup_bases():
    """Where run cgroups go: {'memory': (dir, 1|2), 'pids': (dir, 1|2)}, each only if writable here.
    Each server has its own base, `stepwise-sandbox-<pid>` under its own cgroup, removed when it
    exits (and by the next server, when a killed one left it)."""
    bases = {}
    for controller in ("memory", "pids"):
        found = own_cgroup(controller)
        limit_file = "memory.limit_in_bytes" if controller == "memory" else "pids.max"
        version = 1
        if found is None:
            found = own_cgroup(None)
            version = 2
            limit_file = "memory.max" if controller == "memory" else "pids.max"
        if found is None:
            continue
        base = os.path.join(found[0] + found[1], "stepwise-sandbox-%d" % os.getpid())
        try:
            if version == 2:
                parent = os.path.dirname(base)
                with open(os.path.join(parent, "cgroup.subtree_control"), "w") as f:
                    f.write("+" + controller)
            os.makedirs(base, exist_ok=True)
            if version == 2:
                with open(os.path.join(base, "cgroup.subtree_control"), "w") as f:
                    f.write("+" + controller)
            probe = os.path.join(base, "probe-%d" % os.getpid())
            os.mkdir(probe)
            try:
                ok = os.path.exists(os.path.join(probe, limit_file))
            finally:
                os.rmdir(probe)
            if ok:
                bases[controller] = (base, version)
        except OSError:
            pass
    return bases


class Machine:
    """What this machine allows, found once in the server (supervisors inherit it by fork)."""

    def __init__(self, config):
        self.python = config["python"]
        self.site_packages = config.get("sitePackages", True)
        self.root = os.geteuid() == 0
        self.bwrap = None if config.get("isolation") == "none" else find_bwrap(config.get("bwrap"))
        self.disable_userns = False
        self.bwrap_version = None
        if self.bwrap:
            import subprocess

            helptext = subprocess.run([self.bwrap, "--help"], capture_output=True, text=True, timeout=30).stdout
            self.disable_userns = "--disable-userns" in helptext
            self.bwrap_version = subprocess.run([self.bwrap, "--version"], capture_output=True, text=True,
                                                timeout=30).stdout.strip()
        self.cgroups = cgroup_bases() if self.root else {}
        self.interpreter, self.site = interpreter_paths(self.python)
        here = os.path.dirname(os.path.realpath(__file__))
        with open(os.path.join(here, "stepwise_runner.py")) as f:
            self.runner = f.read()
        self.libc = None
        if self.root and self.bwrap:
            import ctypes

            self.libc = ctypes.CDLL(None, use_errno=True)
            self.libc.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong,
                                        ctypes.c_char_p]
        self.prctl = None
        try:
            import ctypes

            self.prctl = ctypes.CDLL(None).prctl
        except Exception:
            pass

    def mount(self, source, target, fstype, flags, data=None):
        enc = lambda x: None if x is None else x.encode()  # noqa: E731
        if self.libc.mount(enc(source), enc(target), enc(fstype), flags, enc(data)) != 0:
            import ctypes

            raise OSError(ctypes.get_errno(), "mount %s: %s" % (target, os.strerror(ctypes.get_errno())))


MACHINE = None


# ------------------------------------------------------------------------------------ supervisor


class Run:
    """One request: its limits, its folders, its cgroups."""

    def __init__(self, config, rid):
        self.config = config
        self.rid = rid
        self.run_dir = config["runDir"]
        # Where the supervisor's own files go (through a descriptor once /tmp is covered, see prepare_folders).
        self.files = self.run_dir
        self.timeout = config["timeoutMs"] / 1000.0
        self.program_timeout = config["programTimeoutMs"] / 1000.0
        self.memory = config["memoryBytes"]
        self.cpu_seconds = config["cpuSeconds"]
        self.max_processes = config["maxProcesses"]
        self.output_bytes = config["outputBytes"]
        self.warnings = []
        self.uid = None
        self.cgroups = []  # (controller, path, version)
        self.mnt = None
        self.problem = None  # why a spare's preparation failed

    def adopt(self, config):
        """Take a request's config in a run prepared with the defaults: what the folders and
        cgroups were made with is updated where it differs."""
        old = self.config
        config = dict(config, runDir=self.run_dir)
        self.config = config
        self.timeout = config["timeoutMs"] / 1000.0
        self.program_timeout = config["programTimeoutMs"] / 1000.0
        self.cpu_seconds = config["cpuSeconds"]
        self.output_bytes = config["outputBytes"]
        self.memory = config["memoryBytes"]
        self.max_processes = config["maxProcesses"]
        if (old["memoryBytes"], old["maxProcesses"]) != (self.memory, self.max_processes):
            set_cgroup_limits(self)
        if (old["diskBytes"], old["maxFiles"]) != (config["diskBytes"], config["maxFiles"]) and self.mnt:
            MACHINE.mount(None, self.mnt, None, MS_REMOUNT,
                          "size=%d,nr_inodes=%d" % (config["diskBytes"], config["maxFiles"] + 16))

    def matches(self, config):
        """Whether a worker started for this run's config serves `config` too (bubblewrap's
        own tmpfs sizes are fixed when it starts)."""
        return self.mnt is not None or (self.config["memoryBytes"], self.config["diskBytes"]) == (
            config["memoryBytes"], config["diskBytes"])

    def cgroup_name(self):
        return "run-%d" % os.getpid()


def make_cgroups(run):
    for controller, (base, version) in sorted(MACHINE.cgroups.items()):
        path = os.path.join(base, run.cgroup_name())
        try:
            os.mkdir(path)
            run.cgroups.append((controller, path, version))
        except OSError as e:
            run.warnings.append("cgroup %s not made: %s" % (path, e))
    set_cgroup_limits(run)


def set_cgroup_limits(run):
    def write(path, name, value):
        if name.startswith("memory.") and not os.path.exists(os.path.join(path, name)):
            return  # no swap accounting here
        with open(os.path.join(path, name), "w") as f:
            f.write(str(value))

    for controller, path, version in list(run.cgroups):
        try:
            if controller == "memory" and version == 1:
                # memsw (memory + swap) must stay >= memory: order the writes by direction.
                names = ["memory.limit_in_bytes", "memory.memsw.limit_in_bytes"]
                try:
                    with open(os.path.join(path, "memory.limit_in_bytes")) as f:
                        if int(f.read()) < run.memory:
                            names.reverse()
                except (OSError, ValueError):
                    pass
                for name in names:
                    write(path, name, run.memory)
            elif controller == "memory":
                write(path, "memory.max", run.memory)
                write(path, "memory.swap.max", 0)
            else:
                # bubblewrap's two processes and the runner, then the candidate's own.
                write(path, "pids.max", run.max_processes + 3)
        except OSError as e:
            run.warnings.append("cgroup %s: limits not set: %s" % (path, e))
            run.cgroups.remove((controller, path, version))
            remove_cgroup(path, run.warnings, wait_s=0.5)


def remove_cgroup(path, warnings, wait_s=2.0):
    """Kill whatever is left in a run's cgroup and remove it; a failure is reported, not raised."""
    deadline = time.monotonic() + wait_s
    while True:
        try:
            with open(os.path.join(path, "cgroup.procs")) as f:
                pids = [int(p) for p in f.read().split()]
        except OSError:
            pids = []
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        try:
            os.rmdir(path)
            return
        except FileNotFoundError:
            return
        except OSError as e:
            if time.monotonic() > deadline:
                warnings.append("cgroup %s not removed: %s" % (path, e))
                return
        time.sleep(0.002)


def counter(run, controller, key):
    for c, path, version in run.cgroups:
        if c != controller:
            continue
        name = {"pids": "pids.events", "memory": "memory.oom_control" if version == 1 else "memory.events"}[c]
        try:
            with open(os.path.join(path, name)) as f:
                for line in f:
                    k, _, v = line.strip().partition(" ")
                    if k == key:
                        return int(v)
        except (OSError, ValueError):
            pass
    return 0


def prepare_folders(run):
    """The run's writable space. As root: one tmpfs (bytes and file count capped) in the
    supervisor's own mount namespace, holding the work folder, /tmp and /dev/shm, plus the
    interpreter's folders bound where the run's user can reach them. Otherwise bubblewrap makes
    the tmpfs mounts itself (bytes capped). Without bubblewrap: a work folder on disk."""
    c = run.config
    if not MACHINE.bwrap:
        work = os.path.join(run.run_dir, "work")
        os.mkdir(work, 0o700)
        return
    if not MACHINE.root:
        return
    run.uid = random.randrange(1 << 30, (1 << 31) - 2)
    if MACHINE.libc.unshare(CLONE_NEWNS) != 0:
        raise OSError(errno.EPERM, "unshare(CLONE_NEWNS) failed")
    MACHINE.mount(None, "/", None, MS_REC | MS_PRIVATE)
    # The run's user must reach the tmpfs by path (bubblewrap resolves its sources by path), and
    # the run folder may lie in a folder only we can enter: the tmpfs is filled beside the run
    # folder, then moved over /tmp in this private mount namespace; our files are reached
    # through a descriptor of the run folder from then on.
    run.files = "/proc/self/fd/%d" % os.open(run.run_dir, os.O_RDONLY | os.O_DIRECTORY)
    staging = os.path.join(run.run_dir, "mnt")
    os.mkdir(staging, 0o700)
    MACHINE.mount("tmpfs", staging, "tmpfs", MS_NOSUID | MS_NODEV,
                  "size=%d,nr_inodes=%d,mode=0711" % (c["diskBytes"], c["maxFiles"] + 16))
    for name in ("work", "tmp", "shm"):
        os.mkdir(os.path.join(staging, name), 0o700)
        os.chown(os.path.join(staging, name), run.uid, run.uid)
    for i, path in enumerate(MACHINE.interpreter):
        staged = os.path.join(staging, "py%d" % i)
        os.mkdir(staged, 0o755)
        MACHINE.mount(path, staged, None, MS_BIND | MS_REC)
    MACHINE.mount(staging, RUN_MOUNT, None, MS_MOVE)
    run.mnt = RUN_MOUNT


def bwrap_args(run):
    c = run.config
    args = [MACHINE.bwrap, "--unshare-all", "--unshare-user"]
    if MACHINE.disable_userns:
        args.append("--disable-userns")
    args += ["--die-with-parent", "--new-session", "--cap-drop", "ALL", "--uid", str(SANDBOX_UID),
             "--gid", str(SANDBOX_UID), "--hostname", "sandbox"]
    for path in SYSTEM_BINDS:
        if os.path.islink(path):
            args += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            args += ["--ro-bind", path, path]
    for i, path in enumerate(MACHINE.interpreter):
        args += ["--ro-bind", os.path.join(run.mnt, "py%d" % i) if run.mnt else path, path]
    for path in c.get("hide", []):
        # Only what lies inside a folder shown above needs hiding: the rest is not in the view.
        if os.path.isdir(path) and any(_under(path, p) for p in SYSTEM_BINDS + MACHINE.interpreter) \
                and path not in SYSTEM_BINDS:
            args += ["--tmpfs", path]
    args += ["--proc", "/proc", "--dev", "/dev"]
    if run.mnt:
        args += ["--bind", os.path.join(run.mnt, "work"), "/work", "--bind", os.path.join(run.mnt, "tmp"), "/tmp",
                 "--bind", os.path.join(run.mnt, "shm"), "/dev/shm"]
    else:
        # Three tmpfs mounts, together within the run's memory cap.
        share = max(1 << 20, run.memory // 4)
        args += ["--size", str(min(c["diskBytes"], run.memory // 2)), "--tmpfs", "/work",
                 "--size", str(share), "--tmpfs", "/tmp", "--size", str(share), "--tmpfs", "/dev/shm"]
    args += ["--chdir", "/work", "--clearenv"]
    for k, v in [("PATH", "/usr/local/bin:/usr/bin:/bin"), ("HOME", "/work"), ("TMPDIR", "/tmp"),
                 ("LANG", "C.UTF-8"), ("PYTHONHASHSEED", "0"), ("PYTHONIOENCODING", "utf-8")]:
        args += ["--setenv", k, v]
    return args + ["--", MACHINE.python, "-I", "-S", "-B", "-c", MACHINE.runner]


def launch(run, index):
    """Start one worker, which waits for its work on descriptor 3 (see send_config); returns
    (pid, report read end, stdout path, stderr path, work write end)."""
    out_path = os.path.join(run.files, ".stdout-%d" % index)
    err_path = os.path.join(run.files, ".stderr-%d" % index)
    if MACHINE.bwrap:
        argv = bwrap_args(run)
    else:
        argv = [MACHINE.python, "-I", "-S", "-B", "-c", MACHINE.runner]
    read_fd, write_fd = os.pipe()
    config_r, config_w = os.pipe()
    out_fd = os.open(out_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    err_fd = os.open(err_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    null_fd = os.open(os.devnull, os.O_RDONLY)
    pid = os.fork()
    if pid == 0:
        try:
            os.setpgid(0, 0)
            for _, path, _ in run.cgroups:
                with open(os.path.join(path, "cgroup.procs"), "w") as f:
                    f.write("0")
            # Each to its slot; dup2 makes them inheritable, everything else is closed on exec.
            for fd, slot in [(null_fd, 0), (out_fd, 1), (err_fd, 2), (config_r, 3), (write_fd, 4)]:
                os.dup2(fd, slot + 100)
            for slot in range(5):
                os.dup2(slot + 100, slot)
            os.closerange(5, max(65536, os.sysconf("SC_OPEN_MAX")))
            if not MACHINE.bwrap:
                os.chdir(os.path.join(run.run_dir, "work"))
                os.environ.clear()
                os.environ.update({"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": os.getcwd(),
                                   "TMPDIR": os.getcwd(), "LANG": "C.UTF-8", "PYTHONHASHSEED": "0",
                                   "PYTHONIOENCODING": "utf-8"})
            if run.uid is not None:
                os.setgroups([])
                os.setresgid(run.uid, run.uid, run.uid)
                os.setresuid(run.uid, run.uid, run.uid)
            if MACHINE.prctl is not None:
                MACHINE.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG (after the uid change, which clears it)
            os.execv(argv[0], argv)
        except BaseException as e:  # noqa: B902
            try:
                os.write(2, ("sandbox: cannot start the worker: %s\n" % e).encode())
            except OSError:
                pass
        os._exit(127)
    for fd in (write_fd, config_r, out_fd, err_fd, null_fd):
        os.close(fd)
    return pid, read_fd, out_path, err_path, config_w


def send_config(run, config_w, first_test, runner_tests):
    """The worker's work: the program and what each test runs or evaluates (no expected value)."""
    c = run.config
    config = {"program": c.get("program", ""), "tests": runner_tests, "firstTest": first_test,
              "maxProcesses": run.max_processes, "memoryBytes": run.memory, "outputBytes": run.output_bytes,
              "cpuSeconds": run.cpu_seconds, "failFast": c.get("failFast", False),
              "nprocRlimit": run.uid is not None,
              "sysPath": MACHINE.site if MACHINE.site_packages else []}
    data = json.dumps(config).encode()
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(config_w, view):]
    except OSError:
        pass  # the worker died before reading: its death is its verdict
    finally:
        os.close(config_w)


def wait_briefly(pid, seconds):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done == pid:
            return status
        time.sleep(0.002)
    return None


def reap_all(seconds):
    """Reap every child left: the supervisor is a child subreaper, so a killed worker's orphans
    (bubblewrap's PID 1 among them) come here, and until reaped they count against the caps."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            time.sleep(0.002)


def wait_cgroups_empty(run, seconds):
    deadline = time.monotonic() + seconds
    for _, path, _ in run.cgroups:
        while time.monotonic() < deadline:
            try:
                with open(os.path.join(path, "cgroup.procs")) as f:
                    if not f.read().split():
                        break
            except OSError:
                break
            time.sleep(0.002)


def death_status(run, wait_status):
    if os.WIFSIGNALED(wait_status):
        sig = os.WTERMSIG(wait_status)
        if sig == signal.SIGXCPU:
            return ("timeout", "CPU time limit (%d s) exceeded" % run.cpu_seconds)
        if sig == signal.SIGXFSZ:
            return ("output-limit", "output limit (%d bytes) exceeded" % run.output_bytes)
        if sig == signal.SIGKILL:
            return ("timeout", "killed (SIGKILL): CPU time hard limit or out of memory")
        try:
            name = signal.Signals(sig).name
        except ValueError:
            name = str(sig)
        return ("error", "crashed with signal " + name)
    code = os.WEXITSTATUS(wait_status) if os.WIFEXITED(wait_status) else -1
    return ("error", "process exited (code %d) before the test finished" % code)


def worker_death(run, wait_status, stderr_path):
    """How a worker died. bubblewrap reports its command's death as an exit code (128 + signal)."""
    if MACHINE.bwrap and os.WIFEXITED(wait_status) and os.WEXITSTATUS(wait_status) > 128:
        sig = os.WEXITSTATUS(wait_status) - 128
        return death_status(run, (sig & 0x7F))
    if MACHINE.bwrap and os.WIFEXITED(wait_status) and os.WEXITSTATUS(wait_status) == 1:
        head = read_head(stderr_path, 2000)[0]
        if head.startswith("bwrap:"):
            return ("error", "sandbox did not start: " + head.strip())
    return death_status(run, wait_status)


def kill_group(pid):
    for kill in (os.killpg, os.kill):
        try:
            kill(pid, signal.SIGKILL)
        except OSError:
            pass


def read_head(path, limit):
    try:
        with open(path, "rb") as f:
            data = f.read(limit + 1)
        return data[:limit].decode("utf-8", "replace"), len(data) > limit
    except OSError:
        return "", False


def verdict_of_values(run, plan, values, runner_status, runner_message, duration):
    """A planned test's verdict: the first check whose value is wrong, not plain or missing decides."""
    for j, check in enumerate(plan["checks"]):
        if j not in values:
            status = runner_status if runner_status != "passed" else "error"
            message = runner_message if runner_status != "passed" else "no value for %s" % check["source"]
            return {"status": status, "message": message, "durationMs": duration}
        kind, value = values[j]
        if kind == "notPlain":
            return {"status": "failed", "message": "AssertionError: %s %s" % (check["source"], value),
                    "durationMs": duration}
        ok, message = decide(check, value)
        if not ok:
            return {"status": "failed", "message": clip(message), "durationMs": duration}
    return {"status": "passed", "message": None, "durationMs": duration}


def supervise(config, rid, result_name=".result.json", run=None, worker=None):
    """Run one request and write its outcome to `<runDir>/<result_name>`. A spare supervisor
    (standby) brings its run, prepared before the request came, and a worker already started."""
    if MACHINE.prctl is not None:
        MACHINE.prctl(36, 1)  # PR_SET_CHILD_SUBREAPER
    prepared = run is not None
    if run is None:
        run = Run(config, rid)
    else:
        run.adopt(config)
    tests = config["tests"]
    plans = [plan_test(t["code"]) if config.get("compare", True) else None for t in tests]
    runner_tests = [
        {"kind": "values", "setup": p["setup"], "bind": p["bind"], "actuals": p["actuals"]} if p
        else {"kind": "code", "code": t["code"]}
        for p, t in zip(plans, tests)
    ]
    results = [None] * len(tests)
    program = None
    next_test = 0
    workers = 0
    stdout_parts, stderr_parts = [], []
    truncated = False
    keep = config.get("captureBytes", 65536)
    if not prepared:
        make_cgroups(run)
        try:
            prepare_folders(run)
        except OSError as e:
            program = {"status": "error", "message": "sandbox: cannot prepare the run's folders: %s" % e,
                       "durationMs": None}
    elif run.problem:
        program = {"status": "error", "message": run.problem, "durationMs": None}

    def stopped():
        return config.get("failFast") and any(r is not None and r["status"] != "passed" for r in results)

    while program is None or (program["status"] == "passed" and next_test < len(tests) and not stopped()):
        if worker is not None:
            pid, read_fd, out_path, err_path, config_w = worker
            worker = None
        else:
            pid, read_fd, out_path, err_path, config_w = launch(run, workers)
        send_config(run, config_w, next_test, runner_tests)
        workers += 1
        current = None  # test in progress (-1 = program)
        values = {}
        deadline = time.monotonic() + 60.0  # until the program starts (interpreter start-up)
        buffer = b""
        timed_out = yielded = flooded = False
        notes = set()
        refusals = counter(run, "pids", "max")
        ooms = counter(run, "memory", "oom_kill")
        worker_status = None
        drained = 0
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                timed_out = True
                break
            wait = 0.0 if worker_status is not None else min(remaining, 0.1)
            ready, _, _ = select.select([read_fd], [], [], wait)
            if not ready:
                if worker_status is not None:
                    break
                done, status = os.waitpid(pid, os.WNOHANG)
                if done == pid:
                    worker_status = status
                continue
            chunk = os.read(read_fd, 1 << 16)
            if not chunk:
                break
            if worker_status is not None:
                drained += 1
                if drained > 64:
                    break
            buffer += chunk
            if len(buffer) > REPORT_LINE_BYTES and b"\n" not in buffer[-len(chunk):]:
                flooded = True
                break
            while b"\n" in buffer:
                line, buffer = buffer.split(b"\n", 1)
                try:
                    message = json.loads(line)
                except (ValueError, RecursionError):
                    continue
                if not isinstance(message, dict):
                    continue
                index = message.get("test")
                event = message.get("event")
                if event == "yield":
                    yielded = True
                elif event == "note":
                    notes.add(message.get("kind"))
                elif event == "start" and isinstance(index, int) and -1 <= index < len(tests) and current is None:
                    if index != -1 and (program is None or (results[index] is not None)):
                        continue
                    current = index
                    values = {}
                    notes = set()
                    refusals = counter(run, "pids", "max")
                    deadline = time.monotonic() + (run.program_timeout if index == -1 else run.timeout)
                elif event == "value" and index == current and current is not None and current >= 0 \
                        and plans[current] is not None:
                    j = message.get("check")
                    if isinstance(j, int) and 0 <= j < len(plans[current]["checks"]) and j not in values:
                        if "notPlain" in message:
                            values[j] = ("notPlain", clip(str(message["notPlain"]), 300))
                        else:
                            try:
                                values[j] = ("value", decode(message.get("value")))
                            except (BadValue, RecursionError) as e:
                                values[j] = ("notPlain", str(e))
                elif event == "end" and index == current and current is not None:
                    status = message.get("status")
                    if status not in ("passed", "failed", "error", "timeout", "memory", "fork-limit",
                                      "network-blocked", "output-limit"):
                        status = "error"
                    msg = message.get("message")
                    msg = clip(msg) if isinstance(msg, str) else None
                    duration = message.get("durationMs") if isinstance(message.get("durationMs"), (int, float)) \
                        else None
                    if index == -1:
                        program = {"status": status, "message": msg, "durationMs": duration}
                    else:
                        if plans[index] is not None:
                            results[index] = verdict_of_values(run, plans[index], values, status, msg, duration)
                            results[index]["decidedBy"] = "trusted"
                        else:
                            results[index] = {"status": status, "message": msg, "durationMs": duration,
                                              "decidedBy": "sandbox"}
                        next_test = index + 1
                    current = None
                    deadline = time.monotonic() + run.program_timeout + run.timeout  # until the next start
            if current is None and program is not None and program["status"] != "passed":
                break
        if worker_status is None and not (timed_out or flooded):
            # The report channel closed: bubblewrap is ending; let it say how its command ended.
            worker_status = wait_briefly(pid, 5.0)
        kill_group(pid)
        if worker_status is None:
            _, worker_status = os.waitpid(pid, 0)
        os.close(read_fd)
        # The next worker of this run starts only when this one's processes are all gone (its
        # PID namespace is torn down asynchronously), so they count against no cap of the next.
        reap_all(2.0)
        wait_cgroups_empty(run, 2.0)
        if current is not None or (program is None):
            index = -1 if current is None else current
            if flooded:
                verdict = {"status": "error", "message": "the report channel was flooded", "durationMs": None}
            elif timed_out and current is not None:
                limit_ms = (run.program_timeout if current == -1 else run.timeout) * 1000.0
                verdict = {"status": "timeout", "message": "wall-clock limit (%d ms) exceeded" % limit_ms,
                           "durationMs": limit_ms}
            else:
                status, message = worker_death(run, worker_status, err_path)
                verdict = {"status": status, "message": message, "durationMs": None}
            if counter(run, "memory", "oom_kill") > ooms:
                verdict = {"status": "memory", "durationMs": verdict["durationMs"],
                           "message": "out of memory: the run's cap (%d MB, tmpfs included) was reached"
                           % (run.memory >> 20)}
            elif "fork-limit" in notes or counter(run, "pids", "max") > refusals:
                verdict = {"status": "fork-limit", "durationMs": verdict["durationMs"],
                           "message": "process cap (%d) reached, then: %s" % (run.max_processes, verdict["message"])}
            elif "network-blocked" in notes:
                verdict = {"status": "network-blocked", "durationMs": verdict["durationMs"],
                           "message": "network access blocked, then: %s" % verdict["message"]}
            if index == -1:
                program = verdict
            else:
                if plans[index] is not None:
                    verdict = dict(verdict_of_values(run, plans[index], values, verdict["status"],
                                                     verdict["message"], verdict["durationMs"]), decidedBy="trusted")
                else:
                    verdict["decidedBy"] = "sandbox"
                results[index] = verdict
                next_test = index + 1
        elif program["status"] == "passed" and next_test < len(tests) and not (yielded or stopped()):
            # The worker ended between tests without a report: count it against the next test.
            status, message = worker_death(run, worker_status, err_path)
            results[next_test] = {"status": status, "message": message, "durationMs": None,
                                  "decidedBy": "trusted" if plans[next_test] else "sandbox"}
            next_test += 1
        out, cut_out = read_head(out_path, keep)
        err, cut_err = read_head(err_path, keep)
        stdout_parts.append(out)
        stderr_parts.append(err)
        truncated = truncated or cut_out or cut_err

    if worker is not None:
        os.close(worker[4])
        kill_group(worker[0])
        os.close(worker[1])
        reap_all(2.0)
    if program["status"] != "passed":
        for i in range(len(tests)):
            if results[i] is None:
                results[i] = {"status": program["status"], "message": "program failed: " + (program["message"] or ""),
                              "durationMs": None}
    for i in range(len(tests)):
        if results[i] is None:
            results[i] = {"status": "not-run", "message": None, "durationMs": None}
        results[i].setdefault("decidedBy", "trusted" if plans[i] else "sandbox")
    for _, path, _ in run.cgroups:
        remove_cgroup(path, run.warnings)
    outcome = {
        "program": program,
        "tests": results,
        "stdout": "".join(stdout_parts)[:keep],
        "stderr": "".join(stderr_parts)[:keep],
        "outputTruncated": truncated,
        "workers": workers,
        "warnings": run.warnings,
    }
    path = os.path.join(run.files, result_name)
    with open(path + ".tmp", "w") as f:
        json.dump(outcome, f)
    os.rename(path + ".tmp", path)
    return outcome


# ------------------------------------------------------------------------------------------ server


def remove_bases(bases, warnings):
    for base in bases:
        try:
            entries = os.listdir(base)
        except OSError:
            continue
        for entry in entries:
            path = os.path.join(base, entry)
            if entry.startswith("run-") and os.path.isdir(path):
                remove_cgroup(path, warnings, wait_s=1.0)
        try:
            os.rmdir(base)
        except OSError as e:
            if e.errno != errno.ENOENT:
                warnings.append("cgroup %s not removed: %s" % (base, e))


def sweep_stale_cgroups():
    """Remove the cgroups of servers that no longer exist (a job killed with SIGKILL)."""
    stale = []
    for base, _ in MACHINE.cgroups.values():
        parent = os.path.dirname(base)
        try:
            entries = os.listdir(parent)
        except OSError:
            continue
        for entry in entries:
            owner = entry[len("stepwise-sandbox-"):] if entry.startswith("stepwise-sandbox-") else ""
            if owner.isdigit() and not os.path.exists("/proc/" + owner):
                stale.append(os.path.join(parent, entry))
    remove_bases(stale, [])


def standby(settings, request_fd, run_dir):
    """A spare supervisor: prepares a run with the Sandbox's default limits and starts its first
    worker before any request, so a run does not wait for bubblewrap and a fresh interpreter;
    then takes one request from `request_fd` (EOF: none will come)."""
    defaults = dict(settings["defaults"], runDir=run_dir, tests=[], program="")
    run = Run(defaults, "spare")
    worker = None
    make_cgroups(run)
    try:
        prepare_folders(run)
        worker = launch(run, 0)
    except OSError as e:
        run.problem = "sandbox: cannot prepare the run's folders: %s" % e
    chunks = []
    while True:
        chunk = os.read(request_fd, 1 << 20)
        if not chunk:
            break
        chunks.append(chunk)
    if not chunks:
        if worker is not None:
            kill_group(worker[0])
        for _, path, _ in run.cgroups:
            remove_cgroup(path, [])
        return
    request = json.loads(b"".join(chunks))
    if worker is not None and not run.matches(request["config"]):
        os.close(worker[4])
        kill_group(worker[0])
        os.close(worker[1])
        reap_all(2.0)
        worker = None
    try:
        run.adopt(request["config"])
    except OSError as e:
        run.problem = "sandbox: cannot apply the run's limits: %s" % e
    supervise(run.config, request["id"], run=run, worker=worker)


def serve(settings):
    """Long-lived mode: one request per stdin line (`{"id", "config"}` or `{"kill": id}`).

    Each request goes to a spare supervisor (forked ahead, see standby), which writes the
    outcome to `<its run folder>/.result.json`; this process prints `{"id", "exit", "runDir"}`
    when it has ended (the caller reads the outcome and removes the folder). When stdin closes
    (the job ended or died) or on SIGTERM, every run in flight is killed, and its cgroups and
    folder are removed.
    """
    import tempfile

    global MACHINE
    MACHINE = Machine(settings)
    sweep_stale_cgroups()
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    os.set_blocking(wake_r, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    terminated = []
    signal.signal(signal.SIGTERM, lambda *_: terminated.append(True))
    running = {}  # supervisor pid -> (request id, run folder)
    by_id = {}
    spares = []  # (pid, request write end, run folder)
    pending = b""
    stdin_open = True
    spare_count = max(1, int(settings.get("spares", 2)))

    def add_spare():
        run_dir = tempfile.mkdtemp(prefix="stepwise-sbx-", dir=settings.get("tmpdir"))
        r, w = os.pipe()
        sys.stdout.flush()
        pid = os.fork()
        if pid == 0:
            try:
                signal.set_wakeup_fd(-1)
                signal.signal(signal.SIGCHLD, signal.SIG_DFL)
                signal.signal(signal.SIGTERM, signal.SIG_DFL)
                os.close(wake_r)
                os.close(wake_w)
                for _, spare_w, _ in spares:
                    os.close(spare_w)
                os.close(w)
                os.setpgid(0, 0)
                null = os.open(os.devnull, os.O_RDWR)
                os.dup2(null, 0)
                os.dup2(null, 1)
                if MACHINE.prctl is not None:
                    MACHINE.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG: never outlive the server
                standby(settings, r, run_dir)
                os._exit(0)
            except BaseException:  # noqa: B902
                import traceback

                traceback.print_exc()
                os._exit(70)
        os.close(r)
        spares.append((pid, w, run_dir))

    def cleanup(pid, run_dir):
        for base, _ in MACHINE.cgroups.values():
            remove_cgroup(os.path.join(base, "run-%d" % pid), [], wait_s=1.0)
        remove_tree(run_dir)

    def reap():
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else -os.WTERMSIG(status)
            entry = running.pop(pid, None)
            if entry is not None:
                rid, run_dir = entry
                by_id.pop(rid, None)
                if code != 0:
                    for base, _ in MACHINE.cgroups.values():
                        remove_cgroup(os.path.join(base, "run-%d" % pid), [], wait_s=1.0)
                try:
                    os.write(1, (json.dumps({"id": rid, "exit": code, "runDir": run_dir}) + "\n").encode())
                except OSError:
                    remove_tree(run_dir)  # the caller is gone (a broken pipe): nobody else will
                continue
            for spare in list(spares):
                if spare[0] == pid:  # a spare that died before its request: replaced below
                    spares.remove(spare)
                    os.close(spare[1])
                    cleanup(pid, spare[2])

    while stdin_open or running:
        if terminated and stdin_open:
            stdin_open = False
            for pid in list(running):
                kill_group(pid)
        if stdin_open:
            while len(spares) < spare_count:
                add_spare()
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
        try:
            data = os.read(0, 1 << 20)
        except OSError:
            data = b""
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
            if not spares:
                add_spare()
            pid, w, run_dir = spares.pop(0)
            try:
                os.write(w, json.dumps(request).encode())
            except OSError:
                pass  # the spare died: its exit is reported as this run's failure
            os.close(w)
            running[pid] = (request["id"], run_dir)
            by_id[request["id"]] = pid
    for pid, w, run_dir in spares:
        os.close(w)  # EOF: the spare cleans up and exits
    for pid, w, run_dir in spares:
        try:
            os.waitpid(pid, 0)
        except ChildProcessError:
            pass
        cleanup(pid, run_dir)
    for pid, (rid, run_dir) in list(running.items()):
        kill_group(pid)
        try:
            os.waitpid(pid, 0)
        except ChildProcessError:
            pass
        cleanup(pid, run_dir)
    warnings = []
    remove_bases([base for base, _ in MACHINE.cgroups.values()], warnings)
    for w in warnings:
        sys.stderr.write("stepwise sandbox: %s\n" % w)


def remove_tree(root, max_entries=200_000):
    """Remove a folder without recursion and within a bounded number of entries (a candidate
    without bubblewrap can nest folders thousands deep); never raises."""
    stack, dirs, seen = [root], [], 0
    while stack:
        d = stack.pop()
        dirs.append(d)
        try:
            entries = list(os.scandir(d))
        except OSError:
            try:
                os.chmod(d, 0o700)
                entries = list(os.scandir(d))
            except OSError:
                continue
        for e in entries:
            seen += 1
            if seen > max_entries:
                return
            try:
                if e.is_dir(follow_symlinks=False):
                    stack.append(e.path)
                else:
                    os.unlink(e.path)
            except OSError:
                pass
    for d in reversed(dirs):
        try:
            os.rmdir(d)
        except OSError:
            pass


def probe(config):
    """What this machine allows, and one real run through the whole chain; prints JSON."""
    global MACHINE
    import tempfile

    MACHINE = Machine(config)
    answer = {"bwrap": MACHINE.bwrap, "bwrapVersion": MACHINE.bwrap_version, "disableUserns": MACHINE.disable_userns,
              "root": MACHINE.root, "cgroups": {k: "v%d" % v[1] for k, v in MACHINE.cgroups.items()},
              "problem": None}
    run_dir = tempfile.mkdtemp(prefix="stepwise-sbx-probe-")
    try:
        pid = os.fork()
        if pid == 0:
            try:
                supervise({"runDir": run_dir, "program": "import os\nx = os.getuid()", "tests": [
                    {"code": "assert x == %d" % (SANDBOX_UID if MACHINE.bwrap else os.getuid())}],
                    "timeoutMs": 30000, "programTimeoutMs": 30000, "memoryBytes": 256 << 20, "cpuSeconds": 60,
                    "maxProcesses": 4, "outputBytes": 1 << 20, "captureBytes": 4000, "diskBytes": 1 << 20,
                    "maxFiles": 100}, "probe", "out.json")
                os._exit(0)
            except BaseException:  # noqa: B902
                os._exit(70)
        os.waitpid(pid, 0)
        try:
            with open(os.path.join(run_dir, "out.json")) as f:
                outcome = json.load(f)
            t = outcome["tests"][0]
            if t["status"] != "passed":
                answer["problem"] = "%s: %s %s" % (t["status"], outcome["program"]["message"] or t["message"] or "",
                                                   outcome["stderr"].strip())
        except (OSError, ValueError, KeyError, IndexError) as e:
            answer["problem"] = "the probe run failed: %s" % e
    finally:
        shutil.rmtree(run_dir, ignore_errors=True)
        remove_bases([base for base, _ in MACHINE.cgroups.values()], [])
    sys.stdout.write(json.dumps(answer) + "\n")


if __name__ == "__main__":
    settings = json.loads(sys.argv[2]) if len(sys.argv) > 2 else {"python": sys.executable}
    if sys.argv[1:2] == ["--serve"]:
        serve(settings)
    elif sys.argv[1:2] == ["--probe"]:
        probe(settings)
