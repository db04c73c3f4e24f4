"""Finding a model's architecture by name, by local folder, or in the offline Hugging Face cache.

`find_model("Llama-3.1-8B")`, `find_model("meta-llama/Llama-3.1-8B-Instruct")`,
`find_model("./checkpoints/my-model")` and `find_model("HuggingFaceH4/zephyr-7b-beta")` all return an
`Architecture`. The order of the search:

1. a local path (relative to `base_dir` first, then the working directory): a folder holding
   `config.json`, or a `config.json` file itself (an existing folder without one is an error);
2. the shipped catalog (`trainlint/catalog/data/models.json`): a catalog name, alias or Hugging Face id,
   compared without regard to case, spaces and punctuation;
3. the offline Hugging Face cache: `$HF_HUB_CACHE` (or the older `$HUGGINGFACE_HUB_CACHE`), else
   `$HF_HOME/hub`, else `~/.cache/huggingface/hub`, as `models--{org}--{name}/snapshots/*/config.json`
   (the newest snapshot);
4. the catalog again, by the `name` part of `org/name` alone (fine-tunes and re-uploads under
   another organisation keep their name: `someone/Llama-3.1-8B-Instruct`), then without trailing
   variant words (`-Instruct`, `-bnb-4bit`, `-GPTQ`, a `-2507` date, ...):
   `unsloth/llama-3-8b-Instruct-bnb-4bit` is Llama-3-8B.

Nothing here touches the network. The catalog is read once, on first use; a name written as the catalog writes
it decodes only its own entry (the whole file is parsed for a fuzzy lookup, a suggestion or the full list).
"""

from __future__ import annotations

import difflib
import json
import math
import os
import re
import stat
from dataclasses import replace
from functools import lru_cache
from pathlib import Path
from typing import Any, NamedTuple

from trainlint._patterns import compile_later
from trainlint.catalog.architecture import SIZING_CHECKPOINT, Architecture, UnsupportedArchitecture
from trainlint.catalog.checkpoint import count_checkpoint
from trainlint.catalog.files import INCOMPLETE, entry_holding, read_data, read_data_bytes, read_data_head
from trainlint.catalog.hf_config import from_hf_config
from trainlint.catalog.naming import closest, normalize

__all__ = [
    "CatalogModel",
    "ModelLookupError",
    "catalog",
    "closest_models",
    "find_model",
    "hf_cache_dirs",
    "load_config_file",
]


class ModelLookupError(Exception):
    """A model that is there but unusable: a `config.json` that cannot be read or understood, or a
    local folder without one. The message says which file and why."""


class CatalogModel(NamedTuple):
    """One entry of the shipped model catalog.

    `config` holds the `config.json` fields that matter for the architecture, exactly as published;
    `published_params` is the model's exact parameter count and `params_source` says where it comes
    from (the model page's safetensors total, a paper, or "derived" with the cross-check used).
    """

    name: str
    hf_ids: tuple[str, ...]
    aliases: tuple[str, ...]
    config: dict[str, Any]
    published_params: int
    params_source: str
    config_source: str = ""

    def architecture(self) -> Architecture:
        """This entry's architecture (built once, cached)."""
        return _catalog_architecture(self.name)

    def all_names(self) -> tuple[str, ...]:
        """The name, every Hugging Face id and every alias."""
        return (self.name, *self.hf_ids, *self.aliases)


@lru_cache(maxsize=1)
def _text() -> str:
    return read_data("models.json")


@lru_cache(maxsize=1)
def _bytes() -> bytes:
    """models.json undecoded: a name written as in the catalog is found in it and only its entry decoded (decoding
    the whole file was a third of a lookup)."""
    return read_data_bytes("models.json")


@lru_cache(maxsize=1)
def _raw_entries() -> tuple[dict[str, Any], ...]:
    """The catalog's entries as parsed (no `CatalogModel` made yet)."""
    return tuple(json.loads(_text())["models"])


_DECODED: dict[int, dict[str, Any]] = {}  # entries decoded alone by `_exact_position`, by position
# A name is looked for in models.json's first 64 KB first (the Llama, Mistral, Qwen, Gemma and Phi entries): reading
# all 156 KB costs twice as much.
_HEAD = 1 << 16


