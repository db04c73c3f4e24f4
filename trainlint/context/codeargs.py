"""Training arguments a launched script builds in its own code, read statically (`ast`, never run).

A script that constructs `TrainingArguments(bf16=script_args.bf16, ...)` (or a TRL `SFTConfig(...)`, or a subclass
of its own) decides those fields itself: the value is the keyword's constant, or the default of the script's own
argument it reads (a dataclass field `bf16: bool = True`, `field(default=...)`, `parser.add_argument("--bf16",
default=True)` / `action="store_true"`), or unknown (any other expression, `**kwargs`). A field the script's own
subclass of TrainingArguments redeclares has that class's default. `code_value` says which, so that no rule claims
the library's default for a field the script sets (`None`: the script does not set it in code)."""

from __future__ import annotations

import ast
import os
from pathlib import Path
from typing import Any, NamedTuple

from trainlint._patterns import compile_later

MAX_SCRIPT_BYTES = 1024 * 1024

# The classes whose constructor makes the Trainer's arguments: transformers' TrainingArguments and
# Seq2SeqTrainingArguments, and TRL's per-trainer configs (trl/trainer/*_config.py, TrainingArguments subclasses).
_ARGUMENT_CLASSES = compile_later(r"^(?:Seq2Seq)?TrainingArguments$|^(?:SFT|DPO|GRPO|ORPO|KTO|CPO|PPO|Reward|RLOO|"
                                  r"OnlineDPO|XPO|NashMD|GKD|BCO|PRM|IterativeSFT|Alignprop|DDPO)Config$")


class _Unknown:
    def __repr__(self) -> str:
        return "UNKNOWN"


UNKNOWN: Any = _Unknown()


class CodeValue(NamedTuple):
    """A training argument the script sets in code: its value (UNKNOWN when the code does not say) and where."""

    value: Any
    where: str  # "train.py:40: TrainingArguments(bf16=script_args.bf16), ScriptArguments.bf16 defaults to True"

    @property
    def known(self) -> bool:
        return self.value is not UNKNOWN


class _Facts(NamedTuple):
    """What a training script's code says about its arguments: calls, dataclass fields, argparse options."""
    calls: tuple  # (line, class name, {keyword: expression}, has **kwargs)
    fields: dict  # {field name: {(class name, line, value)}} of the script's dataclasses
    options: dict  # {dest: (line, value)} of its argparse options
    subclasses: frozenset  # the script's classes that derive from an arguments class
    # {field: (line, expression)}: the last `training_args.<field> = ...` on what the script's parser returned
    # (`model_args, data_args, training_args = parser.parse()`; SPPO's run_sppo.py sets `do_eval = False` there)
    assigned: dict


_CACHE: dict[tuple, _Facts | None] = {}
MAX_CACHED = 128


def clear_cache() -> None:
    _CACHE.clear()


def code_value(script: str, key: str) -> CodeValue | None:
    """How the script at `script` sets training argument `key` in its own code; None when it does not (or the
    script cannot be read): then the parser and the library's default decide."""
    facts = _facts(script)
    if facts is None:
        return None
    name = os.path.basename(script)
    if key in facts.assigned:  # set after parsing: whatever the config or the command line gave is replaced
        line, expr = facts.assigned[key]
        return _evaluate(expr, facts, f"{name}:{line}: {_source(expr)} is assigned to {key} after parsing")
    for line, cls, keywords, spread in facts.calls:
        where = f"{name}:{line}: {cls}("
        if key in keywords:
            return _evaluate(keywords[key], facts, f"{where}{key}={_source(keywords[key])})")
        if spread:
            return CodeValue(UNKNOWN, f"{where}**...): the keyword arguments it spreads may set {key}")
    for cls in facts.subclasses:
        for owner, line, value in facts.fields.get(key, ()):
            if owner == cls:
                return CodeValue(value, f"{name}:{line}: {cls}.{key}, the script's own TrainingArguments subclass, "
                                        f"defaults to {_shown(value)}")
    return None


def declares(script: str, key: str) -> bool | None:
    """Whether a class of the script declares field `key` itself (a dataclass of its own arguments, its own
    TrainingArguments subclass: BELLE's sft_train.py redeclares `evaluation_strategy`) or an argparse option of
    that name; None when the script cannot be read."""
    facts = _facts(script)
    if facts is None:
        return None
    return key in facts.fields or key in facts.options


_DPO_TRAINERS = compile_later(r"^DPOTrainer$")


def passes_reference_with_peft(script: str) -> str | None:
    """Where the script constructs TRL's DPOTrainer with both a reference model (`ref_model=`, or the second
    positional argument, not None) and a `peft_config=` (not None): "dpo.py:121: DPOTrainer(model, ref_model, ...,
    peft_config=get_peft_config(model_args))"; None when it does not (or cannot be read)."""
    try:
        stat = Path(script).stat()
        if stat.st_size > MAX_SCRIPT_BYTES:
            return None
        tree = ast.parse(Path(script).read_text(encoding="utf-8", errors="replace"))
    except (OSError, SyntaxError, ValueError, RecursionError):
        return None
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or not _DPO_TRAINERS.match(_name(node.func)):
            continue
        keywords = {k.arg: k.value for k in node.keywords if k.arg}
        ref = keywords.get("ref_model", node.args[1] if len(node.args) > 1 else None)
        peft = keywords.get("peft_config")
        if ref is None or peft is None or _is_none(ref) or _is_none(peft) or isinstance(ref, ast.Starred):
            continue
        return (f"{os.path.basename(script)}:{node.lineno}: {_name(node.func)}(..., {_source(ref)}, ..., "
                f"peft_config={_source(peft)})")
    return None


