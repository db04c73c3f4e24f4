"""PEP 440 versions and specifiers: what trainlint needs of `packaging.version` / `packaging.specifiers`, without
importing them (about 3 ms of a one-file check's start-up, most of it compiling their patterns and classes).

`Version` parses, normalizes (`str`), orders and hashes as PEP 440 says (epoch, release, pre / post / dev, local);
`Specifier` / `SpecifierSet` read `==`, `!=`, `<`, `<=`, `>`, `>=`, `~=`, `===` and `==X.*` / `!=X.*` and answer
`contains(version, prereleases=True)` (trainlint asks about any release, prereleases included). Invalid text raises
`InvalidVersion` / `InvalidSpecifier`. `tests/test_pep440.py` holds all of it to `packaging` (a test dependency).
"""

from __future__ import annotations

import re

__all__ = ["InvalidSpecifier", "InvalidVersion", "Specifier", "SpecifierSet", "Version", "canonical", "parse_specifier",
           "parse_version"]


class InvalidVersion(ValueError):
    """The text is not a PEP 440 version."""


class InvalidSpecifier(ValueError):
    """The text is not a PEP 440 version specifier."""


_SEP = r"[-_\.]?"
_PRE = rf"{_SEP}(?P<pre_l>alpha|a|beta|b|preview|pre|c|rc){_SEP}(?P<pre_n>[0-9]+)?"
_POST = rf"(?:-(?P<post_n1>[0-9]+)|{_SEP}(?P<post_l>post|rev|r){_SEP}(?P<post_n2>[0-9]+)?)"
_DEV = rf"{_SEP}(?P<dev_l>dev){_SEP}(?P<dev_n>[0-9]+)?"
_VERSION = (rf"v?(?:(?P<epoch>[0-9]+)!)?(?P<release>[0-9]+(?:\.[0-9]+)*)(?:{_PRE})?(?:{_POST})?(?:{_DEV})?"
            r"(?:\+(?P<local>[a-z0-9]+(?:[-_\.][a-z0-9]+)*))?")
_PATTERNS: dict[str, re.Pattern] = {}


def _pattern(name: str) -> re.Pattern:
    """The version pattern (`version`) or a wildcard's prefix (`prefix`), compiled on first use."""
    found = _PATTERNS.get(name)
    if found is None:
        text = r"\s*" + _VERSION + r"\s*" if name == "version" else r"v?(?:[0-9]+!)?[0-9]+(?:\.[0-9]+)*"
        found = _PATTERNS[name] = re.compile(text, re.IGNORECASE | re.ASCII)
    return found


_MADE: dict[str, Version] = {}
_PRE_LETTER = {"alpha": "a", "a": "a", "beta": "b", "b": "b", "c": "rc", "pre": "rc", "preview": "rc", "rc": "rc"}


