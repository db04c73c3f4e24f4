"""Where run settings come from, strongest first: CLI flags; a `# trainlint: key=value` directive
comment in the file; `[tool.trainlint]` in the nearest pyproject.toml (or a trainlint.toml), per-file
sections before the global ones; then what the config itself says; then documented defaults.
"""

from __future__ import annotations

import fnmatch
import os
import re
import sys
from collections.abc import Callable, Sequence
from functools import lru_cache
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10: the same reader, as the tomli distribution
    import tomli as tomllib

from dataclasses import dataclass, field
from typing import Any, NamedTuple

from trainlint._patterns import compile_later
from trainlint.catalog.gpus import UnknownGPUError, resolve_gpu, split_count
from trainlint.catalog.models import ModelLookupError, closest_models, find_model
from trainlint.catalog.naming import closest
from trainlint.diagnostics import Pos, Span
from trainlint.plan import OVERRIDABLE, Origin, Setting, TrainingPlan


LIST_KEYS = ("select", "ignore", "extend-select")
PATTERN_KEYS = ("exclude", "extend-exclude")
# Context settings (not plan fields): the framework versions, the launch, the parser. `versions` is a table
# (`versions = {trl = "0.18.0"}`) or a string (`trl=0.18.0,transformers>=4.52`); in a directive a framework's
# name works as a key too (`# trainlint: trl=0.18.0`).
CONTEXT_KEYS = ("versions", "launch", "dialect")
FRAMEWORK_KEYS = ("transformers", "trl", "accelerate", "deepspeed", "peft", "lightning", "torchtune", "axolotl",
                  "llamafactory", "ms-swift", "litgpt", "torch")
FAIL_LEVELS = ("error", "warning", "info")

_DIRECTIVE = compile_later(r"#\s*trainlint:\s*(?P<body>.*)$")
_PAIR = compile_later(r"(?P<key>[A-Za-z][\w-]*)\s*=\s*(?P<value>\"[^\"]*\"|'[^']*'|\S+)")


class SettingsError(ValueError):
    """A bad value in a settings source: the message names the source and the key.

    `path` is the settings file, and `key` the key path inside its trainlint table (`("per-file", "a/*", "gpu")`),
    where known, so that shells can point at the line (`toml_position`)."""

    def __init__(self, message: str, *, path: str | None = None, key: tuple[str, ...] = ()):
        super().__init__(message)
        self.path = path
        self.key = key


@dataclass(frozen=True)
class Overrides:
    """Values for plan fields from one source (cli, directive or project)."""

    values: dict[str, Any] = field(default_factory=dict)  # plan field -> value
    origin: Origin = Origin("cli")
    # plan field -> its own origin, where it has one of its own (a directive's value: where it is written)
    origins: dict[str, Origin] = field(default_factory=dict)

    def apply(self, plan: TrainingPlan) -> TrainingPlan:
        if not self.values:
            return plan
        values = dict(self.values)
        origins = dict(self.origins)
        if isinstance(values.get("gpu"), str):
            # `gpu = "8x H100"`: the count is this source's num-gpus unless it names one itself.
            name, count = split_count(values["gpu"])
            if count is not None:
                values["gpu"] = name
                if "num_gpus" not in values:
                    values["num_gpus"] = count
                    origins.pop("num_gpus", None)
        return plan.with_(**{name: Setting(value, origins.get(name, self.origin)) for name, value in values.items()})


class RuleSelection(NamedTuple):
    """Which rules are on: select, ignore and extend-select, as ruff spells them."""
    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    extend_select: tuple[str, ...] = ()

    def enabled(self, code: str, default_enabled: bool = True) -> bool:
        if _starts_with_any(code, self.ignore):
            return False
        if self.select:
            return _starts_with_any(code, self.select) or _starts_with_any(code, self.extend_select)
        return default_enabled or _starts_with_any(code, self.extend_select)


def _starts_with_any(code: str, prefixes: Sequence[str]) -> bool:
    # asked for every rule of every file: str.startswith takes the tuple itself
    return code.startswith(prefixes) if type(prefixes) is tuple else any(code.startswith(p) for p in prefixes)


@dataclass(frozen=True)
class ContextSettings:
    """Declared context from one source: framework versions (name -> version or PEP 440 range), a launch (an
    accelerate config file or a whole launch command line) and the parser (a `trainlint.context.dialect` name)."""

    versions: dict[str, str] = field(default_factory=dict)
    launch: str = ""
    dialect: str = ""
    origin: Origin = Origin("cli")

    def __bool__(self) -> bool:
        return bool(self.versions or self.launch or self.dialect)


