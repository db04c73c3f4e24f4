"""What framework releases require of each other and what they removed, as data.

- `data/requirements.json`: per distribution, rows of consecutive known releases with their unconditional install
  requirements on the other distributions that matter for resolving versions (transformers -> huggingface-hub,
  tokenizers; trl -> transformers, accelerate; peft -> torch, accelerate, huggingface-hub; accelerate -> torch,
  huggingface-hub). `requirements(name)` -> {release: (requires, source)} for the known releases the rows cover.
- `data/removed_names.json`: names removed from frameworks' public modules (`trl`, `trl.models`, `transformers`,
  `accelerate.utils`, `peft`) with the first release without them. `removed(module, name)` -> (release, source).
- `data/added_names.json`: names added to trl's top level, with the last release without them and the first with
  them. `added(module, name)` -> (last without, first with).
- `data/removed_scripts.json`: scripts of a framework's checkout that a later release removed (alignment-handbook's
  scripts/run_dpo.py, gone in 0.4.0.dev0). `removed_scripts()`.
- `data/release_commits.json`: release tags' commits and the main-branch commits between releases of trl, accelerate
  and peft. `commit_window(name, ref)` -> (after, before) for a git pin's commit.

Each is read once, on first use.
"""

from __future__ import annotations

import json
from functools import lru_cache

from trainlint._versions import InvalidVersion, Version
from trainlint.catalog import frameworks
from trainlint.catalog.files import read_data


@lru_cache(maxsize=1)
def _requirements() -> dict:
    try:
        data = json.loads(read_data("requirements.json"))
    except (OSError, ValueError):  # pragma: no cover - a broken install: no narrowing
        return {}
    return {k: v for k, v in data.items() if not k.startswith("_") and isinstance(v, list)}


@lru_cache(maxsize=None)
def requirements(name: str) -> dict[str, tuple[dict, str]]:
    """{known release: ({dependency: specifier}, source)} for the releases of `name` the data covers."""
    def parse_version(text: str):
        try:
            return Version(str(text))
        except InvalidVersion:
            return None

    rows = [(parse_version(row.get("from", "")), parse_version(row.get("through", "")), row)
            for row in _requirements().get(name) or []]  # each bound parsed once, not once per release
    out: dict[str, tuple[dict, str]] = {}
    for release in frameworks.known(name):
        version = parse_version(release)
        if version is None:
            continue
        for low, high, row in rows:
            if low is not None and high is not None and low <= version <= high:
                requires = row.get("requires") if isinstance(row.get("requires"), dict) else {}
                out[release] = ({str(k): str(v) for k, v in requires.items()}, str(row.get("source", "")))
                break
    return out


def dependents() -> tuple[str, ...]:
    """The distributions whose requirements are known."""
    return tuple(_requirements())


@lru_cache(maxsize=None)
def _names_by_module(filename: str) -> dict:
    """{module: {name: [release, release or source]}} from one of the name tables (removed, added)."""
    try:
        data = json.loads(read_data(filename))
    except (OSError, ValueError):  # pragma: no cover
        return {}
    return {k: v for k, v in data.items() if not k.startswith("_") and isinstance(v, dict)}


def _pair(filename: str, module: str, name: str) -> tuple[str, str] | None:
    entry = (_names_by_module(filename).get(module) or {}).get(name)
    if isinstance(entry, list) and len(entry) == 2:
        return str(entry[0]), str(entry[1])
    return None


def removed(module: str, name: str) -> tuple[str, str] | None:
    """(the first release without `module.name`, source) when the data lists it, else None."""
    return _pair("removed_names.json", module, name)


def removal_modules() -> frozenset[str]:
    """The modules the removal data covers (`trl`, `trl.models`, `transformers`, ...)."""
    return frozenset(_names_by_module("removed_names.json"))


def added(module: str, name: str) -> tuple[str, str] | None:
    """(the last release without `module.name`, the first with it) when the data lists it, else None."""
    return _pair("added_names.json", module, name)


@lru_cache(maxsize=1)
def removed_scripts() -> dict[str, dict]:
    """{distribution: {"repository": "github.com/owner/name", "scripts": {path: [release, source]}}}: scripts of a
    framework's checkout that a later release removed (`data/removed_scripts.json`)."""
    try:
        data = json.loads(read_data("removed_scripts.json"))
    except (OSError, ValueError):  # pragma: no cover - a broken install: no era from cloned scripts
        return {}
    return {k: v for k, v in data.items() if not k.startswith("_") and isinstance(v, dict)}


@lru_cache(maxsize=1)
def _release_commits() -> dict:
    try:
        data = json.loads(read_data("release_commits.json"))
    except (OSError, ValueError):  # pragma: no cover - a broken install: git pins stay unknown
        return {}
    return {k: v for k, v in data.items() if not k.startswith("_") and isinstance(v, dict)}


@lru_cache(maxsize=None)
def commit_window(name: str, ref: str) -> tuple[str, str] | None:
    """Where the commit `ref` (7 to 40 hex digits) of framework `name`'s repository lies among its releases
    (`data/release_commits.json`, built from the git history by scripts/gen_release_commits.py): (X, X) when it is
    release X's tag, (X, Y) when it is a main-branch commit after release X and before release Y ("" = not
    released yet); None when the data does not hold it."""
    ref = ref.strip().lower()
    table = _release_commits().get(name) or {}
    if len(ref) < 7 or not table:
        return None
    prefix = ref[:10]
    for release, sha in (table.get("releases") or {}).items():
        if isinstance(sha, str) and (sha.startswith(prefix) or prefix.startswith(sha)):
            return release, release
    for window, hashes in (table.get("windows") or {}).items():
        if not isinstance(hashes, str) or prefix not in hashes:
            continue
        if any(h.startswith(prefix) for h in hashes.split()):
            after, _, before = window.partition("..")
            return after, before
    return None
