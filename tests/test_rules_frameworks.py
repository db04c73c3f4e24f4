"""Behaviour of the HF / TRL / Lightning / Accelerate / Axolotl / torchtune / LitGPT rules that the
per-rule fixtures do not show: findings inside linked files, what depends on the target GPU, and
what is left to other rules."""

from __future__ import annotations

import json

from trainlint import engine
from trainlint.cli import _cli_overrides, build_parser
from trainlint.rules._frameworks import suggest, words
from trainlint.context.settings import Settings
from trainlint.document.reading import parse_document


def settings(*flags: str) -> Settings:
    args = build_parser().parse_args(["check", "x", *flags])
    return Settings(cli=_cli_overrides(args), use_project_config=False)


def codes(result) -> list[str]:
    return sorted(d.code for d in result.diagnostics)


def lint(tmp_path, name: str, text: str, *flags: str):
    path = tmp_path / name
    path.write_text(text)
    return engine.check_path(path, settings(*flags), display_path=str(path))


def test_sharding_on_one_gpu_points_into_the_linked_deepspeed_file(tmp_path):
    (tmp_path / "ds.json").write_text(json.dumps({"zero_optimization": {"stage": 3},
                                                  "train_micro_batch_size_per_gpu": "auto",
                                                  "gradient_accumulation_steps": "auto"}, indent=2))
    result = lint(tmp_path, "train.yaml", "output_dir: out\nper_device_train_batch_size: 1\ndeepspeed: ds.json\n",
                  "--num-gpus", "1")
    found = [d for d in result.diagnostics if d.code == "TL426"]
    assert len(found) == 1 and found[0].path.endswith("ds.json")
    assert "ZeRO stage 3" in found[0].message
    # With more GPUs, or without a known world size, nothing to say.
    assert "TL426" not in codes(lint(tmp_path, "train.yaml", "output_dir: out\ndeepspeed: ds.json\n", "--num-gpus", "8"))
    assert "TL426" not in codes(lint(tmp_path, "train.yaml", "output_dir: out\ndeepspeed: ds.json\n"))


def test_bf16_rules_need_a_known_gpu(tmp_path):
    text = "output_dir: out\nper_device_train_batch_size: 1\nbf16: true\ntf32: true\n"
    assert "TL311" not in codes(lint(tmp_path, "a.yaml", text))
    assert "TL311" not in codes(lint(tmp_path, "a.yaml", text, "--gpu", "A100-80GB"))
    # a bare capacity says nothing about bf16 support
    assert "TL311" not in codes(lint(tmp_path, "a.yaml", text, "--gpu", "32GB"))
    found = codes(lint(tmp_path, "a.yaml", text, "--gpu", "V100"))
    assert "TL311" in found and "TL315" in found


def test_litgpt_bf16_on_t4(tmp_path):
    text = "checkpoint_dir: checkpoints/my-org/my-model\nprecision: bf16-true\ndevices: 1\ntrain:\n  micro_batch_size: 1\n"
    assert "TL311" in codes(lint(tmp_path, "litgpt.yaml", text, "--gpu", "T4"))


def test_schema_rules_leave_yaml_traps_to_tl003_and_tl004(tmp_path):
    hf = lint(tmp_path, "hf.yaml", "output_dir: out\nper_device_train_batch_size: 1\nlearning_rate: 2e-5\nsave_strategy: no\n")
    assert "TL003" in codes(hf) and "TL004" in codes(hf)
    assert not {"TL520", "TL521"} & set(codes(hf))
    acc = lint(tmp_path, "acc.yaml", "compute_environment: LOCAL_MACHINE\ndistributed_type: MULTI_GPU\n"
                                     "downcast_bf16: no\nmixed_precision: no\nnum_processes: 2\n")
    assert "TL004" in codes(acc)
    assert not {"TL520", "TL521"} & set(codes(acc))