@lru_cache(maxsize=None)
def _entry_at(position: int) -> CatalogModel:
    """The `CatalogModel` of the catalog's entry at `position` (one object per entry, made on first use)."""
    e = _DECODED.get(position) or _raw_entries()[position]
    entry = CatalogModel(
        name=e["name"],
        hf_ids=tuple(e.get("hf_ids", ())),
        aliases=tuple(e.get("aliases", ())),
        config=e["config"],
        published_params=int(e["published_params"]),
        params_source=e.get("params_source", ""),
        config_source=e.get("config_source", ""),
    )
    _MADE[entry.name] = entry  # names are unique (tests/test_models.py)
    return entry


_MADE: dict[str, CatalogModel] = {}  # the entries `_entry_at` made, by name


@lru_cache(maxsize=1)
def _load_catalog() -> tuple[CatalogModel, ...]:
    return tuple(_entry_at(i) for i in range(len(_raw_entries())))


def _holds(e: Any, name: str) -> bool:
    return isinstance(e, dict) and (e.get("name") == name or name in e.get("hf_ids", ()) or name in e.get("aliases", ()))


@lru_cache(maxsize=1024)
def _exact_position(name: str) -> int | None:
    """The position of the entry that has `name`, as written, for its name, a Hugging Face id or an alias; None
    when the file does not hold it so (the normalized index decides then). Found in the file's text and only
    that entry decoded (the first such entry, as in `_raw_entries` order; its position is the number of entry
    starts before it); once the whole file is parsed, a scan of the parsed entries. No two entries share a
    normalized name (`tests/test_models.py`), so the entry found here is the one the index would find."""
    if _raw_entries.cache_info().currsize:
        return next((i for i, e in enumerate(_raw_entries()) if _holds(e, name)), None)
    head = read_data_head("models.json", _HEAD)
    found = entry_holding(head, name, _holds, complete=len(head) < _HEAD)
    if found is INCOMPLETE:
        found = entry_holding(_bytes(), name, _holds)
    if found is None:
        return None
    position, e = found
    _DECODED.setdefault(position, e)
    return position


def catalog() -> list[CatalogModel]:
    """Every catalog entry, in catalog order."""
    return list(_load_catalog())


@lru_cache(maxsize=1)
def _index() -> tuple[dict[str, CatalogModel], dict[str, CatalogModel]]:
    """Normalized full names, and normalized last path parts of HF ids (for `org/name` lookups)."""
    full: dict[str, CatalogModel] = {}
    short: dict[str, CatalogModel] = {}
    for entry in _load_catalog():
        for name in entry.all_names():
            full.setdefault(normalize(name), entry)
            short.setdefault(normalize(name.rsplit("/", 1)[-1]), entry)
    return full, short


@lru_cache(maxsize=None)
def _catalog_architecture(name: str) -> Architecture:
    entry = _MADE.get(name) or next(e for e in _load_catalog() if e.name == name)  # `architecture()`'s entry is made
    return from_hf_config(entry.config, entry.name, source="catalog")


def _catalog_entry(name: str, *, by_short_name: bool) -> CatalogModel | None:
    """The entry `name` names exactly (normalized), or with `by_short_name` the entry whose
    name or HF id ends in the `name` part of `org/name`. A name written as in the catalog is found without
    building the normalized index (`_exact_position`)."""
    if not by_short_name:
        position = _exact_position(name)
        if position is not None:
            return _entry_at(position)
    full, short = _index()
    key = normalize(name)
    if not key:
        return None
    if not by_short_name:
        return full.get(key)
    return short.get(normalize(name.rstrip("/").rsplit("/", 1)[-1]))


# Name parts that mark a variant of the same architecture: tuning, format, quantization, date.
_VARIANT_WORDS = frozenset(
    "instruct chat it base hf pt sft dpo rlhf bnb 4bit 8bit nf4 awq gptq gguf fp8 fp16 bf16 int4 int8 "
    "exl2 mlx unsloth dynamic".split()
)
_WORD_SPLIT = compile_later(r"[-_ .]+")


