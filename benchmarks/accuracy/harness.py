"""One HF-Trainer-like training loop shared by the fake-tensor tracer (trace.py)
and the real-GPU measurement (measure_gpu.py), so both run the same code.

What it reproduces of ``transformers.Trainer`` (v5, ``training_step`` and the
inner loop) for one process, no gradient accumulation:

* ``model.train()``; parameters live before the first step;
* ``gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})``
  when ``grad_ckpt`` (``use_cache=False`` is passed to the forward);
* forward with ``input_ids`` and ``labels`` (HF computes the loss inside the
  model, with its fp32 upcast of the logits);
* AMP (``bf16``/``fp16`` Trainer flags): Accelerate wraps the forward in
  ``torch.autocast`` and converts fp16/bf16 outputs to fp32
  (``accelerate.utils.convert_outputs_to_fp32``); fp16 uses a GradScaler;
* the outputs are dropped, then ``loss.backward()``;
* ``clip_grad_norm_(params, max_grad_norm=1.0)`` (Trainer default);
* ``optimizer.step()``; ``zero_grad(set_to_none=True)``;
* the optimizer as ``Trainer.create_optimizer`` builds it: two param groups
  (weight decay / no weight decay for biases and norms), lr 5e-5;
  ``adamw`` = ``optim="adamw_torch"`` (torch AdamW, foreach on CUDA),
  ``adamw_fused`` = ``optim="adamw_torch_fused"`` (the Trainer default for torch>=2.8),
  ``sgd`` = torch SGD, ``sgd_momentum`` = SGD(momentum=0.9),
  ``adafactor`` = transformers Adafactor(scale_parameter=False, relative_step=False).
"""

from __future__ import annotations

import contextlib
import copy

import torch

PRECISIONS = ("fp32", "amp_bf16", "amp_fp16", "bf16")
OPTIMIZERS = ("adamw", "adamw_fused", "adamw_foreach", "sgd", "sgd_momentum", "adafactor")
LR = 5e-5


def is_masked_lm(model_config: dict) -> bool:
    archs = model_config.get("architectures") or []
    return any(a.endswith("ForMaskedLM") for a in archs)


def head_kind(model_config: dict) -> str:
    """"lm" (causal LM), "mlm", "seq_cls" or "token_cls", from the config's architectures."""
    archs = model_config.get("architectures") or []
    if any(a.endswith("ForSequenceClassification") for a in archs):
        return "seq_cls"
    if any(a.endswith("ForTokenClassification") for a in archs):
        return "token_cls"
    return "mlm" if is_masked_lm(model_config) else "lm"


def build_config(model_config: dict):
    import transformers

    cfg = dict(model_config)
    model_type = cfg.pop("model_type")
    for k in ("transformers_version", "_name_or_path", "torch_dtype", "dtype"):
        cfg.pop(k, None)
    return transformers.AutoConfig.for_model(model_type, **cfg)


DPO_HEAD_OUTPUTS = ("log_probs", "entropy", "mean_logits", "is_top1")  # TRL 1.16 DPOTrainer.__init__, no use_weighting


def build_model(case: dict, device: str, reference: bool = False):
    """Build the model (random init) for ``case`` on ``device`` ("cuda", "cpu" or "meta").

    The fake-tensor tracer builds on "meta" and converts with ``meta_to_fake`` (module ``.to()``
    of fake parameters fails in torch 2.13: swap_tensors refuses tensors with weakrefs).

    ``reference``: the separate reference model of a full-fine-tuning DPO case, as DPOTrainer.__init__ makes it
    (same model in the same dtype, no PEFT, no gradient checkpointing, its own fused head, eval mode)."""
    import transformers

    config = build_config(case["model_config"])
    config.use_cache = False
    auto = {"mlm": transformers.AutoModelForMaskedLM, "seq_cls": transformers.AutoModelForSequenceClassification,
            "token_cls": transformers.AutoModelForTokenClassification}.get(head_kind(case["model_config"]),
                                                                           transformers.AutoModelForCausalLM)
    ctx = torch.device(device) if device is not None else contextlib.nullcontext()
    with ctx:
        model = auto.from_config(config, attn_implementation=case["attn_implementation"], dtype=torch.float32)
    if case["precision"] == "bf16":
        model.to(torch.bfloat16)
    if case.get("loss_kernel") == "trl":
        # TRL 1.x SFTTrainer/DPOTrainer: the fused, tiled LM head (added before PEFT wraps the model). DPOTrainer
        # asks the policy's head for the per-token fields its metrics read (dpo_trainer.py, __init__: `outputs`).
        from trl.trainer.utils import add_fused_lm_head

        if case.get("dpo") is not None and not reference:
            add_fused_lm_head(model, outputs=DPO_HEAD_OUTPUTS)
        else:
            add_fused_lm_head(model)
    if case.get("dpo") is not None and case["dpo"].get("disable_dropout", True):
        # DPOConfig.disable_dropout (default True): DPOTrainer.__init__ sets every nn.Dropout of the policy and the
        # reference model to p=0 before PEFT sees the model
        from trl.trainer.utils import disable_dropout_in_model

        disable_dropout_in_model(model)
    if reference:
        model.eval()
        return model
    if case.get("lora"):
        import peft

        lo = case["lora"]
        lcfg = peft.LoraConfig(
            r=lo["r"],
            lora_alpha=lo.get("alpha", 2 * lo["r"]),
            lora_dropout=lo.get("dropout", 0.0),
            target_modules=lo["target_modules"],
            task_type=None if is_masked_lm(case["model_config"]) else "CAUSAL_LM",
        )
        model = peft.get_peft_model(model, lcfg)
        if lo.get("adapter_dtype") == "bf16":
            # TRL 1.x (sft_trainer.py / dpo_trainer.py) casts the trainable parameters of a quantized base to bf16.
            for param in model.parameters():
                if param.requires_grad:
                    param.data = param.data.to(torch.bfloat16)
    if case["grad_ckpt"]:
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    model.train()
    return model


