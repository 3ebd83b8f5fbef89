"""The import structure of mini_claude/: no import cycles (module- or package-level), and no layer imports a higher
one. The layer order is the `layers` block of docs/ARCHITECTURE.md, so the picture and the code cannot drift apart.

Imports are read with `ast` (every `import` / `from … import`, lazy ones inside functions and TYPE_CHECKING ones too),
so nothing of mini_claude is executed.
"""

from __future__ import annotations

import ast
import re
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "mini_claude"
ARCHITECTURE = ROOT / "docs" / "ARCHITECTURE.md"


def _modules() -> dict[str, Path]:
    mods: dict[str, Path] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.name == "__main__.py":  # `python -m` entry points: imported by nothing, outside the layers
            continue
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        mods[".".join(parts)] = path
    return mods


def _imports(module: str, path: Path, known: dict[str, Path]) -> set[str]:
    """The mini_claude modules `module` imports (a `from pkg import name` of a submodule counts as that module)."""
    found: set[str] = set()
    is_package = path.name == "__init__.py"
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".") if is_package else module.split(".")[:-1]
                base = base[: len(base) - (node.level - 1)]
                target = ".".join([*base, *([node.module] if node.module else [])])
            else:
                target = node.module or ""
            names = [target, *(f"{target}.{alias.name}" for alias in node.names)]
        else:
            continue
        for name in names:
            # `import a.b.c` depends on a.b.c; the longest known prefix is the module it reaches
            while name and name not in known:
                name = name.rpartition(".")[0]
            if name and name != module:
                found.add(name)
    return found


def _graph() -> tuple[dict[str, Path], dict[str, set[str]]]:
    mods = _modules()
    return mods, {name: _imports(name, path, mods) for name, path in mods.items()}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one node (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    result: list[list[str]] = []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, edges = work[-1]
            advanced = False
            for succ in edges:
                if succ not in index:
                    index[succ] = low[succ] = counter
                    counter += 1
                    stack.append(succ)
                    on_stack.add(succ)
                    work.append((succ, iter(sorted(graph.get(succ, ())))))
                    advanced = True
                    break
                if succ in on_stack:
                    low[node] = min(low[node], index[succ])
            if advanced:
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
                    result.append(sorted(component))
    return result


def _package_of(module: str, mods: dict[str, Path]) -> str:
    """The package a module belongs to: itself for a package's __init__, else its parent."""
    return module if mods[module].name == "__init__.py" else module.rpartition(".")[0]


def _layers() -> list[str]:
    """The `layers` block of docs/ARCHITECTURE.md, highest first: one package per line (`mini_claude` is the root
    modules), text after the name is a comment."""
    text = ARCHITECTURE.read_text(encoding="utf-8")
    match = re.search(r"```layers\n(.*?)```", text, re.S)
    assert match, f"{ARCHITECTURE.name} has no ```layers block"
    return [line.split()[0] for line in match.group(1).splitlines() if line.strip()]


def _layer_of(package: str, layers: list[str]) -> str:
    """The listed layer a package sits in: the longest listed name equal to it or above it in the tree."""
    candidates = [name for name in layers if package == name or package.startswith(name + ".")]
    assert candidates, f"package {package} is in no layer of docs/ARCHITECTURE.md's layers block: add it"
    return max(candidates, key=len)


def test_no_module_level_import_cycles() -> None:
    _, graph = _graph()
    cycles = _cycles(graph)
    assert not cycles, "import cycles between modules:\n" + "\n".join(" <-> ".join(c) for c in cycles)


def test_no_package_level_import_cycles() -> None:
    mods, graph = _graph()
    packages: dict[str, set[str]] = defaultdict(set)
    for module, targets in graph.items():
        source = _package_of(module, mods)
        packages[source]  # every package is a node, importing or not
        for target in targets:
            dest = _package_of(target, mods)
            if dest != source:
                packages[source].add(dest)
    cycles = _cycles(dict(packages))
    assert not cycles, "import cycles between packages:\n" + "\n".join(" <-> ".join(c) for c in cycles)


def test_no_layer_imports_a_higher_one() -> None:
    mods, graph = _graph()
    layers = _layers()
    rank = {name: len(layers) - position for position, name in enumerate(layers)}  # higher layer, higher rank
    upward = []
    for module, targets in sorted(graph.items()):
        source = _layer_of(_package_of(module, mods), layers)
        for target in sorted(targets):
            dest = _layer_of(_package_of(target, mods), layers)
            if rank[dest] > rank[source]:
                upward.append(f"{module} ({source}) imports {target} ({dest})")
    assert not upward, "imports against the layer order of docs/ARCHITECTURE.md:\n" + "\n".join(upward)


def test_the_checks_catch_what_they_claim() -> None:
    """The cycle finder sees a cycle, and the layer lookup puts subpackages in their listed layer."""
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []
    layers = ["mini_claude.cli", "mini_claude.mcp", "mini_claude.mcp.transports", "mini_claude"]
    assert _layer_of("mini_claude.mcp.host", layers) == "mini_claude.mcp"
    assert _layer_of("mini_claude.mcp.transports", layers) == "mini_claude.mcp.transports"
    assert _layer_of("mini_claude", layers) == "mini_claude"


MAX_MODULE_LINES = 600
LONG_MODULE_LINES = 500
LONG_REASON = "Why this module is long:"


def test_modules_stay_small_or_say_why() -> None:
    """No module over 600 lines; one over 500 says why in its docstring (a paragraph starting "Why this module is
    long:"), so splitting by concern stays the default."""
    problems = []
    for module, path in _modules().items():
        lines = len(path.read_text(encoding="utf-8").splitlines())
        if lines > MAX_MODULE_LINES:
            problems.append(f"{module}: {lines} lines (max {MAX_MODULE_LINES})")
        elif lines > LONG_MODULE_LINES:
            doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
            if LONG_REASON not in doc:
                problems.append(f"{module}: {lines} lines and no {LONG_REASON!r} in its docstring")
    assert not problems, "\n".join(problems)


def test_test_files_have_unique_names() -> None:
    """Test folders are not packages, so pytest imports each test file by its bare name: two files of one name in
    different folders stop the whole run at collection ("import file mismatch")."""
    tests = Path(__file__).resolve().parent
    seen: dict[str, list[str]] = {}
    for path in tests.rglob("test_*.py"):
        seen.setdefault(path.name, []).append(str(path.relative_to(tests)))
    assert not {name: where for name, where in seen.items() if len(where) > 1}