class Version:
    """A PEP 440 version, as `packaging.version.Version`."""

    __slots__ = ("epoch", "release", "pre", "post", "dev", "_local", "_key", "_str")

    def __new__(cls, version: str):
        """The version of `version` (one object per text: a version is never changed once made, and a check reads
        the same pins and release rows many times)."""
        found = _MADE.get(version) if cls is Version and isinstance(version, str) else None
        if found is None:
            found = object.__new__(cls)
            found._read(version)
            if cls is Version and isinstance(version, str):
                if len(_MADE) >= 50_000:
                    _MADE.clear()
                _MADE[version] = found
        return found

    def _read(self, version: str) -> None:
        parts = version.split(".") if isinstance(version, str) else ()
        if parts and all(part.isascii() and part.isdigit() for part in parts):  # a plain release: no pattern needed
            self.epoch, self.release, self.pre, self.post, self.dev, self._local = 0, tuple(map(int, parts)), None, \
                None, None, None
            self._set_key()
            return
        head = version.lstrip()[:1] if isinstance(version, str) else "0"
        if not (head.isdigit() or head in ("v", "V")):  # every version begins so: `>=0.16` needs no pattern
            raise InvalidVersion(f"Invalid version: {version!r}")
        match = _pattern("version").fullmatch(version)
        if match is None:
            raise InvalidVersion(f"Invalid version: {version!r}")
        self.epoch = int(match.group("epoch") or 0)
        self.release = tuple(int(part) for part in match.group("release").split("."))
        letter = match.group("pre_l")
        self.pre = (_PRE_LETTER[letter.lower()], int(match.group("pre_n") or 0)) if letter else None
        if match.group("post_n1") is not None:
            self.post = int(match.group("post_n1"))
        else:
            self.post = int(match.group("post_n2") or 0) if match.group("post_l") else None
        self.dev = int(match.group("dev_n") or 0) if match.group("dev_l") else None
        local = match.group("local")
        self._local = tuple(int(part) if part.isdigit() else part.lower() for part in re.split(r"[-_\.]", local)) \
            if local else None
        self._set_key()

    def _set_key(self) -> None:
        release = self.release
        while len(release) > 1 and release[-1] == 0:
            release = release[:-1]
        if self.pre is None and self.post is None and self.dev is not None:
            pre_key = (0,)
        else:
            pre_key = (2,) if self.pre is None else (1, *self.pre)
        self._key = (self.epoch, release, pre_key, (0,) if self.post is None else (1, self.post),
                     (2,) if self.dev is None else (1, self.dev),
                     (0,) if self._local is None else
                     (1, tuple((1, part, "") if isinstance(part, int) else (0, 0, part) for part in self._local)))
        self._str = None

    @property
    def local(self) -> str | None:
        return ".".join(str(part) for part in self._local) if self._local is not None else None

    @property
    def base_version(self) -> str:
        return (f"{self.epoch}!" if self.epoch else "") + ".".join(str(part) for part in self.release)

    @property
    def public(self) -> str:
        return str(self).split("+", 1)[0]

    @property
    def is_prerelease(self) -> bool:
        return self.pre is not None or self.dev is not None

    @property
    def is_postrelease(self) -> bool:
        return self.post is not None

    @property
    def is_devrelease(self) -> bool:
        return self.dev is not None

    @property
    def major(self) -> int:
        return self.release[0]

    @property
    def minor(self) -> int:
        return self.release[1] if len(self.release) > 1 else 0

    @property
    def micro(self) -> int:
        return self.release[2] if len(self.release) > 2 else 0

    def __str__(self) -> str:
        if self._str is None:
            text = self.base_version
            if self.pre is not None:
                text += f"{self.pre[0]}{self.pre[1]}"
            if self.post is not None:
                text += f".post{self.post}"
            if self.dev is not None:
                text += f".dev{self.dev}"
            if self._local is not None:
                text += f"+{self.local}"
            self._str = text
        return self._str

    def __repr__(self) -> str:
        return f"<Version({str(self)!r})>"

    def __hash__(self) -> int:
        return hash(self._key)

    def __eq__(self, other: object) -> bool:
        return self._key == other._key if isinstance(other, Version) else NotImplemented

    def __ne__(self, other: object) -> bool:
        return self._key != other._key if isinstance(other, Version) else NotImplemented

    def __lt__(self, other: Version) -> bool:
        return self._key < other._key if isinstance(other, Version) else NotImplemented

    def __le__(self, other: Version) -> bool:
        return self._key <= other._key if isinstance(other, Version) else NotImplemented

    def __gt__(self, other: Version) -> bool:
        return self._key > other._key if isinstance(other, Version) else NotImplemented

    def __ge__(self, other: Version) -> bool:
        return self._key >= other._key if isinstance(other, Version) else NotImplemented


def _parse(item) -> Version | None:
    if isinstance(item, Version):
        return item
    try:
        return Version(str(item))
    except InvalidVersion:
        return None


_OPERATORS = ("===", "~=", "==", "!=", "<=", ">=", "<", ">")


