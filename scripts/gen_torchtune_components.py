"""Write trainlint/catalog/data/torchtune_components.json: the `torchtune.*` dotted paths each torchtune release
resolves, read from a git clone of pytorch/torchtune (its release tags and the main branch), never imported.

    python scripts/gen_torchtune_components.py /path/to/torchtune.git

A path resolves as `torchtune/config/_utils.py: _get_component_from_path` does it (import the module, getattr the
last part; releases before 0.6 walk getattr / import_module part by part): a module (a package folder or a .py
file) resolves, and so does every name its top level binds (def, class, assignment, import). A module with a
star import or a module-level `__getattr__` binds names this cannot list: it is marked open. Each name keeps the
releases that have it, as index ranges into `releases` ("0-3,5-9").
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "trainlint" / "catalog" / "data" / "torchtune_components.json"
TAGS = ("v0.1.0", "v0.1.1", "v0.2.0", "v0.2.1", "v0.3.0", "v0.3.1", "v0.4.0", "v0.5.0", "v0.6.0", "v0.6.1")


def _git(repo: str, *args: str) -> str:
    return subprocess.run(["git", "--git-dir", repo, *args], check=True, capture_output=True, text=True).stdout


def _names(source: str) -> tuple[set[str], bool]:
    """The names a module's top level binds, and whether it binds names that cannot be listed."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return set(), True
    names: set[str] = set()
    open_ = False

    def bind(target: ast.AST) -> None:
        if isinstance(target, ast.Name):
            names.add(target.id)
        elif isinstance(target, (ast.Tuple, ast.List)):
            for element in target.elts:
                bind(element)

    def walk(body: list[ast.stmt]) -> None:
        nonlocal open_
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(node.name)
                if node.name == "__getattr__":
                    open_ = True
            elif isinstance(node, ast.Assign):
                for target in node.targets:
                    bind(target)
            elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
                bind(node.target)
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    names.add(alias.asname or alias.name.split(".")[0])
            elif isinstance(node, ast.ImportFrom):
                for alias in node.names:
                    if alias.name == "*":
                        open_ = True
                    else:
                        names.add(alias.asname or alias.name)
            elif isinstance(node, (ast.If, ast.Try)):  # guarded imports and definitions bind on some installs
                walk(node.body)
                for handler in getattr(node, "handlers", []):
                    walk(handler.body)
                walk(node.orelse)
                walk(getattr(node, "finalbody", []))

    walk(tree.body)
    return names, open_


def release(repo: str, ref: str) -> tuple[dict[str, set[str]], set[str]]:
    """module path -> names, and the open modules, at one ref."""
    files = [f for f in _git(repo, "ls-tree", "-r", "--name-only", ref, "torchtune").splitlines()
             if f.endswith(".py")]
    modules: dict[str, set[str]] = {}
    opened: set[str] = set()
    for path in files:
        parts = path[:-3].split("/")
        if parts[-1] == "__init__":
            parts = parts[:-1]
        dotted = ".".join(parts)
        names, open_ = _names(_git(repo, "show", f"{ref}:{path}"))
        modules.setdefault(dotted, set()).update(names)
        if open_:
            opened.add(dotted)
        # a package knows its submodules (import_module / the part-by-part walk reach them)
        for i in range(1, len(parts)):
            modules.setdefault(".".join(parts[:i]), set()).add(parts[i])
    return modules, opened


def _ranges(indices: list[int]) -> str:
    spans = []
    start = prev = indices[0]
    for i in indices[1:]:
        if i != prev + 1:
            spans.append(f"{start}-{prev}" if start != prev else str(start))
            start = i
        prev = i
    spans.append(f"{start}-{prev}" if start != prev else str(start))
    return ",".join(spans)


def main(repo: str) -> None:
    refs = [*TAGS, "HEAD"]
    labels = [t.lstrip("v") for t in TAGS] + ["main"]
    seen: dict[str, dict[str, list[int]]] = {}
    opened: dict[str, list[int]] = {}
    for index, ref in enumerate(refs):
        modules, open_modules = release(repo, ref)
        for module, names in modules.items():
            entry = seen.setdefault(module, {})
            entry.setdefault("", []).append(index)
            for name in names:
                if not name.startswith("__"):
                    entry.setdefault(name, []).append(index)
        for module in open_modules:
            opened.setdefault(module, []).append(index)
    head = _git(repo, "rev-parse", "HEAD").strip()
    data = {
        "_doc": "torchtune `_component_` paths each release resolves (torchtune/config/_utils.py: "
                "_get_component_from_path): modules, and the names each module's top level binds, with the "
                "releases that have them as index ranges into `releases`. `open`: modules with a star import or a "
                "module-level __getattr__ (any name may resolve there). Generated by "
                f"scripts/gen_torchtune_components.py from pytorch/torchtune tags {TAGS[0]} - {TAGS[-1]} and main "
                f"({head[:10]}); never edit by hand.",
        "releases": labels,
        "open": {m: _ranges(sorted(set(i))) for m, i in sorted(opened.items())},
        "modules": {m: {("_" if n == "" else n): _ranges(sorted(set(i))) for n, i in sorted(names.items())}
                    for m, names in sorted(seen.items())},
    }
    OUT.write_text(json.dumps(data, indent=0, sort_keys=False, separators=(",", ":")) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else ".git")