def _without_variant_words(name: str) -> str | None:
    """`unsloth/llama-3-8b-Instruct-bnb-4bit` -> `llama-3-8b`; None when nothing was dropped."""
    words = _WORD_SPLIT.split(name.rstrip("/").rsplit("/", 1)[-1])
    kept = list(words)
    while kept and (kept[-1].lower() in _VARIANT_WORDS or re.fullmatch(r"\d{4}", kept[-1])):
        kept.pop()
    return "-".join(kept) if kept and len(kept) < len(words) else None


def load_config_file(path: Path, name: str | None = None) -> Architecture:
    """The architecture described by one `config.json` file.

    Raises `ModelLookupError` when the file cannot be read, is not JSON, or describes an
    architecture trainlint cannot count (the message carries `UnsupportedArchitecture`'s reason).
    """
    try:
        config = json.loads(_read_small_file(path).decode("utf-8"))
    except OSError as exc:
        raise ModelLookupError(f"cannot read {path}: {exc.strerror or exc}") from exc
    except (ValueError, RecursionError) as exc:  # JSONDecodeError, UnicodeDecodeError, int limits
        raise ModelLookupError(f"{path} is not valid JSON: {exc}"[:500]) from exc
    label = name or (path.parent.name if path.name == "config.json" else path.stem)
    try:
        arch = from_hf_config(config, label, source=str(path))
    except UnsupportedArchitecture as exc:
        raise ModelLookupError(f"{path}: {exc}") from exc
    return with_checkpoint_count(arch, path.parent) if path.name == "config.json" else arch


def with_checkpoint_count(arch: Architecture, folder: Path) -> Architecture:
    """`arch` checked against the safetensors headers in `folder`, when there are any (see
    `trainlint.catalog.checkpoint`): an approximate count is replaced by the checkpoint's exact one;
    an exact builder's count is kept (it is what transformers builds) and a difference is noted
    (a checkpoint can store more, such as DeepSeek-V3's multi-token-prediction layer)."""
    counted = count_checkpoint(folder)
    if counted is None:
        return arch
    where = f"{counted.files} safetensors file{'s' if counted.files != 1 else ''} in {folder}"
    if arch.approximate:
        return replace(arch, sizing=SIZING_CHECKPOINT, checkpoint_params=counted.params,
                       sizing_note=f"{counted.params:,} parameters counted from the headers of {where} "
                                   f"(the config alone gave ~{arch.counted_params:,})")
    if counted.params == arch.total_params:
        return replace(arch, sizing_note=f"matches the headers of {where}")
    return replace(arch, sizing_note=f"the headers of {where} hold {counted.params:,} parameters, "
                                     f"{counted.params - arch.total_params:+,} against what transformers builds "
                                     "from config.json")


def _looks_like_a_path(name: str) -> bool:
    return name.startswith((".", "/", "~")) or "\\" in name or name.endswith(".json")


MAX_CONFIG_BYTES = 5 * 2**20


def _quiet(check) -> bool:
    """A pathlib test that is False, not an exception, for names too long, NULs or symlink loops."""
    try:
        return bool(check())
    except (OSError, ValueError):
        return False


def _read_small_file(path: Path) -> bytes:
    """A regular file's bytes, at most MAX_CONFIG_BYTES; a FIFO or device is never opened for reading
    to its end (OSError with the reason otherwise)."""
    st = os.stat(path)
    if not stat.S_ISREG(st.st_mode):
        raise OSError(f"{path} is not a regular file")
    if st.st_size > MAX_CONFIG_BYTES:
        raise OSError(f"{path} is {st.st_size / 2**20:.1f} MiB, too large for a model config")
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(f"{path} is not a regular file")
        data = os.read(fd, MAX_CONFIG_BYTES + 1)
    finally:
        os.close(fd)
    if len(data) > MAX_CONFIG_BYTES:
        raise OSError(f"{path} is too large for a model config")
    return data


