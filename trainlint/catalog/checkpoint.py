"""Exact parameter counts from a local checkpoint's safetensors headers, without reading weights.

A `.safetensors` file starts with an 8-byte little-endian header length and a JSON header that maps
every tensor name to its dtype, shape and byte offsets. `count_checkpoint(folder)` reads only those
headers: of the shards `model.safetensors.index.json` names, else of the folder's `*.safetensors`
files. What it reads is bounded (a header of at most 64 MiB per file, at most 1,024 shards, 256 MiB of
headers in all); a file that is not a safetensors file (a Git LFS pointer, a truncated download)
makes the count unavailable rather than wrong.

Counted: every tensor except saved buffers that transformers does not hold as parameters (the rotary
`inv_freq` tables older Llama checkpoints store). Not counted at all: quantized checkpoints (integer
or packed dtypes, or scale tensors), whose stored shapes are not the model's parameter count.
"""

from __future__ import annotations

import json
import math
import struct
from pathlib import Path
from typing import NamedTuple

__all__ = ["CheckpointCount", "count_checkpoint"]

MAX_HEADER = 64 * 2**20
MAX_SHARDS = 1024
MAX_TOTAL_HEADERS = 256 * 2**20
_FLOAT_DTYPES = {"F64", "F32", "F16", "BF16"}
_BUFFER_SUFFIXES = (".inv_freq", "rotary_emb.inv_freq", ".masked_bias", ".attn.bias")


class CheckpointCount(NamedTuple):
    """The parameters a local checkpoint's safetensors headers hold, in how many files and which dtypes."""
    params: int
    files: int
    dtypes: tuple[str, ...]


def _header(path: Path, budget: list[int]) -> dict | None:
    try:
        with path.open("rb") as f:
            raw = f.read(8)
            if len(raw) != 8:
                return None
            (size,) = struct.unpack("<Q", raw)
            if size <= 1 or size > MAX_HEADER or size > budget[0]:
                return None
            budget[0] -= size
            text = f.read(size)
    except OSError:
        return None
    if len(text) != size:
        return None
    try:
        header = json.loads(text.decode("utf-8"))
    except (ValueError, RecursionError):  # not UTF-8, not JSON, integers over 4,300 digits, too deep
        return None
    return header if isinstance(header, dict) else None


def _shards(folder: Path) -> list[Path] | None:
    index = folder / "model.safetensors.index.json"
    if index.is_file():
        try:
            if index.stat().st_size > MAX_HEADER:
                return None
            weight_map = json.loads(index.read_text(encoding="utf-8")).get("weight_map")
        except (OSError, ValueError, RecursionError, AttributeError):
            return None
        if not isinstance(weight_map, dict) or not weight_map:
            return None
        names = sorted({str(v) for v in weight_map.values()})
        if len(names) > MAX_SHARDS or any("/" in n or "\\" in n or n.startswith(".") for n in names):
            return None
        shards = [folder / n for n in names]
        return shards if all(p.is_file() for p in shards) else None
    try:
        shards = sorted(p for p in folder.glob("*.safetensors") if p.is_file())
    except OSError:
        return None
    return shards[:MAX_SHARDS + 1] if shards else None


def count_checkpoint(folder: Path) -> CheckpointCount | None:
    """The parameter count the checkpoint in `folder` stores, or None when there is none to read
    (no safetensors, an unreadable or quantized one)."""
    shards = _shards(folder)
    if not shards or len(shards) > MAX_SHARDS:
        return None
    budget = [MAX_TOTAL_HEADERS]
    total = 0
    dtypes: set[str] = set()
    for shard in shards:
        header = _header(shard, budget)
        if header is None:
            return None
        for name, info in header.items():
            if name == "__metadata__":
                continue
            if not isinstance(info, dict) or not isinstance(info.get("shape"), list):
                return None
            dtype = str(info.get("dtype", ""))
            if dtype not in _FLOAT_DTYPES or name.endswith(("_scale", ".scales", ".qweight", ".qzeros", "_scale_inv")):
                return None  # quantized: stored shapes are not parameter counts
            if name.endswith(_BUFFER_SUFFIXES):
                continue
            shape = info["shape"]
            if not all(isinstance(d, int) and d >= 0 for d in shape):
                return None
            total += math.prod(shape)
            dtypes.add(dtype)
    return CheckpointCount(total, len(shards), tuple(sorted(dtypes)))