def _is_none(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


def _facts(script: str) -> _Facts | None:
    try:
        stat = Path(script).stat()
    except OSError:
        return None
    key = (script, stat.st_mtime_ns, stat.st_size)
    if key not in _CACHE:
        if len(_CACHE) >= MAX_CACHED:
            _CACHE.clear()
        _CACHE[key] = _read(script) if stat.st_size <= MAX_SCRIPT_BYTES else None
    return _CACHE[key]


def _read(script: str) -> _Facts | None:
    try:
        tree = ast.parse(Path(script).read_text(encoding="utf-8", errors="replace"))
    except (OSError, SyntaxError, ValueError, RecursionError):
        return None
    fields: dict[str, set] = {}
    options: dict[str, tuple] = {}
    subclasses = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            if any(_ARGUMENT_CLASSES.match(_name(b)) for b in node.bases):
                subclasses.add(node.name)
            for item in node.body:
                if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                    fields.setdefault(item.target.id, set()).add((node.name, item.lineno, _default(item.value)))
                elif isinstance(item, ast.Assign) and len(item.targets) == 1 and isinstance(item.targets[0], ast.Name):
                    fields.setdefault(item.targets[0].id, set()).add((node.name, item.lineno, _default(item.value)))
        elif isinstance(node, ast.Call) and _name(node.func) == "add_argument":
            dest, value = _option(node)
            if dest:
                options[dest] = (node.lineno, value)
    arguments = {c for c in subclasses} | {"TrainingArguments"}
    calls = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            cls = _name(node.func)
            if _ARGUMENT_CLASSES.match(cls) or cls in arguments:
                keywords = {k.arg: k.value for k in node.keywords if k.arg}
                spread = any(k.arg is None for k in node.keywords)
                calls.append((node.lineno, cls, keywords, spread))
    calls.sort(key=lambda c: c[0])
    return _Facts(tuple(calls), fields, options, frozenset(subclasses), _assigned_after_parsing(tree))


# The parser methods whose results are the parsed argument objects (HfArgumentParser, TrlParser, H4ArgumentParser).
_PARSE_METHODS = compile_later(r"^parse(?:_args_and_config|_args_into_dataclasses|_yaml_file|_json_file|_dict)?$")


def _assigned_after_parsing(tree: ast.AST) -> dict:
    """{field: (line, expression)} of the assignments to an attribute of a name bound to what a parser's parse
    method returned (the last one for each field, in line order)."""
    parsed: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and \
                isinstance(node.value.func, ast.Attribute) and _PARSE_METHODS.match(node.value.func.attr):
            for target in node.targets:
                names = target.elts if isinstance(target, (ast.Tuple, ast.List)) else [target]
                parsed.update(n.id for n in names if isinstance(n, ast.Name))
    found: dict[str, tuple] = {}
    if not parsed:
        return found
    assignments = [n for n in ast.walk(tree) if isinstance(n, ast.Assign) and len(n.targets) == 1]
    for node in sorted(assignments, key=lambda n: n.lineno):
        target = node.targets[0]
        if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id in parsed:
            found[target.attr] = (node.lineno, node.value)
    return found


def _name(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return ""


def _default(node: ast.AST | None) -> Any:
    """A dataclass field's default: a constant, `field(default=constant)`; UNKNOWN otherwise (None: no default)."""
    if node is None:
        return UNKNOWN
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Call) and _name(node.func) == "field":
        for k in node.keywords:
            if k.arg == "default":
                return k.value.value if isinstance(k.value, ast.Constant) else UNKNOWN
    return UNKNOWN


def _option(node: ast.Call) -> tuple[str, Any]:
    """(dest, default) of a `parser.add_argument(...)` call: `default=`, else store_true False / store_false True,
    else None (argparse's default)."""
    names = [a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
    kw = {k.arg: k.value for k in node.keywords if k.arg}
    given = kw.get("dest")
    dest = str(given.value) if isinstance(given, ast.Constant) else ""
    if not dest:
        longs = [n for n in names if n.startswith("--")]
        dest = (longs[0] if longs else names[0] if names else "").lstrip("-").replace("-", "_")
    default = kw.get("default")
    if default is not None:
        return dest, default.value if isinstance(default, ast.Constant) else UNKNOWN
    action = kw.get("action")
    if isinstance(action, ast.Constant) and action.value in ("store_true", "store_false"):
        return dest, action.value == "store_false"
    return dest, None


def _evaluate(expr: ast.AST, facts: _Facts, where: str) -> CodeValue:
    if isinstance(expr, ast.Constant):
        return CodeValue(expr.value, where)
    if isinstance(expr, ast.Attribute):
        attr = expr.attr
        found = facts.fields.get(attr, set())
        values = {value for _cls, _line, value in found if value is not UNKNOWN}
        if found and len(values) == 1 and all(v is not UNKNOWN for _c, _l, v in found):
            cls, line, value = sorted(found, key=lambda f: f[1])[0]
            return CodeValue(value, f"{where}, the script's {cls}.{attr} (line {line}) defaults to {_shown(value)}")
        if not found and attr in facts.options:
            line, value = facts.options[attr]
            if value is not UNKNOWN:
                return CodeValue(value, f"{where}, the script's --{attr} (line {line}) defaults to {_shown(value)}")
    return CodeValue(UNKNOWN, f"{where}: the value is computed in the script")


def _source(expr: ast.AST) -> str:
    try:
        text = ast.unparse(expr)
    except (ValueError, AttributeError, RecursionError):
        return "..."
    return text if len(text) <= 60 else text[:57] + "..."


def _shown(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return "null" if value is None else str(value)