def test_llamafactory_and_open_instruct_keys_are_not_typos(tmp_path):
    lf = lint(tmp_path, "lf.yaml", "model_name_or_path: my-org/my-model\nstage: sft\nfinetuning_type: lora\n"
                                   "lora_rank: 8\ncutoff_len: 2048\noutput_dir: out\n")
    assert not {"TL523", "TL520", "TL521"} & set(codes(lf))
    oi = lint(tmp_path, "oi.yaml", "model_name_or_path: my-org/my-model\nwith_tracking: true\nmax_seq_length: 4096\n"
                                   "warmup_ratio: 0.03\nnum_train_epochs: 2\n")
    assert not {"TL523", "TL524"} & set(codes(oi))


def test_trl_only_removals_apply_to_trl_files_only(tmp_path):
    plain = lint(tmp_path, "plain.yaml", "output_dir: out\nper_device_train_batch_size: 1\ntorch_dtype: bfloat16\n")
    assert "TL524" not in codes(plain)  # run_clm's own ModelArguments field
    trl = lint(tmp_path, "trl.yaml", "output_dir: out\npacking: true\ntorch_dtype: bfloat16\nmax_seq_length: 512\n")
    assert [d.span.start.line for d in trl.diagnostics if d.code == "TL524"] == [2, 3]


def test_lightning_subcommand_and_hydra_layouts(tmp_path):
    fit = lint(tmp_path, "fit.yaml", "fit:\n  trainer:\n    gpus: 2\n    precision: 16\n  model:\n    class_path: m.M\n")
    assert {"TL620", "TL312"} <= set(codes(fit))
    hydra = lint(tmp_path, "hydra.yaml", "_target_: lightning.pytorch.Trainer\ngpus: 2\nstrategy: ddp_sharded\n")
    assert {"TL620", "TL621"} <= set(codes(hydra))


def test_helpers():
    assert suggest("lerning_rate", ["learning_rate", "seed"]) == "learning_rate"
    assert suggest("FULL_SHARDS", ["FULL_SHARD"]) == "FULL_SHARD"
    assert suggest("zzz", ["learning_rate"]) is None
    doc = parse_document("a: full_shard auto_wrap\nb: [offload, full_shard]\nc: true\n", "x.yaml")
    assert words(doc.find(("a",))) == ["full_shard", "auto_wrap"]
    assert words(doc.find(("b",))) == ["offload", "full_shard"]
    assert words(doc.find(("c",))) == ["full_shard"]


def _check_with_versions(module, text: str, versions: dict, flavor: str = "huggingface"):
    from trainlint.context.versions import FrameworkVersion, Versions
    from trainlint.document.reading import parse_document
    from trainlint.rules.base import LintContext

    items = {name: FrameworkVersion(name, version, "pin", "setup.py") for name, version in versions.items()}
    ctx = LintContext(document=parse_document(text, "x.yaml"), flavor=flavor, versions=Versions(items))
    return list(module.check(ctx))


def test_removed_arguments_follow_the_pinned_releases():
    from trainlint.diagnostics import Severity
    from trainlint.rules import tl524_hf_removed_argument as tl524

    recipe = ("model_name_or_path: Qwen/Qwen2.5-1.5B-Instruct\ntorch_dtype: bfloat16\ndataset_name: x\n"
              "warmup_ratio: 0.1\noverwrite_output_dir: true\noutput_dir: out\n")
    # open-r1's pins: every key is a field there
    assert _check_with_versions(tl524, recipe, {"trl": "0.18.0", "transformers": "4.52.3"}) == []
    # current releases: certain, so errors, and the renames are safe where the new name exists
    found = _check_with_versions(tl524, recipe, {"trl": "1.16.0", "transformers": "5.24.0"})
    assert [d.severity for d in found] == [Severity.ERROR] * 3 and not any(d.assumptions for d in found)
    assert any(f.safe for d in found if "torch_dtype" in d.message for f in d.fixes)
    # unknown releases: warnings that say what they assume, version-dependent renames unsafe
    unknown = _check_with_versions(tl524, recipe, {})
    assert all(d.severity is Severity.WARNING and d.assumptions for d in unknown)
    assert not any(f.safe for d in unknown if "torch_dtype" in d.message for f in d.fixes)
    # an old TRL with transformers 5.x: TrlParser drops warmup_ratio silently
    old_trl = _check_with_versions(tl524, "dataset_name: x\nwarmup_ratio: 0.1\n", {"trl": "0.18.0", "transformers": "5.15.0"})
    assert len(old_trl) == 1 and "TrlParser (TRL 0.13 - 0.18) drops it silently" in old_trl[0].message
    assert "without a word" in old_trl[0].detail
    # TRL 0.22 still has torch_dtype (removed in 0.27; dtype exists from 0.23)
    mid = _check_with_versions(tl524, "dataset_name: x\ntorch_dtype: bfloat16\n", {"trl": "0.22.0"})
    assert mid == []


