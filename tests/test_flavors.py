"""Flavor detection on the whole real-world corpus, and what each reader takes from a config."""

from __future__ import annotations

from pathlib import Path

import pytest

from trainlint import flavors
from trainlint.document.reading import parse_document, read_document
from trainlint.plan import AMP_BF16, FP32, MASTER_BF16, PURE_BF16

from shared_corpus import corpus_files, needs_corpus

FOLDER_FLAVOR = {"deepspeed": "deepspeed", "hf": "huggingface", "lightning": "lightning", "accelerate": "accelerate",
                 "axolotl": "axolotl", "torchtune": "torchtune", "other": "litgpt"}
# corpus/issues mixes formats (see its SOURCES.md): the two YAML files are Accelerate configs.
ISSUE_FLAVOR = {"deepspeedai__DeepSpeed__issues__4953__deepspeed_zero3.yaml": "accelerate",
                "hiyouga__LlamaFactory__issues__201__fsdp.yml": "accelerate"}


def expected_flavor(path: Path) -> str:
    if path.parent.name == "issues":
        return ISSUE_FLAVOR.get(path.name, "deepspeed")
    return FOLDER_FLAVOR[path.parent.name]


@needs_corpus
def test_corpus_is_there():
    assert len(corpus_files()) >= 70


@pytest.mark.parametrize("path", corpus_files(), ids=lambda p: f"{p.parent.name}/{p.name[:50]}")
def test_corpus_flavor(path):
    doc = read_document(path)
    assert doc.syntax_error is None
    flavor = flavors.detect(doc)
    assert flavor == expected_flavor(path)
    plan = flavors.READERS[flavor].read(doc).plan
    assert plan.micro_batch.value >= 1 and plan.num_gpus.value >= 1


def read(text: str, name: str = "cfg.yaml"):
    doc = parse_document(text, name)
    flavor = flavors.detect(doc)
    return flavor, flavors.READERS[flavor].read(doc)


def test_deepspeed_batch_fill_in_infers_world_size():
    flavor, result = read('{"train_batch_size": 64, "train_micro_batch_size_per_gpu": 4, '
                          '"gradient_accumulation_steps": 2, "bf16": {"enabled": true}, '
                          '"zero_optimization": {"stage": 3, "offload_optimizer": {"device": "cpu"}}}', "ds.json")
    plan = result.plan
    assert flavor == "deepspeed"
    assert (plan.micro_batch.value, plan.grad_accum.value, plan.num_gpus.value) == (4, 2, 8)
    assert plan.num_gpus.origin.kind == "inferred"
    assert plan.precision.value == MASTER_BF16 and plan.zero_stage.value == 3
    assert plan.offload_optimizer.value == "cpu" and plan.offload_params.value is None
    assert plan.zero_stage.origin.key_path == ("zero_optimization", "stage")


def test_deepspeed_without_precision_section_is_fp32_and_legacy_cpu_offload():
    _, result = read('{"train_micro_batch_size_per_gpu": 2, "zero_optimization": {"stage": 2, "cpu_offload": true}}',
                     "ds.json")
    assert result.plan.precision.value == FP32
    assert result.plan.offload_optimizer.value == "cpu"


def test_hf_reader_defaults_and_linked_deepspeed(tmp_path):
    (tmp_path / "ds.json").write_text('{"train_micro_batch_size_per_gpu": "auto", "bf16": {"enabled": "auto"}, '
                                      '"zero_optimization": {"stage": 3}}')
    cfg = tmp_path / "train.yaml"
    cfg.write_text("model_name_or_path: meta-llama/Llama-3.1-8B\noutput_dir: out\nbf16: true\n"
                   "gradient_accumulation_steps: 4\ndeepspeed: ds.json\n")
    doc = read_document(cfg)
    assert flavors.detect(doc) == "huggingface"
    result = flavors.READERS["huggingface"].read(doc)
    plan = result.plan
    assert plan.micro_batch.value == 8 and plan.micro_batch.is_default
    assert plan.grad_accum.value == 4 and plan.zero_stage.value == 3
    assert plan.zero_stage.origin.kind == "linked" and plan.zero_stage.origin.path == str(tmp_path / "ds.json")
    assert plan.precision.value == MASTER_BF16
    assert [d.path for d in result.linked] == [str(tmp_path / "ds.json")]


def test_hf_inline_deepspeed_mapping():
    _, result = read("output_dir: out\nlearning_rate: 1.0e-5\ndeepspeed:\n  zero_optimization:\n    stage: 2\n")
    assert result.plan.zero_stage.value == 2
    assert result.plan.zero_stage.origin.span.start.line == 4


