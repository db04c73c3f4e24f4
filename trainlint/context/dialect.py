"""The parser that reads the file: plain HfArgumentParser, TrlParser, LLaMA-Factory, open-instruct, open-r1,
ms-swift, axolotl, torchtune, LitGPT, Lightning CLI, or unknown.

Which keys are legal depends on it (open-instruct's own dataclasses define `max_seq_length`; LLaMA-Factory reads
`template`, `finetuning_type`, ...). `Dialect.fields` is the set of keys that parser accepts when trainlint knows
it; rules judge unknown keys against it, and an unknown parser means no unknown-key claim above info.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any, NamedTuple

from trainlint._patterns import compile_later
from trainlint.catalog import dialects as catalog
from trainlint.catalog import releases
from trainlint.context import argclasses, imports
from trainlint.context.launch import SKIP_DIRS, bases_for, bases_of
from trainlint.context.versions import Versions, _from_spec, canonical
from trainlint.document.reading import read_regular_file
from trainlint.plan import Origin, Setting

DIALECTS = ("hf", "trl", "llamafactory", "open-instruct", "open-r1", "ms-swift", "ms-swift-megatron", "axolotl",
            "torchtune", "litgpt", "lightning-cli", "unknown")
# What people read for each name.
LABELS = {"hf": "HfArgumentParser", "trl": "TrlParser", "llamafactory": "LLaMA-Factory", "open-instruct":
          "open-instruct", "open-r1": "open-r1 (TrlParser)", "ms-swift": "ms-swift",
          "ms-swift-megatron": "ms-swift Megatron (megatron sft)", "axolotl": "axolotl",
          "torchtune": "torchtune", "litgpt": "LitGPT", "lightning-cli": "Lightning CLI", "unknown": "unknown parser"}


class Dialect(NamedTuple):
    """The parser that reads the config (HF, TRL, axolotl, ...), how it was recognised and the keys it accepts."""
    name: str = "unknown"  # one of DIALECTS
    origin: Origin = Origin("default", note="no script or package pins name the parser")
    fields: frozenset | None = None  # keys the parser accepts, when known
    script: str = ""  # the script whose parser was recognised, when any
    # Keys the repository's own argument classes declare (context/argclasses.py): top-level keys for HF-style
    # parsers, `trainer` keys for LightningCLI's trainer_class; None when the parser takes no class of the repository.
    own: frozenset | None = None
    own_note: str = ""  # which classes, where ("RWKV-v5/src/trainer.py: RWKVLightningTrainer")
    # What could not be resolved among the classes the repository's parser takes: its keys are unknown, so a claim
    # about an unknown key rests on an assumption (at most a warning), said by `own_assumption`.
    own_unresolved: tuple = ()
    # The parser package's releases the launched script can import (a name it imports that later releases removed:
    # alignment-handbook's H4ArgumentParser, gone in 0.4.0.dev0): (package, first release without it, reason).
    era: tuple = ()
    # Where the repository installs that package without a ref, when it does: (path, line, start column, end column,
    # start offset, the command) with 0-based positions. An install without a ref gets the newest release.
    era_install: tuple = ()
    # Decided from the file alone (its characteristic keys, or a format that is the framework's: axolotl, torchtune,
    # LitGPT, Lightning): no declaration, launch, script, pin or repository script names the parser. A verdict that
    # holds only for that framework's own release (a closed set of values a fork may extend) rests on the guess.
    guessed: bool = False

    @property
    def known(self) -> bool:
        return self.name != "unknown"

    def guess_assumption(self) -> tuple[str, ...]:
        """The assumption a claim that only this parser's own releases decide rests on when the parser was guessed
        from the file alone, else ()."""
        if not self.known or not self.guessed:
            return ()
        return (f"assumed {self.label} itself reads this file (decided from {self.origin.note or 'the file'}; no "
                f"launch, script, pin or vendored source names the parser, and a fork may accept more): declare it "
                f"with `# trainlint: dialect={self.name}`",)

    def declares(self, key: str) -> bool:
        """Whether the repository's own argument classes declare `key`."""
        return self.own is not None and key in self.own

    def own_assumption(self) -> tuple[str, ...]:
        """The assumption an unknown-key claim rests on when some of the repository's argument classes could not be
        read, else ()."""
        if not self.own_unresolved:
            return ()
        return (f"the repository's parser also takes {', '.join(self.own_unresolved[:4])}, whose fields trainlint "
                f"could not read ({self.own_note or 'not defined in the repository'}): they may declare the key",)

    @property
    def label(self) -> str:
        return LABELS.get(self.name, self.name)

    def accepts(self, key: str) -> bool | None:
        """True/False when the parser's fields are known, None otherwise."""
        if self.fields is None:
            return None
        return key in self.fields

    def describe(self) -> str:
        era = "".join(f"; only {package} < {below} runs it: {reason}" for package, below, reason in self.era)
        own = f"; the repository's classes: {self.own_note}" if self.own_note else ""
        return f"{self.label} ({self.origin.describe()}{own}{era})"


# --- deciding it ------------------------------------------------------------------------------------------------

MAX_SCRIPT_BYTES = 512 * 1024
# The launcher alone decides the parser.
BY_LAUNCHER = {"llamafactory": "llamafactory", "swift": "ms-swift", "axolotl": "axolotl", "tune": "torchtune",
               "litgpt": "litgpt", "trl": "trl"}
