"""stepwise mutation helper: syntax-tree mutants of Python reference solutions.

Input (stdin): one JSON object per line, {"id": str, "code": str}.
Output (stdout): one JSON object per line, {"id", "mutants": [...]} or {"id", "error"}.

Each mutant changes one syntax-tree node and is spliced back into the original text, so every
line it does not touch stays byte for byte as written (comments, spacing, quotes). Fields:
kind, description, line (1-based line of the change in the mutant's text), dropped (true when
a statement was removed) and code. Mutants that do not parse, or that parse to the same tree as
the original, are left out.

Kinds: arithmetic (+ - * / // % ** swapped, also in augmented assignments), comparison
(< <= > >= == != in / not in, is / is not), constant (integers n -> n+1 / n-1, True <-> False),
off-by-one (range() stop and slice bounds +-1), boolean (and <-> or, `not` removed),
drop (a statement removed).
"""

import ast
import json
import sys

ARITH = {
    ast.Add: ast.Sub,
    ast.Sub: ast.Add,
    ast.Mult: ast.Add,
    ast.Div: ast.Mult,
    ast.FloorDiv: ast.Div,
    ast.Mod: ast.FloorDiv,
    ast.Pow: ast.Mult,
    ast.BitAnd: ast.BitOr,
    ast.BitOr: ast.BitAnd,
    ast.BitXor: ast.BitOr,
    ast.LShift: ast.RShift,
    ast.RShift: ast.LShift,
}
SWAPPED_CALLS = {"min": "max", "max": "min", "any": "all", "all": "any"}
COMPARE = {
    ast.Lt: ast.LtE,
    ast.LtE: ast.Lt,
    ast.Gt: ast.GtE,
    ast.GtE: ast.Gt,
    ast.Eq: ast.NotEq,
    ast.NotEq: ast.Eq,
    ast.In: ast.NotIn,
    ast.NotIn: ast.In,
    ast.Is: ast.IsNot,
    ast.IsNot: ast.Is,
}
SYMBOL = {
    ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//", ast.Mod: "%",
    ast.Pow: "**", ast.BitAnd: "&", ast.BitOr: "|", ast.BitXor: "^", ast.LShift: "<<", ast.RShift: ">>",
    ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==",
    ast.NotEq: "!=", ast.In: "in", ast.NotIn: "not in", ast.Is: "is", ast.IsNot: "is not",
}


class Source:
    """Character offsets for (line, UTF-8 byte column) positions of the original text."""

    def __init__(self, text):
        self.text = text
        self.lines = text.splitlines(keepends=True)
        self.starts = []
        offset = 0
        for line in self.lines:
            self.starts.append(offset)
            offset += len(line)
        self.starts.append(offset)

    def offset(self, line, col_bytes):
        if line - 1 >= len(self.lines):
            return len(self.text)
        raw = self.lines[line - 1].encode("utf-8")
        return self.starts[line - 1] + len(raw[:col_bytes].decode("utf-8", "replace"))

    def span(self, node):
        return self.offset(node.lineno, node.col_offset), self.offset(node.end_lineno, node.end_col_offset)


def replacement(src, node, new_node, kind, description):
    start, end = src.span(node)
    text = ast.unparse(new_node)
    # Keep the expression's own precedence: parenthesise when the original text was not bare.
    if isinstance(new_node, (ast.BinOp, ast.BoolOp, ast.Compare, ast.UnaryOp)):
        text = "(" + text + ")"
    return {
        "kind": kind,
        "description": description,
        "line": node.lineno,
        "dropped": False,
        "code": src.text[:start] + text + src.text[end:],
    }


def copy(node):
    return ast.parse(ast.unparse(node), mode="eval").body if isinstance(node, ast.expr) else node


def const_plus(node, delta):
    return ast.BinOp(left=copy(node), op=ast.Add() if delta > 0 else ast.Sub(), right=ast.Constant(abs(delta)))


def drop(src, body, index, stmt):
    start_line, end_line = stmt.lineno, stmt.end_lineno
    start, end = src.span(stmt)
    # Only whole lines: a statement sharing a line with another (a; b) is left alone.
    before = src.text[src.starts[start_line - 1]:start]
    after = src.text[end:src.starts[end_line]].strip()
    if before.strip() != "" or not (after == "" or after.startswith("#")):
        return None
    if len(body) == 1:
        return None
    code = "".join(src.lines[: start_line - 1]) + "".join(src.lines[end_line:])
    return {
        "kind": "drop",
        "description": "removed line %d: %s" % (start_line, ast.unparse(stmt).split("\n")[0][:80]),
        "line": start_line,
        "dropped": True,
        "code": code,
    }


