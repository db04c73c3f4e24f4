"""Editor features computed from a lint result and the buffer text: hover text, completion, memory
hints (what changing a setting would do) and suppression comments. Nothing here talks to the client;
server.py turns these values into responses.
"""

from __future__ import annotations

import json
import os
import re
from typing import Any, NamedTuple

from trainlint import flavors, planning
from trainlint._patterns import compile_later
from trainlint.catalog import schemas
from trainlint.document.reading import parse_document
from trainlint.document.tree import Document, split_lines
from trainlint.lsp.convert import GIB, breakdown_markdown, signed_gib
from trainlint.memory import estimate
from trainlint.plan import AMP_BF16, FP32

SCHEMA_FOR_FLAVOR = {
    "deepspeed": "deepspeed",
    "huggingface": "hf-training-args",
    "lightning": "lightning",
    "accelerate": "accelerate",
}

# Plan fields whose value drives memory, and the label of the key in hover text.
MEMORY_FIELDS = ("micro_batch", "seq_len", "grad_ckpt", "zero_stage", "offload_optimizer", "offload_params",
                 "precision", "optimizer", "peft", "fsdp", "activation_offload", "fused_loss")


def schema_name(flavor: str, kind: str) -> str | None:
    name = SCHEMA_FOR_FLAVOR.get(flavor)
    if name is None and kind == "json" and flavor == "unknown":
        return "deepspeed"  # a fresh JSON file is most likely a DeepSpeed config
    return name


def _fmt(value: Any) -> str:
    try:
        return json.dumps(value)
    except (TypeError, ValueError):
        return str(value)


def key_markdown(schema: str, key_path: tuple) -> str | None:
    """What the schema says about a key: description, type, default, allowed values, deprecation."""
    if not key_path:
        return None
    try:
        info = schemas.describe(schema, tuple(key_path))
    except Exception:  # noqa: BLE001
        return None
    if info is None:
        return None
    name = ".".join(str(k) for k in key_path)
    lines = [f"**`{name}`**" + (f" ({' | '.join(info.types)})" if info.types else "")]
    if info.deprecated or info.removed:
        what = "removed" if info.removed else "deprecated"
        lines.append(f"\n*{what}*" + (f": use `{info.replacement}` instead" if info.replacement else ""))
    if info.description:
        lines.append("\n" + info.description)
    if info.has_default:
        lines.append(f"\nDefault: `{_fmt(info.default)}`")
    if info.enum:
        lines.append("\nAllowed: " + ", ".join(f"`{_fmt(v)}`" for v in info.enum))
    return "\n".join(lines)


# --------------------------------------------------------------------------------------------------
# memory: what changing one setting would do


class MemoryEffect(NamedTuple):
    """What changing one setting would do to the per-GPU memory, for the hover and inlay hints."""
    field: str
    key_path: tuple
    value_end: int  # code-point offset in the document where the value ends
    label: str  # "checkpointing on"
    delta: float  # bytes per GPU (new total - current total)
    after: Any  # the Breakdown with the change


