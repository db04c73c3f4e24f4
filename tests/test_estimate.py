"""The memory model pinned on hand-checked cases, the estimate's contract, and the fix planner."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from trainlint import engine
from trainlint.memory.estimate import estimate_plan
from trainlint.fixes.apply import compute_fixes
from trainlint.catalog.gpus import find_gpu
from trainlint.memory.model import Run, estimate_run, model_states, optimizer_spec
from trainlint.catalog.models import find_model
from trainlint.plan import AMP_BF16, FP32, MASTER_BF16, PURE_BF16, Origin, Peft, Setting, TrainingPlan
from trainlint.context.settings import Overrides, Settings

GIB = 2**30
LLAMA2_7B = find_model("meta-llama/Llama-2-7b-hf")
P7 = LLAMA2_7B.total_params  # 6,738,415,616


def run(**kw) -> Run:
    base = dict(arch=LLAMA2_7B, micro_batch=1, seq_len=512, precision=AMP_BF16,
                optimizer=optimizer_spec("adamw_torch_fused"))
    base.update(kw)
    return Run(**base)


def test_mixed_precision_adamw_is_16_bytes_per_parameter():
    st = model_states(run())
    assert st.weights == 4 * P7 and st.grads == 4 * P7 and st.optimizer == 8 * P7
    assert st.weights + st.grads + st.optimizer == 16 * P7


def test_pure_bf16_adamw_is_8_bytes_per_parameter():
    st = model_states(run(precision=PURE_BF16))
    assert st.weights + st.grads + st.optimizer == 8 * P7


def test_foreach_adamw_adds_a_state_sized_temporary():
    fused = estimate_run(run(precision=FP32))
    foreach = estimate_run(run(precision=FP32, optimizer=optimizer_spec("adamw_torch")))
    assert foreach.peak_phase == "optimizer step"
    assert foreach.peak_allocated - fused.peak_allocated == pytest.approx(4 * P7, rel=1e-6)


def test_zero_grad_to_zeros_keeps_the_gradients_through_forward():
    """torch < 2.0: zero_grad(set_to_none=False) by default (pytorch#92731 made it True in 2.0), so the zeroed
    gradients of the last step exist in the next forward and backward, as with gradient accumulation; the step's
    peak is unchanged (the gradients are there either way), and optimizer_in_bwd frees each in its own step."""
    freed = estimate_run(run(precision=FP32, seq_len=4096, micro_batch=2))
    kept = estimate_run(run(precision=FP32, seq_len=4096, micro_batch=2, grads_kept=True))
    assert freed.peak_phase != "optimizer step"
    grads = model_states(run(precision=FP32)).grads
    assert kept.phases["forward"] - freed.phases["forward"] == pytest.approx(grads, abs=1024)
    assert kept.phases["optimizer step"] == freed.phases["optimizer step"]
    gradient_terms = [t for t in kept.terms if t.key == "gradients"]
    assert gradient_terms[0].bytes == grads and "zeroed, not freed" in gradient_terms[0].assumption
    in_bwd = dict(precision=FP32, seq_len=4096, micro_batch=2, optimizer_in_bwd=True)
    assert estimate_run(run(**in_bwd, grads_kept=True)).phases == estimate_run(run(**in_bwd)).phases


def test_head_and_kept_gradients_flags_reach_the_plan():
    """`trainlint estimate --head seq_cls --keep-zeroed-grads`: the flags set plan.head and plan.grads_kept."""
    from trainlint.estimating import what_if_values

    assert what_if_values(head="seq_cls", keep_zeroed_grads=True) == {"head": "seq_cls", "grads_kept": True}
    assert what_if_values() == {}


def test_deepspeed_zero2_matches_deepspeeds_own_estimator():
    # DeepSpeed: gpu = 2P + 18P/N ("2 fp16 params; 18 = 2 fp16 grads + 4 fp32 grads + 4 fp32 params + 8 Adam").
    st = model_states(run(precision=MASTER_BF16, zero_stage=2, world=8, deepspeed=True, reduce_bucket=1))
    assert st.weights + st.grads + st.master + st.optimizer == pytest.approx(2 * P7 + 18 * P7 / 8)


def test_zero3_shards_everything_and_offload_moves_state_to_host():
    st = model_states(run(precision=MASTER_BF16, zero_stage=3, world=8, deepspeed=True))
    assert st.weights + st.grads + st.master + st.optimizer == pytest.approx(20 * P7 / 8)
    off = model_states(run(precision=MASTER_BF16, zero_stage=3, world=8, deepspeed=True,
                           offload_optimizer="cpu", offload_params="cpu"))
    assert off.weights == 0 and off.optimizer == 0 and off.master == 0
    assert off.host > 0


def test_seven_billion_state_does_not_fit_one_80gb_card():
    gpu = find_gpu("A100-80GB")
    est = estimate_run(run())
    assert est.peak_allocated > gpu.memory_bytes
    assert 16 * P7 > gpu.memory_bytes  # 107.8 GB of model states


def test_lora_trains_only_adapters_and_qlora_stores_half_a_byte():
    peft = Peft("lora", 8, ["q_proj", "v_proj"], None)
    st = model_states(run(precision=PURE_BF16, peft=peft))
    assert st.trainable == 4_194_304  # what PEFT prints for Llama-2-7B, r=8, q_proj+v_proj
    assert st.grads == 4 * 4_194_304
    q = model_states(run(precision=PURE_BF16, peft=Peft("lora", 8, ["q_proj", "v_proj"], 4)))
    linear = LLAMA2_7B.linear_params(None)
    expected_base = linear * (0.5 + 1 / 64 + 4 / (64 * 256)) + (P7 - linear) * 2
    assert q.weights == pytest.approx(expected_base + 4 * 4_194_304)


def test_checkpointing_cuts_activations_and_eager_attention_grows_them():
    long = run(seq_len=4096, micro_batch=2, precision=PURE_BF16)
    plain = estimate_run(long)
    ckpt = estimate_run(long._replace(grad_ckpt="full"))
    eager = estimate_run(long._replace(attn="eager"))
    assert ckpt.peak_allocated < plain.peak_allocated < eager.peak_allocated


def test_llama3_logits_dominate_and_fused_loss_removes_them():
    arch = find_model("meta-llama/Llama-3.2-1B")
    base = Run(arch=arch, micro_batch=1, seq_len=8192, precision=PURE_BF16, optimizer=optimizer_spec("adamw_torch_fused"),
               grad_ckpt="full")
    plain, fused = estimate_run(base), estimate_run(base._replace(fused_loss=True))
    logits = next(t.bytes for t in plain.terms if t.key == "logits")
    assert logits == pytest.approx(12 * 8192 * arch.vocab_size)  # fp32 log-softmax, its grad, the logits grad
    assert fused.peak_allocated < plain.peak_allocated - 5 * GIB


def test_dpo_concatenated_forward_is_one_forward_of_twice_the_rows():
    """TRL DPOTrainer._compute_loss runs chosen + rejected as one [2b, s] forward through the fused LM head: the
    activations of 2b rows, with the head's logits tile and fp32 weight gradient once, not twice those of b rows
    (benchmarks/accuracy: the traced smollm2-135m DPO case, +5.8% when both were doubled)."""
    arch = find_model("HuggingFaceTB/SmolLM2-135M")
    base = dict(arch=arch, seq_len=1024, precision=PURE_BF16, optimizer=optimizer_spec("adamw_torch_fused"),
                loss_kernel="trl")
    dpo = estimate_run(Run(micro_batch=4, task="dpo", **base))
    sft = estimate_run(Run(micro_batch=8, task="sft", **base))
    by_key = lambda est: {t.key: t.bytes for t in est.terms}  # noqa: E731
    assert by_key(dpo)["activations"] == by_key(sft)["activations"]
    assert by_key(dpo)["logits"] == by_key(sft)["logits"]
    # the fused head's tile and fp32 + bf16 head-weight gradient are not doubled
    half = estimate_run(Run(micro_batch=4, task="sft", **base))
    assert by_key(dpo)["logits"] < 2 * by_key(half)["logits"] - arch.vocab_size * arch.hidden_size * 6
    # a frozen bf16 reference model beside the policy
    assert by_key(dpo)["weights"] == pytest.approx(2 * by_key(sft)["weights"])


def test_amp_dpo_reference_forward_keeps_its_autocast_weight_copies():
    """Under AMP the fp32 reference model's parameters still require grad, so autocast caches their 16-bit casts
    during its no-grad forward until autocast exits (autocast_mode.cpp cached_cast): the forward's end holds both
    models' copies. Not with PEFT (the adapter-disabled policy is the reference) or precomputed reference log-probs."""
    arch = find_model("HuggingFaceTB/SmolLM2-135M")
    base = dict(arch=arch, micro_batch=4, seq_len=1024, precision=AMP_BF16, optimizer=optimizer_spec("adamw_torch_fused"),
                loss_kernel="trl", task="dpo")
    est = estimate_run(Run(**base))
    copies = {t.label: t.bytes for t in est.terms if t.key == "buffers"}
    assert est.peak_phase == "forward"
    assert copies["reference model's autocast weight copies"] == copies["autocast weight copies"] > 0
    for other in ({"ref_logps_precomputed": True}, {"peft": Peft("lora", 16, "all-linear", None)}):
        terms = estimate_run(Run(**{**base, **other})).terms
        assert not any(t.label == "reference model's autocast weight copies" for t in terms), other
    assert estimate_run(Run(**{**base, "precision": PURE_BF16})).phases["forward"] < est.phases["forward"]


# ---- the estimate through the engine ---------------------------------------------------------

CONFIG = """# trainlint: gpu=A100-80GB num-gpus=1
model_name_or_path: meta-llama/Llama-3.2-1B
output_dir: out
per_device_train_batch_size: 16
gradient_accumulation_steps: 1
model_max_length: 4096
bf16: true
gradient_checkpointing: false
optim: adamw_torch_fused
"""


def lint(tmp_path, text=CONFIG, name="train.yaml", select=()):
    path = tmp_path / name
    path.write_text(text)
    return path, engine.check_path(path, Settings(use_project_config=False, selection=engine.selection_from(select, ())))


def test_out_of_memory_finding_with_fixes_that_fit(tmp_path):
    path, result = lint(tmp_path)
    (oom,) = [d for d in result.diagnostics if d.code == "TL100"]
    assert oom.span.start.line == 3  # per_device_train_batch_size: activations dominate
    assert "A100-80GB" in oom.message and "GiB" in oom.message
    assert oom.fixes, "the planner offers fixes"
    assert all(f.safe for f in oom.fixes[:2])
    # 16 x 4096 tokens: the fp32 loss over 128k vocabulary alone is ~94 GiB, so checkpointing cannot
    # help; the micro-batch must shrink (accumulation grows to keep the effective batch).
    assert "micro-batch 16 -> 2 with accumulation 1 -> 8" in oom.fixes[0].title
    assert "gradient checkpointing" not in oom.fixes[0].title


def test_planner_titles_match_re_estimating_the_fixed_file(tmp_path):
    path, result = lint(tmp_path)
    (oom,) = [d for d in result.diagnostics if d.code == "TL100"]
    for fix in oom.fixes:
        from trainlint.fixes.edits import apply_edits

        fixed_text, skipped = apply_edits(path.read_text(), list(fix.edits))
        assert not skipped
        after = engine.check_text(fixed_text, str(path), Settings(use_project_config=False))
        claimed = float(re.search(r"-> ([0-9.]+) GiB", fix.title).group(1))
        assert after.estimate.total / GIB == pytest.approx(claimed, abs=0.051), fix.title
        assert after.estimate.fits
        assert not [d for d in after.diagnostics if d.code in ("TL100", "TL101")]


def test_fix_applies_the_cheapest_safe_change(tmp_path):
    path, _ = lint(tmp_path)
    settings = Settings(use_project_config=False)
    outcome = compute_fixes([str(path)], lambda p: engine.check_path(p, settings), unsafe=False)
    fixed = outcome.fixed[str(path)]
    assert "per_device_train_batch_size: 2\n" in fixed and "gradient_accumulation_steps: 8\n" in fixed
    assert engine.check_text(fixed, str(path), settings).estimate.fits


def test_checkpointing_is_offered_when_it_is_what_fits(tmp_path):
    text = CONFIG.replace("per_device_train_batch_size: 16", "per_device_train_batch_size: 1").replace(
        "model_max_length: 4096", "model_max_length: 16384")
    _, result = lint(tmp_path, text)
    (near,) = [d for d in result.diagnostics if d.code in ("TL100", "TL101")]  # right at the card's size
    assert near.fixes[0].safe
    assert "enable gradient checkpointing" in near.fixes[0].title and "+33% compute" in near.fixes[0].title
    assert [f.safe for f in near.fixes[1:]] == [False] * (len(near.fixes) - 1)


def test_no_verdict_without_gpu_count_for_sharded_runs(tmp_path):
    (tmp_path / "ds.json").write_text('{"zero_optimization": {"stage": 3}, "bf16": {"enabled": "auto"}}')
    text = CONFIG.replace("# trainlint: gpu=A100-80GB num-gpus=1\n", "# trainlint: gpu=A100-80GB\n") + "deepspeed: ds.json\n"
    _, result = lint(tmp_path, text, select=("TL1",))  # TL102 is off by default
    (no_verdict,) = [d for d in result.diagnostics if d.code == "TL102"]
    assert "TL100" not in {d.code for d in result.diagnostics}
    assert no_verdict.message.endswith("but no fit verdict: the GPU count of this sharded run is not known")
    assert "--num-gpus" in no_verdict.detail


def test_nothing_fits_says_what_would(tmp_path):
    text = CONFIG.replace("meta-llama/Llama-3.2-1B", "meta-llama/Llama-3.1-405B").replace(
        "per_device_train_batch_size: 16", "per_device_train_batch_size: 1")
    _, result = lint(tmp_path, text)
    (oom,) = [d for d in result.diagnostics if d.code == "TL100"]
    assert not oom.fixes
    assert oom.message.startswith("needs ") and oom.message.endswith(" per GPU on 1 x A100-80GB (79.2 GiB): out of memory")
    assert "QLoRA" in oom.detail and "1024 x A100-80GB" in oom.detail


def test_json_estimate_contract(tmp_path):
    path, _ = lint(tmp_path)
    proc = subprocess.run([sys.executable, "-m", "trainlint", "check", "--isolated", "--output-format", "json", str(path)],
                          capture_output=True, text=True, timeout=120)
    est = json.loads(proc.stdout)["files"][0]["estimate"]
    assert est["target"] == {"gpu": "A100-80GB", "memory_bytes": find_gpu("A100-80GB").memory_bytes, "count": 1}
    per_gpu = est["per_gpu_bytes"]
    assert set(per_gpu) == {"weights", "gradients", "optimizer_states", "activations", "other", "peak_allocated",
                            "peak_reserved", "total"}
    assert per_gpu["peak_allocated"] <= per_gpu["peak_reserved"] < per_gpu["total"]
    assert est["fits"] is False and est["assumptions"]


def test_estimate_command_from_flags():
    proc = subprocess.run([sys.executable, "-m", "trainlint", "estimate", "--model", "meta-llama/Llama-3.1-8B",
                           "--gpu", "H100-80GB", "--num-gpus", "8", "--zero", "3", "--precision", "bf16-master",
                           "--micro-batch", "2", "--seq-len", "4096", "--grad-ckpt", "full"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "GPU capacity" in proc.stdout and "fits" in proc.stdout and "assumptions:" in proc.stdout


def test_estimate_what_if_overrides_a_file(tmp_path):
    path, _ = lint(tmp_path)
    proc = subprocess.run([sys.executable, "-m", "trainlint", "estimate", "--isolated", str(path), "--micro-batch", "1",
                           "--output-format", "json"], capture_output=True, text=True, timeout=120)
    data = json.loads(proc.stdout)
    assert proc.returncode == 0 and data["fits"] is True


def test_estimate_plan_names_defaults_as_assumptions():
    plan = TrainingPlan(flavor="flags", path="x").with_(model=Setting("meta-llama/Llama-3.2-1B", Origin("cli")))
    est = estimate_plan(plan, find_model("meta-llama/Llama-3.2-1B"), find_gpu("H100"))
    assert any("sequence length not set" in a for a in est.assumptions)
    assert any("world size" in a for a in est.assumptions)


def test_unknown_model_gets_a_reason(tmp_path):
    _, result = lint(tmp_path, CONFIG.replace("meta-llama/Llama-3.2-1B", "acme/secret-model-9b"), select=("TL102",))
    (info,) = [d for d in result.diagnostics if d.code == "TL102"]
    assert "acme/secret-model-9b" in info.message and info.span.start.line == 1


def test_full_offload_config_gets_the_host_ram_finding():
    """stanford_alpaca's ZeRO-3 full-offload config (DeepSpeed#3448: host RAM ran out fine-tuning
    LLaMA-33B): the host RAM finding, with a figure once the model is named."""

    from shared_corpus import corpus_path

    path = corpus_path("issues", "tatsu-lab__stanford_alpaca__configs__default_offload_opt_param.json")
    plain = engine.check_path(path, Settings(use_project_config=False))
    (info,) = [d for d in plain.diagnostics if d.code == "TL103"]
    assert "18 bytes per parameter" in info.message
    named = engine.check_path(path, Settings(use_project_config=False, cli=Overrides(
        {"model": "meta-llama/Llama-2-70b-hf", "num_gpus": 8, "seq_len": 2048}, Origin("cli"))))
    (info,) = [d for d in named.diagnostics if d.code == "TL103"]
    host = int(re.search(r"about (\d+) GiB of pinned host RAM", info.message).group(1))
    assert 900 < host < 2500  # ~18 B/param x 69B x 1.5 over the node's 8 GPUs


def test_gradient_accumulation_keeps_gradients_through_later_micro_batches():
    one = estimate_run(run(seq_len=2048, micro_batch=4))
    many = estimate_run(run(seq_len=2048, micro_batch=4, grad_accum=8))
    grads = model_states(run()).grads
    assert one.phases["backward"] + grads == many.phases["backward"]
    assert one.phases["optimizer step"] == many.phases["optimizer step"]


def test_estimate_total_is_the_breakdowns_total_and_host_bytes():
    # The fix planner compares estimate_total with the card; it must be what the finding's breakdown says.
    from trainlint.memory.estimate import estimate_total

    arch = find_model("meta-llama/Llama-3.1-8B")
    base = TrainingPlan("huggingface", "", model=Setting("meta-llama/Llama-3.1-8B"), seq_len=Setting(4096),
                        micro_batch=Setting(4), num_gpus=Setting(8), precision=Setting(MASTER_BF16))
    variants = [{}, {"zero_stage": 3}, {"zero_stage": 2, "offload_optimizer": "cpu"}, {"num_gpus": 1},
                {"grad_ckpt": "full", "attn_impl": "eager"}, {"optimizer": "paged_adamw_8bit"},
                {"peft": Peft("lora", 16, "all-linear", 4)}, {"task": "dpo", "micro_batch": 1}]
    for changes in variants:
        plan = base.with_(**{k: Setting(v) for k, v in changes.items()})
        breakdown = estimate_plan(plan, arch, find_gpu("A100-80GB"))
        assert estimate_total(plan, arch) == (breakdown.total, breakdown.host_bytes), changes


def test_plan_with_is_a_checked_replace():
    plan = TrainingPlan("huggingface", "a.yaml", micro_batch=Setting(8), notes=("n",))
    changed = plan.with_(micro_batch=Setting(2), zero_stage=Setting(3, Origin("cli")))
    assert changed == plan._replace(micro_batch=Setting(2), zero_stage=Setting(3, Origin("cli")))
    assert type(changed) is TrainingPlan and changed.micro_batch.value == 2 and changed.notes == ("n",)
    assert plan.micro_batch.value == 8 and plan.zero_stage.value == 0  # the original is untouched
    with pytest.raises(TypeError):
        plan.with_(no_such_field=Setting(1))
    with pytest.raises(AttributeError):
        changed.micro_batch = Setting(1)  # still frozen


def test_build_run_makes_the_runs_init():
    # build_run's Run (its 35 fields set at once by the stand-in __init__ of trainlint._dataclass): the same run as
    # Run(**fields) makes, its fields in the same order.
    from trainlint.memory.estimate import build_run

    arch = find_model("meta-llama/Llama-3.1-8B")
    base = TrainingPlan("huggingface", "", model=Setting("meta-llama/Llama-3.1-8B"), seq_len=Setting(4096),
                        micro_batch=Setting(4), num_gpus=Setting(8), precision=Setting(MASTER_BF16))
    for changes in ({}, {"zero_stage": 3, "offload_optimizer": "cpu"}, {"peft": Peft("lora", 16, "all-linear", 4)},
                    {"attn_impl": "eager", "grad_ckpt": "full", "optimizer": "galore_adamw"}):
        made = build_run(base.with_(**{k: Setting(v) for k, v in changes.items()}), arch, [])
        fields = made._asdict()
        assert list(fields) == list(Run._fields)
        assert made == Run(**fields) and Run(**fields)._asdict() == fields and hash(made) == hash(Run(**fields))
    with pytest.raises(TypeError):
        Run(arch=arch, micro_batch=1, seq_len=8, precision=FP32)


def test_each_optimizer_name_is_its_entrys_spec():
    # optimizer_spec makes an entry's spec on first use (_optimizer, by position): every name and alias gets the one
    # spec of its own entry, as the table made them.
    from trainlint.catalog.files import read_data
    from trainlint.memory.model import OptimizerSpec

    for entry in json.loads(read_data("optimizers.json"))["optimizers"]:
        expected = OptimizerSpec(entry["name"], entry["label"], entry.get("state_factor", 0.0),
                                 entry.get("state_bytes"), entry.get("step_temp_factor", 0.0),
                                 entry.get("paged", False), entry.get("factored", False), entry.get("paged_from", 0))
        specs = [optimizer_spec(name) for name in (entry["name"], *entry.get("aliases", ()))]
        assert all(spec == expected and spec is specs[0] for spec in specs), entry["name"]
        assert optimizer_spec(" " + entry["name"].upper().replace("_", "-") + " ") is specs[0]
        assert optimizer_spec("torch.optim." + entry["name"]) is specs[0]
    assert optimizer_spec("no_such_optimizer") is None and optimizer_spec("a.b.no_such") is None


def test_trainer_versions_are_read_per_text():
    # _version_tuple keeps what it read (every re-estimate reads the same version): each text its own.
    from trainlint.memory.estimate import _version_tuple

    assert [_version_tuple(v) for v in ("1.16.0", "0.9.6", "1.16.0", "0.22", None, "", "dev")] == \
        [(1, 16, 0), (0, 9, 6), (1, 16, 0), (0, 22), None, None, None]


def test_parts_memo_keys_name_every_run_field_the_parts_read():
    # PartsMemo keys model_states and activations on STATES_READ / ACTIVATIONS_READ: a field either reads (in it or
    # in any function of memory/model.py it calls, through Run's properties) that is missing would make the memo
    # hand one run's result to another that differs there.
    import ast
    import inspect

    from trainlint.memory import model

    tree = ast.parse(inspect.getsource(model))
    functions = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    (run_class,) = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Run"]
    properties = {n.name: {a.attr for a in ast.walk(n) if isinstance(a, ast.Attribute)
                           and isinstance(a.value, ast.Name) and a.value.id == "self"}
                  for n in run_class.body if isinstance(n, ast.FunctionDef)}

    def reads(name: str, seen: set) -> set:
        if name in seen:
            return set()
        seen.add(name)
        fn = functions[name]
        runs = {a.arg for a in fn.args.args
                if a.arg == "run" or (a.annotation is not None and "Run" in ast.unparse(a.annotation))}
        found: set = set()
        for node in ast.walk(fn):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in runs:
                found |= properties.get(node.attr, {node.attr})  # a property: the fields it reads
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                assert not (node.func.id == "getattr" and isinstance(node.args[0], ast.Name)
                            and node.args[0].id in runs), name
                if node.func.id in functions:
                    found |= reads(node.func.id, seen)
        return found

    fields = set(Run._fields)
    assert set(model.STATES_READ) <= fields and set(model.ACTIVATIONS_READ) <= fields
    assert reads("model_states", set()) - fields == set() == reads("activations", set()) - fields
    assert reads("model_states", set()) <= set(model.STATES_READ)
    assert reads("activations", set()) <= set(model.ACTIVATIONS_READ)


def test_parts_memo_gives_each_run_its_own_states_and_activations():
    # One memo across runs that differ in one field each: every result is what the run computes alone (and the
    # planner's peak_of is the estimate's peak, host and paged bytes).
    from trainlint.memory.model import PartsMemo, activations, peak_of

    mixtral = find_model("mistralai/Mixtral-8x7B-v0.1")
    variants = [{}, {"micro_batch": 4}, {"seq_len": 4096}, {"attn": "eager"}, {"grad_ckpt": "full"},
                {"zero_stage": 3, "world": 8, "deepspeed": True, "precision": MASTER_BF16}, {"zero_stage": 2, "world": 8},
                {"precision": PURE_BF16}, {"peft": Peft("lora", 16, "all-linear")}, {"peft": Peft("lora", 16, None, 4)},
                {"activation_offload": True, "grad_ckpt": "full"}, {"fused_loss": True}, {"loss_kernel": "cce"},
                {"head": "seq_cls"}, {"tp": 2, "world": 2}, {"pp": 2, "world": 2}, {"cp": 2, "world": 2},
                {"offload_optimizer": "cpu", "zero_stage": 2, "world": 8, "deepspeed": True}, {"arch": mixtral},
                {"optimizer": optimizer_spec("adamw_8bit")}, {"optimizer": optimizer_spec("paged_adamw_8bit")},
                {"optimizer_in_bwd": True}, {"grad_accum": 4},
                {"world": 8}, {"fsdp": "full_shard", "world": 8}, {"task": "dpo"}]
    memo = PartsMemo()
    for changes in variants * 2:
        r = run(**changes)
        assert memo.states(r) == model_states(r), changes
        assert memo.activations(r) == activations(r), changes
        assert estimate_run(r, memo) == estimate_run(r), changes
        full = estimate_run(r)
        assert peak_of(r, memo) == peak_of(r) == (full.peak_allocated, full.host_bytes, full.paged_bytes), changes


def test_kept_totals_are_each_runs_own():
    # TotalsCache keys a run on every field's type and value: runs that differ anywhere (8 and 8.0 included) get
    # their own totals, an unhashable one is estimated every time, and a hit is what estimating gives.
    from dataclasses import replace

    from trainlint.memory.estimate import TotalsCache, _run_total

    mixtral = find_model("mistralai/Mixtral-8x7B-v0.1")
    variants = [{}, {"micro_batch": 4}, {"micro_batch": 4.0}, {"seq_len": 4096}, {"attn": "eager"},
                {"grad_ckpt": "full"}, {"zero_stage": 3, "world": 8, "deepspeed": True, "precision": MASTER_BF16},
                {"precision": PURE_BF16}, {"peft": Peft("lora", 16, "all-linear")}, {"peft": Peft("lora", 16, None, 4)},
                {"peft": Peft("lora", 16, ["q_proj", "v_proj"])}, {"offload_optimizer": "cpu", "zero_stage": 2,
                                                                   "world": 8, "deepspeed": True},
                {"arch": mixtral}, {"arch": replace(LLAMA2_7B)}, {"optimizer": optimizer_spec("adamw_8bit")},
                {"grad_accum": 4}, {"task": "dpo"}, {"head": "seq_cls"}, {"fused_loss": True}, {"tp": 2, "world": 2}]
    kept = TotalsCache()
    for changes in variants * 2:
        r = run(**changes)
        assert kept.total(r) == _run_total(r, None), changes
    assert len(kept._totals) == len(variants) - 1  # each hashable variant once, the list of targets never


def test_totals_are_kept_from_a_processs_second_plan_on(tmp_path):
    # The first plan of a process makes no keys (nothing to reuse); later ones look their candidates up.
    import textwrap

    config = tmp_path / "train.yaml"
    config.write_text("model_name_or_path: meta-llama/Llama-3.1-8B\nper_device_train_batch_size: 16\n"
                      "max_length: 4096\nbf16: true\n")
    code = textwrap.dedent(f"""
        from trainlint import engine
        from trainlint.context.settings import Overrides, Settings
        from trainlint.fixes import planner
        from trainlint.plan import Origin
        chosen = Settings(cli=Overrides({{"gpu": "A100-80GB"}}, Origin("cli")), use_project_config=False)
        first = engine.check_path({str(config)!r}, chosen)
        assert planner._plans == 1 and planner._kept is None
        second = engine.check_path({str(config)!r}, chosen)
        assert planner._plans == 2 and len(planner._kept._totals) > 0
        assert [(d.code, d.message, d.fixes) for d in first.diagnostics] == \\
            [(d.code, d.message, d.fixes) for d in second.diagnostics]
    """)
    subprocess.run([sys.executable, "-c", code], check=True, cwd=tmp_path)


@pytest.mark.parametrize("torch_version, kept", [("1.13.1", True), ("2.1.0", False)])
def test_hf_trainer_on_torch_before_2_keeps_zeroed_gradients(tmp_path, torch_version, kept):
    """A known torch < 2.0 (here a `# trainlint:` directive) under the HF Trainer, whose model.zero_grad() takes torch's
    default: set_to_none=False before 2.0 (data "torch" zero_grad), so the plan keeps the zeroed gradients."""
    from trainlint import estimating
    from trainlint.context.settings import Overrides

    config = tmp_path / "train.yaml"
    config.write_text(f"# trainlint: torch={torch_version}\nmodel_name_or_path: bert-large-uncased\n"
                      "per_device_train_batch_size: 4\noptim: adamw_torch_fused\n")
    plan, _doc, _linked = estimating.file_plan(str(config), Overrides({}, Origin("cli")), use_project_config=False)
    assert plan.grads_kept.value is kept
    if kept:
        assert plan.grads_kept.origin.kind == "inferred" and "set_to_none=False" in plan.grads_kept.origin.note
