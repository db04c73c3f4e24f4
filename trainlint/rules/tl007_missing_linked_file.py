"""TL007 missing-linked-file: a DeepSpeed config path that does not exist.

**What**: `deepspeed: path.json` (HF TrainingArguments, TRL, LLaMA-Factory, Axolotl),
`deepspeed_config.deepspeed_config_file` (Accelerate) or a Lightning `DeepSpeedStrategy` `config`
whose file is neither next to this config nor under the working directory.

**Why**: the integration opens the file at start-up and fails ("Expected a string path to an existing
deepspeed config" / "You passed in a path to a DeepSpeed config but the path does not exist"). If the
path is relative to a directory you launch from, run trainlint from there; otherwise the memory
estimate cannot include its ZeRO settings.

A name the parser that reads the file resolves itself is no path: ms-swift turns `deepspeed: zero2` (`zero0`,
`zero1`, `zero3`, `zero2_offload`, `zero3_offload`; 2.x `default-zero2`, `zero3-offload`, ...) into its bundled
JSON (`swift/arguments/sft_args.py: SftArguments._init_deepspeed`, `schemas/dialects.json` deepspeed_names), so
such a value is not reported when the file is read by ms-swift (the estimate takes the ZeRO stage and offload of
the bundled file, per ms-swift version).

Axolotl configs name its shipped files as `deepspeed: deepspeed_configs/zero2.json`; axolotl opens the path as
given (`utils/config/__init__.py: normalize_config`), and `axolotl fetch deepspeed_configs` downloads them into
the launch directory (`cli/utils/fetch.py`). For such a path the message says to fetch it rather than to fix it.
A path that names the same files inside axolotl's Docker images (`/workspace/axolotl/deepspeed_configs/zero2.json`:
the images hold the repository at /workspace/axolotl, docker/Dockerfile) and LLaMA-Factory's own
`examples/deepspeed/ds_z3_config.json` (LLaMA-Factory's README launches from its checkout, where the path resolves)
exist where the documented launch runs: the message says so instead of asking to fix the path; the finding stays,
as information, because the memory estimate cannot read the file's ZeRO settings from here.

HF TrainingArguments (and axolotl) open the path relative to the process's working directory, not the YAML file's
folder (`TrainingArguments.__post_init__` → `HfTrainerDeepSpeedConfig`: "Expected a string path to an existing
deepspeed config, or a dictionary, or a base64 encoded string. Received: ds_zero_3.json"). Where the launch that
reads the file as its config runs in a known folder (`Launch.cwd`: a `cd X` before it, a README at the root, a
Makefile), the path is resolved from there only, and a file that exists only next to the YAML is reported with the
path that would work. Otherwise (no launch, or one whose folder is only plausible) the path is looked for next to
the file, under the working directory and the project's folders, as the message says.

**Fix**: none; correct the path (or fetch axolotl's shipped file).
"""

from __future__ import annotations

import os
from pathlib import Path

from trainlint.catalog import dialects
from trainlint.diagnostics import Severity
from trainlint.flavors.base import as_str, resolve_link
from trainlint.rules.base import LintContext, Rule

RULE = Rule("TL007", "missing-linked-file", Severity.INFO, "A linked DeepSpeed config file does not exist")

LINK_KEYS: dict[str, list[tuple[str, ...]]] = {
    "huggingface": [("deepspeed",)],
    "axolotl": [("deepspeed",)],
    "accelerate": [("deepspeed_config", "deepspeed_config_file")],
    "lightning": [("trainer", "strategy", "init_args", "config"), ("fit", "trainer", "strategy", "init_args", "config")],
}


