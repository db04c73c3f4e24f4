"""Closed sets of values a format's own reader accepts, per release range (`catalog/data/closed_values.json`),
judged at the releases in play for the file.

A value outside the set of every range the file's versions admit is rejected for certain; outside the set of
some ranges only, where the release is not known and the release assumed (the newest known, or the newest a pin
range admits) refuses it, the finding rests on that release (its assumptions say so); refused only by releases
other than the one assumed, or by none of the ranges in play (a pin that has the value), no claim is made.
"""

from __future__ import annotations


from functools import lru_cache
from typing import Any, NamedTuple

from trainlint._versions import parse_specifier
from trainlint.catalog import schemas
from trainlint.catalog.files import data_mapping
from trainlint.diagnostics import Severity
from trainlint.document.tree import Document, Node
from trainlint.rules._frameworks import suggest, version_status

# The strings pydantic's lax bool reads as booleans (pydantic-core `str_as_bool`), besides true/false themselves.
PYDANTIC_BOOL_STRINGS = frozenset({"0", "off", "f", "false", "n", "no", "1", "on", "t", "true", "y", "yes"})


@lru_cache(maxsize=1)
def table() -> dict:
    return data_mapping("closed_values.json")


def keys_of(framework: str) -> dict[str, dict]:
    found = table().get(framework)
    return found if isinstance(found, dict) else {}


def _pydantic_list(values: list) -> str:
    """'a', 'b' or 'c', as pydantic words an enum / Literal error."""
    quoted = [f"'{v}'" for v in values]
    if len(quoted) <= 1:
        return "".join(quoted)
    return ", ".join(quoted[:-1]) + " or " + quoted[-1]


class Rejected(NamedTuple):
    """A value (or list item) the reader refuses or ignores."""

    node: Node
    key: str  # dotted
    value: Any
    certain: bool  # every release in play refuses it
    range: dict  # the (newest) range that refuses it, with its `where`, `raises`, `when`, `values`
    versions: str  # the ranges that refuse it, for the detail ("axolotl >=0.15.0,<0.17.0; >=0.17.0")
    assumptions: tuple[str, ...]
    suggestion: str | None
    silent: bool  # the reader ignores it without a word (torchtune's lora_attn_modules)
    release: str = ""  # the release in play that decides it ("" when every release refuses it, or none is known)
    extra: tuple[str, ...] = ()  # values a schema's enum adds to every range (`with_schema_enum`)

    def message(self) -> str:
        """The framework's own message for it, with the value and the allowed values."""
        raises = str(self.range.get("raises") or "")
        allowed = _pydantic_list(list(self.range.get("values") or []))
        return raises.replace("{value}", str(self.value)).replace("{allowed}", allowed)

    def allowed(self) -> list[str]:
        return [*(str(v) for v in self.range.get("values") or []), *self.extra]


def _accepted(spec: dict, values: list, value: Any) -> bool:
    if isinstance(value, bool):
        return bool(spec.get("bool"))
    if isinstance(value, str):
        if spec.get("bool") and value.strip().lower() in PYDANTIC_BOOL_STRINGS:
            return True
        return value in values
    if isinstance(value, int) and spec.get("bool"):
        return value in (0, 1)
    return True  # another type: not this check's claim


def _schema_enum(spec: dict) -> tuple[str, ...]:
    """The values a schema's enum lists for a key, its removed values included (`with_schema_enum`)."""
    pair = spec.get("with_schema_enum")
    if not isinstance(pair, list) or len(pair) != 2:
        return ()
    return _enum_of(str(pair[0]), str(pair[1]))


@lru_cache(maxsize=16)
def _enum_of(schema: str, key: str) -> tuple[str, ...]:
    try:
        prop = (schemas.load_schema(schema).get("properties") or {}).get(key) or {}
    except Exception:  # noqa: BLE001 - no schema: nothing added
        return ()
    values = [str(v) for v in prop.get("enum") or []]
    values += [str(v) for v in (prop.get("x-trainlint-removed-values") or {})]
    return tuple(values)


def _assumed_refuses(ctx, framework: str, ranges: list[dict]) -> bool:
    """Whether the release assumed for the file (the newest known, or the newest a pin range admits) lies in one
    of `ranges`: a value only older releases refuse is a hint there, not a warning."""
    versions = getattr(ctx, "versions", None)
    found = versions.get(framework) if versions is not None else None
    parsed = getattr(found, "parsed", None)
    if parsed is None:
        return True
    for r in ranges:
        spec = parse_specifier(str(r.get("versions") or ""))
        if spec is None or spec.contains(parsed, prereleases=True):
            return True
    return False