def needs_reference_model(case: dict) -> bool:
    """DPOTrainer.__init__ (TRL 1.16): no reference model for a PEFT policy (the adapter-disabled policy is the
    reference) or with precompute_ref_log_probs (outside FSDP); otherwise a separate copy of the model."""
    dpo = case.get("dpo")
    return dpo is not None and not case.get("lora") and not dpo.get("precompute_ref_log_probs")


class _HostMetric:
    """What a single-process ``accelerator.gather``/``gather_for_metrics`` hands DPOTrainer's metrics after the
    device ops that made it: the values are only read on the host (``.item()``), which fake tensors cannot do."""

    def sum(self, *a, **k):
        return self

    def mean(self, *a, **k):
        return self

    def __truediv__(self, other):
        return self

    def __gt__(self, other):
        return False

    def item(self):
        return 0.0


class _MetricsAccelerator:
    """The parts of an Accelerator that DPOTrainer._compute_loss touches, for one process."""

    def __init__(self, device):
        self.device = device

    def unwrap_model(self, model):
        return model

    def gather(self, tensor):
        return _HostMetric()

    gather_for_metrics = gather


class _DPOBatch(dict):
    """The collated DPO batch. The unpadded batch's all-ones ``attention_mask`` is read by the token-count metric but
    not passed to the model (``items()`` leaves it out): on a GPU transformers drops an all-ones mask
    (masking_utils._ignore_causal_mask_sdpa -> is_causal attention), which it cannot see on fake tensors."""

    def items(self):
        return [(k, v) for k, v in super().items() if k != "attention_mask"]


def make_dpo_batch(case: dict, vocab_size: int, real: bool, device=None) -> dict:
    """DataCollatorForPreference's batch (TRL 1.16 dpo_trainer.py): chosen rows then rejected rows, (2b, s) each,
    int64 masks. Every position is a completion token (completion_mask all ones), so every label is valid and TRL's
    CUDA path (only the valid positions are scored) and its fallback (every position) score the same rows."""
    b, s = case["micro_batch"], case["seq_len"]
    ids = torch.randint(0, vocab_size, (2 * b, s), device=device) if real else torch.zeros((2 * b, s), dtype=torch.long)
    batch = _DPOBatch(input_ids=ids, attention_mask=torch.ones((2 * b, s), dtype=torch.long, device=device),
                      completion_mask=torch.ones((2 * b, s), dtype=torch.long, device=device))
    if case["dpo"].get("precompute_ref_log_probs"):
        batch["ref_chosen_logps"] = torch.zeros((b,), device=device)
        batch["ref_rejected_logps"] = torch.zeros((b,), device=device)
    return batch


