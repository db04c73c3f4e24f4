"""What the launched script imports, and the framework releases it cannot import from.

`cuts_for(script, root)` reads the script a launch runs (Python's `ast`, never executed) and the repository's own
modules it imports (`from alignment import ...` -> src/alignment/__init__.py -> its `.configs`; at most
`MAX_DEPTH` levels and `MAX_MODULES` files), collects the framework names that run at import time (`from trl import
X`, `import trl` + `trl.X` in a class base or any statement outside a function body), and looks each up in
`catalog/data/removed_names.json`. A name removed in release R means the script fails at import on R and later, so
the range the run can use ends below R: a `narrowing.Cut`, with the reason ("scripts/sft.py imports
setup_chat_format, removed in TRL 0.26.0 (de343cdae ...)"). Likewise a name added to trl's top level
(`catalog/data/added_names.json`) raises the lower bound above the last release without it. Imports inside `try:` blocks that catch an import
failure, function bodies and `if` blocks other than `if __name__ == "__main__":` are not counted (they may never
run or may be guarded). Results are cached per file (`clear_cache()`).
"""

from __future__ import annotations

import ast
import os
from pathlib import Path

from trainlint.catalog import releases
from trainlint.context.narrowing import Cut
from trainlint.context.versions import parse_version

MAX_DEPTH = 3  # the script, the local package it imports, that package's own modules
MAX_MODULES = 24
MAX_BYTES = 512 * 1024
# import name -> distribution. `alignment` is alignment-handbook's package (installed from git, not PyPI): what its
# rewrite removed dates the parser a script uses (`trainlint.context.dialect.with_era`).
FRAMEWORK_PACKAGES = {"trl": "trl", "transformers": "transformers", "peft": "peft", "accelerate": "accelerate",
                      "alignment": "alignment-handbook"}
# Packages a repository may also ship itself (alignment-handbook's own checkout, a fork): their imports are followed
# into the repository's modules too.
CHECKED_OUT = ("alignment",)
LABELS = {"trl": "TRL", "transformers": "transformers", "peft": "PEFT", "accelerate": "Accelerate",
          "alignment-handbook": "alignment-handbook"}

_PARSED: dict[str, tuple] = {}
_CUTS: dict[tuple[str, str], tuple[Cut, ...]] = {}  # (script, root) -> its cuts, kept as long as _PARSED


def clear_cache() -> None:
    _PARSED.clear()
    _CUTS.clear()


def _read(path: Path) -> str | None:
    try:
        if not path.is_file() or path.stat().st_size > MAX_BYTES:
            return None
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None


def _scan(path: Path) -> tuple:
    """(framework uses, local imports) of one module: uses are (module, name, how, line); local imports are
    (module name, level, names) for the repository's own modules. Cached per path."""
    key = str(path)
    if key in _PARSED:
        return _PARSED[key]
    text = _read(path)
    result: tuple = ((), ())
    if text is not None and "import" in text:
        try:
            tree = ast.parse(text, key)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            tree = None
        if tree is not None:
            result = _collect(tree)
    _PARSED[key] = result
    return result


