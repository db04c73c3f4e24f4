"""The parsers that read HF-style training files, as data: `schemas/dialects.json`.

For each dialect (`hf`, `trl`, `llamafactory`, `open-r1`, `open-instruct`, `ms-swift`, `firefly`, `axolotl`,
`torchtune`, `litgpt`) the file says which function parses the file, what it does with a key it does not know
(`error`, `ignored`, `launcher`) and with which message, the keys it accepts beyond its base classes (with the
sampled framework versions that have each key), its base classes (named as in the `hf-training-args` schema's
`x-trainlint-classes`), and how to recognise it (keys, launch commands, imports, package names). The format is
documented in `schemas/README.md` ("Dialects"). This module only reads it; the decision which dialect reads a
given file is `trainlint.context.dialect`'s.

Only the standard library; the file is read once, on first use.
"""

from __future__ import annotations

import functools
import json

from trainlint._patterns import compile_later
from trainlint._versions import SpecifierSet
from trainlint.catalog import schemas

FILE_NAME = "dialects.json"
FORMAT = "trainlint-dialects/1"

__all__ = ["DIALECT_NAMES", "accepted_keys", "base_keys", "builtin_deepspeed", "dialect", "extra_keys", "load",
           "not_training_configs", "unknown_keys_action", "unknown_keys_command", "unknown_keys_releases", "versions"]


def _path():
    for folder in schemas._candidates_dirs():
        candidate = folder / FILE_NAME
        try:
            if candidate.is_file():
                return candidate
        except OSError:  # pragma: no cover
            continue
    raise FileNotFoundError(f"{FILE_NAME} not found in trainlint/_schemas or <repo>/schemas")


@functools.lru_cache(maxsize=1)
def _data() -> bytes:
    return _path().read_bytes()


def _text() -> str:
    return _data().decode("utf-8")


def _checked(data: dict) -> dict:
    if data.get("format") != FORMAT:
        raise ValueError(f"{FILE_NAME}: format {data.get('format')!r}, expected {FORMAT!r}")
    return data


@functools.lru_cache(maxsize=1)
def load() -> dict:
    """The parsed file (cached and shared: do not modify it)."""
    return _checked(json.loads(_text()))


_DECODER = json.JSONDecoder()


def _value_at(data: bytes, marker: bytes, start: int = 0, end: int = -1) -> int | None:
    """Where the value of the key that `marker` writes (a newline, the indentation of its depth, the quoted key and
    `: `) begins, searched between `start` and `end`; None where it is not."""
    at = data.find(marker, start, len(data) if end < 0 else end)
    return None if at < 0 else at + len(marker)


def _decoded(data: bytes, at: int, end: int):
    """The JSON value that begins at byte `at` (only the bytes up to `end` are decoded)."""
    return _DECODER.raw_decode(data[at:end].decode("utf-8"))[0]


@functools.lru_cache(maxsize=1)
def _dialects_span() -> tuple[int, int] | None:
    """Where the `dialects` object begins and ends in the file as it is written (one space of indentation per
    depth: `\n "dialects": {` ... `\n }`), so that a check decodes only the parts it reads (a few KB of the ~250
    KB) with a few targeted searches; None for a file in another layout (then everything is read by `load`).
    `tests/test_dialects.py` holds each part to the whole file's and the shipped file to this layout."""
    data = _data()
    try:
        at = _value_at(data, b'\n "format": ')
        if at is None or _decoded(data, at, data.find(b"\n", at)) != FORMAT:
            return None
        start = _value_at(data, b'\n "dialects": ')
        if start is None or not data.startswith(b"{\n  ", start):
            return None
        end = data.find(b"\n }", start)
    except ValueError:  # not JSON there (UnicodeDecodeError is one)
        return None
    return (start, end + 3) if end > start else None