def dpo_trainer(case: dict, model, ref_model, device):
    """A DPOTrainer (TRL 1.16) whose own ``_compute_loss`` runs the step. ``__init__`` needs a tokenizer and a dataset,
    so the instance gets the attributes ``__init__`` sets from a default DPOConfig (sigmoid loss, beta 0.1), with
    the case's precompute_ref_log_probs and gradient checkpointing; only the metrics' host reads are replaced."""
    import tempfile
    from collections import defaultdict

    from trl import DPOConfig, DPOTrainer

    dpo = case["dpo"]
    args = DPOConfig(output_dir=tempfile.gettempdir(), report_to="none", use_cpu=True,
                     precompute_ref_log_probs=bool(dpo.get("precompute_ref_log_probs")),
                     gradient_checkpointing=case["grad_ckpt"],
                     gradient_checkpointing_kwargs={"use_reentrant": False})
    trainer = object.__new__(DPOTrainer)
    trainer.args = args
    trainer.model = model
    trainer.ref_model = ref_model
    trainer.accelerator = _MetricsAccelerator(device)
    trainer.beta = args.beta
    trainer.precompute_ref_logps = args.precompute_ref_log_probs
    trainer.loss_types = args.loss_type
    trainer.loss_weights = args.loss_weights or [1.0] * len(trainer.loss_types)
    trainer.ld_alpha = args.ld_alpha
    trainer.f_divergence_type = args.f_divergence_type
    trainer.f_alpha_divergence_coef = args.f_alpha_divergence_coef
    trainer.label_smoothing = args.label_smoothing
    trainer.use_weighting = args.use_weighting
    trainer.aux_loss_enabled = False  # dense models
    trainer._metrics = {"train": defaultdict(list), "eval": defaultdict(list)}
    trainer._total_train_tokens = 0
    trainer._tp_size = 1
    return trainer


def meta_to_fake(model, fake_mode, device: str = "cpu"):
    """Replace every meta parameter/buffer by a fake tensor on ``device`` (same shape, dtype,
    requires_grad), keeping shared (tied) parameters shared."""
    memo: dict[int, torch.Tensor] = {}
    with fake_mode:
        for module in model.modules():
            for name, p in list(module._parameters.items()):
                if p is None:
                    continue
                if id(p) not in memo:
                    memo[id(p)] = torch.nn.Parameter(
                        torch.empty_strided(p.shape, p.stride(), dtype=p.dtype, device=device),
                        requires_grad=p.requires_grad,
                    )
                module._parameters[name] = memo[id(p)]
            for name, b in list(module._buffers.items()):
                if b is None:
                    continue
                if id(b) not in memo:
                    memo[id(b)] = torch.empty_strided(b.shape, b.stride(), dtype=b.dtype, device=device)
                module._buffers[name] = memo[id(b)]
            # plain tensor attributes (e.g. rotary `original_inv_freq`)
            for name, v in list(vars(module).items()):
                if isinstance(v, torch.Tensor) and not isinstance(v, torch.nn.Parameter) and v.device.type == "meta":
                    if id(v) not in memo:
                        memo[id(v)] = torch.empty_strided(v.shape, v.stride(), dtype=v.dtype, device=device)
                    setattr(module, name, memo[id(v)])
    return model


def _no_decay(name: str, module_types: dict) -> bool:
    low = name.lower()
    if name.endswith("bias") or "norm" in low or "ln_" in low:
        return True
    mod = module_types.get(name.rsplit(".", 1)[0], "")
    return "Norm" in mod


def build_optimizer(case: dict, model, on_cuda: bool):
    """Mirror Trainer.create_optimizer; ``on_cuda`` False means we emulate CUDA defaults explicitly."""
    module_types = {n: type(m).__name__ for n, m in model.named_modules()}
    decay, no_decay = [], []
    for n, p in model.named_parameters():
        if not p.requires_grad:
            continue
        (no_decay if _no_decay(n, module_types) else decay).append(p)
    groups = [g for g in (
        {"params": decay, "weight_decay": 0.0},
        {"params": no_decay, "weight_decay": 0.0},
    ) if g["params"]]
    name = case["optimizer"]
    if name in ("adamw", "adamw_foreach"):
        return torch.optim.AdamW(groups, lr=LR, foreach=True)
    if name == "adamw_fused":
        return torch.optim.AdamW(groups, lr=LR, fused=True)
    if name == "sgd":
        return torch.optim.SGD(groups, lr=LR, foreach=True)
    if name == "sgd_momentum":
        return torch.optim.SGD(groups, lr=LR, momentum=0.9, foreach=True)
    if name == "adafactor":
        from transformers.optimization import Adafactor

        return Adafactor(groups, lr=LR, scale_parameter=False, relative_step=False)
    raise ValueError(f"unknown optimizer {name}")


