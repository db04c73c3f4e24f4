"""The hover on a config's first line shows the largest micro-batch and sequence length that fit on its target,
each re-estimated (the value fits, the next does not), computed when the hover is asked for."""

from __future__ import annotations

import re

from lsprotocol import types as t

from conftest import DS_ZERO2, diagnostics, open_doc
from trainlint import engine, estimating, planning
from trainlint.context.settings import Overrides, Settings
from trainlint.lsp import features
from trainlint.plan import Origin

CONFIG = """\
# trainlint: gpu=A100-80GB num-gpus=8
model_name_or_path: meta-llama/Llama-3.1-8B
output_dir: out
per_device_train_batch_size: 2
max_length: 2048
bf16: true
gradient_checkpointing: true
deepspeed: ds_zero2.json
"""


def _largest_from_hover(text: str) -> dict[str, int]:
    section = text.split("**Largest that fit on 8 \u00d7 A100-80GB** (each re-estimated)")[1]
    return {name: int(value.replace(",", "")) for name, value in
            re.findall(r"- (micro-batch|sequence length): \*\*([\d,]+)\*\*", section)}


def test_first_line_hover_shows_the_largest_values_that_fit(tmp_path):
    (tmp_path / "ds_zero2.json").write_text(DS_ZERO2)
    path = tmp_path / "train.yaml"
    path.write_text(CONFIG)
    result = engine.check_text(CONFIG, str(path), Settings(use_project_config=False))
    hover = features.hover_markdown(result, result.document, 0, 0)
    assert hover is not None
    found = _largest_from_hover(hover)
    assert set(found) == {"micro-batch", "sequence length"}
    assert "(now 2)" in hover and "(now 2,048)" in hover
    for key, field, value in (("per_device_train_batch_size", "micro-batch", found["micro-batch"]),
                              ("max_length", "sequence length", found["sequence length"])):
        for candidate, fits in ((value, True), (value + 1, False)):  # written into the config and estimated again
            path.write_text(re.sub(rf"(?m)^{key}: .*$", f"{key}: {candidate}", CONFIG))
            plan, doc, linked = estimating.file_plan(str(path), Overrides({}, Origin("cli")), use_project_config=False)
            assert estimating.estimate(plan, doc, linked).fits is fits, (field, candidate)
    # not on another line, and not without a target GPU
    assert "Largest that fit" not in (features.hover_markdown(result, result.document, 40, 2) or "")
    bare = CONFIG.replace("# trainlint: gpu=A100-80GB num-gpus=8\n", "")
    assert features.largest_markdown(engine.check_text(bare, str(path), Settings(use_project_config=False))) is None
    assert planning.largest_for(engine.check_text(bare, str(path), Settings(use_project_config=False))) == {}


async def test_hover_through_the_server(client, project):
    uri = project.write("plan.yaml", CONFIG)
    open_doc(client, uri, CONFIG)
    await diagnostics(client, uri)
    hover = await client.text_document_hover_async(t.HoverParams(
        text_document=t.TextDocumentIdentifier(uri=uri), position=t.Position(line=0, character=2)))
    assert hover is not None
    found = _largest_from_hover(hover.contents.value)
    assert found["micro-batch"] >= 2 and found["sequence length"] >= 2048


def test_hover_on_the_micro_batch_key_shows_its_largest_value(tmp_path):
    (tmp_path / "ds_zero2.json").write_text(DS_ZERO2)
    path = tmp_path / "train.yaml"
    path.write_text(CONFIG)
    result = engine.check_text(CONFIG, str(path), Settings(use_project_config=False))
    offset = CONFIG.index("per_device_train_batch_size") + 3
    line = CONFIG[:offset].count("\n")
    hover = features.hover_markdown(result, result.document, offset, line)
    assert hover is not None and "- micro-batch: **" in hover and "sequence length" not in hover.split("Largest")[1]
    first = features.hover_markdown(result, result.document, 0, 0)
    assert _largest_from_hover(hover)["micro-batch"] == _largest_from_hover(first)["micro-batch"]
    offset = CONFIG.index("output_dir") + 2  # a key that is neither
    assert "Largest that fit" not in (features.hover_markdown(result, result.document, offset, 2) or "")
