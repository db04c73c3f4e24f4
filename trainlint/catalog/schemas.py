"""The JSON Schemas of the config formats, and small helpers over them for hover, completion and checks.

The schemas are generated from the frameworks' own definitions by ``scripts/gen_schemas.py`` and
committed under ``schemas/``; the wheel carries them as ``trainlint/_schemas/``. In a source checkout
or editable install they are read from ``<repo>/schemas/``.

Names: ``deepspeed``, ``hf-training-args``, ``lightning``, ``accelerate``, ``trainlint``.

Key paths are tuples of mapping keys (str) and list indexes (int), e.g.
``("zero_optimization", "offload_param", "device")`` or ``("trainer", "callbacks", 0)``.

Only the standard library is imported at module load; ``jsonschema`` is imported when
``validation_errors`` is first called.
"""

from __future__ import annotations

import difflib
import functools
import json
import re
from collections.abc import Iterable, Iterator

from pathlib import Path
from typing import Any, NamedTuple

from trainlint.catalog import schema_check

__all__ = [
    "SCHEMA_NAMES",
    "KeyInfo",
    "SchemaError",
    "describe",
    "known_keys",
    "load_schema",
    "property_schema",
    "schema_path",
    "validation_errors",
]

SCHEMA_NAMES = ("deepspeed", "hf-training-args", "lightning", "accelerate", "trainlint")
_SUFFIX = ".schema.json"
_MISSING = object()

KeyPath = tuple  # tuple[str | int, ...]


class KeyInfo(NamedTuple):
    """What a schema says about one key: for hover text and completion details."""

    description: str | None
    default: Any
    types: tuple[str, ...]  # JSON types: "string", "integer", "number", "boolean", "object", "array", "null"
    enum: tuple | None  # allowed values when the key is an enumeration
    deprecated: bool = False
    replacement: str | None = None  # what to write instead, for deprecated or removed keys
    has_default: bool = False  # distinguishes "default is null" from "no default known"
    removed: bool = False  # no longer accepted by the framework version the schema came from
    classes: tuple[str, ...] = ()  # HF: the dataclasses that accept the key


class SchemaError(NamedTuple):
    """One schema violation, in plain terms."""

    key_path: tuple
    message: str  # one user-facing sentence
    kind: str  # "type" | "enum" | "range" | "unknown-key" | "other"
    at_key: bool  # point at the key itself rather than at its value
    expected: str  # what would have been accepted, in words


# --------------------------------------------------------------------------------------------------
# loading


def _canonical(name: str) -> str:
    base = name[: -len(_SUFFIX)] if name.endswith(_SUFFIX) else name
    if base not in SCHEMA_NAMES:
        raise KeyError(f"unknown schema {name!r}; known: {', '.join(SCHEMA_NAMES)}")
    return base


def _candidates_dirs() -> Iterator[Any]:
    here = Path(__file__).resolve().parent.parent  # the trainlint package folder
    yield here / "_schemas"  # an installed wheel
    yield here.parent / "schemas"  # a source checkout
    try:
        from importlib import resources  # an install that is not a plain folder only (it imports tempfile)

        yield resources.files("trainlint") / "_schemas"
    except (ModuleNotFoundError, TypeError):  # pragma: no cover - trainlint is always importable here
        pass


def schema_path(name: str) -> Any:
    """Where the schema file lives (a Path, or an importlib Traversable inside an installed package)."""
    file_name = _canonical(name) + _SUFFIX
    for folder in _candidates_dirs():
        candidate = folder / file_name
        try:
            if candidate.is_file():
                return candidate
        except OSError:  # pragma: no cover
            continue
    raise FileNotFoundError(f"schema {file_name} not found in trainlint/_schemas or <repo>/schemas")


@functools.lru_cache(maxsize=None)
def _load(name: str) -> dict:
    return json.loads(schema_path(name).read_text(encoding="utf-8"))


def load_schema(name: str) -> dict:
    """The parsed schema (cached and shared: do not modify it)."""
    return _load(_canonical(name))


# --------------------------------------------------------------------------------------------------
# navigation


