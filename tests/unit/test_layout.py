"""The code's shape holds: no import circle among the modules of shared/ and services/,
counting imports made inside functions (the usual way to hide one)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _modules() -> dict[str, Path]:
    found = {}
    for base in ("shared", "services"):
        for path in (ROOT / base).rglob("*.py"):
            parts = path.relative_to(ROOT).with_suffix("").parts
            found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def _imported(module: str, path: Path, node: ast.Import | ast.ImportFrom,
              modules: dict[str, Path]) -> list[str]:
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    base = node.module or ""
    if node.level:
        package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
        package = package[:len(package) - (node.level - 1)]
        base = ".".join(package + ([node.module] if node.module else []))
    return [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names]


def import_graph() -> dict[str, set[str]]:
    """module -> the project modules it imports (anywhere in its text)."""
    modules = _modules()
    graph: dict[str, set[str]] = {}
    for module, path in modules.items():
        deps = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                for target in _imported(module, path, node, modules):
                    while target and target not in modules:
                        target = target.rpartition(".")[0]
                    if target and target != module:
                        deps.add(target)
        graph[module] = deps
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
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
                    work.append((child, iter(sorted(graph[child]))))
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


def test_the_finder_finds_a_circle():
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert circles({"a": {"b"}, "b": set()}) == []


def test_no_import_circles():
    assert circles(import_graph()) == []


def private_imports() -> list[str]:
    """``from m import _name`` in shared/, services/ and bench/: a module's private name used
    by another module (it should be public there, or stay where it is)."""
    found = []
    for base in ("shared", "services", "bench"):
        for path in (ROOT / base).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.ImportFrom):
                    found += [f"{path.relative_to(ROOT)}: {node.module}.{a.name}"
                              for a in node.names
                              if a.name.startswith("_") and not a.name.startswith("__")]
    return found


def test_no_private_name_is_imported_by_another_module():
    assert private_imports() == []


def too_long(package: str, lines: int = 500, function_lines: int = 60) -> list[str]:
    """The modules of ``package`` over ``lines`` lines and its functions over
    ``function_lines`` (issue 28's bounds)."""
    found = []
    for path in (ROOT / package).rglob("*.py"):
        text = path.read_text()
        name = path.relative_to(ROOT)
        if text.count("\n") > lines:
            found.append(f"{name}: {text.count(chr(10))} lines")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                length = (node.end_lineno or node.lineno) - node.lineno + 1
                if length > function_lines:
                    found.append(f"{name}:{node.lineno} {node.name}: {length} lines")
    return found


def test_the_web_has_no_module_over_500_lines_and_no_function_over_60():
    """The web app in modules (sessions, a module of routes per page, what the pages share),
    not one function of closures (create_app was 332 lines)."""
    assert too_long("services/web") == []
