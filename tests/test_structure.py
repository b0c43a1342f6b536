"""The package's structure stays as simple as its data flow (issue 29): no import circles
(imports under ``if TYPE_CHECKING:`` and inside functions included), no module over 400
lines, and every module the "How it works" map names exists."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "optuna_gpbandit"


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports() -> dict[str, set[str]]:
    """module -> the package modules it imports (any import statement anywhere in the file)."""
    modules = {_module_name(p): p for p in PACKAGE.rglob("*.py")}
    graph: dict[str, set[str]] = {m: set() for m in modules}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
        for node in ast.walk(ast.parse(path.read_text())):
            targets = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    base = ".".join(package.split(".")[: len(package.split(".")) - node.level + 1]
                                    + ([base] if base else []))
                # ``from pkg import mod`` depends on the module; ``from pkg import name`` on pkg
                subs = [f"{base}.{a.name}" for a in node.names if f"{base}.{a.name}" in modules]
                targets = subs if len(subs) == len(node.names) else [base] + subs
            for t in targets:
                if t in modules and t != name:
                    graph[name].add(t)
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in graph:
        if v not in index:
            visit(v)
    return out


def _without_package_inits(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """A subpackage's ``__init__`` re-exports its modules, and importing ``pkg.mod`` runs
    ``pkg/__init__`` first: an edge into a package's own ``__init__`` from inside the package
    is that mechanism, not a dependency."""
    return {m: {t for t in deps if not m.startswith(t + ".")} for m, deps in graph.items()}


def test_the_import_graph_has_no_circles():
    graph = _without_package_inits(_imports())
    assert _cycles(graph) == []


def test_a_circle_would_be_found():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_module_is_over_400_lines():
    long = {str(p.relative_to(ROOT)): n for p in PACKAGE.rglob("*.py")
            if (n := len(p.read_text().splitlines())) > 400}
    assert long == {}


def test_the_how_it_works_map_names_existing_modules():
    text = (ROOT / "docs" / "how-it-works.md").read_text()
    named = set(re.findall(r"\b([a-z_]+(?:/[a-z_]+)*\.py)\b", text))
    named |= {d.rstrip("/") for d in re.findall(r"\b([a-z_]+/)(?=\s)", text)}
    files = {str(p.relative_to(PACKAGE)) for p in PACKAGE.rglob("*.py")}
    names = {p.name for p in PACKAGE.rglob("*.py")}
    missing = [n for n in named if n not in files and n not in names
               and not (PACKAGE / n).is_dir() and not (ROOT / n).exists()]
    assert len(named) > 10 and missing == [], missing
