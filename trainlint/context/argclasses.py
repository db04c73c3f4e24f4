"""The argument classes a repository defines for its own parser, read statically (Python's `ast`, never executed).

A repository that builds its parser from classes of its own accepts the keys those classes declare:
`HfArgumentParser((ModelArguments, DataArguments, MyTrainingArguments))` with dataclasses defined in the repository
(subclassing or beside transformers' own), `LightningCLI(Model, Data, trainer_class=MyTrainer)` (LightningCLI adds
the `trainer` group from `trainer_class`'s signature: lightning.pytorch.cli.LightningCLI -> `add_class_arguments`),
or a framework package the repository vendors or forks (LLaMA-Factory's `src/llamafactory/hparams`, named per
dialect in `schemas/dialects.json` `argument_modules`).

`parser_classes(script, root)` finds the parser constructions in one script and resolves the classes they name
through the repository's own modules (the script's folder, the repository root and its `src/`; `from pkg.mod import
X`, `from .mod import X`, re-exports through `__init__.py`), following each class's bases that the repository
defines. A dataclass declares its annotated class attributes; a Trainer subclass its `__init__` parameters. A base
the repository does not define (transformers.TrainingArguments, lightning's Trainer) contributes nothing here: the
library's own fields are the dialect's. Where a class the parser names cannot be found, `unresolved` says which:
the keys it declares are then unknown, so a claim about an unknown key is at most a warning.

Bounded: at most `MAX_MODULES` modules per script, `MAX_BYTES` each; results cached per file (`clear_cache()`).
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path
from typing import NamedTuple

from trainlint._patterns import compile_later

MAX_BYTES = 512 * 1024
MAX_MODULES = 40
MAX_DEPTH = 4  # classes followed through bases and re-exports
MAX_PACKAGE_FILES = 40  # .py files read in a vendored argument package
# Parser constructions whose first argument lists the dataclasses (transformers' HfArgumentParser and the parsers
# built on it: TRL's TrlParser, alignment-handbook's H4ArgumentParser).
HF_PARSERS = ("HfArgumentParser", "TrlParser", "H4ArgumentParser")
LIGHTNING_CLI = ("LightningCLI",)


class OwnClasses(NamedTuple):
    """What the repository's own argument classes declare."""

    fields: frozenset = frozenset()  # top-level keys (HF) or `trainer` keys (Lightning) the repository's classes add
    classes: tuple = ()  # "RWKV-v5/src/trainer.py: RWKVLightningTrainer", for the notes
    unresolved: tuple = ()  # class names the parser takes that were not found in the repository
    kind: str = ""  # "hf" or "lightning"

    @property
    def found(self) -> bool:
        return bool(self.classes or self.unresolved)

    def merged(self, other: "OwnClasses") -> "OwnClasses":
        return OwnClasses(self.fields | other.fields, _unique(self.classes + other.classes),
                          _unique(self.unresolved + other.unresolved), self.kind or other.kind)


def _unique(items: tuple) -> tuple:
    return tuple(dict.fromkeys(items))


_TREES: dict[str, ast.Module | None] = {}
_RESULTS: dict[tuple, OwnClasses] = {}


def clear_cache() -> None:
    _TREES.clear()
    _RESULTS.clear()


def _tree(path: Path) -> ast.Module | None:
    key = str(path)
    if key in _TREES:
        return _TREES[key]
    tree = None
    try:
        if path.is_file() and path.stat().st_size <= MAX_BYTES:
            text = path.read_text(encoding="utf-8", errors="replace")
            try:
                tree = ast.parse(text, key)
            except SyntaxError:
                tree = ast.parse(_outline(text), key)  # the parts that can be read, as declarations
    except (OSError, SyntaxError, ValueError, RecursionError, MemoryError):
        tree = None
    if len(_TREES) > 512:
        _TREES.clear()
    _TREES[key] = tree
    return tree


