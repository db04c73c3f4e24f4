"""The result of an estimate: per-GPU components, the peak and its phase, and what was assumed."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, NamedTuple

GIB = 2**30

# Order of the components in tables, and the DESIGN.md JSON bucket each belongs to.
JSON_BUCKET = {
    "weights": "weights", "gradients": "gradients", "optimizer_states": "optimizer_states",
    "activations": "activations", "logits": "other", "buffers": "other", "temporaries": "other",
}


def gib(n: float) -> str:
    return f"{n / GIB:.1f} GiB"


class Component(NamedTuple):
    """One part of the per-GPU memory at the peak (weights, gradients, ...) and what it assumes."""
    key: str  # weights | gradients | optimizer_states | activations | logits | buffers | temporaries
    label: str
    bytes: int  # at the peak
    assumption: str


class PhasePeak(NamedTuple):
    """One phase of the run (loading, training step, evaluation, saving) at its peak."""

    name: str
    peak_allocated: int
    total: int  # what the card must hold in this phase: its reserved bytes + what lies outside the allocator
    host_bytes: int = 0  # host RAM per node the phase needs for itself (saving: rank 0's node)
    knobs: tuple[str, ...] = ()  # the config keys that drive the phase's own terms
    note: str = ""  # what decides its peak
    components: tuple[Component, ...] = ()

    def to_json(self) -> dict:
        return {"phase": self.name, "peak_allocated": self.peak_allocated, "total": self.total,
                "host_bytes": self.host_bytes, "knobs": list(self.knobs), "note": self.note,
                "components": [{"key": c.key, "label": c.label, "bytes": c.bytes, "assumption": c.assumption}
                               for c in self.components]}


@dataclass(frozen=True)
class Breakdown:
    """A run's per-GPU memory: its parts at the peak, allocated and reserved, and the GPU it is judged on."""
    model: str
    gpu: Any  # trainlint.catalog.gpus.GPU or None
    gpu_count: int
    components: tuple[Component, ...]
    peak_allocated: int  # what torch.cuda.max_memory_allocated() would report
    peak_reserved: int  # max_memory_reserved(): the caching allocator's blocks
    total: int  # what the card must hold: reserved + CUDA context + communication buffers
    peak_phase: str
    overhead: tuple[Component, ...] = ()  # outside the allocator: context, NCCL, paged optimizer state
    host_bytes: int = 0  # CPU RAM per node for offloaded state
    assumptions: tuple[str, ...] = ()
    phases: dict = field(default_factory=dict, compare=False)  # step phase -> allocated bytes at its peak
    # Every phase of the run (loading, training step, evaluation, saving); the components above are the deciding one's.
    run_phases: tuple[PhasePeak, ...] = field(default=(), compare=False)
    # bitsandbytes' paged optimizer state (in `overhead`): CUDA unified memory, which the driver moves to host RAM
    # when the GPU's memory is exhausted ("transfer memory from the GPU to the CPU when GPU memory is exhausted",
    # bitsandbytes optim docs), so it slows a run that is over the card but does not stop it
    paged_bytes: int = 0

    @property
    def deciding_phase(self) -> str:
        """The phase of the run whose peak is the run's: "training step" unless loading, evaluation or saving needs more."""
        if not self.run_phases:
            return "training step"
        return max(self.run_phases, key=lambda p: p.peak_allocated).name

    @property
    def capacity(self) -> int | None:
        return self.gpu.memory_bytes if self.gpu is not None else None

    @property
    def fits(self) -> bool | None:
        """Whether the card holds what must stay on it: all of it but the paged optimizer state, which can spill."""
        return None if self.capacity is None else self.total - self.paged_bytes <= self.capacity

    @property
    def spills(self) -> bool:
        """The run fits only with part of the paged optimizer state moved to host RAM (slower steps)."""
        return self.capacity is not None and self.total - self.paged_bytes <= self.capacity < self.total

    @property
    def utilization(self) -> float | None:
        return None if self.capacity is None else self.total / self.capacity

    def component(self, key: str) -> int:
        return sum(c.bytes for c in self.components if c.key == key)

    def per_gpu_bytes(self) -> dict:
        out = {"weights": 0, "gradients": 0, "optimizer_states": 0, "activations": 0, "other": 0}
        for c in self.components:
            out[JSON_BUCKET.get(c.key, "other")] += c.bytes
        out.update(peak_allocated=self.peak_allocated, peak_reserved=self.peak_reserved, total=self.total)
        return out

    def summary(self) -> str:
        where = f"{self.gpu_count} x {self.gpu.name}" if self.gpu is not None else f"{self.gpu_count} GPU(s)"
        head = f"needs {gib(self.total)} per GPU ({self.model}, {where}"
        if self.capacity is not None:
            head += f" with {gib(self.capacity)}; {self.utilization:.0%} used"
        head += f"), peak in {self.peak_phase}"
        if self.deciding_phase != "training step":
            step = next((p for p in self.run_phases if p.name == "training step"), None)
            head += f" (the training step needs {gib(step.total)})" if step is not None else ""
        parts = [f"{c.label} {gib(c.bytes)}" for c in self.components if c.bytes >= GIB // 20]
        tail = f": {', '.join(parts)}" if parts else ""
        host = f"; host RAM for offload {gib(self.host_bytes)} per node" if self.host_bytes else ""
        return head + tail + host

    def to_json(self) -> dict:
        target = None
        if self.gpu is not None:
            target = {"gpu": self.gpu.name, "memory_bytes": self.gpu.memory_bytes, "count": self.gpu_count}
        return {
            "target": target,
            "model": self.model,
            "per_gpu_bytes": self.per_gpu_bytes(),
            "components": [{"key": c.key, "label": c.label, "bytes": c.bytes, "assumption": c.assumption}
                           for c in (*self.components, *self.overhead)],
            "peak_phase": self.peak_phase,
            "deciding_phase": self.deciding_phase,
            "phases": [p.to_json() for p in self.run_phases],
            "host_bytes_per_node": self.host_bytes,
            "fits": self.fits,
            "assumptions": list(self.assumptions),
        }
