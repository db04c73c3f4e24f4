"""bitsandbytes' paged optimizer state lives in CUDA unified memory, which the driver pages out to host RAM "when GPU
memory is exhausted" (bitsandbytes' optimizer docs): a run over the card only by that state slows down but does not
stop, so it is TL101 (how much is paged out), never TL100; a run over the card without it still is TL100."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

# axolotl, Llama-3-8B full fine-tune in bf16 (resolve_dtype) with paged 8-bit AdamW: ~15 GiB of paged state
RECIPE = """base_model: meta-llama/Meta-Llama-3-8B
datasets:
  - path: tatsu-lab/alpaca
    type: alpaca
sequence_len: {seq}
sample_packing: true
micro_batch_size: 1
gradient_accumulation_steps: 8
num_epochs: 1
optimizer: {optimizer}
learning_rate: 2e-5
bf16: auto
gradient_checkpointing: true
flash_attention: true
output_dir: ./out
"""


def check(tmp_path, seq: int, optimizer: str = "paged_adamw_8bit") -> tuple[dict, list[dict]]:
    path = tmp_path / "sft.yaml"
    path.write_text(RECIPE.format(seq=seq, optimizer=optimizer))
    proc = subprocess.run([sys.executable, "-m", "trainlint", "check", "--isolated", "--gpu", "A100-80GB",
                           "--output-format", "json", str(path)], capture_output=True, text=True, timeout=120)
    assert proc.returncode in (0, 1), proc.stderr
    result = json.loads(proc.stdout)["files"][0]
    return result["estimate"], result["diagnostics"]


def paged_gib(estimate: dict) -> float:
    return sum(c["bytes"] for c in estimate["components"] if c["label"] == "paged optimizer state") / 2**30


def test_over_the_card_only_by_the_paged_state_is_a_warning_that_says_how_much_is_paged_out(tmp_path):
    estimate, found = check(tmp_path, 20480)
    capacity = estimate["target"]["memory_bytes"]
    total = estimate["per_gpu_bytes"]["total"]
    paged = paged_gib(estimate) * 2**30
    assert total - paged <= capacity < total  # the case: over the card with the paged state, within it without
    codes = [(d["code"], d["severity"]) for d in found]
    assert ("TL101", "warning") in codes and not any(code == "TL100" for code, _ in codes), found
    message = next(d["message"] for d in found if d["code"] == "TL101")
    assert f"paging ~{(total - capacity) / 2**30:.1f} GiB of optimizer state to host RAM" in message


def test_over_the_card_even_without_the_paged_state_is_still_out_of_memory(tmp_path):
    estimate, found = check(tmp_path, 32768)
    assert estimate["per_gpu_bytes"]["total"] - paged_gib(estimate) * 2**30 > estimate["target"]["memory_bytes"]
    assert [d["severity"] for d in found if d["code"] == "TL100"] == ["error"], found


@pytest.mark.parametrize("optimizer", ["adamw_8bit", "adamw_torch"])
def test_state_that_is_not_paged_counts_in_full(tmp_path, optimizer):
    estimate, found = check(tmp_path, 20480, optimizer)
    assert paged_gib(estimate) == 0
    assert estimate["per_gpu_bytes"]["total"] > estimate["target"]["memory_bytes"]
    assert [d["severity"] for d in found if d["code"] == "TL100"] == ["error"], found