def parse_versions(value: Any, source: str) -> dict[str, str]:
    """`{trl = "0.18.0"}` or "trl=0.18.0,transformers>=4.52" -> {"trl": "0.18.0", "transformers": ">=4.52"}."""
    if isinstance(value, dict):
        items = list(value.items())
    elif isinstance(value, str):
        items = []
        for part in (p.strip() for p in re.split(r"[;\s]+|,(?=\s*[A-Za-z])", value) if p.strip()):
            m = re.match(r"^([A-Za-z][\w.-]*?)\s*(==|=|>=|<=|~=|!=|>|<)\s*(.+)$", part)
            if not m:
                raise SettingsError(f"{source}: versions entry {part!r} is not NAME=VERSION or NAME>=VERSION")
            op = "" if m.group(2) in ("=", "==") else m.group(2)
            items.append((m.group(1), op + m.group(3)))
    else:
        raise SettingsError(f"{source}: versions must be a table of name = \"version\" or a string")
    out = {}
    for name, spec in items:
        if not isinstance(spec, (str, int, float)) or not str(spec).strip():
            raise SettingsError(f"{source}: versions.{name} must be a version string such as \"0.18.0\"")
        out[str(name).strip().lower().replace("_", "-")] = str(spec).strip()
    return out


def _context_entry(norm: str, value: Any, source: str, into: dict) -> None:
    if norm == "versions":
        into.setdefault("versions", {}).update(parse_versions(value, source))
    elif norm in ("launch", "dialect"):
        if not isinstance(value, str) or not value.strip():
            raise SettingsError(f"{source}: {norm} must be a non-empty string")
        into[norm] = value.strip()
    else:  # a framework name
        into.setdefault("versions", {})[norm] = str(value).strip()


@dataclass(frozen=True)
class ProjectConfig:
    """The [tool.trainlint] settings of the nearest pyproject.toml (or trainlint.toml), as read."""
    path: str = ""  # the TOML file it came from ("" = none found)
    overrides: dict[str, Any] = field(default_factory=dict)
    selection: RuleSelection = RuleSelection()
    fail_level: str | None = None
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()
    per_file: tuple[tuple[str, dict[str, Any]], ...] = ()
    output_format: str | None = None
    exclude: tuple[str, ...] | None = None  # None: the default excludes (trainlint.context.discovery)
    extend_exclude: tuple[str, ...] = ()
    respect_gitignore: bool = True
    context: dict = field(default_factory=dict)  # versions / launch / dialect
    per_file_context: tuple[tuple[str, dict], ...] = ()

    def context_for(self, file_path: str) -> ContextSettings:
        """Declared versions / launch / dialect for one file (per-file sections win)."""
        rel = self._relative(file_path)
        merged = {"versions": dict(self.context.get("versions", {})), "launch": self.context.get("launch", ""),
                  "dialect": self.context.get("dialect", "")}
        for pattern, extra in self.per_file_context:
            if _glob_match(rel, pattern):
                merged["versions"].update(extra.get("versions", {}))
                for key in ("launch", "dialect"):
                    merged[key] = extra.get(key) or merged[key]
        return ContextSettings(merged["versions"], merged["launch"], merged["dialect"], Origin("project", self.path))

    def for_file(self, file_path: str) -> tuple[Overrides, tuple[str, ...]]:
        """Project overrides and extra ignored codes for one file (per-file sections win)."""
        rel = self._relative(file_path)
        values = dict(self.overrides)
        for pattern, extra in self.per_file:
            if _glob_match(rel, pattern):
                values.update(extra)
        ignored: tuple[str, ...] = ()
        for pattern, codes in self.per_file_ignores:
            if _glob_match(rel, pattern):
                ignored += codes
        return Overrides(values, Origin("project", self.path)), ignored

    def _relative(self, file_path: str) -> str:
        if not self.path:
            return file_path
        try:
            return Path(os.path.realpath(file_path)).relative_to(Path(os.path.realpath(self.path)).parent).as_posix()
        except ValueError:
            return Path(file_path).as_posix()


def _glob_match(rel: str, pattern: str) -> bool:
    return fnmatch.fnmatch(rel, pattern) or fnmatch.fnmatch(Path(rel).name, pattern)


