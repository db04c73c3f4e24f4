"""A storage-level allocation tracker that mimics ``torch.cuda.max_memory_allocated``.

Every tensor storage that appears as the output of an aten op (plus the ones
registered by hand: parameters, buffers, inputs) is counted once, at its
nbytes rounded up to 512 bytes (the CUDA caching allocator's block rounding;
zero-byte storages count 0), until its Python/C++ owners drop it (a weakref
finalizer on the storage).  Views share a storage and are not counted again.
The running total is checked after every op; the maximum is the peak.

Works under ``FakeTensorMode`` (nothing is really allocated): the tracker mode
is entered *inside* the fake mode, so it sees every op first and inspects the
fake outputs.
"""

from __future__ import annotations

import weakref
from collections import defaultdict

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten

BLOCK = 512


def rounded(nbytes: int, block: int = BLOCK) -> int:
    if nbytes <= 0:
        return 0
    return ((nbytes + block - 1) // block) * block


class _Entry:
    __slots__ = ("size", "phase", "host", "dtype", "shape", "weight_cast")

    def __init__(self, size, phase, host, dtype, shape):
        self.size = size
        self.phase = phase
        self.host = host
        self.dtype = dtype
        self.shape = shape
        self.weight_cast = False  # output of a dtype cast (_to_copy) of a parameter (autocast / LoRA casts)


class StorageTracker(TorchDispatchMode):
    """Counts live storages; records the peak, the phase of the peak and per-phase peaks.

    ``snapshot_at``: an op index at which to call ``snapshot_fn()`` (used by a
    second, identical run to categorise what is live at the peak).
    """

    def __init__(self, snapshot_at: int | None = None, snapshot_fn=None, block: int = BLOCK, sim=None):
        super().__init__()
        self.block = block
        # optional allocator_sim.CachingAllocatorSim fed with the same alloc/free sequence
        self.sim = sim
        self._blocks: dict[int, object] = {}
        self.sim_peak = 0
        self.sim_peak_phase = None
        self.sim_peak_reserved = 0
        self.live: dict[int, _Entry] = {}  # id(storage) -> entry
        self._refs: dict[int, weakref.ref] = {}
        self.total = 0
        self.peak = 0
        self.peak_op = -1
        self.peak_phase = None
        self.peak_step = 0
        self.step = 0
        self.phase = "setup"
        self.phase_peaks: dict[str, int] = defaultdict(int)
        self.op_index = 0
        self.host_scalar_rule = False  # 0-dim outputs count as host tensors (non-fused optimizer step)
        self.snapshot_at = snapshot_at
        self.snapshot_fn = snapshot_fn
        self.snapshot = None
        self.op_counts: dict[str, int] = defaultdict(int)
        self.param_keys: set = set()  # storage ids of parameters, to flag casts of weights

    # -- registration ---------------------------------------------------------
    def _free(self, key: int):
        e = self.live.pop(key, None)
        self._refs.pop(key, None)
        if e is not None and not e.host:
            self.total -= e.size
        if self.sim is not None and key in self._blocks:
            self.sim.free(self._blocks.pop(key))

    def track(self, t: torch.Tensor, host: bool = False, update: bool = True) -> None:
        if not isinstance(t, torch.Tensor):
            return
        try:
            st = t.untyped_storage()
        except Exception:  # sparse / no storage
            return
        key = id(st)
        if key in self.live:
            return
        size = rounded(st.nbytes(), self.block)
        self.live[key] = _Entry(size, self.phase, host, t.dtype, tuple(t.shape))
        self._refs[key] = weakref.ref(st, lambda _r, k=key: self._free(k))
        if not host:
            self.total += size
            if self.sim is not None and size:
                self._blocks[key] = self.sim.malloc(st.nbytes())
            if update:
                self._update_peak()

    def storage_key(self, t: torch.Tensor):
        try:
            return id(t.untyped_storage())
        except Exception:
            return None

    def set_phase(self, phase: str) -> None:
        if phase == "forward":
            self.step += 1
        self.phase = phase
        self._update_peak()

    def _update_peak(self):
        if self.sim is not None:
            if self.sim.allocated > self.sim_peak:
                self.sim_peak = self.sim.allocated
                self.sim_peak_phase = self.phase
            if self.sim.reserved > self.sim_peak_reserved:
                self.sim_peak_reserved = self.sim.reserved
        if self.total > self.phase_peaks[self.phase]:
            self.phase_peaks[self.phase] = self.total
        if self.total > self.peak:
            self.peak = self.total
            self.peak_op = self.op_index
            self.peak_phase = self.phase
            self.peak_step = self.step

    # -- dispatch ---------------------------------------------------------------
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        self.op_counts[str(func.overloadpacket)] += 1
        flat, _ = tree_flatten(out)
        for t in flat:
            if isinstance(t, torch.Tensor):
                host = self.host_scalar_rule and t.dim() == 0
                self.track(t, host=host, update=False)
        if (func is torch.ops.aten._to_copy.default and self.param_keys and isinstance(out, torch.Tensor)
                and self.phase in ("forward", "loss", "backward")):
            src = args[0] if args else None
            if isinstance(src, torch.Tensor) and self.storage_key(src) in self.param_keys:
                e = self.live.get(self.storage_key(out))
                if e is not None and e.phase == self.phase:
                    e.weight_cast = True
        self.op_index += 1
        self._update_peak()
        if self.snapshot_at is not None and self.op_index == self.snapshot_at and self.snapshot_fn:
            self.snapshot_fn()
        return out

    # -- analysis ---------------------------------------------------------------
    def live_device_entries(self):
        return {k: e for k, e in self.live.items() if not e.host}
