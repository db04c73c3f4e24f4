"""`trainlint check --show-settings`: every resolved run setting of each file and where it came from
(flag, directive, [tool.trainlint], launch, the config, an inference, a default), then the launch, the parser
and the framework versions. Renders only; the engine resolved everything."""

from __future__ import annotations

import os

PLAN_FIELDS = ("model", "gpu", "num_gpus", "num_nodes", "micro_batch", "grad_accum", "seq_len", "precision",
               "optimizer", "zero_stage", "fsdp", "offload_optimizer", "offload_params", "grad_ckpt", "attn_impl",
               "peft", "task")


def _value(value) -> str:
    label = getattr(value, "label", None)
    if isinstance(label, str):
        return label
    if hasattr(value, "rank") and hasattr(value, "method"):
        bits = f", {value.base_bits}-bit base" if value.base_bits else ""
        return f"{value.method} r={value.rank}{bits}"
    return "-" if value is None else str(value)


def entries(result) -> list[tuple[str, str, str]]:
    """(name, value, where it came from) for one file."""
    out: list[tuple[str, str, str]] = [("flavor", result.flavor, "detected")]
    plan = result.plan
    if plan is not None:
        for name in PLAN_FIELDS:
            setting = getattr(plan, name, None)
            if setting is not None and hasattr(setting, "origin") and hasattr(setting, "value"):
                out.append((name, _value(setting.value), f"{setting.origin.kind}: {setting.origin.describe()}"
                            if setting.origin.kind not in ("default", "inferred", "launch") else setting.origin.describe()))
    launch = result.launch
    if launch is not None:
        out.append(("launch", launch.describe(), launch.origin.describe() if launch.found else "default"))
        if launch.found and launch.arguments:  # what the launch passes the script, as its parser reads it
            reads = {"override": "over the script's config", "command-line": "the command line alone",
                     "file": "ignored: the script reads its config file alone"}.get(launch.parser_reads, "")
            for key, setting in launch.arguments:
                value = "(unknown)" if setting.value is None else str(setting.value)
                out.append((f"  --{key}", value + (f" [{reads}]" if reads else ""), setting.origin.describe()))
    dialect = result.dialect
    if dialect is not None:
        out.append(("parser", dialect.label, dialect.origin.describe()))
        unread = getattr(dialect, "own_unresolved", ())
        if getattr(dialect, "own_note", "") or unread:  # the repository's own argument classes the parser takes
            out.append(("  classes", dialect.own_note or "-", "the repository's own; not read: " + ", ".join(unread)
                        if unread else "the repository's own"))
        for package, below, reason in getattr(dialect, "era", ()):
            out.append(("  era", f"{package} < {below}", reason))
    if result.versions is not None:
        for v in result.versions:
            where = v.origin + (f": {v.source}" if v.source else "")
            if getattr(v, "narrowed", ()):
                where += "; narrowed: " + "; ".join(v.narrowed)
            out.append((v.name, v.version + (f" (from {v.spec})" if v.spec and v.assumed else "")
                        + (" [assumed]" if v.assumed else ""), where))
    return out


def _relative_to_cwd(text: str) -> str:
    """Paths under the working directory as people type them (the launch, pin and link origins are absolute)."""
    prefix = os.getcwd().rstrip(os.sep) + os.sep
    return text.replace(prefix, "")


def render(results: list) -> str:
    lines = []
    for result in results:
        lines.append(f"{result.path}: resolved settings")
        rows = entries(result)
        width = max((len(n) for n, _, _ in rows), default=0)
        for name, value, where in rows:
            lines.append(f"  {name.ljust(width)}  {value}  ({where})")
        lines.append("")
    return _relative_to_cwd("\n".join(lines))


def to_json(result) -> list[dict]:
    return [{"name": n, "value": v, "origin": w} for n, v, w in entries(result)]