def parse_override(key: str, raw: Any, source: str) -> tuple[str, Any]:
    """(plan field, typed value) for a user-facing key such as `num-gpus`."""
    norm = key.replace("_", "-").lower()
    if norm not in OVERRIDABLE:
        hint = closest(norm, list(OVERRIDABLE), n=1)
        suffix = f"; did you mean {hint[0]!r}?" if hint else f"; known: {', '.join(OVERRIDABLE)}"
        raise SettingsError(f"{source}: unknown setting {key!r}{suffix}")
    name, kind = OVERRIDABLE[norm]
    if kind is int:
        try:
            value = int(raw)
        except (TypeError, ValueError):
            raise SettingsError(f"{source}: {key} must be a whole number, got {raw!r}") from None
        if value < 1:
            raise SettingsError(f"{source}: {key} must be at least 1, got {value}")
        return name, value
    if not isinstance(raw, str) or not raw.strip():
        raise SettingsError(f"{source}: {key} must be a non-empty string, got {raw!r}")
    if name == "gpu":
        _resolve_gpu_setting(raw.strip(), source, key)
    return name, raw.strip()


def _resolve_gpu_setting(value: str, source: str, key: str) -> None:
    """A GPU a setting names must resolve: a typo would silently turn the memory check off."""
    try:
        resolve_gpu(value)
    except UnknownGPUError as exc:
        raise SettingsError(f"{source}: {key}: {exc}") from None


def resolve_model_setting(value: str, source: str, key: str, base_dir: Path | None) -> None:
    """A model a setting names must be one trainlint can size: the catalog, a local folder or the offline HF cache."""
    try:
        found = find_model(value, base_dir=base_dir)
    except ModelLookupError as exc:
        raise SettingsError(f"{source}: {key}: {exc}") from None
    if found is None:
        hint = closest_models(value)
        suffix = f"; did you mean {', '.join(hint)}?" if hint else ""
        raise SettingsError(f"{source}: {key}: unknown model {value!r} (not in the catalog, `trainlint models`, not a "
                            f"local folder with a config.json, not in the offline Hugging Face cache){suffix}")


def _codes(value: Any, source: str, key: str) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [v for v in re.split(r"[,\s]+", value) if v]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise SettingsError(f"{source}: {key} must be a list of rule codes")
    return tuple(v.strip().upper() for v in value)


def parse_project_table(table: dict, source: str) -> ProjectConfig:
    """The settings of one trainlint table; a bad entry raises SettingsError naming its key path."""
    try:
        return _parse_project_table(table, source)
    except SettingsError as exc:
        if exc.path is None:
            exc.path = source
        raise


def _check_models(values: dict[str, Any], source: str, key_prefix: tuple[str, ...]) -> None:
    if "model" in values:
        try:
            resolve_model_setting(values["model"], source, "model", Path(source).parent if source else None)
        except SettingsError as exc:
            raise SettingsError(str(exc), path=source, key=key_prefix + ("model",)) from None


def _parse_project_table(table: dict, source: str) -> ProjectConfig:
    overrides: dict[str, Any] = {}
    lists: dict[str, tuple[str, ...]] = {}
    fail_level = output_format = None
    patterns: dict[str, tuple[str, ...]] = {}
    respect_gitignore = True
    per_file_ignores: list = []
    per_file: list = []
    context: dict = {}
    per_file_context: list = []
    for key, value in table.items():
        norm = key.replace("_", "-").lower()
        try:
            if norm in CONTEXT_KEYS:
                _context_entry(norm, value, source, context)
                continue
            _parse_project_entry(key, norm, value, source, overrides, lists, per_file_ignores, per_file,
                                 per_file_context)
        except SettingsError as exc:
            if not exc.key:
                exc.key = (key,) + exc.key
            raise
        if norm == "fail-level":
            fail_level = value
        elif norm == "output-format":
            output_format = str(value)
        elif norm in PATTERN_KEYS:
            patterns[norm] = tuple(value)
        elif norm == "respect-gitignore":
            respect_gitignore = value
    _check_models(overrides, source, ())
    for glob, values in per_file:
        _check_models(values, source, ("per-file", glob))
    return ProjectConfig(
        path=source, overrides=overrides,
        selection=RuleSelection(lists.get("select", ()), lists.get("ignore", ()), lists.get("extend-select", ())),
        fail_level=fail_level, per_file_ignores=tuple(per_file_ignores), per_file=tuple(per_file),
        output_format=output_format, exclude=patterns.get("exclude"), extend_exclude=patterns.get("extend-exclude", ()),
        respect_gitignore=respect_gitignore, context=context, per_file_context=tuple(per_file_context))