def _pointer(root: dict, ref: str) -> dict:
    if not ref.startswith("#"):
        raise ValueError(f"only local $ref is supported, got {ref!r}")
    node: Any = root
    for part in [p for p in ref[1:].split("/") if p]:
        part = part.replace("~1", "/").replace("~0", "~")
        node = node[int(part)] if isinstance(node, list) else node[part]
    return node


def _deref(root: dict, schema: Any) -> Any:
    """Follow $ref; keywords next to the $ref (description, default, ...) win over the target's."""
    seen = 0
    while isinstance(schema, dict) and "$ref" in schema and seen < 32:
        target = _pointer(root, schema["$ref"])
        rest = {k: v for k, v in schema.items() if k != "$ref"}
        schema = {**target, **rest}
        seen += 1
    return schema


def _branches(root: dict, schema: Any) -> list[dict]:
    """The schema and its anyOf/oneOf/allOf alternatives, flattened and dereferenced."""
    out: list[dict] = []

    def walk(s: Any, depth: int) -> None:
        s = _deref(root, s)
        if not isinstance(s, dict) or depth > 16:
            return
        out.append(s)
        for key in ("anyOf", "oneOf", "allOf"):
            for sub in s.get(key, ()):
                walk(sub, depth + 1)

    walk(schema, 0)
    return out


def _child(root: dict, schema: Any, key: str | int) -> Any:
    branches = _branches(root, schema)
    if isinstance(key, int):
        for b in branches:
            prefix = b.get("prefixItems")
            if isinstance(prefix, list) and key < len(prefix):
                return prefix[key]
            if isinstance(b.get("items"), dict):
                return b["items"]
        return None
    for b in branches:
        props = b.get("properties")
        if isinstance(props, dict) and key in props:
            return props[key]
    for b in branches:
        for pattern, sub in (b.get("patternProperties") or {}).items():
            if re.search(pattern, key):
                return sub
    for b in branches:
        extra = b.get("additionalProperties")
        if isinstance(extra, dict):
            return extra
    return None


def _walk(name: str, key_path: Iterable) -> Any:
    root = load_schema(name)
    node: Any = root
    for key in key_path:
        node = _child(root, node, key)
        if node is None:
            return None
    return node


def property_schema(name: str, key_path: tuple = ()) -> dict | None:
    """The sub-schema for a key path (its $ref resolved), or None where the schema says nothing."""
    node = _walk(name, key_path)
    if node is None:
        return None
    resolved = _deref(load_schema(name), node)
    return resolved if isinstance(resolved, dict) else None


def _is_removed_property(schema: Any) -> bool:
    return isinstance(schema, dict) and schema.get("not") == {} and bool(schema.get("deprecated"))


def known_keys(name: str, key_path: tuple = ()) -> set[str] | None:
    """Keys the schema lists at that mapping (aliases included, removed keys excluded); None if unconstrained."""
    keys = _known_keys(name, tuple(key_path))
    return set(keys) if keys is not None else None  # a set of the caller's own


# The schemas are package data, loaded once: what they say of a key path is asked again for every file of a run.
@functools.lru_cache(maxsize=1024)
def _known_keys(name: str, key_path: tuple) -> frozenset[str] | None:
    root = load_schema(name)
    node = _walk(name, key_path)
    if node is None:
        return None
    keys: set[str] = set()
    constrained = False
    for b in _branches(root, node):
        props = b.get("properties")
        if isinstance(props, dict):
            constrained = True
            keys.update(k for k, v in props.items() if not _is_removed_property(v))
        elif b.get("additionalProperties") is False:
            constrained = True
        elif "object" in _schema_types(b) or (not b.get("type") and not _branches_below(b)):
            # an alternative that takes any mapping (e.g. a LightningCLI model's init args)
            return None
    return frozenset(keys) if constrained else None


def _schema_types(schema: dict) -> set[str]:
    t = schema.get("type")
    return {t} if isinstance(t, str) else set(t or ())