@functools.lru_cache(maxsize=64)
def _part(section: str, name: str | None = None):
    """One top-level value (`section`), or one dialect's entry (`section` "dialects", `name`): decoded from its
    place in the file, or taken from the whole file when its layout is not the expected one. A missing name is
    None."""
    span = _dialects_span()
    if span is not None:
        data = _data()
        if name is None:
            at, end = _value_at(data, f'\n "{section}": '.encode()), len(data)
        else:  # up to the next dialect's key (the file is indented by depth: the next line at depth two)
            at, end = _value_at(data, f'\n  "{name}": '.encode(), *span), span[1]
            following = data.find(b'\n  "', at, end) if at is not None else -1
            end = following if following > 0 else end
        if at is not None or name is not None:
            try:
                return _decoded(data, at, end) if at is not None else None
            except ValueError:
                pass
    whole = load()
    return whole[section] if name is None else whole[section].get(name)


DIALECT_NAMES = ("hf", "trl", "llamafactory", "open-r1", "open-instruct", "ms-swift", "ms-swift-megatron", "firefly",
                 "axolotl", "torchtune", "litgpt")


def dialect(name: str) -> dict | None:
    """Everything the file says about one dialect, or None for a name it does not have."""
    return _part("dialects", name)


def not_training_configs() -> dict:
    """Formats that look like a training config but are not one trainlint reads (GPT-NeoX, Megatron, NeMo, ...)."""
    return _part("not_training_configs")


def versions(name: str) -> list[str]:
    """The framework versions the key lists were read from, oldest first ("main" is the newest)."""
    entry = dialect(name)
    return [v["version"] for v in entry["versions"]] if entry else []


_NUM = compile_later(r"\d+")


def _key(label: str) -> tuple:
    """A sort key for version labels: numeric parts, then .devN (before the release) < release < +main (after
    it); a bare 'main' after everything."""
    base = label.split("+")[0]
    nums = tuple(int(n) for n in _NUM.findall(base.split(".dev")[0]))
    if not nums:
        return ((10 ** 9,), 0)
    stage = 1 if label.endswith("+main") else (-1 if ".dev" in base else 0)
    return (nums, stage)


def _sample_for(name: str, version: str | None) -> str | None:
    """The sampled version to judge `version` by: the newest sample whose release number is not above it (a
    `X.Y.Z+main` sample stands for X.Y.Z, `X.Y.Z.dev0` for X.Y.Z), else the oldest; None when no version was
    given (then every sample counts)."""
    labels = versions(name)
    if version is None or not labels:
        return None
    ordered = sorted(labels, key=_key)
    target = _key(version)[0]
    chosen = ordered[0]
    for label in ordered:
        if _key(label)[0] <= target:
            chosen = label
    return chosen


def extra_keys(name: str, version: str | None = None) -> frozenset[str] | None:
    """Keys the dialect's own classes declare (beyond its `base`), for `version` (the nearest sampled version
    at or below it) or, without a version, in any sampled version. Aliases count as keys. None for an unknown
    dialect."""
    entry = dialect(name)
    if entry is None:
        return None
    sample = _sample_for(name, version)
    keys = {k for k, info in entry.get("keys", {}).items()
            if sample is None or info.get("in") == "all" or sample in info.get("in", ())}
    keys.update(entry.get("special_keys", {}))
    return frozenset(keys)


def base_keys(name: str) -> frozenset[str] | None:
    """Keys of the dialect's base classes, as the bundled `hf-training-args` schema knows them (its
    transformers/TRL versions, not the dialect's pins). Empty for a dialect whose list is complete (axolotl,
    open-instruct, ...); None for an unknown dialect."""
    entry = dialect(name)
    if entry is None:
        return None
    wanted = set(entry.get("base", ()))
    if not wanted:
        return frozenset()
    props = schemas.load_schema("hf-training-args").get("properties", {})
    return frozenset(k for k, p in props.items()
                     if isinstance(p, dict) and wanted & set(p.get("x-trainlint-classes", ())))


def accepted_keys(name: str, version: str | None = None) -> frozenset[str] | None:
    """Base keys plus the dialect's own keys. Not closed for `hf` (the script's own dataclasses add keys) and
    `trl` (the script picks the classes): None for those, and for an unknown dialect."""
    if name in ("hf", "trl"):
        return None
    base, extra = base_keys(name), extra_keys(name, version)
    if base is None or extra is None:
        return None
    return base | extra