# A module or script path the launch runs.
BY_SCRIPT = (("axolotl.cli", "axolotl"), ("open_r1", "open-r1"), ("open_instruct", "open-instruct"),
             ("llamafactory", "llamafactory"), ("swift/cli/_megatron", "ms-swift-megatron"),
             ("swift.cli._megatron", "ms-swift-megatron"), ("swift/cli", "ms-swift"), ("litgpt", "litgpt"),
             ("torchtune", "torchtune"), ("trl/scripts", "trl"),
             # transformers' own example scripts (examples/pytorch/*/run_*.py) parse with HfArgumentParser
             ("transformers/examples/", "hf"))
# What the launched script imports, strongest first.
BY_IMPORT = ((compile_later(r"\bfrom\s+open_instruct\b|\bimport\s+open_instruct\b|\bArgumentParserPlus\b"),
              "open-instruct"),
             (compile_later(r"\bfrom\s+open_r1\b|\bimport\s+open_r1\b"), "open-r1"),
             (compile_later(r"\bfrom\s+llamafactory\b|\bimport\s+llamafactory\b|\bfrom\s+llmtuner\b"), "llamafactory"),
             (compile_later(r"\bfrom\s+swift\b|\bimport\s+swift\b"), "ms-swift"),
             (compile_later(r"\bfrom\s+axolotl\b|\bimport\s+axolotl\b"), "axolotl"),
             (compile_later(r"\bTrlParser\b"), "trl"),
             # alignment-handbook's H4ArgumentParser is an HfArgumentParser (parse_yaml_file, allow_extra_keys=False)
             (compile_later(r"\bH4ArgumentParser\b"), "hf"),
             (compile_later(r"\bHfArgumentParser\b"), "hf"))
# For each of them, words one of which every match contains: a script without them is not scanned with the pattern
# (a scan costs ~30 us per KB, the word search almost nothing). Held to BY_IMPORT by tests/test_startup.py.
_IMPORT_WORDS = ((b"open_instruct", b"ArgumentParserPlus"), (b"open_r1",), (b"llamafactory", b"llmtuner"),
                 (b"swift",), (b"axolotl",), (b"TrlParser",), (b"H4ArgumentParser",),
                 (b"HfArgumentParser",))
# A repository that *is* one of these projects (its package name) or pins it.
BY_PACKAGE = {"llamafactory": "llamafactory", "llmtuner": "llamafactory", "open-r1": "open-r1",
              "open-instruct": "open-instruct", "ms-swift": "ms-swift", "axolotl": "axolotl",
              "torchtune": "torchtune", "litgpt": "litgpt", "alignment-handbook": "trl"}
BY_FLAVOR = {"axolotl": "axolotl", "torchtune": "torchtune", "litgpt": "litgpt", "lightning": "lightning-cli"}
# The catalog's version key for a dialect's own package.
PACKAGE_OF = {"llamafactory": "llamafactory", "axolotl": "axolotl", "torchtune": "torchtune", "litgpt": "litgpt",
              "ms-swift": "ms-swift", "ms-swift-megatron": "ms-swift", "trl": "trl", "open-r1": "trl"}
# Dialects whose scripts train with HF's Trainer (HfTrainerDeepSpeedConfig compares a DeepSpeed config with the
# TrainingArguments): a DeepSpeed JSON their launch passes as `--deepspeed X` is read the way HF Trainer reads it.
HF_TRAINER = ("hf", "trl", "open-r1", "open-instruct", "llamafactory", "ms-swift")


def _script_text(script: str, bases: list[Path]) -> tuple[str, str]:
    """The text of the script a launch runs (a .py path, or a module under one of the bases), bounded; read once
    per run (the dialect, the argument syntax and the training-loop test all look at it)."""
    key = (script, tuple(str(b) for b in bases))
    if key in _SCRIPT_TEXTS:
        return _SCRIPT_TEXTS[key]
    found = _read_script(script, bases)
    if len(_SCRIPT_TEXTS) >= MAX_SCRIPT_TEXTS:
        _SCRIPT_TEXTS.clear()
    _SCRIPT_TEXTS[key] = found
    return found


_SCRIPT_TEXTS: dict[tuple, tuple[str, str]] = {}
MAX_SCRIPT_TEXTS = 128


def _read_script(script: str, bases: list[Path]) -> tuple[str, str]:
    path = script_path(script, bases) if script else ""
    if not path:
        return "", ""
    try:
        if Path(path).stat().st_size <= MAX_SCRIPT_BYTES:
            return path, Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError:
        pass
    return "", ""


def script_path(script: str, bases: list[Path]) -> str:
    """The file of the script a launch runs (a .py path, or a module under one of the bases), or ""."""
    candidates = [script] if script.endswith(".py") else [script.replace(".", "/") + ".py",
                                                         script.replace(".", "/") + "/__main__.py"]
    for base in bases:
        for rel in candidates:
            path = (base / rel) if not Path(rel).is_absolute() else Path(rel)
            try:
                if path.is_file():
                    return str(path)
            except OSError:
                continue
    return ""


_REPO_SCRIPTS: dict[str, tuple[str, str] | None] = {}
_REPO_ALL: dict[str, tuple[tuple[str, str], ...]] = {}
MAX_SCRIPTS = 300


def clear_cache() -> None:
    _CLI_SCRIPTS.clear()
    _INSTALLS.clear()
    _CLONED.clear()
    argclasses.clear_cache()
    _REPO_SCRIPTS.clear()
    _REPO_ALL.clear()
    _SCRIPT_TEXTS.clear()
    _NAMING.clear()