def _judge(ctx, framework: str, spec: dict, value: Any, opened: set[str]) -> tuple[bool | None, dict | None, str,
                                                                                       tuple[str, ...]]:
    """(rejected: True certain / None depends on the release / False valid, the newest refusing range in play,
    the refusing ranges, assumptions)."""
    ranges = [r for r in spec.get("ranges") or [] if isinstance(r, dict)]
    refusing = []
    extra = _schema_enum(spec)
    for r in ranges:
        values = r.get("values")
        if values is None:
            continue  # not a field in these releases: no claim
        values = [*values, *extra]
        opener = r.get("opened_by") or {}
        if opener and opener.get("key") in opened:
            continue  # a plugin may register the value
        if not _accepted(spec, list(values), value):
            refusing.append(r)
    if not refusing:
        return False, None, "", ()
    spans = "; ".join(str(r.get("versions") or "all releases") for r in refusing)
    if len(refusing) == len(ranges):
        return True, refusing[-1], spans, ()  # every release refuses it
    in_play = None
    assumptions: tuple[str, ...] = ()
    undecided = []
    for r in refusing:
        holds, said = version_status(ctx, framework, str(r.get("versions") or ""))
        if holds is True:
            in_play = r
        elif holds is None:
            undecided.append(r)
            assumptions = said
    if in_play is not None:
        return True, in_play, spans, ()
    if not undecided:
        return False, None, "", ()  # the release in play accepts it
    return None, undecided[-1], spans, assumptions


def rejected(ctx, framework: str, doc: Document | None = None) -> list[Rejected]:
    """The values of the file that `framework`'s reader refuses (or ignores), at the releases in play."""
    doc = doc or ctx.document
    root = doc.root
    if root is None or root.kind != "mapping":
        return []
    opened = {k for k in root.keys() if isinstance(k, str) and _is_set(root.get(k))}
    out: list[Rejected] = []
    for key, spec in keys_of(framework).items():
        if key.startswith("_") or not isinstance(spec, dict):
            continue
        node = doc.find(tuple(key.split(".")))
        if node is None:
            continue
        if spec.get("kind") == "list":
            items = [n for n in (node.items if node.kind == "sequence" else []) if n.kind == "scalar"]
        elif node.kind == "scalar":
            items = [node]
        else:
            continue
        for item in items:
            value = item.value
            if value is None or (spec.get("skip_falsy") and not value):
                continue
            verdict, refusing, spans, assumptions = _judge(ctx, framework, spec, value, opened)
            if verdict is False or refusing is None:
                continue
            pool = {str(v) for r in spec.get("ranges") or [] for v in (r.get("values") or [])} | set(_schema_enum(spec))
            guess = suggest(value, sorted(pool), cutoff=0.7) if isinstance(value, str) else None
            likely = verdict is True or _assumed_refuses(ctx, framework, _refusing_ranges(spec, spans))
            if not likely:
                continue  # only releases other than the one assumed refuse it: no claim without a pin that says so
            every = len(_refusing_ranges(spec, spans)) == len(spec.get("ranges") or [])
            found = ctx.versions.get(framework) if verdict is True and not every else None
            out.append(Rejected(item, key, value, verdict is True, refusing, spans, assumptions, guess,
                                bool(spec.get("silent")), found.version if found is not None else "",
                                _schema_enum(spec)))
    return out


def _refusing_ranges(spec: dict, spans: str) -> list[dict]:
    named = set(spans.split("; "))
    return [r for r in spec.get("ranges") or [] if str(r.get("versions") or "all releases") in named]


def _is_set(node: Node | None) -> bool:
    if node is None:
        return False
    if node.kind == "scalar":
        return node.value not in (None, "", False)
    return bool(node.items) if node.kind == "sequence" else bool(node.entries)


def severity_of(r: Rejected) -> Severity | None:
    """A certain refusal keeps the rule's severity (error); one that depends on the release (the release assumed
    refuses it, others in play may not) is a warning."""
    return None if r.certain else Severity.WARNING


def judged_at(ctx, framework: str, spec: str) -> tuple[bool | None, tuple[str, ...]]:
    """Whether a claim that holds for `framework` `spec` is made for this file: (True, ()) where the release in play
    is inside the range, (None, assumptions) where that depends on a release only assumed to be inside it, (False, ())
    where it is outside, or only releases other than the one assumed are inside."""
    if not spec:
        return True, ()
    holds, assumptions = version_status(ctx, framework, spec)
    if holds is None and not _assumed_refuses(ctx, framework, [{"versions": spec}]):
        return False, ()
    return holds, assumptions