def check(ctx: LintContext):
    doc = ctx.document
    paths: list[tuple[str, ...]] = LINK_KEYS.get(ctx.flavor, [])
    for path in paths:
        node = doc.find(path)
        if node is None or node.kind != "scalar":
            continue
        target = as_str(node.value)
        if target is None or target.lstrip().startswith("{") or "${" in target:
            continue
        if _builtin(ctx, target):
            continue  # ms-swift's `zero2`: the parser's own bundled config, not a path
        cwd = _launch_cwd(ctx)
        if cwd and _under(cwd, target):
            continue  # there where the launch runs
        if cwd and resolve_link(doc.path, target) is not None:
            yield RULE.at(doc, node, f"the DeepSpeed config {_shown(target)} is not under the launch's working directory: "
                          "TrainingArguments stops", detail=_not_from_cwd(ctx, doc, target, cwd))
            continue
        if resolve_link(doc.path, target) is None:
            command = _fetched(ctx, target)
            if command:
                yield RULE.at(doc, node,
                              f"{_shown(target)} is a DeepSpeed config axolotl ships for download: missing until "
                              "fetched",
                              detail=f"{target!r} is one of the DeepSpeed configs axolotl ships for its users to "
                                     f"download: `{command}` puts it under the launch directory, and axolotl opens the "
                                     "path as given, so run it there before training (or commit the file) and the "
                                     "launch and the memory estimate both see its ZeRO settings.")
                continue
            where = _shipped(ctx, target)
            if where:
                yield RULE.at(doc, node,
                              f"{_shown(target)} is not in this repository: the memory estimate omits its ZeRO "
                              "settings",
                              detail=f"{target!r} is a DeepSpeed config that exists in {where}, where the launch runs, "
                                     "not in this repository: the path is right for that launch, but the memory "
                                     "estimate cannot read its ZeRO settings from here (copy the file into the "
                                     "repository for an estimate that includes them).")
                continue
            yield RULE.at(doc, node,
                          f"DeepSpeed config {_shown(target)} not found: the launch fails unless it is there at run "
                          "time",
                          detail=f"{target!r} does not exist next to this file, under the working directory or under "
                                 "the project's root; the launch fails if it is not there at run time, and the memory "
                                 "estimate leaves its ZeRO settings out. Fix the path, or run trainlint from the launch "
                                 "directory.")


SHOWN_PATH = 40  # a longer path is shown by its file name in the message (the detail has it whole)


def _shown(target: str) -> str:
    if len(target) <= SHOWN_PATH:
        return repr(target)
    return repr(".../" + target.rstrip("/").rsplit("/", 1)[-1])


# Parsers that hand the path to TrainingArguments (or open it as given): the file is opened relative to the process's
# working directory, not to the YAML file (transformers TrainingArguments.__post_init__ -> HfTrainerDeepSpeedConfig
# -> HfDeepSpeedConfig: os.path.exists(config_file_or_dict) else "Expected a string path to an existing deepspeed
# config, or a dictionary, or a base64 encoded string. Received: ds_zero_3.json").
CWD_RELATIVE = ("huggingface", "axolotl")


def _launch_cwd(ctx: LintContext) -> str:
    """The directory the launch that reads this file as its config runs in, when certain; "" otherwise (then the
    path is looked for next to the file, under the working directory and the project's folders, as before)."""
    launch = ctx.launch
    if ctx.flavor not in CWD_RELATIVE or not launch.found or launch.role != "config" or launch.assumed:
        return ""
    return launch.cwd


def _under(cwd: str, target: str) -> bool:
    candidate = Path(target.strip()).expanduser()
    path = candidate if candidate.is_absolute() else Path(cwd) / candidate
    try:
        return path.is_file()
    except OSError:
        return False


def _not_from_cwd(ctx: LintContext, doc, target: str, cwd: str) -> str:
    found = resolve_link(doc.path, target)
    launch = ctx.launch
    where = launch.origin.path + (f":{launch.origin.span.start.line + 1}" if launch.origin.span else "")
    try:
        written = os.path.relpath(found, cwd) if found is not None else target
    except (TypeError, ValueError):
        written = str(found)
    return (f"the DeepSpeed config {target!r} is opened relative to the working directory the launch runs in "
            f"({cwd}, {where}), not next to this file, and is not there: TrainingArguments stops with \"Expected a "
            f"string path to an existing deepspeed config, or a dictionary, or a base64 encoded string. Received: "
            f"{target}\". The file exists as {written!r} from there; write that path (or an absolute one).")


def _fetched(ctx: LintContext, target: str) -> str | None:
    """The command that downloads `target` when it names a DeepSpeed config axolotl ships (`deepspeed_configs/...`)."""
    if ctx.flavor != "axolotl":
        return None
    try:
        return dialects.fetched_deepspeed("axolotl", target)
    except Exception:  # noqa: BLE001 - no dialect data: judge it as a path
        return None


def _shipped(ctx: LintContext, target: str) -> str | None:
    """Where the framework keeps `target` outside the repository (axolotl's image, a LLaMA-Factory checkout)."""
    name = "axolotl" if ctx.flavor == "axolotl" else (ctx.dialect.name if ctx.dialect.known else None)
    if name not in ("axolotl", "llamafactory"):
        return None
    try:
        return dialects.shipped_deepspeed(name, target)
    except Exception:  # noqa: BLE001 - no dialect data: judge it as a path
        return None


def _builtin(ctx: LintContext, target: str) -> bool:
    """Whether the parser reading this file resolves `target` to a DeepSpeed config of its own."""
    if not ctx.dialect.known:
        return False
    try:
        found = ctx.version_of("ms-swift")
        version = found.version if found is not None and not found.assumed else None
        return target.strip() in dialects.builtin_deepspeed(ctx.dialect.name, version)
    except Exception:  # noqa: BLE001 - no dialect data: judge it as a path
        return False