def _branches_below(schema: dict) -> bool:
    return any(k in schema for k in ("anyOf", "oneOf", "allOf", "$ref", "enum", "const", "not"))


_JSON_TYPE_ORDER = ("object", "array", "integer", "number", "boolean", "string", "null")


def _value_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, dict):
        return "object"
    if isinstance(value, (list, tuple)):
        return "array"
    return type(value).__name__


def _types_and_enum(root: dict, schema: Any) -> tuple[tuple[str, ...], tuple | None]:
    types: set[str] = set()
    enum: list = []
    open_enum = False
    for b in _branches(root, schema):
        t = b.get("type")
        if isinstance(t, str):
            types.add(t)
        elif isinstance(t, list):
            types.update(t)
        if "enum" in b:
            enum.extend(v for v in b["enum"] if v not in enum)
            if "type" not in b:
                types.update(_value_type(v) for v in b["enum"])
        elif "const" in b:
            if b["const"] not in enum:
                enum.append(b["const"])
            types.add(_value_type(b["const"]))
        elif _schema_types(b) & {"string", "integer", "number", "boolean"}:
            # an alternative that takes any scalar of a type makes the key no enumeration; mappings,
            # lists and null beside an enum (Lightning's strategy objects, an optional enum) do not
            open_enum = True
        if "$ref" in b or "properties" in b:
            types.add("object")
    ordered = tuple(t for t in _JSON_TYPE_ORDER if t in types) + tuple(sorted(types - set(_JSON_TYPE_ORDER)))
    if not enum or open_enum:
        return ordered, None
    return ordered, tuple(enum)


def _removed_entry(root: dict, parent: Any, key: str) -> dict | None:
    for b in _branches(root, parent):
        removed = b.get("x-trainlint-removed")
        if isinstance(removed, dict) and key in removed:
            return removed[key]
    return None


def _removed_message(key: str, entry: dict) -> str:
    since, repl, hint = entry.get("since"), entry.get("replacement"), entry.get("hint")
    msg = f"`{key}` was removed" + (f" in {since}" if since else "")
    if repl:
        msg += f"; use `{repl}` instead" + (f" ({hint})" if hint else "")
    elif hint:
        msg += f"; {hint}"
    else:
        msg += "; remove it"
    return msg + "."


def describe(name: str, key_path: tuple) -> KeyInfo | None:
    """Description, default, types, enum and deprecation of the key at key_path; None if unknown."""
    return _describe(name, tuple(key_path))


@functools.lru_cache(maxsize=1024)
def _describe(name: str, key_path: tuple) -> KeyInfo | None:
    root = load_schema(name)
    node = _walk(name, key_path)
    if node is None or _is_removed_property(node):
        if not key_path or not isinstance(key_path[-1], str):
            return None
        parent = _walk(name, key_path[:-1])
        entry = _removed_entry(root, parent, key_path[-1]) if parent is not None else None
        if entry is None and node is None:
            return None
        entry = entry or {}
        message = entry.get("message") or (node or {}).get("x-trainlint-removed-message") or _removed_message(str(key_path[-1]), entry)
        replacement = entry.get("replacement")
        return KeyInfo(description=message, default=None, types=(), enum=None, deprecated=True,
                       replacement=replacement, has_default=False, removed=True)
    schema = _deref(root, node)
    if not isinstance(schema, dict):
        return None
    types, enum = _types_and_enum(root, schema)
    description = schema.get("description")
    if description is None:
        for b in _branches(root, schema):
            if b.get("description"):
                description = b["description"]
                break
    has_default = "default" in schema
    return KeyInfo(
        description=description,
        default=schema.get("default"),
        types=types,
        enum=enum,
        deprecated=bool(schema.get("deprecated", False)),
        replacement=schema.get("x-trainlint-replacement") or schema.get("x-trainlint-alias-of"),
        has_default=has_default,
        removed=False,
        classes=tuple(schema.get("x-trainlint-classes", ())),
    )


# --------------------------------------------------------------------------------------------------
# validation


@functools.lru_cache(maxsize=None)
def _checker(name: str) -> schema_check.Checker:
    return schema_check.Checker(load_schema(name))


