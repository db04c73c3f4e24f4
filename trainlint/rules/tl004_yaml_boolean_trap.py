"""TL004 yaml-boolean-trap: `no`, `yes`, `on` or `off` where the framework expects a word.

**What**: an unquoted `no`/`yes`/`on`/`off` as the value of a key that takes a string, such as
`save_strategy: no` (TrainingArguments) or `mixed_precision: no` (Accelerate).

**Why**: YAML 1.1 (PyYAML, OmegaConf) reads these words as the booleans False/True, and no parser
turns them back into words (TrlParser's argparse conversion applies to string values only). The
framework then receives `False` where it expects the string "no": `TrainingArguments.__post_init__`
(transformers `training_args.py`) stops with "False is not a valid SaveStrategy, please select one of
['no', 'steps', 'epoch', 'best']"; `accelerate launch` stops in `prepare_simple_launcher_cmd_env`
(`utils/launch.py`: `args.mixed_precision.lower()`, AttributeError on a bool). Holds for transformers
4.40 - 5.24 and accelerate 1.13 - 1.15. Accelerate's `downcast_bf16` is a boolean field
(`ClusterConfig.downcast_bf16: bool`), so `downcast_bf16: no` is right and is not reported. Accelerate's
`distributed_type: no` is info, not an error: DistributedType's values are upper-case, so the False it becomes
matches no type and `accelerate launch` runs the plain launcher as for `NO` (a quoted "no" would be refused, and a
bare `NO` is the same YAML boolean); the fix writes `"NO"`, as `accelerate config` does.

**Evidence**: `transformers/training_args.py: TrainingArguments.__post_init__` (stops); verified against
transformers 4.40 - 5.24, accelerate 1.13 - 1.15. First message: "False is not a valid SaveStrategy,
please select one of ['no', 'steps', 'epoch', 'best']".

**Example**: `save_strategy: no` → `save_strategy: "no"`.

**Fix** (safe): quote the word.
"""

from __future__ import annotations

from trainlint.catalog import schemas
from trainlint.diagnostics import Severity
from trainlint.fixes.edits import fix, replace_value
from trainlint.rules._frameworks import Claim
from trainlint.rules.base import LintContext, Rule

RULE = Rule("TL004", "yaml-boolean-trap", Severity.ERROR, "yes/no/on/off read as a boolean where a word is expected",
            framework="transformers", evidence="transformers/training_args.py: TrainingArguments.__post_init__",
            raises="False is not a valid SaveStrategy, please select one of ['no', 'steps', 'epoch', 'best']")

CLAIMS = (
    Claim("transformers", "training_args.py TrainingArguments.__post_init__ (SaveStrategy(...))",
          "False is not a valid SaveStrategy, please select one of ['no', 'steps', 'epoch', 'best']", "stops"),
    Claim("accelerate", "utils/launch.py prepare_simple_launcher_cmd_env",
          "AttributeError: 'bool' object has no attribute 'lower'", "stops"),
)

BOOLEAN_WORDS = {"yes", "no", "on", "off"}
# Keys whose value is a string (or a string enum) in the frameworks that read these files.
STRING_KEYS = {
    "save_strategy", "eval_strategy", "evaluation_strategy", "logging_strategy", "hub_strategy", "report_to",
    "lr_scheduler_type", "optim", "mixed_precision", "dynamo_backend", "distributed_type",
    "compute_environment", "fsdp", "half_precision_backend", "gradient_checkpointing", "padding_side",
    "push_to_hub_strategy", "precision", "strategy", "accelerator", "dtype", "torch_dtype", "attn_implementation",
    "adapter", "flash_attn", "finetuning_type", "stage", "rdzv_backend",
}


def expects_string(key_path: tuple) -> bool:
    if key_path and isinstance(key_path[-1], str) and key_path[-1] in STRING_KEYS:
        return True
    return _schema_says_string(schemas, key_path)


def _schema_says_string(schemas, key_path: tuple) -> bool:
    for name in ("hf-training-args", "accelerate", "lightning"):
        try:
            info = schemas.describe(name, key_path)
        except Exception:  # noqa: BLE001 - a schema lookup must never break linting
            return False
        if info is not None and "string" in info.types and "boolean" not in info.types:
            return True
    return False


def check(ctx: LintContext):
    doc = ctx.document
    if doc.kind != "yaml" or doc.root is None:
        return
    for node in doc.root.walk():
        if node.kind != "scalar" or node.style is not None or not isinstance(node.value, bool):
            continue
        if node.raw.lower() not in BOOLEAN_WORDS or not expects_string(node.key_path):
            continue
        key = ".".join(str(k) for k in node.key_path)
        word = node.raw.lower()
        if node.key_path == ("distributed_type",) and ctx.flavor == "accelerate":
            yield from _distributed_type(doc, node, key)
            continue
        yield RULE.at(doc, node,
                      f"`{key}: {node.raw}` is read by YAML 1.1 as the boolean {node.value}, not the word \"{word}\": "
                      "the framework rejects or misreads it",
                      [fix(f'quote it: "{word}"', replace_value(doc, node, text=f'"{word}"'))],
                      detail=f"This setting takes the word \"{word}\". Quote it: \"{word}\".")


def _distributed_type(doc, node, key: str):
    """Accelerate's DistributedType values are upper-case ("NO", "MULTI_GPU", ...): a quoted "no" is refused
    ("'no' is not a valid DistributedType"), while the boolean False that a bare `no` becomes matches no distributed
    type in `accelerate launch` (commands/launch.py: every `defaults.distributed_type == DistributedType.X` is
    false), which then runs the plain single-node launcher exactly as for NO."""
    if node.value is False:
        yield RULE.at(doc, node,
                      f"`{key}: {node.raw}` is read by YAML 1.1 as the boolean False, not a DistributedType "
                      "(it works: launched as for NO)",
                      [fix('write "NO"', replace_value(doc, node, text='"NO"'))], severity=Severity.INFO,
                      detail="`accelerate launch` matches it to no distributed type and runs the plain launcher, as "
                             "for NO, so it works, but the value is not a DistributedType: a quoted \"no\" would stop "
                             "(\"'no' is not a valid DistributedType\"), and a bare NO is the same boolean. Write "
                             "\"NO\" (quoted, as `accelerate config` writes it).")
        return
    yield RULE.at(doc, node,
                  f"`{key}: {node.raw}` is read by YAML 1.1 as the boolean True, no DistributedType: "
                  "`accelerate launch` runs a single plain process",
                  detail="True is no DistributedType (NO, MULTI_GPU, DEEPSPEED, FSDP, ...): `accelerate launch` "
                         "matches it to none of them and runs a single plain process. Write the type you mean.")