def repository_parser(root: str) -> tuple[str, str] | None:
    """(dialect, script) when the repository's own Python scripts parse their configs with one recognisable
    parser (the strongest found: open-instruct / open-r1 / LLaMA-Factory / ms-swift / axolotl imports, then
    TrlParser, then HfArgumentParser); None when none does. Bounded walk, once per repository."""
    if root in _REPO_SCRIPTS:
        return _REPO_SCRIPTS[root]
    best: tuple[int, str, str] | None = None
    matched: list[tuple[str, str]] = []
    seen = 0
    base = Path(root)
    for folder, dirs, names in os.walk(base):
        depth = len(Path(folder).relative_to(base).parts)
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and not d.startswith(".") and depth < 3
                         and d not in ("tests", "test", "docs", "examples"))
        for name in sorted(n for n in names if n.endswith(".py")):
            seen += 1
            if seen > MAX_SCRIPTS:
                break
            path = Path(folder) / name
            data, _ = read_regular_file(path, MAX_SCRIPT_BYTES)
            if data is None:
                continue
            # Byte searches first: a script that names no parser is not decoded, nor scanned with its pattern.
            if b"parse" not in data:
                continue
            ranks = [rank for rank, words in enumerate(_IMPORT_WORDS) if any(word in data for word in words)]
            if not ranks:
                continue
            text = data.decode("utf-8", errors="replace")
            for rank in ranks:
                pattern, dialect = BY_IMPORT[rank]
                if pattern.search(text):
                    if best is None or rank < best[0]:
                        best = (rank, dialect, str(path))
                    matched.append((dialect, str(path)))
                    break
        if seen > MAX_SCRIPTS:
            break
    _REPO_SCRIPTS[root] = (best[1], best[2]) if best else None
    _REPO_ALL[root] = tuple(matched)
    return _REPO_SCRIPTS[root]


def repository_scripts(root: str, dialect: str) -> tuple[str, ...]:
    """The repository's own scripts that parse their configs with `dialect` (the walk of `repository_parser`)."""
    if root not in _REPO_ALL:
        repository_parser(root)
    rename = {n for _needle, n in BY_SCRIPT}
    out = []
    for name, path in _REPO_ALL.get(root, ()):
        rel = path.replace("\\", "/")
        name = next((n for needle, n in BY_SCRIPT if needle in rel), name) if rename else name
        if name == dialect:
            out.append(path)
    return tuple(out)


def _fields(name: str, versions) -> frozenset | None:
    package = PACKAGE_OF.get(name)
    found = versions.get(package) if versions is not None and package else None
    version = found.version if found is not None and not found.assumed else None
    try:
        return catalog.accepted_keys(name, version)
    except Exception:  # noqa: BLE001
        return None


# TrainingArguments fields that no DeepSpeed-launcher or plain argparse convention shares. With `--deepspeed
# <file>.json` (the TrainingArguments field; raw DeepSpeed scripts take `--deepspeed` as a bare flag and
# `--deepspeed_config X`) they say the script parses its command line with HfArgumentParser.
TRAINING_ARGUMENT_FIELDS = ("per_device_train_batch_size", "gradient_accumulation_steps", "do_train",
                            "overwrite_output_dir", "per_device_eval_batch_size", "save_strategy", "eval_strategy",
                            "evaluation_strategy", "logging_steps", "save_total_limit", "lr_scheduler_type",
                            "ddp_timeout", "remove_unused_columns", "dataloader_num_workers", "load_best_model_at_end",
                            "metric_for_best_model")


def _training_arguments_passed(launch) -> list[str]:
    """The TrainingArguments-only fields a launch passes beside `--deepspeed X.json` (two or more), else []."""
    deepspeed = launch.argument("deepspeed") if hasattr(launch, "argument") else None
    if deepspeed is None or not str(deepspeed.value or "").endswith(".json"):
        return []
    found = [f for f in TRAINING_ARGUMENT_FIELDS if launch.argument(f) is not None]
    return found if len(found) >= 2 else []


def _by_keys(doc) -> str | None:
    try:
        data = catalog.load()["dialects"]
    except Exception:  # noqa: BLE001
        return None
    root = getattr(doc, "root", None)
    if root is None or root.kind != "mapping":
        return None
    keys = {e.key for e in root.entries if isinstance(e.key, str)}
    best, best_hits = None, 0
    for name, entry in data.items():
        if name in ("hf", "trl", "firefly"):
            continue
        detect = entry.get("detect") or {}
        hits = len(keys & set(detect.get("keys") or ()))
        if hits >= max(2, int(detect.get("min_keys") or 1)) and hits > best_hits and \
                entry.get("flavor", "huggingface") == "huggingface":
            best, best_hits = name, hits
    return best


def decide(doc, flavor: str, launch, versions=None, project_names: tuple = (), pinned: tuple = (),
           declared: str = "", declared_origin: Origin | None = None, repo_root: str = "") -> Dialect:
    """The parser that reads this file (`_decide`), with the keys the repository's own argument classes add to it
    (`with_own_classes`) and the parser package's releases the launched script's imports admit (`with_era`)."""
    dialect = _decide(doc, flavor, launch, versions, project_names, pinned, declared, declared_origin, repo_root)
    if not repo_root:
        return dialect
    try:
        dialect = with_own_classes(dialect, flavor, launch, repo_root)
        return with_era(dialect, launch, repo_root) if flavor == "huggingface" else dialect
    except (OSError, RuntimeError, ValueError, RecursionError):
        return dialect