def _schema_errors(name: str, data: Any) -> list:
    """The violations of `data`: trainlint's own checker's (importing jsonschema costs more than a lint), or
    jsonschema's where the document reaches a keyword the checker does not implement."""
    try:
        return list(_checker(name).iter_errors(data))
    except schema_check.Unsupported:
        return list(jsonschema_validator(name).iter_errors(data))


@functools.lru_cache(maxsize=None)
def jsonschema_validator(name: str):
    from jsonschema import Draft202012Validator

    return Draft202012Validator(load_schema(name))


_TYPE_WORDS = {
    "object": "a mapping",
    "array": "a list",
    "string": "a string",
    "integer": "an integer",
    "number": "a number",
    "boolean": "true or false",
    "null": "null",
}


def _fmt(value: Any) -> str:
    if isinstance(value, str):
        return f'"{value}"'
    return json.dumps(value) if isinstance(value, (bool, int, float, type(None))) else repr(value)


def _join_or(words: list[str]) -> str:
    words = [w for i, w in enumerate(words) if w not in words[:i]]
    if len(words) <= 1:
        return "".join(words)
    return ", ".join(words[:-1]) + " or " + words[-1]


def _expected(root: dict, schema: Any, limit: int = 12) -> str:
    """What a schema accepts, in words: 'an integer or "auto"', 'one of "cpu", "nvme"'."""
    words: list[str] = []
    enum_values: list = []
    for b in _branches(root, schema):
        if "enum" in b:
            enum_values.extend(v for v in b["enum"] if v not in enum_values)
            continue
        if "const" in b:
            if b["const"] not in enum_values:
                enum_values.append(b["const"])
            continue
        t = b.get("type")
        ts = [t] if isinstance(t, str) else list(t or [])
        if "integer" in ts and "number" in ts:
            ts.remove("integer")
        bounds = []
        if "minimum" in b:
            bounds.append(f">= {b['minimum']}")
        if "exclusiveMinimum" in b:
            bounds.append(f"> {b['exclusiveMinimum']}")
        if "maximum" in b:
            bounds.append(f"<= {b['maximum']}")
        if "exclusiveMaximum" in b:
            bounds.append(f"< {b['exclusiveMaximum']}")
        for t1 in sorted(ts, key=lambda x: _JSON_TYPE_ORDER.index(x) if x in _JSON_TYPE_ORDER else 99):
            word = _TYPE_WORDS.get(t1, t1)
            if bounds and t1 in ("integer", "number"):
                word += " " + " and ".join(bounds)
            words.append(word)
        if not ts and ("properties" in b or "additionalProperties" in b):
            words.append(_TYPE_WORDS["object"])
    if enum_values:
        shown = [_fmt(v) for v in enum_values[:limit]]
        more = ", ..." if len(enum_values) > limit else ""
        if len(enum_values) == 1 and not words:
            return shown[0]
        if len(enum_values) <= 2 and words:
            words.extend(shown)
        else:
            words.insert(0, "one of " + ", ".join(shown) + more)
    return _join_or(words) or "a valid value"


def _label(path: tuple) -> str:
    if not path:
        return "the document"
    parts: list[str] = []
    for p in path:
        if isinstance(p, int):
            parts.append(f"[{p}]")
        else:
            parts.append(("." if parts else "") + str(p))
    return "`" + "".join(parts) + "`"


def _where(path: tuple) -> str:
    return "at the top level" if not path else f"in {_label(path)}"


def _suggest(word: str, options: Iterable[Any]) -> str | None:
    strs = [o for o in options if isinstance(o, str)]
    match = difflib.get_close_matches(word, strs, n=1, cutoff=0.75)
    return match[0] if match else None


MAX_SUGGESTIONS = 50  # unknown keys per mapping that get a "did you mean"


