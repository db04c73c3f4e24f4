"""The GPU catalog, and turning what people write (`a100`, `NVIDIA H100 80GB HBM3`, `96GB`) into a GPU.

The facts live in `trainlint/catalog/data/gpus.json`; it is read once, on first use, so importing this module
costs nothing. Each entry's `memory_bytes` is the device total the driver reports to CUDA/ROCm
(`torch.cuda.get_device_properties(i).total_memory`, the total of `cudaMemGetInfo`), which is what a
training run can actually be given; it is not the marketing figure and not nvidia-smi's total (which is
a little higher). Each entry says where its figure came from (`memory_source`) and how good it is
(`memory_basis`).

Names are matched without regard to case, spaces and punctuation (`trainlint.catalog.naming.normalize`), and a
leading `NVIDIA`, `Tesla`, `GeForce`, `AMD`, `Instinct`, `Intel` or `Habana` is optional, so the names
nvidia-smi, rocm-smi and `torch.cuda.get_device_name()` print work as they are.

Ambiguous bare names resolve to the most common part in training clusters: `a100` is the 80 GB SXM4
(A100-80GB), `a100-pcie` the 80 GB PCIe card, `h100` the 80 GB SXM5 (H100-80GB), `v100` the 16 GB SXM2,
`gh200` the 96 GB HBM3 part and `mi300` the MI300X. Sized names (`a100-40gb`, `v100-32gb`) resolve
exactly.

A capacity written into a name (`RTX4090-24GB`, `A6000-48GB`, `H100-94GB`) must be the card's: the name without
it picks the card family, the capacity the member of it (`H100-94GB` is the H100 NVL); a capacity that no
card of that name has (`H100-40GB`) matches nothing. A count in front (`8x H100`, `8xH100`, `8 × A100`) or
behind (`H100 x8`) is the number of GPUs: `split_count` takes it off, and the settings use it as `num-gpus`.

A bare capacity (`96GB`, `24GiB`, `80 GB`, `1.5TB`) stands for a card that is not in the catalog: only its
memory is known. GPU vendors market binary sizes (an "80GB" A100 has 80 GiB of HBM), so here `GB` and
`GiB` both mean 2^30 bytes, `MB`/`MiB` 2^20 and `TB`/`TiB` 2^40. The device reports less than that (the
driver keeps some), so such a card gets the median share that the catalog's measured cards report of their
marketed capacity (`reported_share`), the same rule as a catalog card's CUDA total. Such a GPU has `in_catalog=False` and
`capabilities_known=False`; its `bf16`/`fp8` are optimistic placeholders (True) so that rules never warn
about a card they know nothing about; rules about hardware support must check `capabilities_known`.
"""

from __future__ import annotations

import functools
import json
import re
from typing import NamedTuple

from trainlint._patterns import compile_later
from trainlint.catalog.files import entry_holding, read_data, read_data_bytes
from trainlint.catalog.naming import closest, normalize

__all__ = [
    "GPU",
    "UnknownGPUError",
    "catalog",
    "closest_gpus",
    "find_gpu",
    "capacity_mismatch",
    "parse_capacity",
    "reported_share",
    "resolve_gpu",
    "split_count",
]

GIB = 2**30

# Vendor words people may put in front of a name; tried off, one after another, once the whole name missed.
_OPTIONAL_PREFIXES = ("nvidia", "tesla", "geforce", "quadro", "amd", "radeon", "instinct", "intel", "habana")
# ...and words after it ("NVIDIA H100 Tensor Core GPU").
_OPTIONAL_SUFFIXES = ("tensorcoregpu", "gpu", "accelerator")

_UNIT_BYTES = {
    "t": 2**40, "ti": 2**40, "tb": 2**40, "tib": 2**40,
    "g": 2**30, "gi": 2**30, "gb": 2**30, "gib": 2**30,
    "m": 2**20, "mi": 2**20, "mb": 2**20, "mib": 2**20,
}
_LOOKALIKE_DIGITS = str.maketrans({"o": "0", "i": "1", "l": "1"})
_CAPACITY = compile_later(r"^\s*(\d+(?:\.\d*)?|\.\d+)\s*([A-Za-z]{1,3})\s*$")
# A capacity inside a name: "-24GB", " 80 GB", "_141G" (a separator before it, so "4090" stays a model number).
_NAME_CAPACITY = compile_later(r"(?:^|(?<=[\s\-_/]))(\d+(?:\.\d+)?)\s*(?:gib|gb|g)(?![a-z0-9])", re.IGNORECASE)
# Memory kinds people add after the capacity ("80GB HBM3"): not part of the card's name.
_MEMORY_KINDS = compile_later(r"(?<![a-z0-9])(?:hbm\d?e?|gddr\d+x?|ecc)(?![a-z0-9])", re.IGNORECASE)
_COUNT_FRONT = compile_later(r"^\s*(\d{1,5})\s*[x×*]\s*(?=\S)(.*\S)\s*$", re.IGNORECASE)
_COUNT_BACK = compile_later(r"^\s*(\S.*?)\s+[x×*]\s*(\d{1,5})\s*$", re.IGNORECASE)
_MARKETED_GB = compile_later(r"(\d+(?:\.\d+)?)\s*GB")