def _decide(doc, flavor: str, launch, versions=None, project_names: tuple = (), pinned: tuple = (),
            declared: str = "", declared_origin: Origin | None = None, repo_root: str = "") -> Dialect:
    """The parser that reads this file. Strongest first: a declared `dialect` setting; the launch command
    (its launcher, the module or script it runs, that script's imports); the repository's own package name or
    its pins of a project with a parser of its own; the flavor (axolotl, torchtune, LitGPT, Lightning CLI);
    the file's characteristic keys (`schemas/dialects.json` detect.keys). Otherwise unknown."""
    def made(name: str, origin: Origin, script: str = "") -> Dialect:
        return Dialect(name, origin, _fields(name, versions), script)

    if declared:
        name = declared.strip().lower()
        if name in ("transformers", "hfargumentparser"):
            name = "hf"
        return made(name, declared_origin or Origin("cli"))
    if launch is not None and launch.found:
        where = launch.origin.path + (f":{launch.origin.span.start.line + 1}" if launch.origin.span else "")
        if launch.launcher == "swift" and (launch.script or "").startswith("megatron"):
            return made("ms-swift-megatron", Origin("launch", launch.origin.path, span=launch.origin.span,
                                                    note=f"`{launch.script}` launches it"))
        if launch.launcher in BY_LAUNCHER:
            return made(BY_LAUNCHER[launch.launcher], Origin("launch", launch.origin.path, span=launch.origin.span,
                                                             note=f"{launch.launcher} launches it"))
        script = launch.script or ""
        for needle, name in BY_SCRIPT:
            if needle in script.replace("\\", "/"):
                return made(name, Origin("launch", launch.origin.path, span=launch.origin.span,
                                         note=f"the launch runs {script}".replace("\0", "$…")), script)
        bases = bases_of(launch, repo_root or None)
        path, text = _script_text(script, bases)
        if text:
            for (pattern, name), words in zip(BY_IMPORT, _IMPORT_WORDS):
                if any(word.decode() in text for word in words) and pattern.search(text):
                    return made(name, Origin("inferred", path, note=f"{Path(path).name} (run by {where}) uses "
                                                                    f"{pattern.pattern.split(chr(92))[0] or name}"),
                                path)
        elif script.endswith(".py"):
            beside = _folder_parser(script, bases)
            if beside is not None:
                name, path = beside
                return made(name, Origin("inferred", path, note=f"{Path(script).name} (run by {where}) is not in the "
                                                                f"repository; {Path(path).name} beside it uses "
                                                                f"{LABELS.get(name, name)}"), path)
            fields = _training_arguments_passed(launch)
            if fields:
                return made("hf", Origin("inferred", launch.origin.path, span=launch.origin.span,
                                         note=f"the launch passes {Path(script).name} (not in the repository) "
                                              f"TrainingArguments fields: --deepspeed X.json with "
                                              + ", ".join("--" + f for f in fields)), script)
    for name in project_names:
        if name in BY_PACKAGE:
            return made(BY_PACKAGE[name], Origin("inferred", note=f"the repository is the {name} project"))
    for name in pinned:
        if name in BY_PACKAGE and BY_PACKAGE[name] not in ("trl",):
            return made(BY_PACKAGE[name], Origin("inferred", note=f"the repository depends on {name}"))
    if repo_root and flavor == "huggingface":
        found = repository_parser(repo_root)
        if found is not None:
            name, script = found
            rel = script.replace("\\", "/")
            name = next((n for needle, n in BY_SCRIPT if needle in rel), name)
            return made(name, Origin("inferred", script, note=f"the repository's scripts parse with it "
                                                              f"({Path(script).name})"), script)
    if flavor in BY_FLAVOR:
        return made(BY_FLAVOR[flavor], Origin("inferred", note=f"a {flavor} file"))._replace(guessed=True)
    if flavor == "huggingface":
        by_keys = _by_keys(doc)
        if by_keys:
            return made(by_keys, Origin("inferred", note="the file's characteristic keys"))._replace(guessed=True)
    return Dialect()


MAX_BESIDE = 64  # .py files read in the folder of a launched script that is missing


def _folder_parser(script: str, bases: list[Path]) -> tuple[str, str] | None:
    """(dialect, script) when the launched script is not in the repository but the scripts in the folder it names
    (examples/ for `python examples/train.py`) parse with one recognisable parser (the strongest found)."""
    rel = Path(script)
    if rel.is_absolute() or rel.parent == Path("."):
        return None
    best: tuple[int, str, str] | None = None
    for base in bases:
        folder = base / rel.parent
        try:
            if not folder.is_dir():
                continue
            files = sorted(p for p in folder.glob("*.py") if p.is_file())[:MAX_BESIDE]
        except OSError:
            continue
        for path in files:
            data, _ = read_regular_file(path, MAX_SCRIPT_BYTES)
            if data is None or b"parse" not in data:
                continue
            text = data.decode("utf-8", errors="replace")
            for rank, ((pattern, name), words) in enumerate(zip(BY_IMPORT, _IMPORT_WORDS)):
                if any(word in data for word in words) and pattern.search(text):
                    if best is None or rank < best[0]:
                        best = (rank, name, str(path))
                    break
        if best is not None:
            break
    return (best[1], best[2]) if best else None


