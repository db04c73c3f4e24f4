"""Write the benchmark's config: a ~300-line Hugging Face TrainingArguments/TRL YAML (model, data,
optimizer, precision, DeepSpeed, logging, evaluation, saving, hub sections, a comment above most
keys, the values every key defaults to) linking a DeepSpeed ZeRO-3 JSON. Deterministic; the output
is committed under data/ so the numbers are comparable between runs.

    python benchmarks/lsp_latency/make_config.py
"""

from __future__ import annotations

from pathlib import Path

from trainlint.catalog import schemas
from trainlint.document.reading import parse_document
from trainlint.fixes.edits import scalar_text

HERE = Path(__file__).resolve().parent
DATA = HERE / "data"

HEAD = """\
# Supervised fine-tuning of Llama-3.1-8B on 8 x H100-80GB with the HF Trainer (TRL SFTConfig)
# and DeepSpeed ZeRO-3. Benchmark config for the trainlint language server.
# trainlint: gpu=H100-80GB num-gpus=8
model_name_or_path: meta-llama/Llama-3.1-8B
output_dir: out/llama3-8b-sft
deepspeed: ds_zero3.json
per_device_train_batch_size: 4
gradient_accumulation_steps: 8
max_length: 4096
learning_rate: 2.0e-5
bf16: true
gradient_checkpointing: true
save_strategy: steps
"""

SECTIONS = [
    ("optimizer and schedule", ("adam", "lr_", "warmup", "weight_decay", "max_grad", "optim", "num_train", "max_steps")),
    ("logging", ("log", "report", "run_name", "disable_tqdm")),
    ("evaluation", ("eval", "prediction", "metric", "include_")),
    ("saving and hub", ("save", "hub", "push", "resume", "overwrite")),
    ("data loading", ("dataloader", "dataset", "group_by", "remove_unused", "length", "packing", "padding")),
    ("everything else", ("",)),
]

DS = """\
{
  "train_micro_batch_size_per_gpu": "auto",
  "gradient_accumulation_steps": "auto",
  "gradient_clipping": "auto",
  "bf16": {"enabled": "auto"},
  "zero_optimization": {
    "stage": 3,
    "overlap_comm": true,
    "contiguous_gradients": true,
    "reduce_bucket_size": "auto",
    "stage3_prefetch_bucket_size": "auto",
    "stage3_param_persistence_threshold": "auto",
    "stage3_max_live_parameters": 1000000000,
    "stage3_max_reuse_distance": 1000000000,
    "stage3_gather_16bit_weights_on_model_save": true
  },
  "steps_per_print": 100,
  "wall_clock_breakdown": false
}
"""


def _keys() -> list[tuple[str, object, str]]:
    written = {line.split(":", 1)[0] for line in HEAD.splitlines() if ":" in line and not line.startswith("#")}
    out = []
    for key in sorted(schemas.known_keys("hf-training-args", ()) or ()):
        if key in written:
            continue
        info = schemas.describe("hf-training-args", (key,))
        if info is None or not info.has_default or info.deprecated or info.removed:
            continue
        if info.default is None or isinstance(info.default, (dict, list)):
            continue
        first = (info.description or key).strip().split(". ")[0].replace("\n", " ")
        out.append((key, info.default, first[:110]))
    return out


def build(target_lines: int = 300) -> str:
    doc = parse_document("", "x.yaml")
    keys = _keys()
    lines = HEAD.splitlines()
    used: set[str] = set()
    for title, prefixes in SECTIONS:
        lines += ["", f"# ---- {title} " + "-" * max(0, 80 - len(title))]
        for key, default, comment in keys:
            if key in used or not any(key.startswith(p) for p in prefixes):
                continue
            if len(lines) >= target_lines - 2:
                break
            used.add(key)
            lines.append(f"# {comment}")
            lines.append(f"{key}: {scalar_text(doc, default)}")
    return "\n".join(lines[:target_lines]) + "\n"


def main() -> None:
    DATA.mkdir(exist_ok=True)
    (DATA / "train.yaml").write_text(build(), encoding="utf-8")
    (DATA / "ds_zero3.json").write_text(DS, encoding="utf-8")
    print(f"wrote {DATA / 'train.yaml'} ({len(build().splitlines())} lines) and {DATA / 'ds_zero3.json'}")


if __name__ == "__main__":
    main()
