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


# --- size: modules of a few hundred lines, functions that fit on a screen ---------------------

#: the most lines a module under shared/, services/ or bench/ may have
MAX_MODULE_LINES = 500
#: the most lines a function or method may span, from its ``def`` to its last line (its
#: docstring included; a nested function counts in its own right and in its parent's)
MAX_FUNCTION_LINES = 60
SIZED = ("shared", "services", "bench")

#: modules over the limit for now, each with why; the list only shrinks (an entry no longer
#: needed fails the test below, so it is taken out when its module is split)
LONG_MODULES: dict[str, str] = {}
#: functions over the limit, as "path:qualified name", each with why; the list only shrinks
LONG_FUNCTIONS = {
    "shared/infra/natsauth.py:users": "a data table: every NATS user with its rights and why, "
                                      "one entry each",
}


def long_functions(source: str, limit: int = MAX_FUNCTION_LINES) -> dict[str, int]:
    """The functions and methods of ``source`` longer than ``limit`` lines: qualified name
    (``Class.method``, ``outer.inner``) -> lines."""
    found: dict[str, int] = {}

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = f"{prefix}{child.name}"
                if not isinstance(child, ast.ClassDef):
                    lines = (child.end_lineno or child.lineno) - child.lineno + 1
                    if lines > limit:
                        found[name] = lines
                visit(child, name + ".")
            else:
                visit(child, prefix)

    visit(ast.parse(source), "")
    return found


def _sized_files() -> list[Path]:
    return sorted(p for base in SIZED for p in (ROOT / base).rglob("*.py"))


def test_the_size_finder_counts_def_to_last_line():
    body = "\n".join(f"    x = {i}" for i in range(59))
    fits = f"def f():\n{body}\n"  # 60 lines
    assert long_functions(fits) == {}
    over = f"class C:\n    def m(self):\n    {body.replace(chr(10), chr(10) + '    ')}\n" \
           f"        return x\n"
    assert long_functions(over) == {"C.m": 61}
    nested = f"async def outer():\n    def inner():\n    {body.replace(chr(10), chr(10) + '    ')}\n" \
             f"        return x\n    return inner\n"
    assert long_functions(nested) == {"outer": 63, "outer.inner": 61}


def test_no_module_is_over_500_lines():
    over = {}
    for path in _sized_files():
        lines = len(path.read_text().splitlines())
        if lines > MAX_MODULE_LINES and str(path.relative_to(ROOT)) not in LONG_MODULES:
            over[str(path.relative_to(ROOT))] = lines
    assert over == {}, f"modules over {MAX_MODULE_LINES} lines: split them by concern"


def test_no_function_is_over_60_lines():
    over = {}
    for path in _sized_files():
        rel = str(path.relative_to(ROOT))
        for name, lines in long_functions(path.read_text()).items():
            if f"{rel}:{name}" not in LONG_FUNCTIONS:
                over[f"{rel}:{name}"] = lines
    assert over == {}, f"functions over {MAX_FUNCTION_LINES} lines: split them"


def test_the_size_allow_lists_only_shrink():
    """Each entry says why, and is still needed: one whose module or function is back under
    the limit (or gone) is taken out, so the lists never hide a new long one."""
    assert all(why.strip() for why in (*LONG_MODULES.values(), *LONG_FUNCTIONS.values()))
    stale = [rel for rel in LONG_MODULES
             if not (ROOT / rel).exists()
             or len((ROOT / rel).read_text().splitlines()) <= MAX_MODULE_LINES]
    for entry in LONG_FUNCTIONS:
        rel, _, name = entry.partition(":")
        path = ROOT / rel
        if not path.exists() or name not in long_functions(path.read_text()):
            stale.append(entry)
    assert stale == [], "no longer over the limit: take these out of the allow-list"


def test_the_web_has_no_module_over_500_lines_and_no_function_over_60():
    """The web app in modules (sessions, a module of routes per page, what the pages share),
    not one function of closures (create_app was 332 lines): the size tests above hold for
    services/web with no entry in their allow-lists."""
    assert [e for e in (*LONG_MODULES, *LONG_FUNCTIONS) if e.startswith("services/web/")] == []
