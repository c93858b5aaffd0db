"""The house's rules, read off the source: floors import downward, and no module is a closet.

DESIGN.md section 2: the modules of ``src/perfci`` form a DAG (imports made only for type
checking aside); no private name is imported from another module (it is made public one
floor down instead); no module is over 1,000 lines and no function over 150 lines of code.
These tests parse the source (no import), so they fail on the change that breaks a rule.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"
PACKAGE = SRC / "perfci"
MAX_MODULE_LINES = 1000
MAX_FUNCTION_LINES = 150


def _modules() -> dict[str, Path]:
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        name = ".".join(path.relative_to(SRC).with_suffix("").parts)
        out[name.removesuffix(".__init__")] = path
    return out


MODULES = _modules()


def _type_checking_nodes(tree: ast.AST) -> set[int]:
    """Ids of every node inside an ``if TYPE_CHECKING:`` block."""
    inside: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If):
            test = node.test
            name = test.id if isinstance(test, ast.Name) else getattr(test, "attr", None)
            if name == "TYPE_CHECKING":
                inside.update(id(n) for n in ast.walk(node))
    return inside


def _target(module: str, path: Path, node: ast.ImportFrom) -> str:
    """The absolute module an ``from ... import`` names."""
    if not node.level:
        return node.module or ""
    base = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    base = base[: len(base) - node.level + 1]
    return ".".join(base + ([node.module] if node.module else []))


def _imports() -> tuple[dict[str, set[str]], list[str]]:
    """Import edges between perfci modules, and the private names taken from another module."""
    edges: dict[str, set[str]] = {m: set() for m in MODULES}
    private: list[str] = []
    for module, path in MODULES.items():
        tree = ast.parse(path.read_text(), str(path))
        skip = _type_checking_nodes(tree)
        for node in ast.walk(tree):
            if id(node) in skip:
                continue
            if isinstance(node, ast.ImportFrom):
                target = _target(module, path, node)
                if not target.startswith("perfci"):
                    continue
                for alias in node.names:
                    full = f"{target}.{alias.name}"
                    imported = full if full in MODULES else target
                    if imported in MODULES and imported != module:
                        edges[module].add(imported)
                    name = alias.name
                    if name.startswith("_") and not name.startswith("__") and full not in MODULES:
                        if target != module:
                            private.append(f"{module} <- {target}.{name}")
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name in MODULES and alias.name != module:
                        edges[module].add(alias.name)
    return edges, private


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in edges:
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def _code_lines(lines: list[str], node: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    """Lines of code of a function: not blank, not a comment, not its docstring."""
    body = node.body
    start = body[0].lineno
    first = body[0]
    if (
        isinstance(first, ast.Expr)
        and isinstance(first.value, ast.Constant)
        and isinstance(first.value.value, str)
    ):
        start = (first.end_lineno or first.lineno) + 1
    end = node.end_lineno or node.lineno
    code = [s for s in lines[start - 1 : end] if s.strip() and not s.strip().startswith("#")]
    return len(code)


def test_the_modules_import_each_other_without_a_cycle():
    edges, _ = _imports()
    assert _cycles(edges) == []


def test_the_cycle_finder_finds_a_cycle():
    # the guard above can fail: a two-module loop and a three-module loop are found
    edges = {"a": {"b"}, "b": {"a"}, "c": {"d"}, "d": {"e"}, "e": {"c"}, "f": {"a"}}
    assert sorted(_cycles(edges)) == [["a", "b"], ["c", "d", "e"]]


def test_no_private_name_is_imported_from_another_module():
    _, private = _imports()
    assert private == []


@pytest.mark.parametrize("module", sorted(MODULES))
def test_no_module_is_over_a_thousand_lines(module):
    assert MODULES[module].read_text().count("\n") <= MAX_MODULE_LINES


def test_no_function_is_over_150_lines_of_code():
    long = []
    for module, path in MODULES.items():
        lines = path.read_text().splitlines()
        for node in ast.walk(ast.parse("\n".join(lines))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                if (n := _code_lines(lines, node)) > MAX_FUNCTION_LINES:
                    long.append(f"{module}.{node.name}: {n}")
    assert long == []


def test_the_core_imports_nothing_above_it():
    edges, _ = _imports()
    upward = {
        f"{m} -> {t}"
        for m, targets in edges.items()
        if m.startswith("perfci._core")
        for t in targets
        if not t.startswith("perfci._core")
    }
    assert upward == set()


def test_bayes_imports_only_the_core_metrics_and_counting():
    edges, _ = _imports()

    def inside(module: str, package: str) -> bool:
        return module == package or module.startswith(f"{package}.")

    # plotting is the one figure style of the library, a leaf that imports _core only
    # (checked below): the Bayesian figures share it with the frequentist ones
    allowed = (
        "perfci._core",
        "perfci.bayes",
        "perfci.metrics",
        "perfci.counting",
        "perfci.models",
        "perfci.plotting",
    )
    outside = {
        f"{m} -> {t}"
        for m, targets in edges.items()
        if inside(m, "perfci.bayes")
        for t in targets
        if not any(inside(t, package) for package in allowed)
    }
    assert outside == set()


def test_plotting_is_a_leaf_on_the_core():
    edges, _ = _imports()
    assert {t for t in edges["perfci.plotting"] if not t.startswith("perfci._core")} == set()