def _collect(tree) -> tuple:
    uses: list[tuple[str, str, str, int]] = []
    local: list[tuple[str, int, tuple[str, ...]]] = []
    aliases: dict[str, str] = {}  # local name -> framework module ("trl", "transformers.trainer_utils")

    def guarded(node) -> bool:
        for handler in node.handlers:
            names = []
            kind = handler.type
            for item in (kind.elts if isinstance(kind, ast.Tuple) else [kind]):
                if item is None:
                    return True
                names.append(item.id if isinstance(item, ast.Name) else getattr(item, "attr", ""))
            if not names or any(n in ("ImportError", "ModuleNotFoundError", "Exception", "BaseException",
                                      "AttributeError") for n in names):
                return True
        return False

    def main_guard(node) -> bool:
        test = node.test
        return (isinstance(test, ast.Compare) and isinstance(test.left, ast.Name) and test.left.id == "__name__"
                and len(test.comparators) == 1 and isinstance(test.comparators[0], ast.Constant)
                and test.comparators[0].value == "__main__")

    def expressions(node):
        """The attribute uses `alias.name` in a statement's expressions, outside function bodies and lambdas."""
        stack = [node]
        while stack:
            current = stack.pop()
            if isinstance(current, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                stack.extend(getattr(current, "decorator_list", ()))
                continue
            if isinstance(current, ast.Attribute) and isinstance(current.value, ast.Name) and \
                    current.value.id in aliases:
                uses.append((aliases[current.value.id], current.attr, "uses", current.lineno))
            stack.extend(ast.iter_child_nodes(current))

    def visit(body):
        for node in body:
            if isinstance(node, ast.Import):
                for alias in node.names:
                    top = alias.name.split(".")[0]
                    if top in FRAMEWORK_PACKAGES:
                        aliases[alias.asname or top] = alias.name if alias.asname else top
                    else:
                        local.append((alias.name, 0, ()))
            elif isinstance(node, ast.ImportFrom):
                module = node.module or ""
                names = tuple(a.name for a in node.names)
                if node.level == 0 and module.split(".")[0] in FRAMEWORK_PACKAGES:
                    for alias in node.names:
                        uses.append((module, alias.name, "imports", node.lineno))
                if node.level or module.split(".")[0] not in FRAMEWORK_PACKAGES or module.split(".")[0] in CHECKED_OUT:
                    local.append((module, node.level, names))
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                expressions(node)  # decorators only
            elif isinstance(node, ast.ClassDef):
                for part in node.bases + node.keywords + node.decorator_list:
                    expressions(part)
                visit(node.body)
            elif isinstance(node, ast.Try) or type(node).__name__ == "TryStar":
                if not guarded(node):
                    visit(node.body)
                visit(node.finalbody)
            elif isinstance(node, ast.If):
                if main_guard(node):
                    visit(node.body)
            elif isinstance(node, (ast.With, ast.AsyncWith)):
                visit(node.body)
            else:
                expressions(node)

    visit(tree.body)
    return tuple(uses), tuple(local)


def _local_module(module: str, level: int, here: Path, roots: list[Path]) -> list[Path]:
    """The repository files a local import names (a package's __init__.py or a module), if any."""
    parts = [p for p in module.split(".") if p]
    if level:
        base = here.parent
        for _ in range(level - 1):
            base = base.parent
        bases = [base]
    else:
        bases = roots
    found = []
    for base in bases:
        target = base.joinpath(*parts) if parts else base
        for candidate in (target / "__init__.py", target.with_suffix(".py") if parts else None):
            if candidate is not None and candidate.is_file() and candidate != here:
                found.append(candidate)
                break
        if found:
            break
    return found


def cuts_for(script: str, root: str) -> tuple[Cut, ...]:
    """The upper bounds the script's imports (and its local modules' imports) put on the frameworks. Kept per
    script and root until `clear_cache()`, as the modules' scans are: every config a script trains with asks again."""
    if not script:
        return ()
    key = (script, root)
    if key not in _CUTS:
        if len(_CUTS) >= 256:
            _CUTS.clear()
        _CUTS[key] = _cuts_for(script, root)
    return _CUTS[key]


def _cuts_for(script: str, root: str) -> tuple[Cut, ...]:
    start = Path(script)
    top = Path(root) if root else start.parent
    roots = [start.parent, top, top / "src"]
    best: dict[str, tuple] = {}
    floor: dict[str, tuple] = {}
    seen: set[Path] = set()
    queue: list[tuple[Path, int, str]] = [(start, 0, "")]
    while queue and len(seen) < MAX_MODULES:
        path, depth, via = queue.pop(0)
        try:
            path = path.resolve()
        except (OSError, RuntimeError):
            continue
        if path in seen:
            continue
        seen.add(path)
        uses, local = _scan(path)
        rel = _rel(path, top)
        for module, name, how, _line in uses:
            package = FRAMEWORK_PACKAGES[module.split(".")[0]]
            shown = name if how == "imports" else f"{module}.{name}"
            new = releases.added(module, name)
            if new is not None:
                old = floor.get(package)
                if old is None or _key(new[0]) > _key(old[0]):
                    floor[package] = (new[0], f"{rel}{via} {how} {shown}, which {LABELS[package]} {new[0]} and older "
                                                 f"lack (first in {new[1]})")
            found = releases.removed(module, name)
            if found is None:
                continue
            release, source = found
            reason = (f"{rel}{via} {how} {shown}, removed in {LABELS[package]} {release}"
                      + (f" ({source})" if source else ""))
            old = best.get(package)
            if old is None or _key(release) < _key(old[0]):
                best[package] = (release, reason)
        if depth >= MAX_DEPTH:
            continue
        for module, level, names in local:
            for target in _local_module(module, level, path, roots):
                if not _inside(target, top):
                    continue  # the repository's own modules only
                queue.append((target, depth + 1, f" (imported by {rel})" if not via else via))
                if target.name == "__init__.py":  # `from pkg import sub`: the submodules named, when files
                    for name in names:
                        sub = target.parent / f"{name}.py"
                        if sub.is_file():
                            queue.append((sub, depth + 1, f" (imported by {rel})" if not via else via))
    return (tuple(Cut(package, release, reason) for package, (release, reason) in sorted(best.items()))
            + tuple(Cut(package, "", reason, after) for package, (after, reason) in sorted(floor.items())))


def _inside(path: Path, root: Path) -> bool:
    try:
        path.resolve().relative_to(root.resolve())
    except (ValueError, OSError, RuntimeError):
        return False
    return True


def _key(release: str):
    return parse_version(release) or parse_version("0")


def _rel(path: Path, root: Path) -> str:
    try:
        return os.path.relpath(path, root).replace(os.sep, "/")
    except ValueError:
        return str(path)


def weakest(per_script: list[tuple[Cut, ...]]) -> tuple[Cut, ...]:
    """The cuts that hold whichever of these scripts runs: per framework and side, the loosest bound (the highest
    upper one, the lowest lower one), and only where every script has one."""
    if not per_script:
        return ()
    out = []
    for side in ("below", "after"):
        have = [{c.name: c for c in cuts if getattr(c, side)} for cuts in per_script]
        for name in sorted(set.intersection(*[set(h) for h in have])):
            mine = [h[name] for h in have]
            pick = max if side == "below" else min
            out.append(pick(mine, key=lambda c: _key(getattr(c, side))))
    return tuple(out)
