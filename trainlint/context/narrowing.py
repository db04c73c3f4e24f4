"""Version ranges narrowed by what can be installed and imported together: a small, exact interval narrowing over
the releases trainlint knows, not a resolver.

Two kinds of facts cut a framework's range (`apply`):

- **requirements** (`catalog/data/requirements.json`): each known release's install requirements on the others. A
  release whose requirement on a pinned distribution cannot meet the pin cannot be installed beside it
  (huggingface-hub<1.0 rules out transformers 5, which requires huggingface-hub>=1.3), and a distribution in the run
  narrows what it requires (trl==0.18.2 requires transformers>=4.50.0). Repeated until nothing changes.
- **cuts** (`Cut`): an upper bound from outside, such as the launched script importing a name a release removed
  (`trainlint.context.imports`).

Only assumed versions (a pin range, a declared range, trainlint's newest known release) are narrowed; an exact
version (a setting, an exact pin, the installed distribution) only constrains the others. Each narrowed
`FrameworkVersion` keeps its origin, gets the narrowed specifier (`spec`), the newest known release inside it
(`version`) and the reasons (`narrowed`), which `describe()` and `--show-settings` print. Where the cuts leave no
known release, nothing is narrowed (the pins contradict each other: not trainlint's to settle).
"""

from __future__ import annotations

import functools
import os

from trainlint._versions import Version, canonical, parse_specifier, parse_version
from trainlint.catalog import frameworks, releases

# (trainlint.context.versions calls in here: its FrameworkVersion / Versions are taken as given, never imported)

MAX_PASSES = 6


class Cut:
    """A bound on a distribution's version from outside the pins, and why: `below` (exclusive upper bound) or
    `after` (exclusive lower bound)."""

    __slots__ = ("name", "below", "reason", "after")

    def __init__(self, name: str, below: str, reason: str, after: str = ""):
        self.name = name  # canonical distribution name
        self.below = below  # the first release the run cannot use ("" = no upper bound)
        self.reason = reason  # "scripts/sft.py imports setup_chat_format, removed in TRL 0.26.0 (de343cdae)"
        self.after = after  # the last release the run cannot use, from below ("" = no lower bound)

    def with_reason(self, reason: str) -> "Cut":
        return Cut(self.name, self.below, reason, self.after)

    def __repr__(self) -> str:
        return f"Cut({self.name!r}, {self.below!r}, {self.reason!r}, after={self.after!r})"


# --- intervals --------------------------------------------------------------------------------------------------

