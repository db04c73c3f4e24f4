"""The memory fix planner: combinations of knobs, validity per framework, the cost order, the advice when
nothing in the config fits, and, over every config the project holds, that the first fix of each
out-of-memory finding fits once applied and re-linted."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from trainlint import engine
from trainlint.context.settings import Overrides, Settings
from trainlint.document.reading import overlay, read_document
from trainlint.fixes.edits import apply_edits
from trainlint.plan import Origin
from shared_corpus import CORPUS

ROOT = Path(__file__).resolve().parent
CORPORA = [ROOT / "fixtures", ROOT / "realworld", CORPUS]
# Settings that make many of them not fit: their own, a 24 GB card, eight 40 GB cards.
TARGETS = [{}, {"gpu": "RTX-4090"}, {"gpu": "A100-40GB", "num_gpus": 8}, {"gpu": "48GB", "num_gpus": 2}]
# Findings a fix may bring with it: the near-capacity warning (the planner aims under 90% and falls back to
# under 100% only where nothing reaches that); the host-RAM note (what offload needs; the title says it);
# the headroom note (a last-resort LoRA/QLoRA can leave room that checkpointing no longer needs).
CONSEQUENCES = {"TL101", "TL103", "TL104"}


def settings(values: dict) -> Settings:
    return Settings(cli=Overrides(dict(values), Origin("cli")), use_project_config=False)


def configs() -> list[Path]:
    out = []
    for root in CORPORA:
        if root.is_dir():
            out.extend(p for p in sorted(root.rglob("*")) if p.is_file() and p.suffix in (".yaml", ".yml", ".json")
                       and p.stat().st_size < 200_000)
    return out


def apply_first_fix(path: Path, diagnostic, chosen: Settings):
    by_path: dict[str, list] = {}
    for edit in diagnostic.fixes[0].edits:
        by_path.setdefault(edit.path, []).append(edit)
    texts = {}
    for edit_path, edits in by_path.items():
        text, skipped = apply_edits(read_document(edit_path).text, edits)
        assert not skipped, diagnostic.fixes[0].title
        texts[edit_path] = text
    with overlay(texts):
        return engine.check_path(str(path), chosen)


def test_first_fix_of_every_out_of_memory_finding_fits():
    cases = fixed = advised = near = 0
    failures = []
    for target in TARGETS:
        chosen = settings(target)
        for path in configs():
            before = engine.check_path(str(path), chosen)
            for d in before.diagnostics:
                if d.code == "TL101" and d.fixes:
                    near += 1
                    after = apply_first_fix(path, d, chosen)
                    if after.estimate is None or {x.code for x in after.diagnostics} & {"TL100", "TL101"}:
                        failures.append((str(path), target, "TL101", d.fixes[0].title))
                if d.code != "TL100":
                    continue
                cases += 1
                if not d.fixes:
                    advised += 1
                    have = before.plan.num_gpus.value
                    counts = [int(n) for n in re.findall(r"at least (\d+) x", d.detail)]
                    if not ("fit" in d.detail and all(n >= have for n in counts)):
                        failures.append((str(path), target, d.detail))
                    continue
                after = apply_first_fix(path, d, chosen)
                new = {x.code for x in after.diagnostics} - {x.code for x in before.diagnostics} - CONSEQUENCES
                claimed = float(re.search(r"-> ([0-9.]+) GiB", d.fixes[0].title).group(1))
                if after.estimate is not None and abs(after.estimate.total / 2**30 - claimed) > 0.051:
                    new.add(f"title says {claimed} GiB, re-linted {after.estimate.total / 2**30:.2f}")
                if after.estimate is None or not after.estimate.fits or new:
                    failures.append((str(path), target, d.fixes[0].title, sorted(new),
                                     after.estimate and after.estimate.total / 2**30))
                else:
                    fixed += 1
    print(f"\n{cases} out-of-memory findings: first fix fits in {fixed}, no config change fits in {advised}; "
          f"{near} near-capacity findings with a fix, each under 90% once applied")
    assert cases > 50
    assert not failures, "\n".join(map(str, failures))


CONFIG = """model_name_or_path: meta-llama/Llama-3.1-8B
output_dir: out
per_device_train_batch_size: 8
gradient_accumulation_steps: 2
max_length: 4096
bf16: true
deepspeed: ds.json
"""


def lint(tmp_path, text=CONFIG, ds='{"zero_optimization": {"stage": 0}, "bf16": {"enabled": true}}', **target):
    (tmp_path / "ds.json").write_text(ds)
    path = tmp_path / "train.yaml"
    path.write_text(text)
    return path, engine.check_path(str(path), settings(target or {"gpu": "A100-80GB", "num_gpus": 1}))


def test_deepspeed_offload_comes_with_zero_stage_one_or_more(tmp_path):
    path, result = lint(tmp_path)
    (oom,) = [d for d in result.diagnostics if d.code == "TL100"]
    assert oom.fixes
    for fix in oom.fixes:
        if "offload the optimizer" in fix.title:
            assert "ZeRO stage 0 ->" in fix.title, fix.title
    after = apply_first_fix(path, oom, settings({"gpu": "A100-80GB", "num_gpus": 1}))
    assert after.estimate.fits
    assert not {"TL401", "TL400"} & {d.code for d in after.diagnostics}


def test_combinations_of_three_or_more_knobs_are_found(tmp_path):
    text = CONFIG.replace("deepspeed: ds.json\n", "gradient_checkpointing: false\ndeepspeed: ds.json\n").replace(
        "Llama-3.1-8B", "Llama-3.2-3B")
    path, result = lint(tmp_path, text, gpu="RTX-4090", num_gpus=1)
    (oom,) = [d for d in result.diagnostics if d.code == "TL100"]
    assert oom.fixes, oom.message
    assert oom.fixes[0].title.count(", and ") >= 2, oom.fixes[0].title
    assert "host RAM" in oom.fixes[0].title
    assert apply_first_fix(path, oom, settings({"gpu": "RTX-4090", "num_gpus": 1})).estimate.fits


def test_offers_are_ordered_by_their_stated_cost(tmp_path):
    path, result = lint(tmp_path, CONFIG.replace("batch_size: 8", "batch_size: 16").replace("deepspeed: ds.json\n", "gradient_checkpointing: false\n").replace(
        "Llama-3.1-8B", "Llama-3.2-1B"),
                        gpu="A100-40GB", num_gpus=1)
    (oom,) = [d for d in result.diagnostics if d.code in ("TL100",)]
    assert len(oom.fixes) >= 2, [f.title for f in oom.fixes]
    safe = [f for f in oom.fixes if f.safe]
    assert safe and all(f.safe for f in oom.fixes[:len(safe)])  # safe first
    assert oom.fixes[0].title.startswith("micro-batch 16 -> 1")  # +8% (smaller kernels) is cheaper than +33%
    assert "gradient checkpointing" in oom.fixes[1].title
    # each alternative differs: none contains an offered one with options at least as strong
    assert len({f.title for f in oom.fixes}) == len(oom.fixes)


def test_no_fewer_gpus_than_the_run_has(tmp_path):
    text = "model_name_or_path: meta-llama/Llama-3.1-70B\noutput_dir: out\nper_device_train_batch_size: 4\n" \
           "max_length: 4096\nbf16: true\n"
    _, result = lint(tmp_path, text, gpu="A100-80GB", num_gpus=8)
    (oom,) = [d for d in result.diagnostics if d.code == "TL100"]
    counts = [int(n) for n in re.findall(r"at least (\d+) x", oom.detail)]
    assert "(it has 8)" in oom.detail or "its 8 x A100-80GB" in oom.detail
    assert counts and all(n > 8 for n in counts), oom.detail


def test_sharding_on_the_gpus_it_has_is_said_before_lora(tmp_path):
    text = "model_name_or_path: meta-llama/Llama-3.1-8B\noutput_dir: out\nper_device_train_batch_size: 4\n" \
           "max_length: 4096\nbf16: true\n"
    path, result = lint(tmp_path, text, gpu="A100-40GB", num_gpus=8)
    (oom,) = [d for d in result.diagnostics if d.code == "TL100"]
    assert oom.message == "needs 172.4 GiB per GPU on 8 x A100-40GB (39.4 GiB): out of memory"
    assert "on its 8 x A100-40GB it would fit with ZeRO-3" in oom.detail and "`deepspeed:`" in oom.detail
    # the only edits that fit within this file change what is trained: unsafe, and said so
    assert oom.fixes and not any(f.safe for f in oom.fixes)
    assert "LoRA" in oom.fixes[0].title and "instead of the full model" in oom.fixes[0].title
    after = apply_first_fix(path, oom, settings({"gpu": "A100-40GB", "num_gpus": 8}))
    assert after.estimate.fits and after.plan.peft.value is not None
    assert "TL520" not in {d.code for d in after.diagnostics}


def test_eight_bit_optimizer_not_offered_when_deepspeed_owns_the_optimizer(tmp_path):
    ds = '{"optimizer": {"type": "AdamW"}, "zero_optimization": {"stage": 2}, "bf16": {"enabled": true}}'
    _, result = lint(tmp_path, CONFIG, ds, gpu="A100-40GB", num_gpus=8)
    for d in result.diagnostics:
        if d.code in ("TL100", "TL101"):
            assert not any("8-bit" in f.title for f in d.fixes)


def test_micro_batch_options_are_divisors_and_bounded():
    from trainlint.fixes.planner import _smaller_micro_batches

    assert _smaller_micro_batches(16) == [8, 4, 2, 1]
    assert _smaller_micro_batches(12) == [6, 4, 3, 2, 1]
    assert _smaller_micro_batches(1) == []
    options = _smaller_micro_batches(10**30)
    assert len(options) <= 13 and all(10**30 % m == 0 for m in options) and options[-1] == 1


def test_pair_overlaps_decide_as_combining_every_combination_does():
    # The search compares each pair of knobs' edits once (_pair_overlaps) instead of combining and comparing the
    # edits of every combination: over random replacements and insertions, often at one point, both agree.
    import itertools
    import random

    from trainlint.diagnostics import Edit, Pos, Span
    from trainlint.fixes.planner import Knob, _combine_edits, _overlap, _pair_overlaps

    def edit(path, start, length, text):
        return Edit(path, Span(Pos(0, start, start), Pos(0, start + length, start + length)), text)

    rng = random.Random(7)
    for _ in range(200):
        knobs = []
        for n in range(rng.randint(2, 6)):
            edits = tuple(edit(rng.choice("ab"), rng.randint(0, 12), rng.choice((0, 0, 1, 3)), f"x{n}")
                          for _ in range(rng.randint(0, 3)))
            knobs.append(Knob(f"g{n}", 1, f"knob {n}", {}, 0.0, "", edits=edits or None))
        overlaps = _pair_overlaps()
        for size in range(1, 5):
            for combo in itertools.combinations(knobs, size):
                whole = _overlap(_combine_edits(e for k in combo for e in (k.edits or ())))
                assert overlaps(combo) == whole, [k.edits for k in combo]


def test_plain_words_are_what_the_pattern_matched():
    # scalar_text leaves a string unquoted where `[A-Za-z_][\w./-]*` matches it, now checked with str methods.
    from trainlint.fixes.edits import _plain_word

    pattern = re.compile(r"[A-Za-z_][\w./-]*")
    chars = [chr(c) for c in range(0x10000) if not 0xD800 <= c < 0xE000] + ["\U0001d7ce", "\U00010400", "\U0001f600"]
    for ch in chars:
        for text in (ch, "a" + ch, "_" + ch + "b"):
            assert _plain_word(text) == bool(pattern.fullmatch(text)), repr(text)
    for text in ("", "sdpa", "adamw_8bit", "a-b/c.d", "8bit", "x y", "a\n", "é", "aé"):
        assert _plain_word(text) == bool(pattern.fullmatch(text)), repr(text)


TORCHTUNE_FULL = """\
# trainlint: gpu=27GB
model:
  _component_: torchtune.models.llama3_2.llama3_2_3b