class Specifier:
    """One PEP 440 version clause (`>=4.41`, `==0.16.*`, `~=2.1`), as `packaging.specifiers.Specifier`."""

    __slots__ = ("operator", "version", "_parsed", "_bound")

    def __init__(self, spec: str = "") -> None:
        text = spec.strip()
        operator = next((op for op in _OPERATORS if text.startswith(op)), None)
        if operator is None:
            raise InvalidSpecifier(f"Invalid specifier: {spec!r}")
        version = text[len(operator):].strip()
        self.operator, self.version, self._parsed, self._bound = operator, version, None, None
        if operator == "===":
            if not version or any(c.isspace() or c in ";)" for c in version):
                raise InvalidSpecifier(f"Invalid specifier: {spec!r}")
            return
        if version.endswith(".*") and operator in ("==", "!="):
            if not _pattern("prefix").fullmatch(version[:-2]):
                raise InvalidSpecifier(f"Invalid specifier: {spec!r}")
            return
        try:
            parsed = Version(version)
        except InvalidVersion:
            raise InvalidSpecifier(f"Invalid specifier: {spec!r}") from None
        if (parsed._local is not None and operator not in ("==", "!=")) or (operator == "~=" and len(parsed.release) < 2):
            raise InvalidSpecifier(f"Invalid specifier: {spec!r}")
        self._parsed = parsed

    def __str__(self) -> str:
        return f"{self.operator}{self.version}"

    def __repr__(self) -> str:
        return f"<Specifier({str(self)!r})>"

    def contains(self, item, prereleases: bool | None = True) -> bool:
        """Whether `item` (a Version or its text) satisfies the clause, prereleases included."""
        if self.operator == "===":
            return str(item).lower() == self.version.lower()
        version = _parse(item)
        if version is None:
            return False
        op = self.operator
        bound = self._bound
        if bound is None:
            bound = self._bound = self._make_bound()
        if self._parsed is None:  # ==X.* / !=X.*
            return _prefix(version, bound) == (op == "==")
        spec = self._parsed
        if op == "~=":
            return _strip_local(version) >= spec and _prefix(version, bound)
        if op in ("==", "!="):
            equal = (version if spec._local is not None else _strip_local(version)) == spec
            return equal == (op == "==")
        if op == "<=":
            return _strip_local(version) <= spec
        if op == ">=":
            return version >= spec
        if op == "<":  # below V's first pre-release (V.dev0) unless V is one itself
            return version < bound
        # ">": after V.dev(N+1) for a V.devN, after V.post(N+1).dev0 for a V.postN, else after V, V+local and
        # every V.postN (what shares V's epoch, release and pre-release, and sorts after it)
        if spec.dev is not None or spec.post is not None:
            return version >= bound
        return version > spec and (version.epoch, version._key[1], version.pre) != (spec.epoch, spec._key[1], spec.pre)

    def _make_bound(self) -> Version:
        """The version `contains` compares with, besides the clause's own: the prefix of `==X.*` / `!=X.*` / `~=`
        (its release), the first pre-release of V for `<V`, the next release after V.devN / V.postN for `>`."""
        spec, op = self._parsed, self.operator
        if spec is None:
            return Version(self.version[:-2])
        if op == "~=":
            return Version((f"{spec.epoch}!" if spec.epoch else "") + ".".join(str(p) for p in spec.release[:-1]))
        if op == "<":
            return spec if spec.is_prerelease else _made(spec, dev=0)
        if op == ">" and spec.dev is not None:
            return _made(spec, dev=spec.dev + 1)
        if op == ">" and spec.post is not None:
            return _made(spec, post=spec.post + 1, dev=0)
        return spec


def _prefix(version: Version, spec: Version) -> bool:
    """`version` matches `spec.*` (`spec` a release): the same epoch, and its release (padded with zeros) starts
    with the prefix's."""
    release = version.release + (0,) * (len(spec.release) - len(version.release))
    return version.epoch == spec.epoch and release[:len(spec.release)] == spec.release


_KEEP = object()


def _made(version: Version, post=_KEEP, dev=_KEEP) -> Version:
    """`version` without its local part, with another post and dev release."""
    post = version.post if post is _KEEP else post
    dev = version.dev if dev is _KEEP else dev
    text = version.base_version + (f"{version.pre[0]}{version.pre[1]}" if version.pre else "")
    text += (f".post{post}" if post is not None else "") + (f".dev{dev}" if dev is not None else "")
    found = _MADE.get(text)
    if found is None:  # made from the parts, as Version(text) would read them (no pattern needed)
        found = object.__new__(Version)
        found.epoch, found.release, found.pre, found.post, found.dev, found._local = \
            version.epoch, version.release, version.pre, post, dev, None
        found._set_key()
        _MADE[text] = found
    return found


def _strip_local(version: Version) -> Version:
    return version if version._local is None else Version(version.public)


class SpecifierSet:
    """Comma-separated clauses, all of which must hold, as `packaging.specifiers.SpecifierSet`."""

    __slots__ = ("_specs",)

    def __init__(self, specifiers: str = "") -> None:
        self._specs = tuple(Specifier(part.strip()) for part in specifiers.split(",") if part.strip())

    def __iter__(self):
        return iter(self._specs)

    def __len__(self) -> int:
        return len(self._specs)

    def __str__(self) -> str:
        return ",".join(sorted(str(spec) for spec in self._specs))

    def __repr__(self) -> str:
        return f"<SpecifierSet({str(self)!r})>"

    def contains(self, item, prereleases: bool | None = True) -> bool:
        """Whether `item` satisfies every clause (an empty set holds any version), prereleases included."""
        if not self._specs:
            return True
        if not any(spec.operator == "===" for spec in self._specs):
            version = _parse(item)
            if version is None:
                return False
            return all(spec.contains(version) for spec in self._specs)
        return all(spec.contains(item) for spec in self._specs)


def parse_version(text: str) -> Version | None:
    """The version `text` names, or None where it is no PEP 440 version."""
    try:
        return Version(str(text).strip())
    except InvalidVersion:
        return None


def parse_specifier(text: str) -> SpecifierSet | None:
    """The specifier set `text` names, or None where it is none."""
    try:
        return SpecifierSet(str(text).strip())
    except InvalidSpecifier:
        return None


def canonical(name: str) -> str:
    """PyPI's name normalization (PEP 503), plus the aliases people write."""
    norm = name.strip().lower().replace("_", "-").replace(".", "-")
    return {"pytorch-lightning": "lightning", "llama-factory": "llamafactory", "pytorch": "torch"}.get(norm, norm)