# --- the repository's own argument classes, and the parser package's era ---------------------------------------

MAX_CLI_SCRIPTS = 300  # .py files looked at for a LightningCLI construction
_CLI_SCRIPTS: dict[str, tuple[str, ...]] = {}


def _lightning_scripts(root: str) -> tuple[str, ...]:
    """The repository's .py files that construct a LightningCLI (a bounded walk, once per repository)."""
    if root in _CLI_SCRIPTS:
        return _CLI_SCRIPTS[root]
    found: list[str] = []
    seen = 0
    base = Path(root)
    for folder, dirs, names in os.walk(base):
        depth = len(Path(folder).relative_to(base).parts)
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and not d.startswith(".") and depth < 3
                         and d not in ("tests", "test", "docs"))
        for name in sorted(n for n in names if n.endswith(".py")):
            seen += 1
            if seen > MAX_CLI_SCRIPTS:
                break
            data, _ = read_regular_file(Path(folder) / name, MAX_SCRIPT_BYTES)
            if data is not None and b"LightningCLI(" in data:
                found.append(str(Path(folder) / name))
        if seen > MAX_CLI_SCRIPTS:
            break
    if len(_CLI_SCRIPTS) > 64:
        _CLI_SCRIPTS.clear()
    _CLI_SCRIPTS[root] = tuple(found)
    return _CLI_SCRIPTS[root]


def with_own_classes(dialect: Dialect, flavor: str, launch, repo_root: str) -> Dialect:
    """The dialect with the keys the repository's own argument classes declare (`argclasses`): those of the parser
    the launched script builds when it is in the repository; with no such script, those of every repository script
    of the parser's family (the union: any of them may read the file); for a dialect whose framework package the
    repository vendors (`argument_modules`), that package's dataclasses too."""
    kind = "lightning" if dialect.name == "lightning-cli" else "hf" if flavor == "huggingface" else ""
    if not kind:
        return dialect
    launched = ""
    if launch is not None and getattr(launch, "found", False) and (launch.script or "").endswith(".py"):
        launched = script_path(launch.script, bases_of(launch, repo_root or None))
    if launched:
        scripts: tuple[str, ...] = (launched,)
    elif kind == "lightning":
        scripts = _lightning_scripts(repo_root)
        if not scripts:
            # which LightningCLI reads the file is not known: its trainer_class may add `trainer:` arguments
            # (RWKV-infctx-trainer's RWKVLightningTrainer), so a claim on an unknown trainer key assumes it does not
            return dialect._replace(own_unresolved=("the trainer_class of the LightningCLI that runs it",),
                           own_note="no LightningCLI( script is in the repository")
    elif dialect.known:
        scripts = tuple(dict.fromkeys(((dialect.script,) if dialect.script and Path(dialect.script).is_file() else ())
                                      + repository_scripts(repo_root, dialect.name)))
    else:
        scripts = ()
    own = argclasses.OwnClasses()
    for script in scripts[:MAX_SCRIPTS]:
        own = own.merged(argclasses.parser_classes(script, repo_root, kind))
    if kind == "hf" and dialect.known:
        try:
            folders = tuple((catalog.dialect(dialect.name) or {}).get("argument_modules") or ())
        except Exception:  # noqa: BLE001 - no dialect data: no vendored package to look for
            folders = ()
        if folders:
            own = own.merged(argclasses.package_classes(repo_root, folders))
    if not own.found:
        return dialect
    shown = ", ".join(own.classes[:3]) + (f" and {len(own.classes) - 3} more" if len(own.classes) > 3 else "")
    return dialect._replace(own=own.fields, own_note=shown, own_unresolved=own.unresolved)


# Packages whose parser a script imports by name, and the module it imports them from (removed_names.json keys).
ERA_PACKAGES = ("alignment-handbook",)


def with_era(dialect: Dialect, launch, repo_root: str) -> Dialect:
    """The dialect with the parser package's releases the launched script admits: a name it imports that a later
    release of that package removed (`imports.cuts_for`, `removed_names.json`) means only the releases before run it."""
    script = ""
    if launch is not None and getattr(launch, "found", False) and (launch.script or "").endswith(".py"):
        script = script_path(launch.script, bases_of(launch, repo_root or None))
        if not script:
            return dialect
    # with no launch, every repository script of the file's parser: the era holds when each of them has it
    scripts = (script,) if script else repository_scripts(repo_root, dialect.name) if dialect.known else ()
    if not scripts:
        if launch is not None and getattr(launch, "found", False):
            return dialect
        cloned = _cloned_era(repo_root)  # no launch, no script: the documented run of a cloned framework script
        return dialect._replace(era=cloned, era_install=unpinned_install(repo_root, cloned[0][0])) if cloned \
            else dialect
    top = Path(repo_root)
    own = [m for m, p in imports.FRAMEWORK_PACKAGES.items() if p in ERA_PACKAGES
           and any((base / m / "__init__.py").is_file() for base in (top, top / "src", Path(scripts[0]).parent))]
    if own:
        return dialect  # the repository ships the package itself (alignment-handbook's own checkout)
    cuts = imports.weakest([imports.cuts_for(s, repo_root) for s in scripts[:MAX_SCRIPTS]])
    era = tuple((c.name, c.below, c.reason) for c in cuts if c.name in ERA_PACKAGES and c.below)
    if era:
        return dialect._replace(era=era, era_install=unpinned_install(repo_root, era[0][0]))
    return dialect._replace(era=era) if era else dialect