class Interval:
    """The hull of a PEP 440 specifier set: lo/hi None = unbounded (`!=` exclusions are not part of it)."""

    __slots__ = ("lo", "lo_inc", "hi", "hi_inc")

    def __init__(self, lo: Version | None = None, lo_inc: bool = True, hi: Version | None = None,
                 hi_inc: bool = False):
        self.lo, self.lo_inc, self.hi, self.hi_inc = lo, lo_inc, hi, hi_inc

    def __eq__(self, other) -> bool:
        return isinstance(other, Interval) and (self.lo, self.lo_inc, self.hi, self.hi_inc) == \
            (other.lo, other.lo_inc, other.hi, other.hi_inc)

    def __hash__(self) -> int:
        return hash((self.lo, self.lo_inc, self.hi, self.hi_inc))

    def __repr__(self) -> str:
        return f"Interval({self.lo}, {self.lo_inc}, {self.hi}, {self.hi_inc})"

    @property
    def empty(self) -> bool:
        if self.lo is None or self.hi is None:
            return False
        return self.lo > self.hi or (self.lo == self.hi and not (self.lo_inc and self.hi_inc))

    @property
    def bounded(self) -> bool:
        return self.lo is not None or self.hi is not None

    def __and__(self, other: "Interval") -> "Interval":
        lo, lo_inc = self.lo, self.lo_inc
        if other.lo is not None and (lo is None or other.lo > lo or (other.lo == lo and not other.lo_inc)):
            lo, lo_inc = other.lo, other.lo_inc
        hi, hi_inc = self.hi, self.hi_inc
        if other.hi is not None and (hi is None or other.hi < hi or (other.hi == hi and not other.hi_inc)):
            hi, hi_inc = other.hi, other.hi_inc
        return Interval(lo, lo_inc, hi, hi_inc)

    def __or__(self, other: "Interval") -> "Interval":
        """The hull of the union."""
        if self.lo is None or other.lo is None:
            lo, lo_inc = None, True
        elif self.lo != other.lo:
            lo, lo_inc = (self.lo, self.lo_inc) if self.lo < other.lo else (other.lo, other.lo_inc)
        else:
            lo, lo_inc = self.lo, self.lo_inc or other.lo_inc
        if self.hi is None or other.hi is None:
            hi, hi_inc = None, False
        elif self.hi != other.hi:
            hi, hi_inc = (self.hi, self.hi_inc) if self.hi > other.hi else (other.hi, other.hi_inc)
        else:
            hi, hi_inc = self.hi, self.hi_inc or other.hi_inc
        return Interval(lo, lo_inc, hi, hi_inc)

    def contains(self, version: Version) -> bool:
        if self.lo is not None and (version < self.lo or (version == self.lo and not self.lo_inc)):
            return False
        if self.hi is not None and (version > self.hi or (version == self.hi and not self.hi_inc)):
            return False
        return True

    def tokens_beyond(self, wider: "Interval") -> list[str]:
        """The bounds of this interval that are tighter than `wider`'s, as specifiers."""
        out = []
        if self.lo is not None and (wider.lo is None or self.lo > wider.lo or (self.lo == wider.lo and wider.lo_inc
                                                                                 and not self.lo_inc)):
            out.append((">=" if self.lo_inc else ">") + str(self.lo))
        if self.hi is not None and (wider.hi is None or self.hi < wider.hi or (self.hi == wider.hi and wider.hi_inc
                                                                                 and not self.hi_inc)):
            out.append(("<=" if self.hi_inc else "<") + str(self.hi))
        return out


EVERYTHING = Interval()


def _bump(release: tuple[int, ...], parts: int) -> Version:
    head = list(release[:parts]) or [0]
    head[-1] += 1
    return Version(".".join(str(p) for p in head))


_HULLS: dict[str, Interval | None] = {}


def hull(spec: str) -> Interval | None:
    """The interval a PEP 440 specifier set allows (None when it does not parse). Intervals are never changed, so
    each text's is made once (the release rows repeat the same requirements)."""
    if spec in _HULLS:
        return _HULLS[spec]
    found = _HULLS[spec] = _hull(spec) if isinstance(spec, str) else None
    return found


def _hull(spec: str) -> Interval | None:
    specifier = parse_specifier(spec) if spec is not None else None
    if specifier is None:
        return None
    out = EVERYTHING
    for item in specifier:
        op, text = item.operator, item.version
        if op == "!=":
            continue
        if op == "==" and text.endswith(".*"):
            base = parse_version(text[:-2])
            if base is None:
                continue
            out = out & Interval(base, True, _bump(base.release, len(base.release)), False)
            continue
        version = parse_version(text)
        if version is None:
            continue
        if op in ("==", "==="):
            out = out & Interval(version, True, version, True)
        elif op == ">=":
            out = out & Interval(version, True, None)
        elif op == ">":
            out = out & Interval(version, False, None)
        elif op == "<=":
            out = out & Interval(None, True, version, True)
        elif op == "<":
            out = out & Interval(None, True, version, False)
        elif op == "~=":
            keep = max(1, len(version.release) - 1)
            out = out & Interval(version, True, _bump(version.release, keep), False)
    return out


# --- narrowing --------------------------------------------------------------------------------------------------

_KNOWN: dict[str, list[tuple[Version, str]]] = {}


def _known(name: str) -> list[tuple[Version, str]]:
    """The known releases of `name`, parsed (once per run: the catalog does not change)."""
    found = _KNOWN.get(name)
    if found is None:
        found = _KNOWN[name] = [(v, t) for v, t in ((parse_version(t), t) for t in frameworks.known(name))
                                if v is not None]
    return found


def _span(releases: list[str]) -> str:
    return releases[0] if len(releases) == 1 else f"{releases[0]}-{releases[-1]}"


