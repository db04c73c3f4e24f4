"""The package layout is the pipeline: imports only go downstream, the core knows no shell, no cycles.

Every module's imports are read with `ast` (function-level imports too: a lazy import is still a
dependency), so the test needs nothing imported.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "trainlint"

# Each stage (a package, or a top-level module) and the stages it may import. The core is everything
# but the shells; a stage may always import itself.
ALLOWED = {
    "diagnostics": set(),
    "document": {"diagnostics"},
    "catalog": set(),
    "plan": {"diagnostics"},
    "flavors": {"document", "plan", "catalog", "diagnostics"},
    "context": {"document", "plan", "catalog", "diagnostics"},
    "memory": {"plan", "catalog", "diagnostics"},
    "fixes": {"document", "plan", "catalog", "memory", "diagnostics"},
    "rules": {"document", "flavors", "plan", "context", "catalog", "memory", "fixes", "diagnostics"},
    "engine": {"document", "flavors", "plan", "context", "catalog", "memory", "rules", "fixes", "diagnostics"},
    "estimating": {"engine", "document", "flavors", "plan", "context", "catalog", "memory", "rules", "fixes",
                   "diagnostics"},
    # the planning answers (--gpus, --max, the hover's largest values): re-estimates over the estimate
    "planning": {"estimating", "engine", "document", "flavors", "plan", "context", "catalog", "memory", "rules",
                 "fixes", "diagnostics"},
    # shells
    "output": {"engine", "rules", "diagnostics", "__init__"},
    "lsp": {"engine", "planning", "document", "flavors", "plan", "context", "catalog", "memory", "rules", "fixes",
            "diagnostics", "__init__"},
    "cli": {"engine", "estimating", "planning", "output", "lsp", "document", "flavors", "plan", "context", "catalog", "memory",
            "rules", "fixes", "diagnostics", "__init__"},
    "__main__": {"cli"},
    "__init__": set(),
    "_versions": set(),  # PEP 440 versions and specifiers (packaging's), which every stage may use
    "_patterns": set(),  # module-level regular expressions compiled on first use, which every stage may use
}
EVERYWHERE = {"_versions", "_patterns"}
SHELLS = {"output", "lsp", "cli", "__main__"}
LSP_LIBRARIES = {"pygls", "lsprotocol"}


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" and len(parts) > 1 else parts)


MODULES = {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _imports(name: str, path: Path) -> set[str]:
    """Absolute names of everything the module imports (resolved to a module where one exists)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            for alias in node.names:
                candidate = f"{module}.{alias.name}"
                found.add(candidate if candidate in MODULES else module)
    return found


IMPORTS = {name: _imports(name, path) for name, path in MODULES.items()}


def _stage(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def test_every_module_belongs_to_a_known_stage():
    assert {_stage(m) for m in MODULES} <= set(ALLOWED)


@pytest.mark.parametrize("module", sorted(MODULES))
def test_imports_go_downstream(module):
    stage = _stage(module)
    wrong = sorted(
        target for target in IMPORTS[module]
        if target.startswith("trainlint") and _stage(target) != stage and _stage(target) not in ALLOWED[stage]
        and _stage(target) not in EVERYWHERE
    )
    assert not wrong, f"{module} ({stage}) may import only {sorted(ALLOWED[stage])}, imports {wrong}"


def test_the_core_imports_no_shell():
    offenders = {m: sorted(t for t in IMPORTS[m] if t.startswith("trainlint") and _stage(t) in SHELLS)
                 for m in MODULES if _stage(m) not in SHELLS}
    assert not {m: t for m, t in offenders.items() if t}


def test_only_the_language_server_imports_pygls_and_lsprotocol():
    offenders = sorted(m for m in MODULES if _stage(m) != "lsp"
                       and any(t.split(".")[0] in LSP_LIBRARIES for t in IMPORTS[m]))
    assert not offenders


def test_no_import_cycles():
    graph = {m: {t for t in IMPORTS[m] if t in MODULES and t != m} for m in MODULES}
    # A package's __init__ that re-exports its submodules is not an edge back into the package.
    for m in graph:
        graph[m] = {t for t in graph[m] if not (t == m.rpartition(".")[0] and MODULES[t].name == "__init__.py")}
    state: dict[str, int] = {}
    cycles: list[list[str]] = []

    def visit(node: str, stack: list[str]) -> None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                cycles.append(stack[stack.index(nxt):] + [nxt])
            elif nxt not in state:
                visit(nxt, stack)
        stack.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node, [])
    assert not cycles, "import cycles: " + "; ".join(" -> ".join(c) for c in cycles)


def test_the_checker_sees_real_imports():
    # A guard against a checker that reads nothing: known edges must be found.
    assert "trainlint.document.tree" in IMPORTS["trainlint.document.yaml_parser"]
    assert "pygls.lsp.server" in IMPORTS["trainlint.lsp.state"]
    assert "trainlint.memory.estimate" in IMPORTS["trainlint.engine"]
