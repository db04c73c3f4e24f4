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

A bare capacity (`96GB`, `24GiB`, `80 GB`, `1.5TB`) stands for a card that is not in the catalog: only its
memory is known. GPU vendors market binary sizes (an "80GB" A100 has 80 GiB of HBM), so here `GB` and
`GiB` both mean 2^30 bytes, `MB`/`MiB` 2^20 and `TB`/`TiB` 2^40. Such a GPU has `in_catalog=False` and
`capabilities_known=False`; its `bf16`/`fp8` are optimistic placeholders (True) so that rules never warn
about a card they know nothing about; rules about hardware support must check `capabilities_known`.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from trainlint.catalog.naming import closest, normalize

__all__ = [
    "GPU",
    "UnknownGPUError",
    "catalog",
    "closest_gpus",
    "find_gpu",
    "parse_capacity",
    "resolve_gpu",
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
_CAPACITY = re.compile(r"^\s*(\d+(?:\.\d*)?|\.\d+)\s*([A-Za-z]{1,3})\s*$")


@dataclass(frozen=True)
class GPU:
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
        hint = f" Did you mean {', '.join(suggestions)}?" if suggestions else ""
        super().__init__(
            f"unknown GPU {text!r}.{hint} Give a catalog name (see `trainlint gpus`) or a capacity such as 80GB."
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
def _load() -> tuple[tuple[GPU, ...], dict[str, GPU]]:
    """The catalog and its lookup index (normalized name or alias -> GPU), read once."""
    import json
    from importlib import resources

    text = resources.files("trainlint.catalog").joinpath("data").joinpath("gpus.json").read_text(encoding="utf-8")
    gpus = tuple(_gpu_from_entry(entry) for entry in json.loads(text)["gpus"])
    index: dict[str, GPU] = {}
    for gpu in gpus:
        for label in (gpu.name, *gpu.aliases):
            key = normalize(label)
            other = index.setdefault(key, gpu)
            if other is not gpu:
                raise ValueError(f"gpus.json: {label!r} names both {other.name} and {gpu.name}")
    return gpus, index


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
    index = _load()[1]
    for key in _candidate_keys(normalize(text)):
        if key in index:
            return index[key]
    return None


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


def _custom_gpu(text: str, memory_bytes: int) -> GPU:
    return GPU(
        name=re.sub(r"\s+", "", text.strip()),
        vendor="unknown",
        memory_bytes=memory_bytes,
        bf16=True,
        fp8=True,
        bf16_tflops=None,
        memory_bandwidth_gbs=None,
        interconnect=None,
        in_catalog=False,
        capabilities_known=False,
        memory_source="the capacity given by the user",
        memory_basis="user",
    )


def find_gpu(text: str) -> GPU | None:
    """The GPU `text` names: a catalog name or alias (any case, spacing, punctuation, optional vendor
    prefix), else a bare capacity such as `96GB` (a GPU with `in_catalog=False`); None if neither."""
    if not isinstance(text, str) or not text.strip():
        return None
    gpu = _lookup(text)
    if gpu is not None:
        return gpu
    memory_bytes = parse_capacity(text)
    if memory_bytes is not None:
        return _custom_gpu(text, memory_bytes)
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