MAX_DOC_FILES = 200  # Markdown and shell files looked at for a cloned framework's script
_CLONE = compile_later(r"\bgit\s+clone\b[^\n]*?(?:https?://|git@)([\w.-]+[/:][\w.-]+/[\w.-]+?)(?:\.git)?(?=[\s/]|$)",
                       re.M)
_CLONED: dict[str, tuple] = {}


def _cloned_era(repo_root: str) -> tuple:
    """((package, first release without it, reason),) when the repository's documents clone a framework's repository
    and then run a script that its later releases removed (`removed_scripts.json`: alignment-handbook's
    scripts/run_dpo.py); () otherwise. A bounded walk of the .md and .sh files, once per repository."""
    if repo_root in _CLONED:
        return _CLONED[repo_root]
    try:
        table = releases.removed_scripts()
    except Exception:  # noqa: BLE001 - no data: no era
        table = {}
    found: tuple = ()
    seen = 0
    base = Path(repo_root)
    needles = {info.get("repository", "").split("/", 1)[-1].encode(): (name, info) for name, info in table.items()
               if isinstance(info.get("scripts"), dict) and info.get("repository")}
    for folder, dirs, names in os.walk(base) if needles else ():
        depth = len(Path(folder).relative_to(base).parts)
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and not d.startswith(".") and depth < 3)
        for file in sorted(n for n in names if n.endswith((".md", ".sh"))):
            seen += 1
            if seen > MAX_DOC_FILES or found:
                break
            path = Path(folder) / file
            data, _ = read_regular_file(path, MAX_SCRIPT_BYTES)
            if data is None or b"clone" not in data or not any(n in data for n in needles):
                continue
            text = data.decode("utf-8", errors="replace")
            for clone in _CLONE.finditer(text):
                url = clone.group(1).replace(":", "/").lower()
                hit = next(((name, info) for needle, (name, info) in needles.items()
                            if url.endswith(needle.decode().lower())), None)
                if hit is None:
                    continue
                name, info = hit
                after = text[clone.end():]
                for script, (release, source) in info["scripts"].items():
                    at = re.search(rf"(?<![\w/.-]){re.escape(script)}\b", after)
                    if at is None:
                        continue
                    rel = path.relative_to(base).as_posix()
                    line = text.count("\n", 0, clone.end() + at.start()) + 1
                    found = ((name, release, f"{rel}:{line} runs {script} of a clone of {info['repository']} "
                                             f"(line {text.count(chr(10), 0, clone.start()) + 1}); {script} is gone "
                                             f"since {name} {release} ({source})"),)
                    break
                if found:
                    break
        if seen > MAX_DOC_FILES or found:
            break
    if len(_CLONED) > 64:
        _CLONED.clear()
    _CLONED[repo_root] = found
    return found


_REF_AFTER = compile_later(r"^\s*(?:cd\s+\S+\s*(?:&&|;)\s*)?git\s+(?:checkout|switch|reset\s+--hard)\s+\S+", re.M)
_INSTALLS: dict[tuple[str, str], tuple] = {}


def unpinned_install(repo_root: str, package: str) -> tuple:
    """Where the repository's .md / .sh files install `package` from its repository without a ref (`pip install
    git+https://github.com/huggingface/alignment-handbook.git`, or a `git clone` of it that no `git checkout` /
    `--branch` follows): (path, line, start, end, offset, command), 0-based; () when every install found names a
    ref, or none is found. The newest commit is what such an install gets."""
    key = (repo_root, package)
    if key in _INSTALLS:
        return _INSTALLS[key]
    try:
        repository = str((releases.removed_scripts().get(package) or {}).get("repository") or "")
    except Exception:  # noqa: BLE001
        repository = ""
    found: tuple = ()
    name = repository.split("/", 1)[-1] if repository else ""
    pattern = re.compile(rf"(?:pip3?\s+install\b[^\n]*?git\+(?:https?://|ssh://git@){re.escape(repository)}"
                         rf"(?:\.git)?(@[\w./-]+)?|git\s+clone\b[^\n]*?{re.escape(repository)}(?:\.git)?)",
                         re.I) if repository else None
    seen = 0
    base = Path(repo_root)
    for folder, dirs, names in os.walk(base) if pattern is not None else ():
        depth = len(Path(folder).relative_to(base).parts)
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and not d.startswith(".") and depth < 3)
        for file in sorted(n for n in names if n.endswith((".md", ".sh"))):
            seen += 1
            if seen > MAX_DOC_FILES or found:
                break
            path = Path(folder) / file
            data, _ = read_regular_file(path, MAX_SCRIPT_BYTES)
            if data is None or name.encode() not in data:
                continue
            text = data.decode("utf-8", errors="replace")
            for match in pattern.finditer(text) if pattern is not None else ():
                command = match.group(0)
                if command.lower().startswith("git") and (re.search(r"\s(?:-b|--branch)\s", command)
                                                          or _REF_AFTER.search(text, match.end(),
                                                                               match.end() + 400)):
                    continue  # the clone is checked out at a ref
                if match.group(1):
                    continue  # pip install git+...@ref
                line = text.count("\n", 0, match.start())
                column = match.start() - (text.rfind("\n", 0, match.start()) + 1)
                found = (str(path), line, column, column + len(command), match.start(), command.strip())
                break
        if seen > MAX_DOC_FILES or found:
            break
    if len(_INSTALLS) > 64:
        _INSTALLS.clear()
    _INSTALLS[key] = found
    return found