def mutants(code):
    tree = ast.parse(code)
    src = Source(code)
    out = []
    in_function = set()
    for fn in ast.walk(tree):
        if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for sub in ast.walk(fn):
                in_function.add(id(sub))

    docstrings = set()
    callees = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Module)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                docstrings.add(id(first.value))
        if isinstance(node, ast.Call):
            callees.add(id(node.func))
        if isinstance(node, ast.JoinedStr):
            # f-string parts have no usable positions of their own
            for sub in ast.walk(node):
                docstrings.add(id(sub))

    for node in ast.walk(tree):
        if isinstance(node, ast.BinOp) and type(node.op) in ARITH:
            new = ast.BinOp(left=copy(node.left), op=ARITH[type(node.op)](), right=copy(node.right))
            out.append(replacement(src, node, new, "arithmetic",
                                   "%s -> %s" % (SYMBOL[type(node.op)], SYMBOL[ARITH[type(node.op)]])))
        elif isinstance(node, ast.AugAssign) and type(node.op) in ARITH:
            new = ast.AugAssign(target=node.target, op=ARITH[type(node.op)](), value=copy(node.value))
            m = replacement(src, node, new, "arithmetic",
                            "%s= -> %s=" % (SYMBOL[type(node.op)], SYMBOL[ARITH[type(node.op)]]))
            out.append(m)
        elif isinstance(node, ast.Compare):
            for i, op in enumerate(node.ops):
                if type(op) in COMPARE:
                    ops = list(node.ops)
                    ops[i] = COMPARE[type(op)]()
                    new = ast.Compare(left=copy(node.left), ops=ops, comparators=[copy(c) for c in node.comparators])
                    out.append(replacement(src, node, new, "comparison",
                                           "%s -> %s" % (SYMBOL[type(op)], SYMBOL[COMPARE[type(op)]])))
        elif isinstance(node, ast.BoolOp):
            new = ast.BoolOp(op=ast.Or() if isinstance(node.op, ast.And) else ast.And(), values=[copy(v) for v in node.values])
            out.append(replacement(src, node, new, "boolean", "and <-> or"))
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            out.append(replacement(src, node, copy(node.operand), "boolean", "not removed"))
        elif isinstance(node, ast.Constant) and isinstance(node.value, int) and id(node) in in_function:
            if isinstance(node.value, bool):
                m = replacement(src, node, ast.Constant(not node.value), "constant", "%s -> %s" % (node.value, not node.value))
                out.append(m)
            elif isinstance(node.value, int) and not isinstance(node.value, bool):
                new_value = node.value + 1 if node.value in (0, -1) else node.value - 1 if node.value == 1 else node.value + 1
                m = replacement(src, node, ast.Constant(new_value), "constant", "%d -> %d" % (node.value, new_value))
                out.append(m)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) in in_function \
                and id(node) not in docstrings:
            new_value = node.value[:-1] if node.value else "x"
            out.append(replacement(src, node, ast.Constant(new_value), "constant",
                                   "string %r -> %r" % (node.value[:20], new_value[:20])))
        elif isinstance(node, ast.Name) and node.id in SWAPPED_CALLS and isinstance(node.ctx, ast.Load) \
                and id(node) in callees:
            out.append(replacement(src, node, ast.Name(SWAPPED_CALLS[node.id]), "call",
                                   "%s() -> %s()" % (node.id, SWAPPED_CALLS[node.id])))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "range" and node.args:
            stop = node.args[0] if len(node.args) == 1 else node.args[1]
            for delta in (1, -1):
                args = [copy(a) for a in node.args]
                args[0 if len(node.args) == 1 else 1] = const_plus(stop, delta)
                new = ast.Call(func=ast.Name("range"), args=args, keywords=[])
                m = replacement(src, node, new, "off-by-one", "range stop %+d" % delta)
                out.append(m)
        elif isinstance(node, ast.Slice):
            for field in ("lower", "upper"):
                bound = getattr(node, field)
                if bound is None:
                    continue
                for delta in (1, -1):
                    new = ast.Slice(lower=copy(node.lower) if node.lower else None,
                                    upper=copy(node.upper) if node.upper else None,
                                    step=copy(node.step) if node.step else None)
                    setattr(new, field, const_plus(bound, delta))
                    m = replacement(src, node, new, "off-by-one", "slice %s %+d" % (field, delta))
                    out.append(m)

    for node in ast.walk(tree):
        if id(node) not in in_function and not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for field in ("body", "orelse", "finalbody"):
            body = getattr(node, field, None)
            if not isinstance(body, list):
                continue
            for index, stmt in enumerate(body):
                if not isinstance(stmt, ast.stmt) or isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    continue
                if index == 0 and isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str):
                    continue  # docstring
                m = drop(src, body, index, stmt)
                if m:
                    out.append(m)

    original = ast.dump(tree)
    seen = set()
    kept = []
    for m in out:
        try:
            dumped = ast.dump(ast.parse(m["code"]))
        except SyntaxError:
            continue
        if dumped == original or dumped in seen:
            continue
        seen.add(dumped)
        kept.append(m)
    kept.sort(key=lambda m: (m["line"], m["kind"], m["description"]))
    return kept


def main():
    for line in sys.stdin:
        if not line.strip():
            continue
        request = json.loads(line)
        try:
            result = {"id": request["id"], "mutants": mutants(request["code"])}
        except SyntaxError as e:
            result = {"id": request["id"], "error": "SyntaxError: %s (line %s)" % (e.msg, e.lineno)}
        except Exception as e:  # a helper must answer for every input
            result = {"id": request["id"], "error": "%s: %s" % (type(e).__name__, e)}
        sys.stdout.write(json.dumps(result) + "\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
