"""Static lineage check of the tiny world's training modules (run by test/tiny/lineage.test.ts).

Reads each module named on the command line and every python/tiny module it imports,
transitively, with Python's own parser, and prints one JSON object: per module, what could carry
exact truth into training without an import of tiny.task or tiny.truth:
- imports of tiny.task / tiny.truth in any spelling (`from . import truth`, `import tiny`, ...);
- dynamic code (`__import__`, `importlib.import_module`, `exec`, `eval`, `compile`, `runpy`),
  which could reach either module by a name built at run time;
- string constants (docstrings aside) naming an exact-truth or held-out file or module, and
  names of the task's truth functions (`first_error`, `solution_text`, ...).
Modules in --after (they run after training, to package and score a finished model) are checked
for imports and dynamic code only: they may name the scoring set.
"""

from __future__ import annotations

import argparse
import ast
import json
import os

TRUTH_MODULES = {"task", "truth"}
DYNAMIC_CALLS = {"__import__", "exec", "eval", "compile", "import_module", "run_module", "run_path"}
DYNAMIC_MODULES = {"importlib", "runpy"}
# grpo_judge loads the project's verl reward function from its file, as verl does (the reward
# comes from the reward server over HTTP); that one use of importlib is allowed, nothing else.
ALLOWED_DYNAMIC = {"grpo_judge": {"importlib.util", "spec_from_file_location", "module_from_spec", "exec_module"}}
TRUTH_TEXT = ("truth", "pb.jsonl", "tiny/loop", "heldout", "held-out", "processbench", "/work/shared", "first_error")
TRUTH_NAMES = {"first_error", "solution_text", "first_errors", "truth", "reserved_questions", "training_stream"}


def docstrings(tree: ast.AST) -> set[int]:
    ids = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                ids.add(id(first.value))
    return ids


def check(root: str, module: str, after: bool, path: str | None = None) -> tuple[list[str], list[str]]:
    """(python/tiny modules imported, problems found) for one module (or the file at `path`)."""
    path = path or os.path.join(root, "tiny", f"{module}.py")
    tree = ast.parse(open(path).read(), path)
    imported, problems = [], []
    allowed = ALLOWED_DYNAMIC.get(module, set())
    docs = docstrings(tree)
    for node in ast.walk(tree):
        where = f"{os.path.relpath(path, os.path.dirname(root))}:{getattr(node, 'lineno', 0)}"
        if isinstance(node, ast.Import):
            for a in node.names:
                top, _, rest = a.name.partition(".")
                if a.name == "tiny":
                    problems.append(f"{where}: import tiny (its submodules are then reachable by attribute)")
                elif top == "tiny":
                    imported.append(rest.split(".")[0])
                elif top in DYNAMIC_MODULES and a.name not in allowed:
                    problems.append(f"{where}: import {a.name} (dynamic import)")
        elif isinstance(node, ast.ImportFrom):
            mod = node.module or ""
            if node.level > 0 or mod == "tiny" or mod.startswith("tiny."):
                inner = mod[len("tiny"):].lstrip(".") if node.level == 0 else mod
                if inner:
                    imported.append(inner.split(".")[0])
                else:
                    imported.extend(a.name for a in node.names)
            elif mod.split(".")[0] in DYNAMIC_MODULES and mod not in allowed:
                problems.append(f"{where}: from {mod} import (dynamic import)")
        elif isinstance(node, ast.Call):
            f = node.func
            name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None
            # model.eval() / re.compile() are not code execution: only bare names and importlib/runpy.
            bare = isinstance(f, ast.Name)
            owner = f.value.id if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) else None
            if name in DYNAMIC_CALLS and name not in allowed and (
                bare or owner in DYNAMIC_MODULES or name in {"import_module", "run_module", "run_path", "__import__"}
            ):
                problems.append(f"{where}: {name}(...) (dynamic code)")
        elif isinstance(node, ast.Attribute):
            if node.attr in TRUTH_NAMES:
                problems.append(f"{where}: .{node.attr} (a truth function)")
            if isinstance(node.value, ast.Name) and node.value.id == "tiny" and node.attr in TRUTH_MODULES:
                problems.append(f"{where}: tiny.{node.attr}")
        elif isinstance(node, ast.Name) and node.id in TRUTH_NAMES:
            problems.append(f"{where}: {node.id} (a truth function)")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs and not after:
            low = node.value.lower()
            hit = [t for t in TRUTH_TEXT if t in low]
            if hit:
                problems.append(f"{where}: string {node.value[:60]!r} names {', '.join(hit)}")
    return imported, problems


def closure(root: str, todo: list[str], problems: list[str], after: str | None = None) -> set[str]:
    """Every python/tiny module reached from `todo`, following imports transitively; the problems
    of each are appended to `problems`, and reaching tiny.task or tiny.truth is one. `after` is the
    module run after training, if any: only it is checked as such, not what it imports."""
    seen: set[str] = set()
    todo = list(todo)
    while todo:
        m = todo.pop()
        if m in seen:
            continue
        seen.add(m)
        if m in TRUTH_MODULES:
            problems.append(f"reaches tiny.{m}")
            continue
        imported, found = check(root, m, m == after)
        problems.extend(found)
        todo.extend(imported)
    return seen


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("root", help="the python/ folder")
    ap.add_argument("modules", nargs="+")
    ap.add_argument("--after", nargs="*", default=[])
    ap.add_argument("--file", nargs="*", default=[], help="other files loaded by training code (by path)")
    args = ap.parse_args()
    report = {}
    for path in args.file:
        # A file loaded from outside python/tiny (grpo_judge's verl reward hook): the same rules,
        # and any python/tiny module it imports is followed like the others.
        imported, problems = check(args.root, os.path.basename(path), False, path)
        seen = closure(args.root, imported, problems)
        report[path] = {"closure": sorted(seen), "problems": sorted(set(problems))}
    for start in args.modules:
        problems: list[str] = []
        seen = closure(args.root, [start], problems, start if start in args.after else None)
        report[start] = {"closure": sorted(seen), "problems": sorted(set(problems))}
    print(json.dumps(report))


if __name__ == "__main__":
    main()