def test_trlparser_unknown_keys_follow_the_trl_release():
    """TrlParser's handling of a config key no dataclass declares, per TRL release (schemas/dialects.json):
    0.12 raises "Some specified config arguments are not used by the TrlParser", 0.13 - 0.18 drop the key
    silently, 0.19+ raise "Unknown arguments from config file"."""
    from trainlint.diagnostics import Severity
    from trainlint.rules import tl523_hf_unknown_key as tl523
    from trainlint.rules import tl524_hf_removed_argument as tl524

    text = "dataset_name: x\nwarmup_ratio: 0.1\n"
    old = _check_with_versions(tl524, text, {"trl": "0.12.0", "transformers": "5.15.0"})
    assert len(old) == 1 and "not used by the TrlParser" in old[0].detail and old[0].severity is Severity.ERROR
    assert "TrlParser (TRL 0.12 and older) stops" in old[0].message
    silent = _check_with_versions(tl524, text, {"trl": "0.13.0", "transformers": "5.15.0"})
    assert len(silent) == 1 and "TRL 0.13 - 0.18" in silent[0].message and "without a word" in silent[0].detail
    assert silent[0].severity is Severity.ERROR  # the setting has no effect: still an error with the release known
    new = _check_with_versions(tl524, text, {"trl": "0.19.1", "transformers": "5.15.0"})
    assert len(new) == 1 and "Unknown arguments from config file" in new[0].detail
    assert "without a word" not in new[0].message + new[0].detail
    # removed in TRL 0.18, release unknown: the stop holds from 0.19 on, 0.18 drops it silently
    unknown = _check_with_versions(tl524, "dataset_name: x\nvllm_max_model_len: 10\n", {})
    assert len(unknown) == 1 and unknown[0].severity is Severity.WARNING and unknown[0].assumptions
    assert "(TRL >= 0.19) stops" in unknown[0].message and "TRL 0.13 - 0.18: dropped" in unknown[0].detail
    assert "0.12" not in unknown[0].message + unknown[0].detail  # the key still existed on 0.12
    # removed in 0.20: every release from the removal on stops, no caveat
    later = _check_with_versions(tl524, "dataset_name: x\nmax_seq_length: 5\n", {})
    assert "stops with \"Unknown arguments from config file\"; older" in later[0].detail
    typo = "dataset_name: x\nlerning_rate: 0.1\n"
    assert "not used by the TrlParser" in _check_with_versions(tl523, typo, {"trl": "0.12.0"})[0].detail
    assert "TRL 0.13 - 0.18" in _check_with_versions(tl523, typo, {"trl": "0.17.0"})[0].message


