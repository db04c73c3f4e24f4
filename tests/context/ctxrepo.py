"""Helpers for the context tests: throw-away repositories."""

from __future__ import annotations

from pathlib import Path


def make_repo(root: Path, files: dict[str, str]) -> Path:
    (root / ".git").mkdir(parents=True, exist_ok=True)
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


ZERO3 = """compute_environment: LOCAL_MACHINE
distributed_type: DEEPSPEED
deepspeed_config:
  offload_optimizer_device: none
  zero_stage: 3
mixed_precision: bf16
num_machines: 1
num_processes: 8
"""

SFT = """model_name_or_path: meta-llama/Llama-3.1-8B
bf16: true
per_device_train_batch_size: 4
gradient_accumulation_steps: 2
max_seq_length: 2048
output_dir: data/out
"""