def unknown_keys_action(name: str) -> str | None:
    """What the parser does with a key it does not know: 'error', 'ignored' or 'launcher' (its default case;
    `dialect(name)["unknown_keys"]["by_version"]` has the version- and script-dependent cases)."""
    entry = dialect(name)
    return entry["unknown_keys"]["action"] if entry else None


def unknown_keys_releases(name: str) -> list[dict]:
    """The release-dependent rows of what the parser does with a key it does not know
    (`unknown_keys.by_version` rows with a version range of the dialect's package, oldest first): each has the
    range, "releases" (display), "action" ('error' / 'ignored') and the framework's "message" ({keys})."""
    entry = dialect(name) or {}
    package = PACKAGE.get(name, name)
    rows = (entry.get("unknown_keys") or {}).get("by_version") or []
    return [row for row in rows if isinstance(row, dict) and isinstance(row.get(package), str)]


def unknown_keys_command(name: str) -> dict | None:
    """The `unknown_keys.by_version` row for the dialect's own launcher command (trl: `trl <command> --config FILE`,
    whose leftovers go to `accelerate launch`), with its release range in "trl_range"; None without one."""
    rows = ((dialect(name) or {}).get("unknown_keys") or {}).get("by_version") or []
    return next((row for row in rows if isinstance(row, dict) and row.get("command") and row.get("trl_range")), None)


def builtin_deepspeed(name: str, version: str | None = None) -> dict[str, dict]:
    """The `deepspeed` values a dialect resolves to a DeepSpeed JSON of its own (ms-swift's `zero2`, ...): name ->
    {"file", "stage", "offload_optimizer", "offload_param"} (what the bundled file sets), for `version` (without
    one, every version's names; the newest row wins). Empty for a dialect without any."""
    entry = dialect(name) or {}
    table = (entry.get("deepspeed_names") or {}).get("by_version") or []
    out: dict[str, dict] = {}
    for row in table:
        spec = row.get(PACKAGE.get(name, name), "")
        if version is not None and spec:
            try:
                if not SpecifierSet(spec).contains(version, prereleases=True):
                    continue
            except Exception:  # noqa: BLE001 - an unreadable range: count the row
                pass
        out.update(row.get("names") or {})
    return out


def fetched_deepspeed(name: str, target: str) -> str | None:
    """The command that downloads `target` when it is one of the DeepSpeed configs a framework ships for its users
    to fetch into the launch directory (axolotl's `deepspeed_configs/zero2.json`: `axolotl fetch
    deepspeed_configs`), else None."""
    entry = (dialect(name) or {}).get("fetched_deepspeed") or {}
    folder, names = entry.get("folder"), entry.get("names") or ()
    parts = target.strip().replace("\\", "/").split("/")
    while parts and parts[0] in (".", ""):
        parts = parts[1:]
    if folder and len(parts) == 2 and parts[0] == folder and parts[1] in names:
        return entry.get("command")
    return None


def shipped_deepspeed(name: str, target: str) -> str | None:
    """Where `target` exists at run time when it names a DeepSpeed config the framework keeps at a fixed place
    outside the user's repository: axolotl's image copy (`/workspace/axolotl/deepspeed_configs/zero3_bf16.json`
    inside axolotl's Docker images) or LLaMA-Factory's own `examples/deepspeed/ds_z3_config.json`, relative to a
    LLaMA-Factory checkout. Else None."""
    entry = dialect(name) or {}
    target = target.strip().replace("\\", "/")
    fetched = entry.get("fetched_deepspeed") or {}
    image = fetched.get("image_folder")
    if image and target.startswith(image.rstrip("/") + "/") and target[len(image.rstrip("/")) + 1:] in (fetched.get("names") or ()):
        return f"{fetched.get('image')} ({image})"
    shipped = entry.get("shipped_deepspeed") or {}
    folder = shipped.get("folder")
    parts = [p for p in target.split("/") if p not in ("", ".")]
    if folder and "/".join(parts[:-1]) == folder and parts[-1:] and parts[-1] in (shipped.get("names") or ()):
        return shipped.get("where")
    return None


PACKAGE = {"ms-swift": "ms-swift", "ms-swift-megatron": "ms-swift"}