def _parse_project_entry(key: str, norm: str, value: Any, source: str, overrides: dict, lists: dict,
                         per_file_ignores: list, per_file: list, per_file_context: list | None = None) -> None:
    if norm in OVERRIDABLE:
        name, typed = parse_override(norm, value, source)
        overrides[name] = typed
    elif norm in LIST_KEYS:
        lists[norm] = _codes(value, source, key)
    elif norm == "fail-level":
        if value not in FAIL_LEVELS:
            raise SettingsError(f"{source}: fail-level must be one of {', '.join(FAIL_LEVELS)}")
    elif norm == "output-format":
        if not isinstance(value, str):
            raise SettingsError(f"{source}: output-format must be a string, got {value!r}")
    elif norm in PATTERN_KEYS:
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise SettingsError(f"{source}: {key} must be a list of gitignore-style patterns")
    elif norm == "respect-gitignore":
        if not isinstance(value, bool):
            raise SettingsError(f"{source}: respect-gitignore must be true or false, got {value!r}")
    elif norm == "per-file-ignores":
        if not isinstance(value, dict):
            raise SettingsError(f"{source}: per-file-ignores must be a table of glob = [codes]")
        per_file_ignores.extend((glob, _codes(codes, source, f"per-file-ignores.{glob}")) for glob, codes in value.items())
    elif norm == "per-file":
        if not isinstance(value, dict) or not all(isinstance(v, dict) for v in value.values()):
            raise SettingsError(f"{source}: per-file must be a table of glob = {{settings}}")
        for glob, sub in value.items():
            entries = {}
            extra: dict = {}
            for k, v in sub.items():
                norm_k = k.replace("_", "-").lower()
                if norm_k in CONTEXT_KEYS:
                    try:
                        _context_entry(norm_k, v, f"{source} per-file.{glob}", extra)
                    except SettingsError as exc:
                        raise SettingsError(str(exc), path=source, key=(key, glob, k)) from None
                    continue
                try:
                    name, typed = parse_override(k, v, f"{source} per-file.{glob}")
                except SettingsError as exc:
                    raise SettingsError(str(exc), path=source, key=(key, glob, k)) from None
                entries[name] = typed
            per_file.append((glob, entries))
            if extra and per_file_context is not None:
                per_file_context.append((glob, extra))
    else:
        known = sorted(set(OVERRIDABLE) | set(LIST_KEYS) | set(PATTERN_KEYS) | set(CONTEXT_KEYS) | {
            "fail-level", "output-format", "per-file", "per-file-ignores", "respect-gitignore"})
        hint = closest(norm, known, n=1)
        suffix = f"; did you mean {hint[0]!r}?" if hint else f"; known: {', '.join(known)}"
        raise SettingsError(f"{source}: unknown key {key!r} in the trainlint settings{suffix}")


@lru_cache(maxsize=256)
def find_project_config(directory: str) -> ProjectConfig:
    """The nearest trainlint.toml or pyproject.toml with a [tool.trainlint] table, walking up."""
    folder = os.path.realpath(directory)
    own = os.path.join(folder, "trainlint.toml")
    if os.path.isfile(own):
        return parse_project_table(_load_toml(Path(own)), own)
    pyproject = os.path.join(folder, "pyproject.toml")
    if os.path.isfile(pyproject) and _mentions_trainlint(Path(pyproject)):
        table = _load_toml(Path(pyproject)).get("tool", {}).get("trainlint")
        if isinstance(table, dict):
            return parse_project_table(table, pyproject)
    parent = os.path.dirname(folder)
    if parent == folder:
        return ProjectConfig()
    # one folder up through the cache: the configs of a repository share the folders above their own
    return find_project_config(parent)


def _mentions_trainlint(pyproject: Path) -> bool:
    """Whether the file can hold a [tool.trainlint] table (any spelling of it has the word): most pyproject.toml
    files have none, and need not be parsed for settings."""
    try:
        return b"trainlint" in pyproject.read_bytes()
    except OSError:
        return True  # parsed, and the error said where


def _load_toml(path: Path) -> dict:
    try:
        return tomllib.loads(path.read_bytes().decode("utf-8"))
    except (OSError, ValueError) as exc:  # ValueError: tomllib's TOMLDecodeError, or not UTF-8
        raise SettingsError(f"{path}: cannot read it: {exc}", path=str(path)) from None


_TABLE = compile_later(r"^\s*\[\s*([^\]]*?)\s*\]\s*(?:#.*)?$")


def _table_parts(header: str) -> tuple[str, ...]:
    """`tool.trainlint.per-file."a/*.yaml"` -> ("tool", "trainlint", "per-file", "a/*.yaml")."""
    return tuple(m.group(1) if m.group(1) is not None else m.group(2) if m.group(2) is not None else m.group(3)
                 for m in re.finditer(r'"((?:[^"\\]|\\.)*)"|\'([^\']*)\'|([^.\s"\']+)', header))