_CLASS = compile_later(r"^class\s+(\w+)\s*(?:\(([^()]*)\))?\s*:", re.M)
_IMPORT = compile_later(r"^(?:from\s+[\w.]+\s+import\s+[\w, ]+|import\s+[\w., ]+)\s*$", re.M)
_ATTRIBUTE = compile_later(r"^(\s+)(\w+)\s*:(?!=)")


def _outline(text: str) -> str:
    """A module that does not parse (a syntax error further down, a cut file), reduced to what declares arguments:
    its one-line imports, and per top-level class its bases, its annotated attributes and its `__init__`'s named
    parameters (read with `tokenize`, which stops at the first unreadable token without failing the rest)."""
    out = [m.group(0).strip() for m in _IMPORT.finditer(text)]
    matches = list(_CLASS.finditer(text))
    for index, match in enumerate(matches):
        body = text[match.end():matches[index + 1].start() if index + 1 < len(matches) else len(text)]
        out.append(f"class {match.group(1)}({match.group(2) or ''}):")
        lines = [line for line in body.splitlines() if line.strip() and not line.strip().startswith("#")]
        indent = len(lines[0]) - len(lines[0].lstrip()) if lines else 4
        attributes = [m.group(2) for line in lines if (m := _ATTRIBUTE.match(line)) and len(m.group(1)) == indent]
        out.extend(f"    {name}: int" for name in attributes)
        at = body.find("def __init__(")
        if at >= 0:
            params = _parameters(body[at + len("def __init__"):])
            out.append(f"    def __init__({', '.join(['self'] + [p + '=None' for p in params])}): pass")
        out.append("    pass")
    return "\n".join(out) + "\n"


def _parameters(text: str) -> list[str]:
    """The named parameters of a parameter list that begins at `text`'s `(` (up to its `)` or the end)."""
    names: list[str] = []
    depth = 0
    previous = ""
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type == tokenize.OP and token.string in "([{":
                depth += 1
            elif token.type == tokenize.OP and token.string in ")]}":
                depth -= 1
                if depth == 0:
                    break
            elif token.type == tokenize.NAME and depth == 1 and previous in ("(", ",") and token.string != "self":
                names.append(token.string)
            if token.type not in (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE):
                previous = token.string
    except (tokenize.TokenError, IndentationError, SyntaxError):
        pass
    return [n for n in dict.fromkeys(names) if n.isidentifier() and not n.startswith("_")]


def _name(node) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return ""


class _Resolver:
    """Finds class definitions by name through a repository's own modules."""

    def __init__(self, root: Path, start: Path):
        self.root = root
        self.roots = [start.parent, root, root / "src"]
        self.modules = 0

    def rel(self, path: Path) -> str:
        try:
            return path.resolve().relative_to(self.root.resolve()).as_posix()
        except (ValueError, OSError, RuntimeError):
            return path.name

    def module_file(self, module: str, level: int, here: Path) -> Path | None:
        parts = [p for p in module.split(".") if p]
        if level:
            base = here.parent
            for _ in range(level - 1):
                base = base.parent
            bases = [base]
        else:
            bases = self.roots
        for base in bases:
            target = base.joinpath(*parts) if parts else base
            for candidate in ((target / "__init__.py"), target.with_suffix(".py") if parts else None):
                try:
                    if candidate is not None and candidate.is_file() and self._inside(candidate):
                        return candidate
                except OSError:
                    continue
        return None

    def _inside(self, path: Path) -> bool:
        try:
            path.resolve().relative_to(self.root.resolve())
        except (ValueError, OSError, RuntimeError):
            return False
        return True

    def find(self, name: str, path: Path, depth: int = 0) -> tuple[ast.ClassDef, Path] | None:
        """The ClassDef `name` refers to in module `path` (defined there or imported from a repository module)."""
        if depth > MAX_DEPTH or self.modules > MAX_MODULES:
            return None
        tree = _tree(path)
        if tree is None:
            return None
        self.modules += 1
        for node in tree.body:
            if isinstance(node, ast.ClassDef) and node.name == name:
                return node, path
        for item in ast.walk(tree):
            if isinstance(item, ast.ImportFrom):
                for alias in item.names:
                    if (alias.asname or alias.name) != name:
                        continue
                    target = self.module_file(item.module or "", item.level, path)
                    if target is not None:
                        found = self.find(alias.name, target, depth + 1)
                        if found is not None:
                            return found
                    # `from pkg import module` then `module.Class` is handled by the attribute form below
        return None

    def find_attribute(self, node: ast.Attribute, path: Path) -> tuple[ast.ClassDef, Path] | None:
        """`module.Class` where `module` is imported from the repository."""
        if not isinstance(node.value, ast.Name):
            return None
        tree = _tree(path)
        if tree is None:
            return None
        for item in ast.walk(tree):
            if isinstance(item, ast.Import):
                for alias in item.names:
                    if (alias.asname or alias.name.split(".")[0]) == node.value.id:
                        target = self.module_file(alias.name if alias.asname else alias.name.split(".")[0], 0, path)
                        if target is not None:
                            return self.find(node.attr, target)
            elif isinstance(item, ast.ImportFrom):
                for alias in item.names:
                    if (alias.asname or alias.name) == node.value.id:
                        module = ".".join(p for p in ((item.module or ""), alias.name) if p)
                        target = self.module_file(module, item.level, path)
                        if target is not None:
                            return self.find(node.attr, target)
        return None


