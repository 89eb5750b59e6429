"""No test re-decides a choice among scores by a rule of its own (checked with `ast`, nothing is run).

A test whose expected value comes from scores (a trained model's BLEU, a loss, a detector's
confidence) through a comparison of its own breaks on the CPU where two scores tie or cross: the
code keeps the first listed on a tie (nmt/ranking.py), a hand-written `a > b` takes the second.
So an assertion's expected side may not be
- a conditional expression that orders two computed values (`X if s1 > s2 else Y`), nor
- `max`, `min` or `sorted` with a `key=` (an argmax with Python's tie rule, not necessarily the code's),
directly or through a name assigned in the same test. Compute the expectation with the code's own
function (`nmt.ranking.best`, `ranked`, `improves`, `within`) or assert a property that holds either
way (`scores[chosen] == max(scores.values())`). A line that is safe on every CPU (scores not from a
model, or the same rule by construction) says why with a `# tie-rule: ...` comment.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from pathlib import Path

TESTS = Path(__file__).resolve().parent
ORDER = (ast.Gt, ast.Lt, ast.GtE, ast.LtE)
MARK = "# tie-rule:"


def _literal(node: ast.AST) -> bool:
    """A constant, a negated constant or an UPPER_CASE module constant."""
    if isinstance(node, ast.UnaryOp):
        node = node.operand
    return isinstance(node, ast.Constant) or (isinstance(node, ast.Name) and node.id.isupper())


def _orders_computed_values(test: ast.AST) -> bool:
    for node in ast.walk(test):
        if isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            if any(isinstance(op, ORDER) and not _literal(a) and not _literal(b)
                   for op, a, b in zip(node.ops, sides, sides[1:])):
                return True
    return False


def _decides(node: ast.AST) -> str | None:
    """What makes `node` (or something inside it) a choice among scores, or None."""
    for sub in ast.walk(node):
        if isinstance(sub, ast.IfExp) and _orders_computed_values(sub.test):
            return "a conditional expression that orders two computed values"
        if (isinstance(sub, ast.Call) and isinstance(sub.func, ast.Name) and sub.func.id in ("max", "min", "sorted")
                and any(k.arg == "key" for k in sub.keywords)):
            return f"{sub.func.id}(key=...)"
    return None


def _chosen_names(fn: ast.AST, marked: Callable[[ast.AST], bool]) -> dict[str, str]:
    """Names a test assigns a choice among scores (unless the assignment is marked), with why."""
    chosen = {}
    for node in ast.walk(fn):
        if isinstance(node, ast.Assign) and not marked(node) and (why := _decides(node.value)):
            chosen.update({n.id: why for target in node.targets for n in ast.walk(target) if isinstance(n, ast.Name)})
    return chosen


def _equality_sides(test: ast.AST) -> list[ast.AST]:
    """Every side of every `==` / `!=` comparison in an assertion."""
    return [side for cmp in ast.walk(test) if isinstance(cmp, ast.Compare)
            and any(isinstance(op, ast.Eq | ast.NotEq) for op in cmp.ops) for side in (cmp.left, *cmp.comparators)]


def findings(source: str, name: str) -> list[str]:
    """`name:line: why` for each assertion whose expected value re-decides a choice among scores."""
    lines = source.splitlines()

    def marked(node: ast.AST) -> bool:
        return any(MARK in lines[i - 1] for i in range(node.lineno, (node.end_lineno or node.lineno) + 1))

    found = set()
    for fn in (f for f in ast.walk(ast.parse(source)) if isinstance(f, ast.FunctionDef | ast.AsyncFunctionDef)):
        chosen = _chosen_names(fn, marked)
        for node in (a for a in ast.walk(fn) if isinstance(a, ast.Assert) and not marked(a)):
            for side in _equality_sides(node.test):
                why = _decides(side) or next((chosen[n.id] for n in ast.walk(side)
                                              if isinstance(n, ast.Name) and n.id in chosen), None)
                if why:
                    found.add(f"{name}:{node.lineno}: {why}")
    return sorted(found)


def test_no_test_re_decides_a_choice_among_scores() -> None:
    found = [f for path in sorted(TESTS.rglob("test_*.py"))
             for f in findings(path.read_text(encoding="utf-8"), str(path.relative_to(TESTS)))]
    assert not found, ("expected values chosen by the test's own comparison (use nmt.ranking or assert a property "
                       "that holds on a tie; `# tie-rule: why` where it is safe): " + "; ".join(found))


def test_the_rule_catches_the_oracle_that_failed_on_one_cpu() -> None:
    """The decode-tune oracle that failed on an Intel Xeon where both settings' means were 25.67."""
    failed = (
        "def test_best(r, means):\n"
        "    assert r['best'] == ({'beam': 1} if means['b1'] > means['b3'] else {'beam': 3})\n"
        "def test_through_a_name(r, scores):\n"
        "    want = max(scores, key=scores.get)\n"
        "    assert r['best'] == want\n"
        "def test_safe(r, scores, n):\n"
        "    assert r['best'] == ranking.best(scores, scores.get)\n"
        "    assert scores[r['best']] == max(scores.values())\n"
        "    assert r['kind'] == ('long' if n > 3 else 'short')\n"
        "    assert r['order'] == sorted(scores, key=str)  # tie-rule: names, not scores\n"
    )
    assert findings(failed, "t.py") == ["t.py:2: a conditional expression that orders two computed values",
                                        "t.py:5: max(key=...)"]