batch_size: 2
gradient_accumulation_steps: 1
enable_activation_checkpointing: True
dtype: bf16
tokenizer:
  _component_: torchtune.models.llama3.llama3_tokenizer
  path: /tmp/Llama-3.2-3B-Instruct/original/tokenizer.model
  max_seq_len: 4096
loss:
  _component_: torchtune.modules.loss.CEWithChunkedOutputLoss
optimizer:
  _component_: torch.optim.AdamW
  lr: 2e-5
"""


@pytest.mark.parametrize("keyword, offered", [("", True), ("  weight_decay: 0.01\n", True),
                                              ("  fused: True\n", False), ("  foreach: False\n", False)])
def test_torchtune_eight_bit_optimizer_is_written_as_a_component_its_keywords_fit(tmp_path, keyword, offered):
    """torchtune instantiates `optimizer._component_` with the section's other keys: the 8-bit fix writes the
    bitsandbytes class path (never the planner's own name), and only where every keyword is one AdamW8bit takes."""
    path = tmp_path / "full.yaml"
    path.write_text(TORCHTUNE_FULL + keyword)
    result = engine.check_path(str(path), Settings(use_project_config=False))
    oom = [d for d in result.diagnostics if d.code == "TL100"]
    assert oom
    eight_bit = [f for d in oom for f in d.fixes if "8-bit" in f.title]
    assert bool(eight_bit) is offered
    for fix in eight_bit:
        assert [e.new_text for e in fix.edits] == ["bitsandbytes.optim.AdamW8bit"]
        text, _ = apply_edits(path.read_text(), list(fix.edits))
        with overlay({str(path): text}):
            after = engine.check_path(str(path), Settings(use_project_config=False))
        assert not [d for d in after.diagnostics if d.code in ("TL100", "TL649")], after.diagnostics