def _dataclass_fields(cls: ast.ClassDef) -> set[str]:
    return {n.target.id for n in cls.body if isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name)
            and not n.target.id.startswith("_")}


def _init_parameters(cls: ast.ClassDef) -> set[str] | None:
    """The named parameters of the class's own __init__, None where it defines none."""
    for node in cls.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == "__init__":
            args = node.args
            names = [a.arg for a in args.posonlyargs + args.args + args.kwonlyargs]
            return {n for n in names[1:] if not n.startswith("_")} if names else set()
    return None


def _class_keys(resolver: _Resolver, cls: ast.ClassDef, path: Path, kind: str, depth: int = 0,
                seen: set | None = None) -> tuple[set[str], list[str]]:
    """(keys, "file: Class" for each repository class read) of a class and the bases the repository defines."""
    seen = set() if seen is None else seen
    key = (str(path), cls.name)
    if key in seen or depth > MAX_DEPTH:
        return set(), []
    seen.add(key)
    if kind == "lightning":
        keys = _init_parameters(cls) or set()
    else:
        keys = _dataclass_fields(cls)
    classes = [f"{resolver.rel(path)}: {cls.name}"]
    for base in cls.bases:
        found = (resolver.find(base.id, path) if isinstance(base, ast.Name)
                 else resolver.find_attribute(base, path) if isinstance(base, ast.Attribute) else None)
        if found is None:
            continue  # a library class (TrainingArguments, Trainer): its fields are the dialect's own
        more, names = _class_keys(resolver, found[0], found[1], kind, depth + 1, seen)
        keys |= more
        classes += names
    return keys, classes


def _module_lists(tree: ast.Module) -> dict[str, list]:
    """Module- or function-level names bound to a tuple/list of class names (`_TRAIN_ARGS = [A, B, C]`)."""
    out: dict[str, list] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) and \
                isinstance(node.value, (ast.Tuple, ast.List)):
            out[node.targets[0].id] = list(node.value.elts)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and \
                isinstance(node.value, (ast.Tuple, ast.List)):
            out[node.target.id] = list(node.value.elts)
    return out


def _parser_arguments(tree: ast.Module) -> list[tuple[str, list]]:
    """(kind, class expressions) for each parser construction in the module."""
    lists = _module_lists(tree)
    out: list[tuple[str, list]] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        called = _name(node.func)
        if called in HF_PARSERS:
            first = node.args[0] if node.args else next((k.value for k in node.keywords
                                                         if k.arg == "dataclass_types"), None)
            if first is None:
                continue
            if isinstance(first, (ast.Tuple, ast.List)):
                out.append(("hf", list(first.elts)))
            elif isinstance(first, ast.Name) and first.id in lists:
                out.append(("hf", lists[first.id]))
            else:
                out.append(("hf", [first]))
        elif called in LIGHTNING_CLI:
            trainer = next((k.value for k in node.keywords if k.arg == "trainer_class"), None)
            if trainer is not None:
                out.append(("lightning", [trainer]))
            else:
                out.append(("lightning", []))
    return out


