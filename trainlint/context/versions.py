"""Framework versions a file will run under: which transformers / trl / deepspeed / ... and where that came from.

`FrameworkVersion` is one resolved distribution: its version, the origin of that answer (a settings source, the
repository's pins, the installed environment, or trainlint's newest known release), and whether it is assumed
(a pin range or no information resolved to the newest known release inside it). `Versions` maps distribution
names to them. Rules ask through `LintContext.version_of(name)` / `LintContext.version_in(name, spec)`; a rule
whose `Rule.framework` + `Rule.versions` range excludes the resolved version is not run at all.

Versions and specifiers are PEP 440 (`packaging`). Nothing here imports a framework or runs code.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

# The distributions rules may name in `Rule.framework` (PyPI names, lower case).
FRAMEWORKS = ("transformers", "trl", "accelerate", "deepspeed", "peft", "lightning", "torchtune", "axolotl",
              "llamafactory", "litgpt", "torch")


def canonical(name: str) -> str:
    """PyPI's name normalization (PEP 503), plus the aliases people write."""
    norm = name.strip().lower().replace("_", "-").replace(".", "-")
    return {"pytorch-lightning": "lightning", "llama-factory": "llamafactory", "pytorch": "torch"}.get(norm, norm)


def parse_version(text: str) -> Version | None:
    try:
        return Version(str(text).strip())
    except InvalidVersion:
        return None


def parse_specifier(text: str) -> SpecifierSet | None:
    try:
        return SpecifierSet(str(text).strip())
    except InvalidSpecifier:
        return None


@dataclass(frozen=True)
class FrameworkVersion:
    name: str  # canonical distribution name
    version: str  # PEP 440 version string
    origin: str  # "cli" | "directive" | "project" | "pin" | "installed" | "known"
    source: str = ""  # where: the file (pin, pyproject.toml) or the note ("newest release trainlint knows")
    assumed: bool = False  # True when not the exact version: a range resolved, or nothing known
    spec: str = ""  # the pin's specifier as written (">=4.40,<5"), when a range

    @property
    def parsed(self) -> Version | None:
        return parse_version(self.version)

    def describe(self) -> str:
        where = f" ({self.origin}: {self.source})" if self.source else f" ({self.origin})"
        guess = ", assumed" if self.assumed else ""
        spec = f" from {self.spec}" if self.spec and self.spec != f"=={self.version}" else ""
        return f"{self.name} {self.version}{spec}{where}{guess}"

    def declare_hint(self) -> str:
        return (f"declare it with `versions = {{{self.name} = \"X.Y.Z\"}}` in [tool.trainlint] "
                f"or `# trainlint: {self.name}=X.Y.Z`")


@dataclass(frozen=True)
class Versions:
    """Resolved framework versions for one file (empty = nothing known)."""

    items: dict = field(default_factory=dict)  # canonical name -> FrameworkVersion

    def get(self, name: str) -> FrameworkVersion | None:
        return self.items.get(canonical(name))

    def includes(self, name: str, spec: str) -> bool | None:
        """Whether the resolved version of `name` satisfies the PEP 440 `spec`; None when unknown or unparsable."""
        found = self.get(name)
        specifier = parse_specifier(spec)
        if found is None or specifier is None or found.parsed is None:
            return None
        return specifier.contains(found.parsed, prereleases=True)

    def __iter__(self):
        return iter(sorted(self.items.values(), key=lambda v: v.name))

    def __bool__(self) -> bool:
        return bool(self.items)