def test_trl_defaults_and_peft():
    text = ("model_name_or_path: mistralai/Mistral-7B-v0.1\ntorch_dtype: bfloat16\nload_in_4bit: true\n"
            "use_peft: true\nlora_r: 16\nlora_target_modules: [q_proj, v_proj]\nmax_seq_length: 2048\n"
            "per_device_train_batch_size: 4\noutput_dir: out\n")
    flavor, result = read(text)
    plan = result.plan
    assert flavor == "huggingface"
    assert plan.seq_len.value == 2048 and plan.grad_ckpt.value == "full" and plan.grad_ckpt.is_default
    assert plan.precision.value == PURE_BF16
    assert plan.peft.value.rank == 16 and plan.peft.value.base_bits == 4
    assert plan.peft.value.target_modules == ["q_proj", "v_proj"]


def test_llamafactory_lora_and_cutoff():
    _, result = read("model_name_or_path: Qwen/Qwen3-4B\nstage: dpo\nfinetuning_type: lora\nlora_rank: 8\n"
                     "lora_target: all\ncutoff_len: 4096\nbf16: true\noutput_dir: out\n")
    plan = result.plan
    assert plan.task.value == "dpo" and plan.seq_len.value == 4096
    assert plan.peft.value.target_modules == "all-linear" and plan.precision.value == AMP_BF16


def test_lightning_reader():
    text = ("trainer:\n  devices: 4\n  num_nodes: 2\n  precision: bf16-mixed\n  accumulate_grad_batches: 8\n"
            "  strategy: deepspeed_stage_3_offload\nmodel:\n  class_path: my.Module\n"
            "data:\n  class_path: my.Data\n  init_args:\n    batch_size: 16\n")
    flavor, result = read(text)
    plan = result.plan
    assert flavor == "lightning"
    assert plan.num_gpus.value == 8 and plan.grad_accum.value == 8 and plan.micro_batch.value == 16
    assert plan.zero_stage.value == 3 and plan.offload_params.value == "cpu"
    assert plan.precision.value == MASTER_BF16
    assert any("my.Module" in note for note in plan.notes)


def test_lightning_subcommand_layout_and_devices_list():
    _, result = read("fit:\n  trainer:\n    devices: [0, 1]\n    precision: 16-mixed\n")
    assert result.plan.num_gpus.value == 2


def test_accelerate_reader():
    flavor, result = read("compute_environment: LOCAL_MACHINE\ndistributed_type: FSDP\nfsdp_config:\n"
                          "  fsdp_sharding_strategy: FULL_SHARD\n  fsdp_offload_params: true\n"
                          "mixed_precision: bf16\nnum_machines: 2\nnum_processes: 16\n")
    plan = result.plan
    assert flavor == "accelerate"
    assert plan.num_gpus.value == 16 and plan.fsdp.value == "full_shard" and plan.offload_params.value == "cpu"
    assert plan.precision.value == AMP_BF16


def test_axolotl_reader():
    flavor, result = read("base_model: NousResearch/Meta-Llama-3-8B\nadapter: qlora\nload_in_4bit: true\n"
                          "lora_r: 32\nlora_target_linear: true\nmicro_batch_size: 2\nsequence_len: 4096\n"
                          "bf16: auto\ngradient_checkpointing: true\ndatasets:\n  - path: x\n    type: alpaca\n")
    plan = result.plan
    assert flavor == "axolotl"
    assert plan.peft.value.base_bits == 4 and plan.peft.value.target_modules == "all-linear"
    assert (plan.micro_batch.value, plan.seq_len.value, plan.grad_ckpt.value) == (2, 4096, "full")


def test_torchtune_reader():
    text = ("model:\n  _component_: torchtune.models.llama3_1.qlora_llama3_1_8b\n  lora_attn_modules: [q_proj, v_proj]\n"
            "  lora_rank: 16\ntokenizer:\n  _component_: torchtune.models.llama3.llama3_tokenizer\n  max_seq_len: 2048\n"
            "batch_size: 2\ndtype: bf16\nenable_activation_checkpointing: true\n")
    flavor, result = read(text)
    plan = result.plan
    assert flavor == "torchtune"
    assert plan.model.value == "llama3_1_8b" and plan.peft.value.base_bits == 4 and plan.peft.value.rank == 16
    assert plan.seq_len.value == 2048 and plan.precision.value == PURE_BF16