class GPU(NamedTuple):
    """One kind of accelerator, as far as the memory estimate and the hardware rules need to know it.

    `memory_bytes` is the per-device total CUDA/ROCm reports (see the module docstring). `bf16_tflops` is
    the dense peak (no sparsity) per device; None where the vendor publishes none or we could not
    confirm it. For AMD MI250/MI250X every figure is per GCD, the device PyTorch sees.
    """

    name: str
    vendor: str
    memory_bytes: int
    bf16: bool
    fp8: bool
    bf16_tflops: float | None
    memory_bandwidth_gbs: float | None
    interconnect: str | None
    aliases: tuple[str, ...] = ()
    in_catalog: bool = True
    source: str = ""
    capabilities_known: bool = True
    compute_capability: str | None = None
    marketing_memory: str = ""
    memory_source: str = ""
    memory_basis: str = ""

    @property
    def memory_gib(self) -> float:
        """The device memory in GiB (2^30 bytes), the unit trainlint shows people."""
        return self.memory_bytes / GIB


class UnknownGPUError(ValueError):
    """A GPU name that is neither in the catalog nor a capacity; the message offers the closest names."""

    def __init__(self, text: str, suggestions: list[str]):
        self.text = text
        self.suggestions = suggestions
        hint = f"; did you mean {', '.join(suggestions)}?" if suggestions else ";"
        reason = capacity_mismatch(text)
        super().__init__(
            f"unknown GPU {text!r}{': ' + reason if reason else ''}{hint} give a catalog name (see `trainlint gpus`)"
            " or a capacity such as 80GB."
        )


def _gpu_from_entry(entry: dict) -> GPU:
    tflops = entry.get("bf16_tflops")
    bandwidth = entry.get("memory_bandwidth_gbs")
    return GPU(
        name=entry["name"],
        vendor=entry["vendor"],
        memory_bytes=int(entry["memory_bytes"]),
        bf16=bool(entry["bf16"]),
        fp8=bool(entry["fp8"]),
        bf16_tflops=None if tflops is None else float(tflops),
        memory_bandwidth_gbs=None if bandwidth is None else float(bandwidth),
        interconnect=entry.get("interconnect"),
        aliases=tuple(entry.get("aliases", ())),
        in_catalog=True,
        source=entry.get("source", ""),
        capabilities_known=True,
        compute_capability=entry.get("compute_capability"),
        marketing_memory=entry.get("marketing_memory", ""),
        memory_source=entry.get("memory_source", ""),
        memory_basis=entry.get("memory_basis", ""),
    )


@functools.lru_cache(maxsize=None)
def _entries() -> tuple[dict, ...]:
    return tuple(json.loads(read_data("gpus.json"))["gpus"])


@functools.lru_cache(maxsize=None)
def _gpu_at(position: int) -> GPU:
    """The GPU of the catalog's entry at `position`, made on first use (a lookup makes one, not the ~40)."""
    return _gpu_from_entry(_DECODED.get(position) or _entries()[position])


_DECODED: dict[int, dict] = {}  # entries decoded alone by `_written_position`, by position


def _has_label(entry, text: str) -> bool:
    return isinstance(entry, dict) and (entry.get("name") == text or text in entry.get("aliases", ()))


@functools.lru_cache(maxsize=1024)
def _written_position(text: str) -> int | None:
    """The position of the entry whose name or an alias is `text` as written, found in gpus.json's bytes and only
    that entry decoded (decoding the whole file and normalizing its ~200 labels was most of a first lookup); None
    when the file does not hold it so, or once the whole file is parsed (the index answers then). No two entries
    share a normalized label (`_index` raises on one), so this is the entry the index would find."""
    if _entries.cache_info().currsize:
        return None
    found = entry_holding(read_data_bytes("gpus.json"), text, _has_label)
    if found is None:
        return None
    position, entry = found
    _DECODED.setdefault(position, entry)
    return position


@functools.lru_cache(maxsize=None)
def _index() -> dict[str, int]:
    """Normalized name or alias -> the position of its entry, read once."""
    index: dict[str, int] = {}
    for position, entry in enumerate(_entries()):
        for label in (entry["name"], *entry.get("aliases", ())):
            other = index.setdefault(normalize(label), position)
            if other != position:
                raise ValueError(f"gpus.json: {label!r} names both {_entries()[other]['name']} and {entry['name']}")
    return index