def apply(versions, pins: dict | None = None, cuts: tuple = (), root: str = ""):
    """`versions` narrowed by the known releases' requirements, the repository's `pins` (name -> `Pin`, for the
    distributions `versions` does not hold, such as huggingface-hub) and `cuts`."""
    if not versions:
        return versions
    # the configs of one repository mostly run under the same versions and pins: the narrowing of equal inputs is
    # kept (the catalog's releases and requirements do not change; relative paths read from the working directory)
    key = (type(versions), tuple(versions.items.items()), tuple((pins or {}).items()),
           tuple((c.name, c.below, c.reason, c.after) for c in cuts), root, os.getcwd())
    try:
        hash(key)
    except TypeError:  # a pin of another kind than `pins.Pin`: nothing to key it by
        return _apply(versions, pins, cuts, root)
    narrowed = _applied(key)
    return type(versions)(dict(narrowed.items))  # a dict of its own: the caller may change its copy


@functools.lru_cache(maxsize=256)
def _applied(key: tuple):
    kind, items, pins, cuts, root, _cwd = key
    return _apply(kind(dict(items)), dict(pins), tuple(Cut(*cut) for cut in cuts), root)


def _apply(versions, pins: dict | None, cuts: tuple, root: str):
    items: dict = dict(versions.items)
    bounds: dict[str, Interval] = {}
    label: dict[str, str] = {}
    present: set[str] = set()  # in the run: pinned, declared, installed, imported
    for name, found in items.items():
        if not found.assumed:
            version = found.parsed
            if version is not None:
                bounds[name] = Interval(version, True, version, True)
                label[name] = f"{name}=={found.version} ({found.origin})"
                present.add(name)
            continue
        interval = hull(found.spec) if found.spec else EVERYTHING
        bounds[name] = interval or EVERYTHING
        if found.origin != "known":
            present.add(name)
            label[name] = f"{name}{found.spec} ({_where(found.source, root)})"
    for name, pin in (pins or {}).items():
        if name in items or not getattr(pin, "spec", ""):
            continue
        interval = hull(pin.spec)
        if interval is not None and interval.bounded:
            bounds[name], label[name] = interval, f"{name}{pin.spec} ({_where(pin.path, root)})"
            present.add(name)
    reasons: dict[str, list[str]] = {}
    for cut in cuts:
        name = canonical(cut.name)
        found, below, after = items.get(name), parse_version(cut.below), parse_version(cut.after)
        if found is None or not found.assumed or (below is None and after is None):
            continue
        tighter = bounds.get(name, EVERYTHING) & Interval(after, False, below, False)
        if tighter != bounds.get(name, EVERYTHING):
            bounds[name] = tighter
            reasons.setdefault(name, []).append(cut.reason)
        present.add(name)
    # the candidate releases of each assumed framework: the known ones its range allows
    candidates: dict[str, list[tuple[Version, str]]] = {}
    for name, found in items.items():
        if not found.assumed:
            continue
        specifier = parse_specifier(found.spec) if found.spec else None
        candidates[name] = [(v, t) for v, t in _known(name) if bounds[name].contains(v)
                            and (specifier is None or specifier.contains(v, prereleases=True))]
    start = {name: list(c) for name, c in candidates.items()}
    for _ in range(MAX_PASSES):
        changed = False
        # a release whose requirement on a constrained distribution cannot be met is not installable
        for name, releases_in in candidates.items():
            table = releases.requirements(name)
            keep: list[tuple[Version, str]] = []
            dropped: dict[str, list[tuple[str, str, str]]] = {}  # dependency -> (release, its requirement, source)
            for version, text in releases_in:
                requires, source = table.get(text, ({}, ""))
                clash = next(((dep, spec) for dep, spec in requires.items() if dep in bounds and bounds[dep].bounded
                              and _disjoint(spec, bounds[dep])), None)
                if clash is None:
                    keep.append((version, text))
                else:
                    dropped.setdefault(clash[0], []).append((text, clash[1], source))
            if dropped:
                candidates[name], changed = keep, True
                for dep, gone in dropped.items():
                    specs = list(dict.fromkeys(spec for _t, spec, _s in gone))
                    reasons.setdefault(name, []).append(
                        f"{label.get(dep, dep)} rules out {name} {_runs([t for t, _p, _s in gone], releases_in)}, which "
                        f"require{'s' if len(gone) == 1 else ''} {dep}{specs[0]}{' or newer' if len(specs) > 1 else ''}"
                        f" ({gone[0][2] or 'requirements.json'})")
        # a distribution in the run narrows what it requires
        for name in sorted(present):
            table = releases.requirements(name)
            if not table:
                continue
            if name in candidates:
                mine = [t for _v, t in candidates[name]]
            else:
                mine = [items[name].version] if name in items else []
            rows = [table[t] for t in mine if t in table]
            if not mine or len(rows) < len(mine):
                continue
            for dep in sorted({d for r in rows for d in r[0]}):
                union = None
                for requires, _source in rows:
                    part = hull(requires[dep]) if dep in requires else EVERYTHING
                    union = part if union is None else (union | (part or EVERYTHING))
                if union is None or not union.bounded or dep not in items or not items[dep].assumed:
                    continue
                tighter = bounds[dep] & union
                if tighter == bounds[dep] or tighter.empty:
                    continue
                bounds[dep] = tighter
                spec = ",".join(union.tokens_beyond(EVERYTHING))
                reasons.setdefault(dep, []).append(f"{name} {_span(mine)} require{'s' if len(mine) == 1 else ''} "
                                                   f"{dep}{spec} ({rows[0][1]})")
                if dep in candidates:
                    candidates[dep] = [(v, t) for v, t in candidates[dep] if tighter.contains(v)]
                changed = True
        if not changed:
            break
    out = dict(items)
    for name, found in items.items():
        if name not in reasons or not found.assumed:
            continue
        kept = candidates.get(name) or []
        if not kept:
            continue  # nothing known is left: the pins contradict each other, keep what they said
        # the narrowed range: its bounds, the pin's own exclusions, then what the known releases left out
        tokens = bounds[name].tokens_beyond(EVERYTHING)
        tokens += [t.strip() for t in (found.spec.split(",") if found.spec else []) if t.strip().startswith("!=")]
        everything = start.get(name) or []
        top, bottom = kept[-1][0], kept[0][0]
        allowed = parse_specifier(",".join(tokens)) if tokens else None

        def open_(version: Version) -> bool:
            return allowed is None or allowed.contains(version, prereleases=True)

        higher = [(v, t) for v, t in everything if v > top]
        if higher and open_(higher[0][0]):
            tokens.append(f"<{higher[0][1]}")
        lower = [(v, t) for v, t in everything if v < bottom]
        if lower and open_(lower[-1][0]):
            tokens.append(f">={kept[0][1]}")
        middle = [f"!={t}" for v, t in everything if bottom < v < top and (v, t) not in kept and open_(v)]
        if found.origin == "known" and kept[-1][1] == found.version and not bounds[name].bounded and \
                not higher and not lower:
            continue  # an unpinned framework that only lost releases in between: nothing worth saying
        tokens += middle
        narrowed = found.narrowed + tuple(r for r in reasons[name] if r not in found.narrowed)
        out[name] = found._replace(version=kept[-1][1], spec=",".join(tokens), narrowed=narrowed)
    return type(versions)(out)


def _runs(gone: list[str], among: list) -> str:
    """The releases in `gone` as runs of consecutive candidates: "0.11.4, 0.13.0-1.16.0"."""
    order = [t for _v, t in among]
    runs: list[list[str]] = []
    previous = -2
    for text in gone:
        index = order.index(text) if text in order else -2
        if runs and index == previous + 1:
            runs[-1].append(text)
        else:
            runs.append([text])
        previous = index
    return ", ".join(_span(run) for run in runs)


def _disjoint(spec: str, bound: Interval) -> bool:
    interval = hull(spec)
    return interval is not None and (interval & bound).empty


def _where(path: str, root: str) -> str:
    if not path or not root:
        return path
    try:
        rel = os.path.relpath(path, root)
    except ValueError:
        return path
    return path if rel.startswith("..") else rel.replace(os.sep, "/")