def toml_position(path: str, key: tuple[str, ...]) -> tuple[int, int]:
    """1-based (line, column) of a key path inside the trainlint table of a pyproject.toml / trainlint.toml: the
    key's own line where it can be found, else its table's header, else the table's; (1, 1) if nothing matches."""
    try:
        lines = Path(path).read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return 1, 1
    prefix = ("tool", "trainlint") if Path(path).name == "pyproject.toml" else ()
    wanted = prefix + tuple(key)
    best, best_len = (1, 1), -1
    table: tuple[str, ...] = ()
    for number, line in enumerate(lines, 1):
        header = _TABLE.match(line)
        if header and not line.lstrip().startswith("[["):
            table = _table_parts(header.group(1))
            if wanted[: len(table)] == table and len(table) > best_len and len(table) >= len(prefix):
                best, best_len = (number, line.index("[") + 1), len(table)
            continue
        assignment = re.match(r'^(\s*)("(?:[^"\\]|\\.)*"|\'[^\']*\'|[A-Za-z0-9_.\-]+)\s*=', line)
        if not assignment:
            continue
        full = table + _table_parts(assignment.group(2))
        matched = len(full) if wanted[: len(full)] == full else 0
        if matched > best_len and matched >= len(prefix) + 1:
            best, best_len = (number, len(assignment.group(1)) + 1), matched
    return best


class Directive(NamedTuple):
    """A config file's own `# trainlint:` settings, with the entries that could not be read."""
    overrides: Overrides
    problems: tuple[tuple[int, str], ...] = ()  # (line, message) for bad directive entries
    context: ContextSettings = ContextSettings(origin=Origin("directive"))


def parse_directives(comments: list[tuple[int, int, str]], path: str,
                     locate: Callable[[int, int], Pos] | None = None) -> Directive:
    """`# trainlint: gpu=H100-80GB num-gpus=8` comments. `disable=` entries are suppressions, handled elsewhere.
    With `locate` (the document's `pos_at(line, column)`), each value's origin has the span of its text in the
    comment (quotes left out), so that a fix can change it where it is written."""
    values: dict[str, Any] = {}
    origins: dict[str, Origin] = {}
    problems: list[tuple[int, str]] = []
    context: dict = {}
    for line, column, text in comments:
        match = _DIRECTIVE.search(text)
        if not match:
            continue
        for pair in _PAIR.finditer(match.group("body")):
            key, raw = pair.group("key"), pair.group("value").strip("\"'")
            if key.lower() in ("disable", "disable-file", "enable"):
                continue
            norm = key.replace("_", "-").lower()
            if norm in CONTEXT_KEYS or norm in FRAMEWORK_KEYS:
                try:
                    _context_entry(norm, raw, f"{path}:{line + 1}", context)
                except SettingsError as exc:
                    problems.append((line, str(exc)))
                continue
            try:
                name, value = parse_override(key, raw, f"{path}:{line + 1}")
                if name == "model":
                    resolve_model_setting(value, f"{path}:{line + 1}", key, Path(path).parent)
            except SettingsError as exc:
                problems.append((line, str(exc)))
                continue
            values[name] = value
            origins[name] = Origin("directive", path, span=_value_span(locate, line, column, text, match, pair))
    return Directive(Overrides(values, Origin("directive", path), origins), tuple(problems),
                     ContextSettings(context.get("versions", {}), context.get("launch", ""), context.get("dialect", ""),
                                     Origin("directive", path)))


def _value_span(locate: Callable[[int, int], Pos] | None, line: int, column: int, text: str, directive: re.Match,
                pair: re.Match) -> Span | None:
    """The span of a directive pair's value in the document (its quotes left out); None without `locate`, or when the
    comment runs over more than one line before it (a JSON block comment)."""
    if locate is None:
        return None
    start = directive.start("body") + pair.start("value")
    raw = pair.group("value")
    quoted = raw[:1] in ("'", '"')
    start += 1 if quoted else 0
    end = start + len(raw) - (2 if quoted else 0)
    if "\n" in text[:end]:
        return None
    return Span(locate(line, column + start), locate(line, column + end))


class Settings(NamedTuple):
    """Everything that shapes one `trainlint check` run besides the files themselves."""

    cli: Overrides = Overrides()
    selection: RuleSelection | None = None  # CLI --select/--ignore (None = use the project's)
    fail_level: str | None = None
    use_project_config: bool = True  # also: read the repository around the file (pins, launch scripts)
    context: ContextSettings = ContextSettings()  # CLI --versions / --launch / --dialect

    def with_(self, **changes: Any) -> "Settings":
        return self._replace(**changes)
