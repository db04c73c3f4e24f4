"""Client settings: the keys every editor sends (`initializationOptions`, the `trainlint` section of
`workspace/configuration`, `workspace/didChangeConfiguration`), checked and turned into engine
`Settings`. A bad value is reported and dropped (its default applies); nothing here raises.

| key | type | engine |
|---|---|---|
| gpu | str (catalog name, alias or capacity such as "24GiB") | plan field `gpu` |
| numGpus | int >= 1 | plan field `num_gpus` |
| model | str | plan field `model` |
| seqLen | int >= 1 | plan field `seq_len` |
| select / ignore | list of codes or prefixes (or a comma-separated string) | rule selection |
| failLevel | "error" / "warning" / "info" | `Settings.fail_level` (the code lens counts findings at or above it) |

Unset keys (missing or null) fall back to `[tool.trainlint]` in the nearest pyproject.toml or
trainlint.toml, then to what the config itself says.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from trainlint.catalog.gpus import closest_gpus, find_gpu
from trainlint.context.settings import FAIL_LEVELS, Overrides, RuleSelection, Settings
from trainlint.plan import Origin

PLAN_KEYS = {"gpu": "gpu", "numGpus": "num_gpus", "model": "model", "seqLen": "seq_len"}
ALIASES = {  # spellings people write in init options by hand
    "num_gpus": "numGpus", "num-gpus": "numGpus", "seq_len": "seqLen", "seq-len": "seqLen",
    "fail_level": "failLevel", "fail-level": "failLevel",
}
KNOWN = set(PLAN_KEYS) | {"select", "ignore", "failLevel"}
# Keys other clients put around the real settings, ignored without complaint.
WRAPPERS = {"settings", "globalSettings", "trainlint"}


@dataclass(frozen=True)
class ClientOptions:
    """The settings an editor sends (initializationOptions / workspace configuration)."""
    values: dict[str, Any] = field(default_factory=dict)  # plan field -> value
    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    fail_level: str | None = None

    def to_settings(self) -> Settings:
        selection = None
        if self.select or self.ignore:
            selection = RuleSelection(self.select, self.ignore)
        return Settings(cli=Overrides(dict(self.values), Origin("cli", note="editor settings")),
                        selection=selection, fail_level=self.fail_level, use_project_config=True)


def unwrap(raw: Any) -> Any:
    """`{"trainlint": {...}}` -> `{...}`; the settings themselves otherwise."""
    if isinstance(raw, dict) and isinstance(raw.get("trainlint"), dict):
        return raw["trainlint"]
    return raw


def merge(*layers: Any) -> dict[str, Any]:
    """Later layers win key by key. A key a later layer sends as null is unset (VS Code sends every
    key, null when the user cleared it); a key it leaves out keeps the earlier layer's value."""
    out: dict[str, Any] = {}
    for layer in layers:
        layer = unwrap(layer)
        if not isinstance(layer, dict):
            continue
        for key, value in layer.items():
            if key in ALIASES:
                key = ALIASES[key]
            if value is None:
                out.pop(key, None)
            else:
                out[key] = value
    return out


def _codes(value: Any) -> tuple[str, ...] | None:
    if isinstance(value, str):
        value = [v for v in re.split(r"[,\s]+", value) if v]
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
        return None
    return tuple(v.strip().upper() for v in value if v.strip())


def _positive_int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value.strip())
    return value if isinstance(value, int) and value >= 1 else None


def _gpu_problem(name: str) -> str | None:
    try:
        if find_gpu(name) is not None:
            return None
        hint = closest_gpus(name)
    except Exception:  # noqa: BLE001
        return None
    suffix = f"; did you mean {', '.join(hint)}?" if hint else "; give a catalog name or a capacity such as 80GB"
    return f"unknown GPU {name!r}{suffix}"


def parse(raw: Any) -> tuple[ClientOptions, list[str]]:
    """Checked options and the problems found (one sentence each)."""
    problems: list[str] = []
    if raw is None:
        return ClientOptions(), problems
    raw = unwrap(raw)
    if not isinstance(raw, dict):
        return ClientOptions(), [f"trainlint settings must be an object, got {type(raw).__name__}"]
    values: dict[str, Any] = {}
    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    fail_level = None
    for key, value in raw.items():
        key = ALIASES.get(key, key)
        if value is None or key in WRAPPERS:
            continue
        if key in ("numGpus", "seqLen"):
            number = _positive_int(value)
            if number is None:
                problems.append(f"{key} must be a whole number of at least 1, got {value!r}")
            else:
                values[PLAN_KEYS[key]] = number
        elif key in ("gpu", "model"):
            if not isinstance(value, str) or not value.strip():
                problems.append(f"{key} must be a non-empty string, got {value!r}")
                continue
            if key == "gpu":
                problem = _gpu_problem(value.strip())
                if problem:
                    problems.append(problem)
                    continue
            values[PLAN_KEYS[key]] = value.strip()
        elif key in ("select", "ignore"):
            codes = _codes(value)
            if codes is None:
                problems.append(f"{key} must be a list of rule codes or prefixes, got {value!r}")
            elif key == "select":
                select = codes
            else:
                ignore = codes
        elif key == "failLevel":
            if value not in FAIL_LEVELS:
                problems.append(f"failLevel must be one of {', '.join(FAIL_LEVELS)}, got {value!r}")
            else:
                fail_level = value
        else:
            problems.append(f"unknown setting {key!r} (known: {', '.join(sorted(KNOWN))})")
    return ClientOptions(values, select, ignore, fail_level), problems