def test_litgpt_reader():
    text = ("checkpoint_dir: checkpoints/meta-llama/Llama-2-7b-hf\nprecision: bf16-true\ndevices: 4\n"
            "train:\n  global_batch_size: 64\n  micro_batch_size: 4\n  max_seq_length: 512\n")
    flavor, result = read(text)
    plan = result.plan
    assert flavor == "litgpt"
    assert plan.model.value == "meta-llama/Llama-2-7b-hf"
    assert (plan.grad_accum.value, plan.num_gpus.value) == (4, 4)


def test_litgpt_fork_with_arguments_of_its_own():
    # calvintwr/litgpt: the fork's setup() adds pad_id and fsdp: FSDPArgs; still LitGPT, not TrainingArguments
    base = ("model_name: tiny-llama-1.1b\nout_dir: out/pretrain\nprecision: bf16-mixed\ndevices: auto\nnum_nodes: 1\n"
            "train:\n  global_batch_size: 512\n  micro_batch_size: 4\n  min_lr: 4e-5\nseed: 42\n")
    flavor, _ = read(base + "pad_id: 0\nfsdp:\n  activation_checkpointing: false\n")
    assert flavor == "litgpt"
    # a near-miss of a LitGPT key is a typo, not a fork's argument: left to the unknown-key check
    assert flavors.detect(parse_document(base + "lora_rnk: 8\n", "cfg.yaml")) != "litgpt"


def test_lightning_cli_subclass_with_arguments_of_its_own():
    # hepattn's LightningCLI subclass adds `name` and `matmul_precision` (add_arguments_to_parser)
    base = ("trainer:\n  max_epochs: 10\n  accelerator: gpu\n  devices: 1\n  precision: bf16-mixed\n"
            "model:\n  class_path: pkg.Model\ndata:\n  batch_size: 8\n")
    assert flavors.detect(parse_document("name: run\nmatmul_precision: high\n" + base, "cfg.yaml")) == "lightning"
    # Hydra composition, near-misses of LightningCLI keys and many unknown keys are not LightningCLI's
    assert flavors.detect(parse_document("defaults:\n  - _self_\n" + base, "cfg.yaml")) != "lightning"
    assert flavors.detect(parse_document("seed_everythin: 1\n" + base, "cfg.yaml")) != "lightning"
    assert flavors.detect(parse_document("a: 1\nb: 2\nc: 3\nd: 4\n" + base, "cfg.yaml")) != "lightning"


def test_unknown_format():
    doc = parse_document("name: web\nreplicas: 3\n", "deploy.yaml")
    assert flavors.detect(doc) == "unknown"


def test_hydra_objects_are_not_deepspeed():
    # lightning-hydra-template configs/model/mnist.yaml: Hydra `_target_` objects, not DeepSpeed's {type, params}
    text = ("_target_: src.models.mnist_module.MNISTLitModule\noptimizer:\n  _target_: torch.optim.Adam\n  _partial_: true\n"
            "  lr: 0.001\nscheduler:\n  _target_: torch.optim.lr_scheduler.ReduceLROnPlateau\n  _partial_: true\n"
            "net:\n  _target_: src.models.components.simple_dense_net.SimpleDenseNet\ncompile: false\n")
    assert flavors.detect(parse_document(text, "configs/model/mnist.yaml")) != "deepspeed"
    group = text.split("\n", 1)[1]  # the same sections without the root `_target_`
    assert flavors.detect(parse_document(group, "model.yaml")) != "deepspeed"
    real = '{"optimizer": {"type": "AdamW", "params": {"lr": 1e-5}}, "scheduler": {"type": "WarmupLR"}, "fp16": {"enabled": true}}'
    assert flavors.detect(parse_document(real, "ds.json")) == "deepspeed"


@pytest.mark.parametrize("fsdp, ckpt", [("full_shard auto_wrap", "full"), ("no_shard", "none"), (None, "none")])
def test_hf_fsdp_activation_checkpointing_is_checkpointing(fsdp, ckpt):
    text = "model_name_or_path: gpt2\noutput_dir: o\nfsdp_config:\n  activation_checkpointing: true\n"
    if fsdp:
        text += f"fsdp: {fsdp}\n"
    _, result = read(text)
    plan = result.plan
    assert plan.grad_ckpt.value == ckpt
    if ckpt == "full":
        assert plan.grad_ckpt.origin.key_path == ("fsdp_config", "activation_checkpointing")