def make_batch(case: dict, device: str | None, vocab_size: int, real: bool):
    b, s = case["micro_batch"], case["seq_len"]
    if real:
        ids = torch.randint(0, vocab_size, (b, s), device=device)
    else:
        ids = torch.zeros((b, s), dtype=torch.long)
    labels = ids.clone()
    kind = head_kind(case["model_config"])
    if kind in ("seq_cls", "token_cls"):
        labels = ids % 2 if real else ids.clone()  # 2 labels
        if kind == "seq_cls":
            labels = labels[:, 0].clone()
    return ids, labels


class _NullPhase:
    def set_phase(self, name):
        pass


class _Scaler:
    """Fake-mode stand-in for torch.amp.GradScaler (same in-place unscale; scale/found_inf are 1-element tensors)."""

    def __init__(self):
        self.scale = torch.full((), 65536.0)

    def scale_loss(self, loss):
        return loss * self.scale

    def unscale_(self, optimizer):
        inv = self.scale.reciprocal()
        found_inf = torch.zeros(())
        grads = [p.grad for g in optimizer.param_groups for p in g["params"] if p.grad is not None]
        if grads:
            torch._foreach_mul_(grads, inv)
        del found_inf

    def step(self, optimizer):
        optimizer.step()

    def update(self):
        pass


def training_steps(case: dict, model, optimizer, ids, labels, tracker=None, steps: int = 2, autocast_device: str = "cuda", real_scaler: bool = True,
                   eval_inputs=None, dpo_trainer=None):
    """Run ``steps`` Trainer-style steps; ``tracker.set_phase`` is called at phase boundaries. With ``eval_inputs``
    (the case's ``eval_batch``: ids, labels) one evaluation step follows, as Trainer.prediction_step runs it without
    a compute_metrics: model.eval(), a no-grad forward under the training autocast, the loss kept (phase
    "evaluation")."""
    from accelerate.utils import convert_outputs_to_fp32

    tr = tracker or _NullPhase()
    prec = case["precision"]
    amp_dtype = {"amp_bf16": torch.bfloat16, "amp_fp16": torch.float16}.get(prec)
    scaler = None
    if prec == "amp_fp16":
        scaler = torch.amp.GradScaler("cuda") if real_scaler else _Scaler()

    # phase "loss": from the output-embedding (lm head / MLM decoder) output to the returned loss
    head = model.get_output_embeddings()
    hook = head.register_forward_hook(lambda *a: tr.set_phase("loss")) if head is not None else None

    def forward(ids=ids, labels=labels):
        if dpo_trainer is not None:
            # DPOTrainer.compute_loss -> _compute_loss: ``ids`` is the collated DPO batch (make_dpo_batch)
            return {"loss": dpo_trainer._compute_loss(model, ids, return_outputs=False)}
        kwargs = {"input_ids": ids, "labels": labels}
        if head_kind(case["model_config"]) in ("lm", "seq_cls", "token_cls"):
            kwargs["use_cache"] = False
        if case.get("loss_kernel") == "trl":
            kwargs["fused_lm_head"] = True
        return model(**kwargs)

    if amp_dtype is not None:
        fwd = convert_outputs_to_fp32(torch.autocast(autocast_device, dtype=amp_dtype)(forward))
    else:
        fwd = forward

    params = [p for p in model.parameters() if p.requires_grad]
    try:
        for _ in range(steps):
            model.train()
            tr.set_phase("forward")
            out = fwd()
            loss = out["loss"]
            del out
            tr.set_phase("backward")
            if scaler is not None:
                (scaler.scale(loss) if real_scaler else scaler.scale_loss(loss)).backward()
            else:
                loss.backward()
            loss = loss.detach()
            del loss
            tr.set_phase("clip_grad")
            if scaler is not None:
                scaler.unscale_(optimizer)
            torch.nn.utils.clip_grad_norm_(params, 1.0)
            tr.set_phase("optimizer_step")
            if scaler is not None:
                scaler.step(optimizer)
                scaler.update()
            else:
                optimizer.step()
            tr.set_phase("zero_grad")
            optimizer.zero_grad(set_to_none=True)
        if eval_inputs is not None:
            if hook is not None:  # the "loss" phase marks the training forward only
                hook.remove()
                hook = None
            model.eval()
            tr.set_phase("evaluation")
            with torch.no_grad():
                out = fwd(*eval_inputs)
                loss = out["loss"].detach().mean()
                del out
            del loss
    finally:
        if hook is not None:
            hook.remove()
    tr.set_phase("done")


def model_summary(model) -> dict:
    n_all = sum(p.numel() for p in model.parameters())
    n_train = sum(p.numel() for p in model.parameters() if p.requires_grad)
    return {"params": n_all, "trainable_params": n_train}


def clone_case(case: dict) -> dict:
    return copy.deepcopy(case)
