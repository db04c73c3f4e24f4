"""TL642 axolotl-lora-load-in-4bit: Axolotl `adapter: lora` with `load_in_4bit: true` loads the base unquantized.

**What**: an Axolotl config with `adapter: lora` and `load_in_4bit: true` (no `load_in_8bit`, `gptq` or
`model_quantization_config`, and a `base_model` whose name does not say it is already quantized: `bnb`,
`4bit`, `gptq`, `awq`, `nf4`, `int4`).

**Why**: since 0.13 Axolotl builds the 4-bit `BitsAndBytesConfig` only for `adapter: qlora`; with
`adapter: lora` no quantization config is passed, so the base loads in `torch_dtype` (bf16/fp16) at 2 bytes
per parameter. Because `load_in_4bit` is still true, Axolotl then runs PEFT's
`prepare_model_for_kbit_training`, which casts every fp16/bf16 parameter that is not a `Params4bit` to fp32:
the frozen base ends at 4 bytes per parameter, eight times the ~0.5 of the 4-bit base the config asks for
(unless a ZeRO-3, FSDP RAM-efficient-loading, LoftQ or `qwen` case skips that step; then it stays at 2).
Nothing warns. Memory estimates that read `load_in_4bit` as a 4-bit base are wrong for this config too.

**Evidence**: axolotl `src/axolotl/loaders/model.py`: `ModelLoader._set_quantization_config` (the
`elif self.cfg.adapter == "qlora" and self.cfg.load_in_4bit:` branch is the only one that quantizes to 4 bits
for a base without its own `quantization_config`; `adapter == "lora"` gets a config only with `load_in_8bit`)
and `_prepare_model_for_quantization` (`adapter in ["lora", "qlora"] and (load_in_8bit or load_in_4bit)` →
`prepare_model_for_kbit_training`); peft `utils/other.py: prepare_model_for_kbit_training` ("cast all non INT8
parameters to fp32"). Since axolotl v0.13.0 (commit aa1240a, 2025-10-16, "transformers deprecate load_in_Xbit
in model_kwargs") to main (2026-07). Before it, Axolotl passed `load_in_4bit=True` to `from_pretrained` and
transformers quantized with its defaults (fp4, no double quantization): the rule does not apply there.

**Example**: `adapter: lora`, `load_in_4bit: true` → `adapter: qlora` (QLoRA), or drop `load_in_4bit` (16-bit
LoRA, and say so).

**Fix** (unsafe: either choice changes what trains): set `adapter: qlora`, or remove `load_in_4bit`.
"""

from __future__ import annotations

from trainlint.diagnostics import Severity
from trainlint.fixes.edits import delete_entry, fix, replace_value
from trainlint.rules._frameworks import flag, is_set
from trainlint.rules.base import LintContext, Rule

RULE = Rule("TL642", "axolotl-lora-load-in-4bit", Severity.WARNING,
            "adapter: lora with load_in_4bit loads an unquantized base (then upcast to fp32)", flavors=("axolotl",),
            framework="axolotl", versions=">=0.13.0",
            evidence="axolotl/loaders/model.py: ModelLoader._set_quantization_config, _prepare_model_for_quantization",
            raises="")

PREQUANTIZED = ("bnb", "4bit", "gptq", "awq", "nf4", "int4")  # a base_model name that says it is quantized already


def _gib(n: float) -> str:
    return f"{n / 2 ** 30:.1f} GiB"


def check(ctx: LintContext):
    doc = ctx.document
    root = doc.root
    if root is None or root.kind != "mapping":
        return
    adapter = root.entry("adapter")
    four = root.entry("load_in_4bit")
    if adapter is None or adapter.value.kind != "scalar" or adapter.value.value != "lora":
        return
    if four is None or flag(four.value) is not True:
        return
    if flag(root.get("load_in_8bit")) or is_set(root.get("gptq")) or is_set(root.get("model_quantization_config")):
        return  # an 8-bit base, a GPTQ base, or another quantization path (TL527, TL638)
    base = root.get("base_model")
    name = str(base.value).lower() if base is not None and base.kind == "scalar" and base.value else ""
    if any(word in name for word in PREQUANTIZED):
        return  # a pre-quantized checkpoint: its own quantization_config quantizes it
    sizes = ""
    params = getattr(ctx.architecture, "total_params", None)
    if isinstance(params, int) and params > 0:
        sizes = (f" ({_gib(params * 4)} of frozen fp32 weights for this {params / 1e9:.1f}B model instead of about "
                 f"{_gib(params * 0.5)} in 4 bits)")
    yield RULE.at(doc, four.key_span,
                  "`load_in_4bit: true` with `adapter: lora`: the base loads in fp32, about 4 bytes per parameter "
                  "instead of 0.5",
                  [fix("set `adapter: qlora`", replace_value(doc, adapter.value, "qlora"), safe=False),
                   fix("remove `load_in_4bit`", delete_entry(doc, root, four), safe=False)],
                  detail="Axolotl (0.13 and later) quantizes to 4 bits only for `adapter: qlora`, so the base loads "
                         "unquantized, and PEFT's prepare_model_for_kbit_training then casts it to fp32: about 4 bytes "
                         f"per parameter instead of 0.5{sizes}. Write `adapter: qlora` for QLoRA, or remove "
                         "`load_in_4bit` for 16-bit LoRA.")