@functools.lru_cache(maxsize=4096)
def _close_keys(key: str, known: tuple[str, ...]) -> tuple[tuple[str, float], ...]:
    """Up to five known keys like `key` (difflib ratio >= 0.5), best first, with their ratios: the one fuzzy match
    both the "did you mean" and the list of known keys use. Cached: the same unknown key recurs across a run."""
    matcher = difflib.SequenceMatcher()
    matcher.set_seq2(key)
    scored = []
    for candidate in known:
        matcher.set_seq1(candidate)
        if matcher.real_quick_ratio() >= 0.5 and matcher.quick_ratio() >= 0.5:
            ratio = matcher.ratio()
            if ratio >= 0.5:
                scored.append((ratio, candidate))
    best = sorted(scored, reverse=True)[:5]  # as get_close_matches: by ratio, ties to the greater string
    return tuple((candidate, ratio) for ratio, candidate in best)


def _known_keys_words(key: str, known: list[str], limit: int = 20, close: bool = True) -> str:
    if not known:
        return "no keys"
    if len(known) <= limit:
        return "one of " + ", ".join(known)
    nearby = [c for c, _ratio in _close_keys(key, tuple(known))] if close else []
    shown = nearby + [k for k in known if k not in nearby][: limit - len(nearby)]
    return f"one of {len(known)} known keys, such as " + ", ".join(shown)


def _branch_index(err) -> int | None:
    rel = list(err.relative_schema_path)
    return rel[0] if rel and isinstance(rel[0], int) else None


def _is_shallow_mismatch(err, base_len: int) -> bool:
    """A branch failed only because the value is of another kind (type/const/enum at the same spot)."""
    return len(err.absolute_path) == base_len and err.validator in ("type", "const", "enum", "not")


def _flatten_errors(err) -> list:
    """Replace an anyOf/oneOf failure by the errors of the branches the value was meant for, if any."""
    if err.validator not in ("anyOf", "oneOf") or not err.context:
        return [err]
    base_len = len(err.absolute_path)
    by_branch: dict[int | None, list] = {}
    for sub in err.context:
        by_branch.setdefault(_branch_index(sub), []).append(sub)
    deep = [errs for errs in by_branch.values() if not any(_is_shallow_mismatch(e, base_len) for e in errs)]
    if not deep:
        return [err]
    # the branch with the fewest problems is the one the author most likely meant
    chosen = min(deep, key=len)
    out: list = []
    for sub in chosen:
        out.extend(_flatten_errors(sub))
    return out


def _enum_for(root: dict, schema: Any, instance: Any) -> list | None:
    """The allowed values when every alternative that accepts this JSON type is an enumeration."""
    kind = _value_type(instance)
    values: list = []
    for b in _branches(root, schema):
        if b is schema or any(k in b for k in ("anyOf", "oneOf", "allOf")):
            continue
        if b == {"const": "auto"}:  # the integrations' placeholder, not a real enumeration
            continue
        listed = b.get("enum", [b["const"]] if "const" in b else None)
        types = _schema_types(b)
        if kind == "integer" and "number" in types:
            types = types | {"integer"}
        if listed is not None:
            same = [v for v in listed if _value_type(v) == kind or (kind == "number" and _value_type(v) == "integer")]
            if same and (not types or kind in types):
                values.extend(v for v in same if v not in values)
        elif kind in types:
            return None
    return values or None