@functools.lru_cache(maxsize=None)
def _load() -> tuple[tuple[GPU, ...], dict[str, GPU]]:
    """The catalog and its lookup index (normalized name or alias -> GPU), read once."""
    return tuple(_gpu_at(i) for i in range(len(_entries()))), {key: _gpu_at(i) for key, i in _index().items()}


def catalog() -> list[GPU]:
    """Every GPU in the catalog, in catalog order (roughly by vendor and generation)."""
    return list(_load()[0])


def _candidate_keys(key: str):
    """The normalized name, then the same with optional vendor words and suffixes taken off."""
    yield key
    trimmed = True
    while trimmed:
        trimmed = False
        for prefix in _OPTIONAL_PREFIXES:
            if key.startswith(prefix) and len(key) > len(prefix):
                key = key[len(prefix):]
                trimmed = True
                yield key
        for suffix in _OPTIONAL_SUFFIXES:
            if key.endswith(suffix) and len(key) > len(suffix):
                key = key[: -len(suffix)]
                trimmed = True
                yield key


def _lookup(text: str) -> GPU | None:
    position = _written_position(text)
    if position is not None:
        return _gpu_at(position)
    index = _index()
    for key in _candidate_keys(normalize(text)):
        if key in index:
            return _gpu_at(index[key])
    return _lookup_sized(text)


def _marketed_capacities(gpu: GPU) -> set[float]:
    """The capacities in GB the vendor sells this card with ("64 GB per GCD (128 GB per package)": both)."""
    return {float(n) for n in _MARKETED_GB.findall(gpu.marketing_memory)}


def _without_capacity(label: str) -> str:
    return normalize(_MEMORY_KINDS.sub(" ", _NAME_CAPACITY.sub(" ", label)))


@functools.lru_cache(maxsize=None)
def _families() -> dict[str, tuple[GPU, ...]]:
    """Every catalog name and alias with its capacity and memory kind taken off -> the cards it names."""
    families: dict[str, list[GPU]] = {}
    for gpu in _load()[0]:
        for label in (gpu.name, *gpu.aliases):
            for key in _candidate_keys(_without_capacity(label)):
                members = families.setdefault(key, [])
                if gpu not in members:
                    members.append(gpu)
    return {key: tuple(members) for key, members in families.items()}


def _lookup_sized(text: str) -> GPU | None:
    """`RTX4090-24GB`, `A6000-48GB`, `H100-94GB`: the card of that name whose capacity is the one written."""
    sizes = [float(m.group(1)) for m in _NAME_CAPACITY.finditer(text)]
    if len(sizes) != 1:
        return None
    rest = _without_capacity(text)
    if not rest:
        return None
    families = _families()
    for key in _candidate_keys(rest):
        members = [gpu for gpu in families.get(key, ()) if sizes[0] in _marketed_capacities(gpu)]
        if members:
            # Several cards of one name and size (SXM and PCIe): the first in catalog order, as for bare names.
            return members[0]
    return None


def capacity_mismatch(text: str) -> str | None:
    """Why a sized name matched nothing, when the card is known but not with that capacity:
    `H100-40GB` -> "H100 comes with 80 GB (H100-80GB, H100-PCIe) or 94 GB (H100-NVL), not 40 GB"."""
    if not isinstance(text, str):
        return None
    text, _count = split_count(text)
    sizes = [m.group(1) for m in _NAME_CAPACITY.finditer(text)]
    rest = _without_capacity(text)
    if len(sizes) != 1 or not rest:
        return None
    for key in _candidate_keys(rest):
        members = _families().get(key)
        if members:
            by_size: dict[float, list[str]] = {}
            for gpu in members:
                for size in sorted(_marketed_capacities(gpu)):
                    by_size.setdefault(size, []).append(gpu.name)
            offers = " or ".join(f"{size:g} GB ({', '.join(names)})" for size, names in sorted(by_size.items()))
            shown = _NAME_CAPACITY.sub("", text).strip(" -_/")
            return f"{shown} comes with {offers}, not {sizes[0]} GB"
    return None


def split_count(text: str) -> tuple[str, int | None]:
    """`8x H100` -> (`H100`, 8); `H100 x8` -> (`H100`, 8); a name without a count -> (name, None)."""
    if not isinstance(text, str):
        return text, None
    if not any(sign in text for sign in "xX×*"):  # both patterns need one: most names are matched without them
        return text, None
    match = _COUNT_FRONT.match(text)
    if match and int(match.group(1)) > 0:
        return match.group(2), int(match.group(1))
    match = _COUNT_BACK.match(text)
    if match and int(match.group(2)) > 0:
        return match.group(1), int(match.group(2))
    return text, None