def _local_config(name_or_path: str, base_dir: Path | None) -> Path | None:
    """The config.json `name_or_path` points at, if it is a local folder or file.

    Raises `ModelLookupError` when it is plainly meant as a path (`./ckpt`, `/models/x`, `~/m`)
    to a folder that exists but holds no config.json. A path that does not exist here (a cluster
    path seen from CI) falls through, so the catalog can still recognise its last part.
    """
    candidate = Path(name_or_path).expanduser()
    roots = [candidate] if candidate.is_absolute() else [
        *([Path(base_dir) / candidate] if base_dir is not None else []), Path.cwd() / candidate]
    for path in roots:
        if _quiet(path.is_dir) and _quiet((path / "config.json").exists):
            return path / "config.json"  # load_config_file says what is wrong if it is no regular file
        if _quiet(path.is_file) and path.suffix == ".json":
            return path
    if _looks_like_a_path(name_or_path):
        where = next((p for p in roots if _quiet(p.exists)), None)
        if where is not None and _quiet(where.is_dir):
            raise ModelLookupError(f"{where} has no config.json (a Hugging Face model folder holds one)")
    return None


def hf_cache_dirs() -> list[Path]:
    """Where the offline Hugging Face hub cache may be, most specific first."""
    dirs: list[Path] = []
    for var in ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE"):  # the second is the older spelling
        if os.environ.get(var):
            dirs.append(Path(os.environ[var]).expanduser())
    if os.environ.get("HF_HOME"):
        dirs.append(Path(os.environ["HF_HOME"]).expanduser() / "hub")
    dirs.append(Path.home() / ".cache" / "huggingface" / "hub")
    return dirs


def _hf_cache_config(repo_id: str) -> Path | None:
    """The `config.json` of the newest cached snapshot of `org/name` (newest by modification time)."""
    if repo_id.count("/") != 1 or not all(repo_id.split("/")):
        return None
    folder = "models--" + repo_id.replace("/", "--")
    for cache in hf_cache_dirs():
        snapshots = cache / folder / "snapshots"
        try:
            configs = [snap / "config.json" for snap in snapshots.iterdir() if (snap / "config.json").is_file()]
        except OSError:
            continue
        if configs:
            return max(configs, key=lambda p: p.stat().st_mtime)
    return None


def find_model(name_or_path: str, *, base_dir: Path | None = None) -> Architecture | None:
    """The architecture `name_or_path` refers to, or None when nothing matches.

    Looks at a local folder or `config.json` first, then the catalog, then the offline Hugging
    Face cache (see the module docs). Raises `ModelLookupError` when a config file is found but
    cannot be read or understood, or when `name_or_path` is an existing folder with no config.json.
    A path that does not exist on this machine (`/cluster/models/Llama-3.1-8B-Instruct`) is matched
    by its last part against the catalog, like `org/name`.
    """
    name_or_path = name_or_path.strip()
    if not name_or_path:
        return None
    local = _local_config(name_or_path, base_dir)
    if local is not None:
        return load_config_file(local, name=Path(name_or_path).name or None)
    entry = _catalog_entry(name_or_path, by_short_name=False)
    if entry is not None:
        return entry.architecture()
    # An exact cached repo beats a catalog entry that merely shares the name part.
    cached = _hf_cache_config(name_or_path)
    if cached is not None:
        return load_config_file(cached, name=name_or_path)
    entry = _catalog_entry(name_or_path, by_short_name=True)
    if entry is None:
        base = _without_variant_words(name_or_path)
        if base:
            entry = _catalog_entry(base, by_short_name=False) or _catalog_entry(base, by_short_name=True)
    if entry is None:
        entry = derivative_of(name_or_path)
    return entry.architecture() if entry is not None else None


@lru_cache(maxsize=1)
def _derivative_rules() -> tuple[tuple[re.Pattern, str], ...]:
    text = read_data("derivatives.json")
    return tuple((re.compile(rule["match"]), rule["model"]) for rule in json.loads(text)["derivatives"])


def derivative_of(name: str) -> CatalogModel | None:
    """The catalog entry whose architecture a fine-tune or re-release named `name` keeps
    (`Qwen/Qwen2.5-Coder-7B-Instruct` is Qwen2.5-7B, `deepseek-ai/DeepSeek-R1-Distill-Llama-8B` is
    Llama-3.1-8B), by the rules in data/derivatives.json; None when no rule matches."""
    part = name.rstrip("/").rsplit("/", 1)[-1].lower()
    candidates = [part]
    stripped = part
    while True:  # drop trailing variant words, keeping the separators inside the name ("2.5", "1.5b")
        shorter = re.sub(r"[-_. ]([a-z0-9]+)$", lambda m: "" if m.group(1) in _VARIANT_WORDS
                         or re.fullmatch(r"\d{4}", m.group(1)) else m.group(0), stripped)
        if shorter == stripped:
            break
        stripped = shorter
    if stripped != part:
        candidates.append(stripped)
    for candidate in candidates:
        for pattern, model in _derivative_rules():
            match = pattern.fullmatch(candidate)
            if match is None:
                continue
            target = model.format(**{k: v for k, v in match.groupdict().items() if v is not None})
            entry = _catalog_entry(target, by_short_name=False)
            if entry is not None:
                return entry
    return None