def _alternatives(plan: Any, name: str, setting: Any) -> list[tuple[str, dict]]:
    """(label, plan field changes) to try for one memory-driving setting."""
    value = setting.value
    out: list[tuple[str, dict]] = []
    if name == "micro_batch" and isinstance(value, int):
        out.append((f"micro-batch {value // 2}", {"micro_batch": value // 2}) if value > 1
                   else ("micro-batch 2", {"micro_batch": 2}))
    elif name == "seq_len" and isinstance(value, int) and value > 1:
        out.append((f"sequence {value // 2}", {"seq_len": value // 2}))
    elif name == "grad_ckpt":
        out.append(("checkpointing on", {"grad_ckpt": "full"}) if value == "none"
                   else ("checkpointing off", {"grad_ckpt": "none"}))
    elif name == "zero_stage" and isinstance(value, int):
        out.append((f"ZeRO-{value + 1}", {"zero_stage": value + 1}) if value < 3 else ("ZeRO-2", {"zero_stage": 2}))
    elif name == "offload_optimizer":
        out.append(("optimizer offload to CPU", {"offload_optimizer": "cpu"}) if value is None
                   else ("no optimizer offload", {"offload_optimizer": None}))
    elif name == "offload_params":
        out.append(("parameter offload to CPU", {"offload_params": "cpu"}) if value is None
                   else ("no parameter offload", {"offload_params": None}))
    elif name == "optimizer" and isinstance(value, str):
        if "8bit" not in value and "adafactor" not in value and "sgd" not in value:
            out.append(("8-bit AdamW", {"optimizer": "adamw_bnb_8bit"}))
    elif name == "precision":
        if getattr(value, "compute_dtype", None) == "fp32":
            out.append(("bf16 mixed precision", {"precision": AMP_BF16}))
        else:
            out.append(("fp32", {"precision": FP32}))
    elif name == "peft" and value is not None and getattr(value, "rank", 0) > 1:
        try:
            out.append((f"LoRA rank {value.rank // 2}", {"peft": value._replace(rank=value.rank // 2)}))
        except Exception:  # noqa: BLE001
            pass
    return out


def _what_if(result: Any, changes: dict) -> Any:
    try:
        return estimate.what_if(result, **changes)
    except Exception:  # noqa: BLE001 - a hint is never worth an error
        return None


def _total(breakdown: Any) -> float | None:
    for name in ("total", "peak_reserved", "peak_allocated"):
        value = getattr(breakdown, name, None)
        if isinstance(value, (int, float)) and value:
            return float(value)
    return None


def _same_path(a: str, b: str) -> bool:
    if a == b:
        return True
    try:
        return os.path.realpath(a) == os.path.realpath(b)
    except (OSError, ValueError):
        return False


def memory_effects(result: Any, doc: Document, key_path: tuple | None = None) -> list[MemoryEffect]:
    """For each memory-driving setting written in this document (or just the one at key_path): what
    the alternative would change per GPU. Empty when no estimate can be made."""
    plan = getattr(result, "plan", None)
    base = getattr(result, "estimate", None)
    base_total = _total(base) if base is not None else None
    if plan is None or base_total is None:
        return []
    effects = []
    for name in MEMORY_FIELDS:
        setting = getattr(plan, name, None)
        origin = getattr(setting, "origin", None)
        if origin is None or origin.kind not in ("config", "linked") or origin.span is None:
            continue
        if origin.path and not _same_path(origin.path, doc.path):
            continue
        if key_path is not None and tuple(origin.key_path) != tuple(key_path):
            continue
        for label, changes in _alternatives(plan, name, setting):
            after = _what_if(result, changes)
            total = _total(after) if after is not None else None
            if total is None:
                continue
            effects.append(MemoryEffect(name, tuple(origin.key_path), origin.span.end.offset, label,
                                        total - base_total, after))
    return effects


def effect_text(effect: MemoryEffect) -> str:
    return f"{effect.label}: {signed_gib(effect.delta)}"


def findings_markdown(result: Any, doc: Document, offset: int, line: int,
                      users: tuple[tuple[str, Any], ...] = ()) -> str | None:
    """The detail of each finding under the cursor (its one-line message is the diagnostic's; the explanation,
    evidence and figures behind it are here): the file's own findings and those of the configs linking it."""
    seen: set = set()
    parts = []
    for source in (result, *(user for _name, user in users)):
        for d in getattr(source, "diagnostics", None) or ():
            if not d.detail or not _same_path(d.path, doc.path) or (d.code, d.span) in seen:
                continue
            whole_file = d.span.end.offset == 0  # (an empty span at the very start: the file as a whole)
            if not (line == 0 if whole_file else d.span.start.offset <= offset <= d.span.end.offset):
                continue
            seen.add((d.code, d.span))
            parts.append(f"**{d.code}** {d.message}\n\n{d.detail}")
    return "\n\n".join(parts) if parts else None


def hover_markdown(result: Any, doc: Document, offset: int, line: int,
                   users: tuple[tuple[str, Any], ...] = ()) -> str | None:
    """Hover text at a code-point offset of the document: the detail of the findings there, the key's docs and
    memory effect; on the first line, the memory breakdown. `users`: (name, result) of open configs that link
    this file (a DeepSpeed JSON): their findings in it and its keys' memory effects for each of them."""
    parts: list[str] = []
    findings = findings_markdown(result, doc, offset, line, users)
    if findings:
        parts.append(findings)
    found = doc.node_at(offset) if doc.root is not None else None
    if found is not None:
        key_path, _on_key = found
        key_path = tuple(k for k in key_path)
        schema = schema_name(getattr(result, "flavor", "unknown"), doc.kind)
        if schema and key_path:
            # Sequence items: describe the enclosing key.
            path = key_path
            while path and isinstance(path[-1], int):
                path = path[:-1]
            text = key_markdown(schema, path)
            if text:
                parts.append(text)
        effects = memory_effects(result, doc, key_path)
        if effects:
            parts.append("**Memory per GPU**\n\n" + "\n".join(f"- {effect_text(e)}" for e in effects))
        largest = largest_markdown(result, _knob_at(result, doc, key_path))
        if largest:
            parts.append(largest)
        for name, user in users:
            effects = memory_effects(user, doc, key_path)
            if effects:
                parts.append(f"**Memory per GPU for `{name}`**\n\n"
                             + "\n".join(f"- {effect_text(e)}" for e in effects))
    if line == 0:
        table = breakdown_markdown(getattr(result, "estimate", None))
        if table:
            parts.append(table)
        largest = largest_markdown(result)
        if largest:
            parts.append(largest)
        context = context_markdown(result)
        if context:
            parts.append(context)
    return "\n\n---\n\n".join(parts) if parts else None


def _knob_at(result: Any, doc: Document, key_path: tuple) -> tuple[str, ...]:
    """The `--max` word of the setting at `key_path` when it is the run's micro-batch or sequence length, as this
    document says it; else none."""
    plan = getattr(result, "plan", None)
    for word, field in planning.KNOBS.items():
        origin = getattr(getattr(plan, field, None), "origin", None)
        if origin is not None and origin.kind in ("config", "linked") and key_path and \
                tuple(origin.key_path) == tuple(key_path) and (not origin.path or _same_path(origin.path, doc.path)):
            return (word,)
    return ()


def largest_markdown(result: Any, words: tuple[str, ...] = tuple(planning.KNOBS)) -> str | None:
    """The largest micro-batch and sequence length (`words`) that fit on the file's target (hover on its first line;
    on the key that sets one, that one), each re-estimated when asked (`planning.largest_for`); None without an
    estimate on a known GPU."""
    if not words:
        return None
    try:
        found = planning.largest_for(result, words)
    except Exception:  # noqa: BLE001 - a hover is never worth an error
        return None
    if not found:
        return None
    first = next(iter(found.values()))
    rows = []
    for word, answer in found.items():
        name = "micro-batch" if word == "micro-batch" else "sequence length"
        now = f" (now {answer.current:,})" if answer.current else ""
        if answer.value is None:
            rows.append(f"- {name}: none (even 1 needs {(answer.next_total or 0) / GIB:.1f} GiB)")
        elif answer.next_total is None:
            rows.append(f"- {name}: **{answer.value:,}**{now}, the largest tried ({answer.bound_note})")
        else:
            rows.append(f"- {name}: **{answer.value:,}**{now}; {answer.value + 1:,} needs "
                        f"{answer.next_total / GIB:.1f} GiB")
    return (f"**Largest that fit on {first.num_gpus} \u00d7 {first.gpu.name}** (each re-estimated)\n\n"
            + "\n".join(rows))


RELEVANT = {"huggingface": ("transformers", "trl", "accelerate", "deepspeed", "peft"),
            "deepspeed": ("deepspeed", "transformers", "accelerate"), "accelerate": ("accelerate", "deepspeed"),
            "lightning": ("lightning", "deepspeed"), "axolotl": ("axolotl", "transformers", "trl", "peft"),
            "torchtune": ("torchtune",), "litgpt": ("litgpt", "lightning")}


def context_markdown(result: Any) -> str | None:
    """What surrounds the file (hover on its first line): the launch, the parser, the framework versions."""
    rows = []
    launch = getattr(result, "launch", None)
    if launch is not None:
        rows.append(f"- launch: {launch.describe()}")
    dialect = getattr(result, "dialect", None)
    if dialect is not None:
        rows.append(f"- parser: {dialect.describe()}")
    versions = getattr(result, "versions", None)
    if versions is not None:
        for name in RELEVANT.get(getattr(result, "flavor", ""), ()):
            found = versions.get(name)
            if found is not None:
                rows.append(f"- {found.describe()}")
    return "**Run context**\n\n" + "\n".join(rows) if rows else None


# --------------------------------------------------------------------------------------------------
# completion


class Completion(NamedTuple):
    """A completion item for a key or value, before it becomes the protocol's CompletionItem."""
    label: str
    kind: str  # "key" | "value"
    detail: str | None = None
    documentation: str | None = None
    insert_text: str | None = None
    deprecated: bool = False


_YAML_KEY_LINE = compile_later(r"^(?P<indent>\s*)(?:-\s+)?(?P<key>[^\s#:][^#:]*?|\"[^\"]*\"|'[^']*')\s*:(?:\s|$)")


def _yaml_context(text: str, line: int, column: int) -> tuple[str, tuple, str | None, set[str]]:
    """('key' | 'value' | 'none', parent key path, the key whose value is being typed, sibling keys).
    Indentation-based, so it works on half-typed YAML that does not parse."""
    lines = split_lines(text)  # the client's lines: U+2028 in a string ends none
    current = lines[line] if line < len(lines) else ""
    before = current[:column]
    m = re.match(r"^(\s*)(?:-\s+)?([^\s#:][^#:]*?)\s*:\s+(\S*)$", before)
    if m:
        kind, key, indent = "value", m.group(2).strip("\"'"), len(m.group(1))
    elif re.match(r"^\s*(?:-\s+)?[\w.\-\"']*$", before):
        kind, key = "key", None
        indent = len(before) - len(before.lstrip(" -"))
        if before.strip() == "":
            indent = len(before)
    else:
        return "none", (), None, set()
    path: list[str] = []
    level = indent
    for i in range(line - 1, -1, -1):
        raw = lines[i]
        if not raw.strip() or raw.lstrip().startswith("#"):
            continue
        lead = len(raw) - len(raw.lstrip(" -"))
        if lead < level:
            km = _YAML_KEY_LINE.match(raw)
            if km and raw.rstrip().endswith(":") or (km and re.search(r":\s*(#.*)?$", raw)):
                path.insert(0, km.group("key").strip("\"'"))
                level = lead
                if level == 0:
                    break
            elif lead == 0:
                break
    siblings: set[str] = set()
    # Sibling keys: lines at the same indent within the parent's block.
    for direction in (-1, 1):
        i = line + direction
        while 0 <= i < len(lines):
            raw = lines[i]
            if raw.strip() and not raw.lstrip().startswith("#"):
                lead = len(raw) - len(raw.lstrip(" "))
                if lead < indent:
                    break
                if lead == indent:
                    km = _YAML_KEY_LINE.match(raw)
                    if km:
                        siblings.add(km.group("key").strip("\"'"))
            i += direction
    return kind, tuple(path), key, siblings


_JSON_TOKEN = compile_later(r'"(?:[^"\\]|\\.)*"?|//[^\n]*|/\*.*?(?:\*/|$)|[{}\[\]:,]|[^\s{}\[\]:,"/]+|/', re.S)


def _json_context(text: str, offset: int) -> tuple[str, tuple, str | None, set[str]]:
    """Scan a (possibly broken) JSON text up to the cursor, tracking the open containers."""
    stack: list[dict] = []  # {"kind": "{"|"[", "key": current key, "keys": set, "expect": "key"|"colon"|"value"}
    for m in _JSON_TOKEN.finditer(text, 0, offset):
        tok = m.group(0)
        if tok.startswith("//") or tok.startswith("/*"):
            continue
        top = stack[-1] if stack else None
        if tok in "{[":
            if top is not None and top["kind"] == "{" and top["expect"] == "value":
                top["expect"] = "after"
            stack.append({"kind": tok, "key": None, "keys": set(), "expect": "key" if tok == "{" else "value"})
        elif tok in "}]":
            if stack:
                stack.pop()
        elif tok == ":":
            if top is not None and top["kind"] == "{":
                top["expect"] = "value"
        elif tok == ",":
            if top is not None and top["kind"] == "{":
                top["expect"] = "key"
        else:
            if top is not None and top["kind"] == "{":
                if top["expect"] == "key":
                    if m.end() == offset:
                        break
                    top["key"] = tok.strip('"')
                    top["keys"].add(top["key"])
                    top["expect"] = "colon"
                elif top["expect"] == "value":
                    if m.end() == offset:
                        break
                    top["expect"] = "after"
    if not stack or stack[-1]["kind"] != "{":
        return "none", (), None, set()
    path = tuple(s["key"] for s in stack[:-1] if s["kind"] == "{" and s["key"] is not None)
    top = stack[-1]
    if top["expect"] == "key":
        return "key", path, None, top["keys"]
    if top["expect"] == "value" and top["key"] is not None:
        return "value", path, top["key"], top["keys"]
    return "none", (), None, set()


def guess_flavor(text: str, path: str, line: int) -> str:
    """The flavor of a half-typed file: detect it with the line being typed left out."""
    try:
        lines = split_lines(text, keepends=True)
        if 0 <= line < len(lines):
            del lines[line]
        doc = parse_document("".join(lines), path)
        if doc.syntax_error is not None:
            return "unknown"
        return flavors.detect(doc)
    except Exception:  # noqa: BLE001
        return "unknown"


def completions(flavor: str, kind: str, text: str, line: int, column: int, offset: int,
                existing: set[str] | None = None, values_only: bool = False) -> list[Completion]:
    """Keys not yet present at this mapping level, or the allowed values of the key being typed
    (only those with values_only, for a completion triggered by typing a space)."""
    schema = schema_name(flavor, kind)
    if schema is None:
        return []
    try:
        if kind == "json":
            where, path, key, siblings = _json_context(text, offset)
        else:
            where, path, key, siblings = _yaml_context(text, line, column)
    except Exception:  # noqa: BLE001
        return []
    out: list[Completion] = []
    if where == "key" and not values_only:
        try:
            keys = schemas.known_keys(schema, path)
        except Exception:  # noqa: BLE001
            keys = None
        present = set(siblings) | set(existing or ())
        for name in sorted(keys or ()):
            if name in present or name.startswith("$"):
                continue
            info = None
            try:
                info = schemas.describe(schema, path + (name,))
            except Exception:  # noqa: BLE001
                info = None
            if info is not None and info.removed:
                continue
            detail = " | ".join(info.types) if info is not None and info.types else None
            doc = info.description if info is not None else None
            if kind == "json":
                insert = name if _in_json_string(text, offset) else f'"{name}": '
            else:
                insert = f"{name}: "
            out.append(Completion(name, "key", detail, doc, insert, bool(info and info.deprecated)))
    elif where == "value" and key is not None:
        try:
            info = schemas.describe(schema, path + (key,))
        except Exception:  # noqa: BLE001
            info = None
        if info is not None and info.enum:
            for value in info.enum:
                label = _fmt(value) if kind == "json" or not isinstance(value, str) else _yaml_scalar(value)
                out.append(Completion(label, "value", " | ".join(info.types) or None, info.description, label))
    return out


def _in_json_string(text: str, offset: int) -> bool:
    line_start = text.rfind("\n", 0, offset) + 1
    return text[line_start:offset].count('"') % 2 == 1


def _yaml_scalar(value: str) -> str:
    if value.lower() in {"yes", "no", "on", "off", "true", "false", "null", "y", "n", "~", ""} \
            or not re.fullmatch(r"[A-Za-z_][\w./-]*", value):
        return json.dumps(value)
    return value


# --------------------------------------------------------------------------------------------------
# suppression comments (YAML)


def disable_line_edit(doc: Document, line: int, code: str) -> tuple[int, int, str] | None:
    """(start offset, end offset, new text) adding `# trainlint: disable=CODE` to a line."""
    text = doc.line_text(line)
    start = doc.line_start(line)
    m = re.search(r"#\s*trainlint:\s*.*?\bdisable\s*=\s*([A-Za-z0-9_,\s]*?)\s*$", text)
    if m and code not in re.split(r"[,\s]+", m.group(1).upper()):
        end = start + m.end(1)
        return end, end, f",{code}"
    if m:
        return None
    end = start + len(text.rstrip())
    return end, end, f"  # trainlint: disable={code}"


def disable_file_edit(doc: Document, code: str) -> tuple[int, int, str]:
    return 0, 0, f"# trainlint: disable-file={code}{doc.newline}"


def breakdown_total_gib(breakdown: Any) -> float | None:
    total = _total(breakdown) if breakdown is not None else None
    return total / GIB if total else None