def implied_versions(dialect: Dialect, versions):
    """Versions narrowed by the parser's own pins: a file read by LLaMA-Factory runs on a transformers its
    release admits (`schemas/dialects.json` versions[].pins). Only frameworks nothing else resolved (trainlint's
    newest known release) are narrowed, to the newest sampled release's range, as an assumption."""
    if not dialect.known or versions is None:
        return versions
    try:
        samples = (catalog.dialect(dialect.name) or {}).get("versions") or []
    except Exception:  # noqa: BLE001
        return versions
    if not samples:
        return versions
    pins = samples[-1].get("pins") or {}
    items = dict(versions.items)
    for package, spec in pins.items():
        name = canonical(package.split("[")[0])
        current = items.get(name)
        if current is None or current.origin != "known" or not isinstance(spec, str):
            continue
        found = _from_spec(name, spec, "pin", f"{dialect.label} {samples[-1].get('version', '')} requires {spec}")
        if found is not None:
            # the parser's range, not this repository's pin: it rests on the newest parser release being the one
            # installed, so it rules releases out but makes no claim certain (`sure`: every release without it)
            items[name] = found._replace(assumed=True, sure=">=0")
    return Versions(items)


def apply_builtin_deepspeed(plan, doc, dialect: Dialect, versions=None):
    """A `deepspeed:` value the parser resolves to its own bundled JSON (ms-swift's `zero2`, `zero3_offload`, ...):
    the ZeRO stage and offload that file sets, laid over the plan where it left them at their defaults. Without
    a known version only what every version's file agrees on (zero3_offload offloads the optimizer since 3.0.3)."""
    if plan is None or not dialect.known or getattr(plan, "flavor", "") != "huggingface":
        return plan
    root = getattr(doc, "root", None)
    node = root.get("deepspeed") if root is not None and root.kind == "mapping" else None
    if node is None or node.kind != "scalar" or not isinstance(node.value, str):
        return plan
    name = node.value.strip()
    try:
        package = PACKAGE_OF.get(dialect.name)
        found = versions.get(package) if versions is not None and package else None
        version = found.version if found is not None and not found.assumed else None
        if not catalog.builtin_deepspeed(dialect.name, version).get(name):
            return plan
        rows = [catalog.builtin_deepspeed(dialect.name, v) for v in ([version] if version else
                                                                    _row_versions(catalog, dialect.name))]
    except Exception:  # noqa: BLE001 - no dialect data: the plan as it is
        return plan
    infos = [r[name] for r in rows if name in r]
    agreed = {k: infos[0].get(k) for k in ("stage", "offload_optimizer", "offload_param", "file")
              if all(i.get(k) == infos[0].get(k) for i in infos)}
    origin = Origin("inferred", getattr(doc, "path", ""), key_path=("deepspeed",), span=node.span,
                    note=f"{dialect.label}'s bundled {agreed.get('file') or name + '.json'} (deepspeed: {name})")
    changes: dict[str, Any] = {}

    def weak(setting) -> bool:
        return setting.origin.kind in ("default", "inferred")

    missing = f"the DeepSpeed config {name!r} was not found"
    notes = tuple(n for n in getattr(plan, "notes", ()) if not n.startswith(missing))
    if notes != getattr(plan, "notes", ()):
        changes["notes"] = notes + (f"deepspeed: {name} is {dialect.label}'s bundled "
                                    f"{agreed.get('file') or name + '.json'}: its ZeRO stage and offload are in the "
                                    "estimate",)
    if isinstance(agreed.get("stage"), int) and weak(plan.zero_stage) and plan.fsdp.value is None:
        changes["zero_stage"] = Setting(agreed["stage"], origin)
        for key, field_name in (("offload_optimizer", "offload_optimizer"), ("offload_param", "offload_params")):
            if key in agreed and weak(getattr(plan, field_name)):
                changes[field_name] = Setting(agreed[key], origin)
    return plan.with_(**changes) if changes else plan


def _row_versions(catalog, name: str) -> list[str | None]:
    """One version inside each `deepspeed_names` row's range (the row's lower bound), or [None]."""
    entry = catalog.dialect(name) or {}
    rows = (entry.get("deepspeed_names") or {}).get("by_version") or []
    out: list[str | None] = []
    for row in rows:
        spec = row.get("ms-swift", "")
        lower = re.search(r">=\s*([0-9][0-9.]*)", spec)
        upper = re.search(r"<\s*([0-9][0-9.]*)", spec)
        out.append(lower.group(1) if lower else ("0" if upper else None))
    return out or [None]


# A launched script that trains by hand or through a library with its own Accelerator loop (no transformers
# Trainer, so no HfTrainerDeepSpeedConfig comparing a DeepSpeed config with TrainingArguments): an
# `accelerator.backward(...)` loop of its own, or trlx (trlx/trainer/accelerate_base_trainer.py:
# AccelerateRLTrainer builds `Accelerator(log_with=..., project_dir=...)` and steps it itself).
_OWN_LOOP = compile_later(r"\baccelerator\.backward\s*\(|^\s*(?:import\s+trlx\b|from\s+trlx\b)", re.M)
# Any sign of an HF Trainer or a parser whose framework runs one.
_HF_TRAINER_SIGNS = compile_later(
    r"\b\w*Trainer\b|\bTrainingArguments\b|\bHfArgumentParser\b|\bTrlParser\b|"
    r"^\s*(?:from|import)\s+(?:trl|llamafactory|llmtuner|swift|axolotl|open_r1|open_instruct)\b",
    re.M)