_SIZE = compile_later(r"(?<![a-z0-9.])(?:(\d+)x)?(\d+(?:\.\d+)?)([bm])(?![a-z0-9])")


@lru_cache(maxsize=1024)
def _family_and_size(name: str) -> tuple[str, str, float | None]:
    """(base family word, versioned family, size in billions) from a model name:
    `Qwen2.5-Coder-7B-Instruct` -> ("qwen", "qwen2.5", 7.0), `Mixtral-8x7B` -> ("mixtral", "mixtral", 56.0)."""
    part = name.rstrip("/").rsplit("/", 1)[-1].lower()
    base_match = re.match(r"[a-z]+", part)
    base = base_match.group(0) if base_match else ""
    size = None
    m = _SIZE.search(part)
    if m:
        size = float(m.group(2)) * (int(m.group(1)) if m.group(1) else 1) / (1000 if m.group(3) == "m" else 1)
        family = part[:m.start()]
    else:
        family = part
    versioned = re.match(r"[a-z]+[-_. ]?[\d.]*\d|[a-z]+", family.strip("-_. "))
    return base, (versioned.group(0).replace("_", "-").replace(" ", "-") if versioned else base), size


def closest_models(name: str, n: int = 3) -> list[str]:
    """Catalog names most like `name`, best first, for "did you mean" messages: the same family and
    version nearest in size first (`Qwen2.5-9B` -> Qwen2.5-7B, Qwen2.5-14B, ...), then the same family
    of another version, then names that merely look alike."""
    return list(_closest_models(name, n))


@lru_cache(maxsize=256)
def _closest_models(name: str, n: int) -> list[str]:
    # Cached (closest_models hands out copies): a run names the same unknown model in many files.
    base, family, size = _family_and_size(name)
    wants_vision = bool(re.search(r"(^|[-_. /])(vl|vlm|vision|llava)($|[-_. ])", name.lower()))
    if base:
        ranked = []
        for entry in _load_catalog():
            e_base, e_family, _ = _family_and_size(entry.name)
            if e_base != base:
                continue
            tier = (0 if e_family == family else 1) + (0 if _is_multimodal(entry) == wants_vision else 0.5)
            distance = abs(math.log(max(entry.published_params, 1) / (size * 1e9))) if size else 0.0
            spelling = difflib.SequenceMatcher(None, normalize(name.rsplit("/", 1)[-1]), normalize(entry.name)).ratio()
            ranked.append((tier, distance, -spelling, entry.name))
        ranked.sort()
        result = [entry_name for *_, entry_name in ranked[:n]]
        if len(result) >= n:
            return result
    else:
        result = []
    for hit in _closest_by_spelling(name, n):
        if hit not in result:
            result.append(hit)
        if len(result) == n:
            break
    return result


def _is_multimodal(entry: CatalogModel) -> bool:
    return isinstance(entry.config.get("vision_config"), dict)


def _closest_by_spelling(name: str, n: int) -> list[str]:
    """Catalog names whose spelling is most like `name`."""
    names: list[str] = []
    by_name: dict[str, str] = {}
    for entry in _load_catalog():
        for candidate in entry.all_names():
            names.append(candidate)
            by_name.setdefault(candidate, entry.name)
    query = name.rsplit("/", 1)[-1] if "/" in name else name
    result: list[str] = []
    for hit in closest(query, [c.rsplit("/", 1)[-1] for c in names] + names, n=n * 4):
        canonical = next((by_name[c] for c in names if c == hit or c.rsplit("/", 1)[-1] == hit), hit)
        if canonical not in result:
            result.append(canonical)
        if len(result) == n:
            break
    return result