def _convert(root: dict, err) -> list[SchemaError]:
    path = tuple(err.absolute_path)
    kw = err.validator
    schema = err.schema if isinstance(err.schema, dict) else {}
    instance = err.instance
    label = _label(path)
    if kw == "additionalProperties" and isinstance(instance, dict):
        props = schema.get("properties") or {}
        patterns = schema.get("patternProperties") or {}
        extras = [k for k in instance if k not in props and not any(re.search(p, str(k)) for p in patterns)]
        known = sorted(k for k, v in props.items() if not _is_removed_property(v))
        removed = schema.get("x-trainlint-removed") or {}
        out = []
        for i, key in enumerate(extras):
            entry = removed.get(key) if isinstance(removed, dict) else None
            # Suggestions cost a fuzzy match against every known key: only for the first unknown keys
            # of a mapping, so that thousands of unknown keys stay linear work.
            suggest = i < MAX_SUGGESTIONS
            if entry is not None:
                msg = _removed_message(str(key), entry)
            else:
                # difflib's get_close_matches(n=1, cutoff=0.75), from the shared match
                close = _close_keys(str(key), tuple(known)) if suggest else ()
                guess = close[0][0] if close and close[0][1] >= 0.75 else None
                msg = f"Unknown key `{key}` {_where(path)}" + (f"; did you mean `{guess}`?" if guess else ".")
            out.append(SchemaError(path + (key,), msg, "unknown-key", True,
                                   _known_keys_words(str(key), known, close=suggest)))
        return out
    if kw == "not" and _is_removed_property(schema):
        message = schema.get("x-trainlint-removed-message") or schema.get("description") or f"{label} is no longer supported."
        first = message.split(". ")[0].rstrip(".") + "."
        return [SchemaError(path, first, "other", True, "the key removed")]
    if kw in ("type", "anyOf", "oneOf"):
        expected = _expected(root, schema)
        # the alternatives that take this kind of value are all enumerations: an enum problem
        enum = _enum_for(root, schema, instance) if kw in ("anyOf", "oneOf") else None
        if enum:
            guess = _suggest(str(instance), enum) if isinstance(instance, str) else None
            msg = f"{label} has no value {_fmt(instance)}" + (f"; did you mean {_fmt(guess)}?" if guess else f"; expected {expected}.")
            return [SchemaError(path, msg, "enum", False, expected)]
        return [SchemaError(path, f"{label} must be {expected}, not {_TYPE_WORDS.get(_value_type(instance), _value_type(instance))}.",
                            "type", False, expected)]
    if kw in ("enum", "const"):
        expected = _expected(root, schema)
        options = schema.get("enum") or [schema.get("const")]
        guess = _suggest(str(instance), options) if isinstance(instance, str) else None
        msg = f"{label} has no value {_fmt(instance)}" + (f"; did you mean {_fmt(guess)}?" if guess else f"; expected {expected}.")
        return [SchemaError(path, msg, "enum", False, expected)]
    if kw in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
        bound = err.validator_value
        words = {"minimum": f"at least {bound}", "maximum": f"at most {bound}",
                 "exclusiveMinimum": f"greater than {bound}", "exclusiveMaximum": f"less than {bound}"}[kw]
        return [SchemaError(path, f"{label} must be {words}, got {_fmt(instance)}.", "range", False, words)]
    if kw == "required":
        missing = [k for k in err.validator_value if isinstance(instance, dict) and k not in instance]
        return [SchemaError(path, f"`{k}` is required {_where(path)}.", "other", False, f"a `{k}` key") for k in missing] or [
            SchemaError(path, err.message, "other", False, "")]
    text = err.message
    if len(text) > 200:
        text = text[:197] + "..."
    return [SchemaError(path, f"{label}: {text}", "other", False, "")]


def validation_errors(name: str, data: Any, unknown_keys: bool = True) -> list[SchemaError]:
    """Schema violations of data (a parsed YAML/JSON document), as plain records, in document order of key paths;
    without `unknown_keys`, none for keys the schema does not know (each costs a fuzzy match against every known key
    for its "did you mean", work thrown away by a caller that only reads the values)."""
    root = load_schema(name)
    results: list[SchemaError] = []
    for err in _schema_errors(_canonical(name), data):
        for leaf in _flatten_errors(err):
            if unknown_keys or leaf.validator != "additionalProperties":
                results.extend(_convert(root, leaf))
    # a value of the wrong type also fails its enum/range checks: keep the type error only
    typed = {e.key_path for e in results if e.kind == "type"}
    out: list[SchemaError] = []
    seen: set = set()
    for e in results:
        if e.kind in ("enum", "range") and e.key_path in typed:
            continue
        ident = (e.key_path, e.kind, e.message)
        if ident in seen:
            continue
        seen.add(ident)
        out.append(e)
    out.sort(key=lambda e: (tuple((0, p) if isinstance(p, int) else (1, str(p)) for p in e.key_path), e.kind, e.message))
    return out