def parser_classes(script: str, root: str, kind: str = "") -> OwnClasses:
    """What the repository's own classes add to the parser(s) `script` builds (`kind` "hf" or "lightning": only
    those constructions). Empty when the script builds none from classes of the repository."""
    key = (script, root, kind)
    if key in _RESULTS:
        return _RESULTS[key]
    result = _parser_classes(Path(script), Path(root) if root else Path(script).parent, kind)
    if len(_RESULTS) > 256:
        _RESULTS.clear()
    _RESULTS[key] = result
    return result


def _parser_classes(path: Path, root: Path, kind: str) -> OwnClasses:
    tree = _tree(path)
    if tree is None:
        return OwnClasses()
    resolver = _Resolver(root, path)
    keys: set[str] = set()
    classes: list[str] = []
    unresolved: list[str] = []
    kinds = ""
    for found_kind, items in _parser_arguments(tree):
        if kind and found_kind != kind:
            continue
        kinds = kinds or found_kind
        for item in items:
            if isinstance(item, ast.Starred):
                item = item.value
            name = _name(item)
            if not name:
                unresolved.append(ast.unparse(item) if hasattr(ast, "unparse") else "?")
                continue
            found = (resolver.find(item.id, path) if isinstance(item, ast.Name)
                     else resolver.find_attribute(item, path) if isinstance(item, ast.Attribute) else None)
            if found is None:
                if not _library_import(tree, name):
                    unresolved.append(name)
                continue
            more, names = _class_keys(resolver, found[0], found[1], found_kind)
            keys |= more
            classes += names
    return OwnClasses(frozenset(keys), _unique(tuple(classes)), _unique(tuple(unresolved)), kinds)


# Frameworks whose classes a parser may take as they are: their fields are the dialect's.
LIBRARY_MODULES = ("transformers", "trl", "lightning", "pytorch_lightning", "peft", "accelerate")


def _library_import(tree: ast.Module, name: str) -> bool:
    """Whether `name` is imported from a framework library (TrainingArguments from transformers)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and \
                (node.module or "").split(".")[0] in LIBRARY_MODULES and \
                any((a.asname or a.name) == name for a in node.names):
            return True
    return False


def package_classes(root: str, folders: tuple[str, ...]) -> OwnClasses:
    """The dataclass fields of a framework package the repository vendors or forks: every class of the .py files in
    the first of `folders` (`llamafactory/hparams`) found at the repository root or under `src/`."""
    key = ("package", root, folders)
    if key in _RESULTS:
        return _RESULTS[key]
    result = OwnClasses()
    base = Path(root)
    for folder in folders:
        for top in (base, base / "src"):
            target = top / folder
            try:
                if not target.is_dir():
                    continue
                files = sorted(p for p in target.glob("*.py") if p.is_file())[:MAX_PACKAGE_FILES]
            except OSError:
                continue
            keys: set[str] = set()
            classes: list[str] = []
            resolver = _Resolver(base, target / "__init__.py")
            for file in files:
                tree = _tree(file)
                if tree is None:
                    continue
                for node in tree.body:
                    if isinstance(node, ast.ClassDef):
                        fields = _dataclass_fields(node)
                        if fields:
                            keys |= fields
                            classes.append(f"{resolver.rel(file)}: {node.name}")
            if classes:
                result = OwnClasses(frozenset(keys), tuple(classes), (), "hf")
                break
        if result.found:
            break
    if len(_RESULTS) > 256:
        _RESULTS.clear()
    _RESULTS[key] = result
    return result