def own_training_loop(launch, repo_root: str = "") -> str:
    """The launched script's path when it is in the repository and trains without an HF Trainer (its own
    `accelerator.backward` loop, or trlx) and names no Trainer, TrainingArguments or HF-style parser; "" otherwise."""
    if launch is None or not launch.found or not (launch.script or "").endswith(".py"):
        return ""
    path, text = _script_text(launch.script, bases_of(launch, repo_root or None))
    if not text or not _OWN_LOOP.search(text) or _HF_TRAINER_SIGNS.search(text):
        return ""
    for script, where in getattr(launch, "other_scripts", ()):  # no other launch of it runs a Trainer script
        _other, other_text = _script_text(script, bases_for(where, repo_root or None))
        if other_text and (_HF_TRAINER_SIGNS.search(other_text) or not _OWN_LOOP.search(other_text)):
            return ""
    return path


_H4 = compile_later(r"\bparse_yaml_and_args\b")


def script_syntax(launch, repo_root: str = "") -> str:
    """The argument syntax the launched script's text names when no dialect has one of its own: "h4" for
    alignment-handbook's H4ArgumentParser (`parse_yaml_and_args(sys.argv[1], sys.argv[2:])`: the YAML, then only
    `--key=value` arguments override it); "" otherwise."""
    if launch is None or not launch.found or not (launch.script or "").endswith(".py"):
        return ""
    _path, text = _script_text(launch.script, bases_of(launch, repo_root or None))
    return "h4" if text and _H4.search(text) else ""


# A script that runs an HF Trainer (whose HfTrainerDeepSpeedConfig compares an accelerate DeepSpeed config with the
# TrainingArguments): it names TrainingArguments or an HF-style parser, imports transformers' Trainer or a trl
# trainer/config, or imports a framework that runs one. A class of the project's own called Trainer (huggingface/
# smollm's m4.training.trainer.Trainer, an accelerator.backward loop) is not one.
_HF_TRAINER_USE = compile_later(
    r"\bTrainingArguments\b|\bHfArgumentParser\b|\bTrlParser\b|\bH4ArgumentParser\b|\btransformers\.Trainer\b|"
    r"^\s*from\s+(?:transformers|trl)\b[^\n]*\b\w*(?:Trainer|Config)\b|"
    r"^\s*(?:from|import)\s+(?:trl|llamafactory|llmtuner|swift|axolotl|open_r1|open_instruct|alignment)\b", re.M)
_ACCELERATOR_LOOP = compile_later(
    r"\baccelerator\.backward\s*\(|\bAccelerator\s*\(|^\s*(?:import\s+trlx\b|from\s+trlx\b)", re.M)
MAX_NEAR_SCRIPTS = 64  # .py files read per folder
MAX_NAMING_WALK = 3000  # repository files looked at for a script that names the config


def runs_hf_trainer(text: str) -> bool:
    """Whether a script's text shows an HF Trainer run (see _HF_TRAINER_USE)."""
    return bool(_HF_TRAINER_USE.search(text or ""))


def scripts_using(config_path: str, repo_root: str = "") -> tuple[str, str]:
    """With no launch naming an accelerate config: what the repository's scripts that could use it do. The
    candidates are the .py files in the config's folder and the folder above it, and the repository's .py files
    that name the config's file name. ("trainer", path) when one of them runs an HF Trainer (runs_hf_trainer);
    ("loop", path) when none does and one trains with an Accelerator of its own; ("", "") when none trains."""
    config = Path(config_path)
    name = config.name
    seen: set[str] = set()
    loop = ""
    candidates: list[Path] = []
    for folder in (config.parent, config.parent.parent):
        try:
            candidates += sorted(p for p in folder.glob("*.py") if p.is_file())[:MAX_NEAR_SCRIPTS]
        except OSError:
            continue
    candidates += _naming_scripts(name, Path(repo_root) if repo_root else config.parent)
    for path in candidates:
        key = str(path)
        if key in seen:
            continue
        seen.add(key)
        data, _ = read_regular_file(path, MAX_SCRIPT_BYTES)  # never blocks on a FIFO named like a script
        if data is None:
            continue
        text = data.decode("utf-8", errors="replace")
        if runs_hf_trainer(text):
            return "trainer", key
        if not loop and _ACCELERATOR_LOOP.search(text):
            loop = key
    return ("loop", loop) if loop else ("", "")


_NAMING: dict[tuple[str, str], list] = {}


def _naming_scripts(name: str, root: Path) -> list[Path]:
    """The repository's .py files whose text contains `name` (a bounded walk, remembered per run)."""
    key = (name, str(root))
    if key in _NAMING:
        return _NAMING[key]
    found: list[Path] = []
    needle = name.encode("utf-8", errors="surrogateescape")
    looked = 0
    for here, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and not d.startswith("."))
        for file in sorted(files):
            if not file.endswith(".py"):
                continue
            looked += 1
            if looked > MAX_NAMING_WALK:
                break
            path = Path(here) / file
            try:
                if path.stat().st_size <= MAX_SCRIPT_BYTES and needle in path.read_bytes():
                    found.append(path)
            except OSError:
                continue
        if looked > MAX_NAMING_WALK:
            break
    if len(_NAMING) > 256:
        _NAMING.clear()
    _NAMING[key] = found
    return found