def test_h4_argument_parser_stops_the_hfargumentparser_way(tmp_path):
    """alignment-handbook's H4ArgumentParser (its older scripts: `parse_yaml_and_args(sys.argv[1], ...)`) reads the
    recipe with HfArgumentParser.parse_yaml_file (allow_extra_keys=False), not TrlParser: an unknown key stops it
    with "Some keys are not used by the HfArgumentParser" whatever the TRL release."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "setup.py").write_text('from setuptools import setup\nsetup(name="alignment-handbook", '
                                       'install_requires=["transformers==4.39.0", "trl==0.8.1"])\n')
    (tmp_path / "scripts").mkdir()
    (tmp_path / "scripts" / "run_sft.py").write_text(
        "from alignment import H4ArgumentParser, ModelArguments, DataArguments, SFTConfig\n"
        "parser = H4ArgumentParser((ModelArguments, DataArguments, SFTConfig))\n"
        "model_args, data_args, training_args = parser.parse_yaml_and_args(sys.argv[1], sys.argv[2:])\n")
    (tmp_path / "run.sh").write_text("accelerate launch scripts/run_sft.py recipes/config_full.yaml\n")
    (tmp_path / "recipes").mkdir()
    recipe = tmp_path / "recipes" / "config_full.yaml"
    recipe.write_text("model_name_or_path: m\nlearning_rate: 2.0e-05\nlerning_rate: 2.0e-05\noutput_dir: out\n")
    found = [d for d in engine.check_path(recipe, Settings(), display_path=str(recipe)).diagnostics
             if d.code == "TL523"]
    assert len(found) == 1 and "H4ArgumentParser stops" in found[0].message
    assert "Some keys are not used by the HfArgumentParser" in found[0].detail
    assert "TrlParser" not in found[0].message + found[0].detail


def test_trl_cli_hands_unknown_config_keys_to_accelerate_launch():
    """`trl <command> --config FILE` (TRL >= 0.18: trl/cli.py, trl/cli/commands/training.py) passes the config's
    leftovers to `accelerate launch`, whose parser stops on one that is no launch option; TRL 0.13 - 0.17 ran the
    script, whose TrlParser dropped it."""
    from trainlint.context.launch import Launch
    from trainlint.context.versions import FrameworkVersion, Versions
    from trainlint.document.reading import parse_document
    from trainlint.rules import tl523_hf_unknown_key as tl523
    from trainlint.rules import tl524_hf_removed_argument as tl524
    from trainlint.rules.base import LintContext

    def check(module, text, versions):
        items = {n: FrameworkVersion(n, v, "pin", "setup.py") for n, v in versions.items()}
        ctx = LintContext(document=parse_document(text, "x.yaml"), flavor="huggingface", versions=Versions(items),
                          launch=Launch(launcher="trl"))
        return list(module.check(ctx))

    typo = "dataset_name: x\nlerning_rate: 0.1\n"
    assert "`accelerate launch`" in check(tl523, typo, {"trl": "0.20.0"})[0].message
    assert "without a word" in check(tl523, typo, {"trl": "0.17.0"})[0].detail
    removed = check(tl524, "dataset_name: x\nmax_seq_length: 5\n", {})[0]
    assert "`accelerate launch` (run by `trl <command>`) stops" in removed.message
    assert "`trl <command>` hands the key to `accelerate launch`" in removed.detail  # 0.20 > 0.18: no release caveat
    # a key that is an `accelerate launch` option is taken by it: no stop claimed
    on_v5 = check(tl524, "dataset_name: x\nfsdp_min_num_params: 10\n", {"trl": "0.20.0", "transformers": "5.0.0"})
    assert on_v5 and "takes it as its own `--fsdp_min_num_params`" in on_v5[0].message
    assert "takes it as its own option" in on_v5[0].detail
    assert "stops" not in on_v5[0].message + on_v5[0].detail


AUDITED = ("TL003 TL004 TL220 TL223 TL224 TL310 TL311 TL312 TL313 TL315 TL316 TL420 TL421 TL422 TL423 TL424 TL425 "
           "TL426 TL427 TL428 TL429 TL520 TL521 TL522 TL523 TL524 TL525 TL526 TL527 TL528 TL529 TL530 TL531 TL620 "
           "TL621 TL622 TL623 TL624").split()


def test_framework_rules_name_their_evidence():
    from trainlint.context.versions import FRAMEWORKS, parse_specifier
    from trainlint.rules import REGISTRY
    from trainlint.rules._frameworks import OUTCOMES, Claim

    for code in AUDITED:
        module = REGISTRY[code]
        rule = module.RULE
        assert rule.framework in FRAMEWORKS and ": " in rule.evidence, code
        assert not rule.versions or parse_specifier(rule.versions) is not None, code
        assert "**Evidence**:" in module.__doc__ and rule.evidence in " ".join(module.__doc__.split()), code
        for claim in getattr(module, "CLAIMS", ()):
            assert isinstance(claim, Claim) and claim.outcome in OUTCOMES, code


def test_open_r1_recipes_are_fine_on_open_r1_pins():
    """open-r1 pins transformers==4.52.3 and trl==0.18.0 (setup.py): torch_dtype, max_prompt_length, warmup_ratio
    and overwrite_output_dir are fields there, so TL524 has nothing to say; on the current releases it does."""
    from pathlib import Path

    from trainlint.context.versions import FrameworkVersion, Versions
    from trainlint.document.reading import parse_document
    from trainlint.flavors import huggingface
    from trainlint.rules import tl524_hf_removed_argument as tl524
    from trainlint.rules.base import LintContext

    def findings(path: Path, pins: dict) -> list:
        doc = parse_document(path.read_text(), str(path))
        plan = huggingface.read(doc).plan
        versions = Versions({n: FrameworkVersion(n, v, "pin", "setup.py") for n, v in pins.items()})
        return list(tl524.check(LintContext(document=doc, flavor="huggingface", plan=plan, versions=versions)))

    recipes = sorted((Path(__file__).parent / "realworld" / "huggingface__open-r1" / "recipes").rglob("config_*.yaml"))
    assert recipes
    for path in recipes:
        assert findings(path, {"transformers": "4.52.3", "trl": "0.18.0"}) == [], path.name
    demo = next(p for p in recipes if p.parent.name == "grpo" and p.name == "config_demo.yaml")
    current = findings(demo, {"transformers": "5.24.0", "trl": "1.16.0"})
    assert {d.message.split("`")[1] for d in current} >= {"torch_dtype", "max_prompt_length", "warmup_ratio"}


def test_litgpt_batch_rounding_is_certain_only_with_devices_in_the_file(tmp_path):
    from trainlint.diagnostics import Severity

    base = "checkpoint_dir: checkpoints/my-org/my-model\ntrain:\n  global_batch_size: 64\n  micro_batch_size: 6\n"
    in_file = [d for d in lint(tmp_path, "a.yaml", base + "devices: 4\n").diagnostics if d.code == "TL223"]
    assert [d.severity for d in in_file] == [Severity.ERROR] and not in_file[0].assumptions
    flag = [d for d in lint(tmp_path, "b.yaml", base, "--num-gpus", "4").diagnostics if d.code == "TL223"]
    assert [d.severity for d in flag] == [Severity.WARNING] and "devices" in flag[0].assumptions[0]


def test_optim_values_older_transformers_accepted_follow_the_release_in_use(tmp_path):
    # OptimizerNames lost adamw_hf in transformers 4.50 and adamw_apex_fused in 5.8 (read from the wheels)
    text = "output_dir: out\noptim: adamw_hf\n"

    def tl521(result):
        return [(d.severity.value, d.message + " " + d.detail) for d in result.diagnostics if d.code == "TL521"]

    assert tl521(lint(tmp_path, "old.yaml", f"# trainlint: transformers=4.34.0\n{text}")) == []
    [(severity, message)] = tl521(lint(tmp_path, "new.yaml", f"# trainlint: transformers=4.50.0\n{text}"))
    assert severity == "error" and "removed in transformers 4.50" in message and "older releases" not in message
    [(severity, message)] = tl521(lint(tmp_path, "unknown.yaml", text))
    assert severity == "warning" and "older releases accept it" in message
    apex = "output_dir: out\noptim: adamw_apex_fused\n"
    assert tl521(lint(tmp_path, "apex.yaml", f"# trainlint: transformers=5.7.0\n{apex}")) == []
    assert [s for s, _ in tl521(lint(tmp_path, "apex2.yaml", f"# trainlint: transformers=5.8.0\n{apex}"))] == ["error"]


def test_trl_packing_strategy_ffd_follows_the_release_and_the_packing_switch(tmp_path):
    # SFTConfig's "ffd" (0.19.0 - 0.19.1) became "bfd" in 0.20.0; trl/data_utils.py pack_dataset raises
    # "Invalid packing strategy: ffd. Use 'bfd' or 'wrapped'." and runs only with packing: true
    text = "model_name_or_path: HuggingFaceTB/SmolLM3-3B\npacking: true\npacking_strategy: ffd\n"

    def tl521(result):
        return [(d.severity.value, d.message + " " + d.detail) for d in result.diagnostics if d.code == "TL521"]

    assert tl521(lint(tmp_path, "old.yaml", f"# trainlint: trl=0.19.1\n{text}")) == []
    [(severity, message)] = tl521(lint(tmp_path, "new.yaml", f"# trainlint: trl=0.20.0\n{text}"))
    assert severity == "error" and "removed in TRL 0.20" in message and "Invalid packing strategy: ffd" in message
    [(severity, message)] = tl521(lint(tmp_path, "unknown.yaml", text))
    assert severity == "warning" and "older releases accept it" in message
    unpacked = text.replace("packing: true\n", "")
    assert tl521(lint(tmp_path, "unpacked.yaml", f"# trainlint: trl=0.20.0\n{unpacked}")) == []
    # a value no release had stays an error whatever the release
    bogus = "output_dir: out\noptim: adamw_8bits\n"
    assert [s for s, _ in tl521(lint(tmp_path, "bogus.yaml", f"# trainlint: transformers=4.34.0\n{bogus}"))] == ["error"]


def test_tl007_names_where_a_framework_keeps_the_deepspeed_file(tmp_path):
    """axolotl's Docker images hold the repository at /workspace/axolotl; LLaMA-Factory's own examples/deepspeed/
    files resolve in a LLaMA-Factory checkout: the path is right there, so the message does not ask to fix it
    (modal-labs/llm-finetuning, OpenBMB/MiniCPM). Any other missing path keeps the plain message."""
    (tmp_path / ".git").mkdir()
    axolotl = lint(tmp_path, "axolotl.yml", "base_model: mistralai/Mistral-7B-v0.1\nsequence_len: 2048\n"
                   "micro_batch_size: 1\ngradient_accumulation_steps: 4\ndatasets:\n  - path: d.jsonl\n    type: alpaca\n"
                   "deepspeed: /workspace/axolotl/deepspeed_configs/zero2.json\n")
    [found] = [d for d in axolotl.diagnostics if d.code == "TL007"]
    assert "axolotl's Docker images" in found.detail and "Fix the path" not in found.detail
    assert found.message.endswith("is not in this repository: the memory estimate omits its ZeRO settings")
    lmf = lint(tmp_path, "sft.yaml", "model_name_or_path: Qwen/Qwen2.5-7B\nstage: sft\nfinetuning_type: lora\n"
               "template: qwen\ndeepspeed: examples/deepspeed/ds_z3_config.json\noutput_dir: out\n")
    [found] = [d for d in lmf.diagnostics if d.code == "TL007"]
    assert "LLaMA-Factory checkout" in found.detail and "Fix the path" not in found.detail
    other = lint(tmp_path, "other.yaml", "model_name_or_path: Qwen/Qwen2.5-7B\nstage: sft\nfinetuning_type: lora\n"
                 "template: qwen\ndeepspeed: examples/deepspeed/ds_z9_config.json\noutput_dir: out\n")
    [found] = [d for d in other.diagnostics if d.code == "TL007"]
    assert "Fix the path" in found.detail
    assert found.message == ("DeepSpeed config 'examples/deepspeed/ds_z9_config.json' not found: the launch fails unless "
                             "it is there at run time")