def test_optimizer_and_scheduler_of_another_program_are_not_deepspeed():
    # LLaMA-Adapter's ImageBind/models/pointbert/PointTransformer_8192point.yaml (Point-BERT's EasyDict config):
    # {type, kwargs} sections beside model / npoints / total_bs / max_epoch, not DeepSpeed's {type, params}
    text = ("optimizer : {\n  type: AdamW,\n  kwargs: {\n  lr : 0.0005,\n  weight_decay : 0.05\n}}\n\n"
            "scheduler: {\n  type: CosLR,\n  kwargs: {\n    epochs: 300,\n    initial_epochs : 10\n}}\n\n"
            "model : {\n  NAME: PointTransformer,\n  trans_dim: 384\n}\nnpoints: 8192\ntotal_bs : 32\n"
            "step_per_update : 1\nmax_epoch : 300\ngrad_norm_clip : 10\n")
    assert flavors.detect(parse_document(text, "PointTransformer_8192point.yaml")) == "unknown"
    # the same two sections beside more keys DeepSpeed does not have, without kwargs
    other = "optimizer: {type: AdamW, lr: 0.1}\nscheduler: {type: cosine}\nepochs: 3\ndataset: x\nmodel: y\n"
    assert flavors.detect(parse_document(other, "exp.yaml")) == "unknown"
    # a DeepSpeed file with no strong key still is one
    real = ('{"optimizer": {"type": "AdamW", "params": {"lr": 1e-5}}, "scheduler": {"type": "WarmupLR", '
            '"params": {"warmup_num_steps": 100}}, "gradient_clipping": 1.0}')
    assert flavors.detect(parse_document(real, "ds.json")) == "deepspeed"


def test_another_frameworks_trainer_section_is_not_lightning():
    # levanter (JAX, draccus): data/trainer/model/optimizer like a LightningCLI file, but levanter's TrainerConfig
    levanter = ("model:\n  type: gpt2\n  hidden_dim: 32\ntrainer:\n  mp: f32\n  num_train_steps: 100\n  checkpointer:\n"
                "    keep: []\n  per_device_parallelism: -1\n  train_batch_size: 32\n  fsdp_axis: embed\n"
                "optimizer:\n  learning_rate: 6E-4\n")
    assert flavors.detect(parse_document(levanter, "config/gpt2_nano.yaml")) != "lightning"
    small = "trainer:\n  tracker:\n    project: levanter\n  mp: p=f32,c=bfloat16\nmodel:\n  type: gpt2\n"
    assert flavors.detect(parse_document(small, "config/gpt2_xl.yaml")) != "lightning"
    # LightningCLI files with a typo or an argument Lightning 2 removed are still Lightning's (TL526/TL620 judge them)
    typo = "trainer:\n  max_epoch: 3\n  gpus: 2\n  acelerator: gpu\nmodel:\n  class_path: my.Model\n"
    assert flavors.detect(parse_document(typo, "config.yaml")) == "lightning"
    real = "trainer:\n  accelerator: gpu\n  devices: 4\n  precision: bf16-mixed\n  max_steps: 1000\n  my_callback_arg: 1\n"
    assert flavors.detect(parse_document(real, "fit.yaml")) == "lightning"


def test_lm_eval_task_configs_are_not_training_configs():
    # simplescaling/s1 vendors lm-evaluation-harness: task YAMLs with `task`, `include`, `dataset_name`, ...
    task = "dataset_name: amh\ninclude: afrimmlu_common_yaml\ntask: afrimmlu_direct_amh\n"
    doc = parse_document(task, "lm_eval/tasks/afrimmlu/direct/afrimmlu_direct_amh.yaml")
    assert flavors.foreign(doc, flavors.detect(doc)) == "lm-eval-task"
    # a TRL config that names a dataset is still a TRL config
    trl = "model_name_or_path: Qwen/Qwen2.5-0.5B\ndataset_name: trl-lib/Capybara\nlearning_rate: 2.0e-5\noutput_dir: out\n"
    doc = parse_document(trl, "sft.yaml")
    assert flavors.detect(doc) == "huggingface" and flavors.foreign(doc, "huggingface") is None


def test_a_registry_type_file_needs_more_than_two_training_keys():
    # levanter config/optim/sophia-h_small.yaml: `type:` picks a registered optimizer config
    optim = "type: sophia-h\nlearning_rate: 6E-4\nweight_decay: 0.2\nmin_lr_ratio: 0.1\nwarmup: 2000\n"
    assert flavors.detect(parse_document(optim, "config/optim/sophia-h_small.yaml")) != "huggingface"
    hf = ("type: sft\nmodel_name_or_path: gpt2\nlearning_rate: 2.0e-5\nper_device_train_batch_size: 4\n"
          "output_dir: out\n")
    assert flavors.detect(parse_document(hf, "train.yaml")) == "huggingface"
