"""How a config is launched and what the launch decides: world size, nodes, sharding, precision, and the
accelerate / DeepSpeed config that applies.

`Launch` is the answer for one file. Each value is a `Setting` with an `Origin` (kind "launch": a launch
command found in the repository, an accelerate config it names, the recipe itself, or a `launch` entry in the
settings), so rules and the estimate can say which command decided it. `Launch()` (the default) means no launch
was found: everything in it is unknown, and a verdict that depends on it says what it assumed.
"""

from __future__ import annotations

from dataclasses import dataclass

from trainlint.plan import Origin, Setting

NO_LAUNCH = Origin("default", note="no launch command names this file")


def _unknown() -> Setting:
    return Setting(None, NO_LAUNCH)


@dataclass(frozen=True)
class Launch:
    launcher: str = ""  # accelerate | torchrun | deepspeed | tune | litgpt | axolotl | llamafactory | python | recipe | settings | ""
    command: str = ""  # the command line as written (joined continuation lines), when one was found
    origin: Origin = NO_LAUNCH  # where the command / setting was found (file and line)
    script: str = ""  # the script or module the launch runs (scripts/run_sft.py, -m axolotl.cli.train, a recipe)
    num_processes: Setting = _unknown()  # world size (GPUs x nodes, total processes), int or None
    num_machines: Setting = _unknown()  # nodes, int or None
    sharding: Setting = _unknown()  # "none" | "zero1" | "zero2" | "zero3" | "fsdp" | None (unknown)
    mixed_precision: Setting = _unknown()  # "no" | "bf16" | "fp16" | "fp8" | None
    accelerate_config: str = ""  # the accelerate config file that applies (resolved path), when any
    deepspeed_config: str = ""  # a DeepSpeed JSON the launch names (--deepspeed_config_file / --deepspeed)

    @property
    def found(self) -> bool:
        return bool(self.launcher)

    def describe(self) -> str:
        if not self.found:
            return "none found (" + NO_LAUNCH.note + ")"
        where = self.origin.path + (f":{self.origin.span.start.line + 1}" if self.origin.span else "")
        parts = [self.launcher]
        if self.num_processes.value is not None:
            parts.append(f"{self.num_processes.value} processes")
        if self.num_machines.value is not None:
            parts.append(f"{self.num_machines.value} node(s)")
        if self.sharding.value is not None:
            parts.append(f"sharding {self.sharding.value}")
        if self.mixed_precision.value is not None:
            parts.append(f"mixed precision {self.mixed_precision.value}")
        if self.accelerate_config:
            parts.append(f"accelerate config {self.accelerate_config}")
        return ", ".join(parts) + (f" ({where})" if where else "")