def parse_capacity(text: str) -> int | None:
    """Bytes for a capacity such as `96GB`, `24GiB`, `80 GB`, `1.5TB` or `40960MiB`; None if `text` is not one.

    GB and GiB both mean 2^30 (vendors market binary sizes), MB/MiB 2^20 and TB/TiB 2^40; `G`, `M`, `T`
    alone work too. A number needs its unit (a bare `80` is None), and zero is None.
    """
    if not isinstance(text, str):
        return None
    match = _CAPACITY.match(text)
    if not match:
        return None
    unit = _UNIT_BYTES.get(match.group(2).lower())
    if unit is None:
        return None
    value = float(match.group(1))
    if value <= 0:
        return None
    return int(round(value * unit))


# Catalog entries whose memory was measured on the card (not derived, not unverified): the share of the marketed
# capacity that CUDA/ROCm really reports comes from them.
_MEASURED_BASES = ("cuda-total", "torch-mib", "torch-oom-gib")


@functools.lru_cache(maxsize=None)
def reported_share() -> tuple[float, int]:
    """(median share of the marketed capacity that the device reports, number of catalog cards it comes from)."""
    shares = sorted(gpu.memory_bytes / (max(_marketed_capacities(gpu)) * GIB) for gpu in _load()[0]
                    if gpu.memory_basis in _MEASURED_BASES and _marketed_capacities(gpu)
                    and len(_marketed_capacities(gpu)) == 1)
    if not shares:  # pragma: no cover - the shipped catalog has measured cards
        return 1.0, 0
    mid = len(shares) // 2
    median = shares[mid] if len(shares) % 2 else (shares[mid - 1] + shares[mid]) / 2
    return median, len(shares)


def _custom_gpu(text: str, marketed_bytes: int) -> GPU:
    """A card known only by its capacity: it reports what catalog cards report of theirs (the median share)."""
    share, cards = reported_share()
    return GPU(
        name=re.sub(r"\s+", "", text.strip()),
        vendor="unknown",
        memory_bytes=int(marketed_bytes * share),
        bf16=True,
        fp8=True,
        bf16_tflops=None,
        memory_bandwidth_gbs=None,
        interconnect=None,
        in_catalog=False,
        capabilities_known=False,
        memory_source=(f"the capacity given ({marketed_bytes / GIB:g} GiB) times {share:.4f}, the median share of "
                       f"their marketed capacity that {cards} measured catalog cards report to CUDA/ROCm"),
        memory_basis="user",
        marketing_memory=f"{marketed_bytes / GIB:g} GB",
    )


def find_gpu(text: str) -> GPU | None:
    """The GPU `text` names: a catalog name or alias (any case, spacing, punctuation, optional vendor
    prefix), else a bare capacity such as `96GB` (a GPU with `in_catalog=False`); None if neither."""
    if not isinstance(text, str) or not text.strip():
        return None
    text, _count = split_count(text)
    gpu = _lookup(text)
    if gpu is not None:
        return gpu
    marketed_bytes = parse_capacity(text)
    if marketed_bytes is not None:
        return _custom_gpu(text, marketed_bytes)
    return None


def _bare(key: str) -> str:
    """A normalized name with the optional vendor words and suffixes taken off (`nvidiateslat4` -> `t4`)."""
    *_, barest = _candidate_keys(key)
    return barest


@functools.lru_cache(maxsize=None)
def _bare_names() -> dict[str, str]:
    """Every catalog name and alias, bare (see `_bare`), mapped to its GPU's name."""
    bare: dict[str, str] = {}
    for gpu in _load()[0]:
        for label in (gpu.name, *gpu.aliases):
            bare.setdefault(_bare(normalize(label)), gpu.name)
    return bare


def closest_gpus(text: str, n: int = 3) -> list[str]:
    """Up to `n` catalog names most like `text`, best first, for did-you-mean messages.

    Vendor words are ignored on both sides (so `NVIDIA XYZ` is not "close" to every `NVIDIA ...` name),
    and letters typed for the digits they look like (`A1OO` for `A100`) count as those digits."""
    if n <= 0 or not isinstance(text, str):
        return []
    text, _count = split_count(text)
    names: list[str] = []
    lookalike = _lookup(normalize(text).translate(_LOOKALIKE_DIGITS))
    if lookalike is not None:
        names.append(lookalike.name)
    bare = _bare_names()
    for key in closest(_bare(normalize(text)), bare, n=len(bare)):
        if bare[key] not in names:
            names.append(bare[key])
    return names[:n]


def resolve_gpu(text: str) -> GPU:
    """Like `find_gpu`, but an unknown name raises `UnknownGPUError` with did-you-mean suggestions."""
    gpu = find_gpu(text)
    if gpu is None:
        raise UnknownGPUError(text, closest_gpus(text))
    return gpu
