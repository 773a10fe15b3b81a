"""The layout's rules, checked on the source itself (issue 11): they are contracts, not sentences.

- the write side (``indexer/``), the read side (``query/``) and the core (``bookdup/``) keep
  their functions short: none longer than 60 lines and no ``nonlocal`` (closures over mutable
  state hide a stage's inputs and outputs);
- the core (``bookdup/``) does no I/O: no file, environment or network access.

The import directions themselves are checked by import-linter (``[tool.importlinter]`` in
pyproject.toml), run by the test command next to ruff and mypy.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: the thin layers, and the core since its one long function was split (CODE-REVIEW item 5)
SHORT_FUNCTION_PACKAGES = ("indexer", "query", "bookdup")
MAX_FUNCTION_LINES = 60
# Names whose use in the core means file, environment or process I/O.
CORE_FORBIDDEN_CALLS = frozenset({"open", "savefig", "write_text", "read_text", "mkdir", "glob"})
CORE_FORBIDDEN_MODULES = frozenset({"os", "pathlib", "pickle", "gzip", "importlib", "shutil"})


def _modules(package: str) -> list[Path]:
    return sorted((ROOT / package).rglob("*.py"))


def _functions(tree: ast.AST) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
    return [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]


def _length(node: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    """Lines from the def (decorators excluded) to the last line of the body."""
    return (node.end_lineno or node.lineno) - node.lineno + 1


@pytest.mark.parametrize("package", SHORT_FUNCTION_PACKAGES)
def test_functions_are_short_and_without_nonlocal(package: str) -> None:
    long_ones, nonlocals = [], []
    for path in _modules(package):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        rel = path.relative_to(ROOT)
        for fn in _functions(tree):
            if _length(fn) > MAX_FUNCTION_LINES:
                long_ones.append(f"{rel}:{fn.lineno} {fn.name} ({_length(fn)} lines)")
        nonlocals += [f"{rel}:{n.lineno}" for n in ast.walk(tree) if isinstance(n, ast.Nonlocal)]
    assert not long_ones, f"functions over {MAX_FUNCTION_LINES} lines: {long_ones}"
    assert not nonlocals, f"nonlocal statements: {nonlocals}"


def test_core_does_no_io() -> None:
    found = []
    for path in _modules("bookdup"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        rel = path.relative_to(ROOT)
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [a.name.split(".")[0] for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [(node.module or "").split(".")[0]]
            elif isinstance(node, ast.Call):
                func = node.func
                name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
                if name in CORE_FORBIDDEN_CALLS:
                    found.append(f"{rel}:{node.lineno} calls {name}()")
                continue
            else:
                continue
            found += [
                f"{rel}:{node.lineno} imports {n}" for n in names if n in CORE_FORBIDDEN_MODULES
            ]
    assert not found, f"I/O in the core: {found}"


def test_checker_sees_a_long_function_and_a_nonlocal() -> None:
    """The rules above must be able to fail: feed them a known offender."""
    body = "\n".join(f"    x{i} = {i}" for i in range(MAX_FUNCTION_LINES))
    tree = ast.parse(f"def f():\n    y = 0\n    def g():\n        nonlocal y\n{body}\n")
    (outer, _inner) = _functions(tree)
    assert _length(outer) > MAX_FUNCTION_LINES
    assert any(isinstance(n, ast.Nonlocal) for n in ast.walk(tree))
