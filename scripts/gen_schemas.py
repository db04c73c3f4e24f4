#!/usr/bin/env python
"""Generate trainlint's JSON Schemas from the training frameworks' own definitions.

Run at development time, in a throwaway virtual environment OUTSIDE the repository that has the
frameworks installed (never needed at runtime, never imported by trainlint):

    VENV=../schema-venv   # any folder outside the repository
    python -m venv $VENV
    $VENV/bin/pip install torch==2.13.0          # CPU build first
    $VENV/bin/pip install "transformers>=5,<6" trl lightning accelerate
    $VENV/bin/pip install --no-build-isolation deepspeed
    $VENV/bin/python scripts/gen_schemas.py      # writes schemas/*.schema.json

What is introspected (facts only, no framework code is copied):
- DeepSpeed: the pydantic ``DeepSpeedConfigModel`` sections (fields, aliases, defaults, constraints,
  deprecation markers, attribute docstrings) and the ``*_DEFAULT`` constants of the dict-read sections.
- transformers / TRL: dataclass fields, ``metadata["help"]``, ``choices`` and Enum value lists.
- Lightning: ``Trainer.__init__`` signature, annotations and the ``Args:`` docstring, the strategy and
  accelerator registries, the precision ``Literal`` types.
- accelerate: ``ClusterConfig`` fields and the ``accelerate launch`` argument groups whose names are the
  keys of the nested ``deepspeed_config`` / ``fsdp_config`` / ... mappings.

Output is deterministic: ``json.dumps(indent=2, sort_keys=True)`` with a trailing newline.
``--check`` compares instead of writing (exit 1 when a committed schema is stale).
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import datetime
import enum
import importlib
import importlib.metadata
import inspect
import json
import logging
import os
import pathlib
import re
import sys
import textwrap
import types
import typing
import warnings



def _quiet() -> None:
    """Silence the frameworks' import-time chatter (only when run as a script)."""
    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
    os.environ.setdefault("TRANSFORMERS_NO_ADVISORY_WARNINGS", "1")
    os.environ.setdefault("DS_ACCELERATOR", "cpu")
    warnings.filterwarnings("ignore")
    logging.disable(logging.WARNING)


DRAFT = "https://json-schema.org/draft/2020-12/schema"
BASE_ID = "https://trainlint.dev/schemas/"
ROOT = pathlib.Path(__file__).resolve().parent.parent
OUT_DIR = ROOT / "schemas"

AUTO = {"const": "auto"}
CLASS_PATH_REF = {"$ref": "#/$defs/ClassPath"}
CLASS_PATH_DEF = {
    "type": "object",
    "description": "A jsonargparse class specification: `class_path` (import path or short class name) "
    "and its constructor arguments in `init_args`.",
    "properties": {
        "class_path": {"type": "string", "description": "Import path of the class, or a short name the CLI resolves."},
        "init_args": {"type": "object", "description": "Keyword arguments for the class constructor."},
        "dict_kwargs": {"type": "object", "description": "Extra keyword arguments passed as a plain dict (for **kwargs)."},
    },
    "required": ["class_path"],
}


# --------------------------------------------------------------------------------------------------
# generic helpers


def version_of(dist: str) -> str:
    return importlib.metadata.version(dist)


def clean_text(text: str | None) -> str | None:
    """Docstring/help text as one readable string: wrapped lines joined, paragraphs and list items kept,
    Sphinx roles (:any:`X`, ``x``) reduced to Markdown code spans."""
    if not text:
        return None
    text = inspect.cleandoc(str(text)).strip()
    text = re.sub(r":[a-z]+(?::[a-z]+)?:`~([^`]+)`", lambda m: "`" + m.group(1).split(".")[-1] + "`", text)
    text = re.sub(r":[a-z]+(?::[a-z]+)?:`([^`]+)`", r"`\1`", text)
    text = re.sub(r"``([^`]+)``", r"`\1`", text)
    paragraphs = []
    for para in re.split(r"\n\s*\n", text):
        lines = [ln.rstrip() for ln in para.splitlines()]
        out: list[str] = []
        for ln in lines:
            stripped = ln.strip()
            if out and stripped and not re.match(r"^([-*]|\d+[.)])\s", stripped) and not ln.startswith("    "):
                out[-1] = out[-1] + " " + stripped
            else:
                out.append(ln if ln.startswith("    ") else stripped)
        paragraphs.append("\n".join(x for x in out if x.strip()))
    text = "\n\n".join(p for p in paragraphs if p)
    return text or None


def jsonable(value: typing.Any) -> tuple[bool, typing.Any]:
    """(ok, value) where value is a JSON-compatible rendering of a framework default."""
    if value is None or isinstance(value, (bool, str)):
        return True, value
    if isinstance(value, enum.Enum):
        return jsonable(value.value)
    if isinstance(value, int):
        return True, int(value)
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            return False, None
        return True, value
    if isinstance(value, pathlib.PurePath):
        return True, str(value)
    if isinstance(value, (list, tuple)):
        out = []
        for v in value:
            ok, j = jsonable(v)
            if not ok:
                return False, None
            out.append(j)
        return True, out
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            ok, j = jsonable(v)
            if not ok or not isinstance(k, (str, int)):
                return False, None
            out[str(k)] = j
        return True, out
    mod = type(value).__module__
    if mod.startswith("torch") and type(value).__name__ == "dtype":
        return True, str(value).replace("torch.", "")
    return False, None


def schema_types(schema: dict) -> set[str]:
    t = schema.get("type")
    if isinstance(t, str):
        return {t}
    if isinstance(t, list):
        return set(t)
    return set()


def merge_any_of(options: list[dict]) -> dict:
    """Combine alternatives; plain `{"type": X}` alternatives collapse into one type list."""
    flat: list[dict] = []
    for o in options:
        if set(o) == {"anyOf"}:
            flat.extend(o["anyOf"])
        else:
            flat.append(o)
    if any(o == {} for o in flat):
        return {}
    simple = [o for o in flat if set(o) == {"type"}]
    other = [o for o in flat if set(o) != {"type"}]
    types_: list[str] = []
    for o in simple:
        for t in sorted(schema_types(o)):
            if t not in types_:
                types_.append(t)
    # "number" covers "integer"
    if "number" in types_ and "integer" in types_:
        types_.remove("integer")
    result: list[dict] = []
    if types_:
        result.append({"type": types_[0] if len(types_) == 1 else sorted(types_)})
    dedup: list[dict] = []
    for o in other:
        if o not in dedup:
            dedup.append(o)
    result.extend(dedup)
    if len(result) == 1:
        return result[0]
    return {"anyOf": result}


def with_auto(schema: dict) -> dict:
    """Let a value also be the string "auto" (filled by HF Trainer / Accelerate / Lightning)."""
    if schema == {}:
        return {}
    if "anyOf" in schema:
        if AUTO in schema["anyOf"]:
            return schema
        return {**schema, "anyOf": [*schema["anyOf"], AUTO]}
    if "enum" in schema and schema.get("type") == "string":
        return schema if "auto" in schema["enum"] else {**schema, "enum": [*schema["enum"], "auto"]}
    return {"anyOf": [schema, AUTO]}


def attr_docstrings(cls: type) -> dict[str, str]:
    """Attribute docstrings (a string literal right after an annotated class attribute), along the MRO."""
    out: dict[str, str] = {}
    for klass in reversed(cls.__mro__):
        if klass is object:
            continue
        try:
            src = textwrap.dedent(inspect.getsource(klass))
            tree = ast.parse(src)
        except (OSError, TypeError, SyntaxError, IndentationError):
            continue
        if not tree.body or not isinstance(tree.body[0], ast.ClassDef):
            continue
        body = tree.body[0].body
        for node, nxt in zip(body, body[1:]):
            if (
                isinstance(node, ast.AnnAssign)
                and isinstance(node.target, ast.Name)
                and isinstance(nxt, ast.Expr)
                and isinstance(nxt.value, ast.Constant)
                and isinstance(nxt.value.value, str)
            ):
                text = clean_text(nxt.value.value)
                if text:
                    out[node.target.id] = text
    return out


def enum_schema(values: list) -> dict:
    vals = []
    for v in values:
        ok, j = jsonable(v)
        if ok and j not in vals:
            vals.append(j)
    kinds = set()
    for v in vals:
        if isinstance(v, bool):
            kinds.add("boolean")
        elif isinstance(v, int):
            kinds.add("integer")
        elif isinstance(v, float):
            kinds.add("number")
        elif isinstance(v, str):
            kinds.add("string")
        elif v is None:
            kinds.add("null")
    out: dict = {"enum": vals}
    if len(kinds) == 1:
        out["type"] = kinds.pop()
    return out


class TypeMapper:
    """Python annotation -> JSON Schema, with pydantic models collected into $defs."""

    def __init__(self, model_hook=None):
        self.model_hook = model_hook

    def __call__(self, tp: typing.Any) -> dict:
        origin = typing.get_origin(tp)
        args = typing.get_args(tp)
        if origin is typing.Annotated:
            return self(args[0])
        if tp is typing.Any or tp is object or tp is inspect.Parameter.empty:
            return {}
        if tp is None or tp is type(None):
            return {"type": "null"}
        if tp is bool:
            return {"type": "boolean"}
        if tp is int:
            return {"type": "integer"}
        if tp is float:
            return {"type": "number"}
        if tp is str:
            return {"type": "string"}
        if isinstance(tp, type) and issubclass(tp, pathlib.PurePath):
            return {"type": "string"}
        if tp is datetime.timedelta:
            return {"anyOf": [{"type": "string"}, {"type": "object"}]}
        if origin is typing.Literal:
            return enum_schema(list(args))
        if origin is typing.Union or origin is types.UnionType:
            return self.union(args)
        if isinstance(tp, type) and issubclass(tp, enum.Enum):
            return enum_schema([m.value for m in tp])
        if origin in (list, tuple, set, frozenset) or tp in (list, tuple, set, frozenset):
            items = [a for a in args if a is not Ellipsis]
            out: dict = {"type": "array"}
            if len(items) == 1 or (origin is tuple and items and all(a == items[0] for a in items)):
                item_schema = self(items[0])
                if item_schema:
                    out["items"] = item_schema
            return out
        if origin is not None and getattr(origin, "__name__", "") in ("Iterable", "Sequence"):
            return {"type": "array"}
        if origin in (dict,) or tp is dict or (origin is not None and getattr(origin, "__name__", "") == "Mapping"):
            return {"type": "object"}
        if self.model_hook is not None:
            hooked = self.model_hook(tp)
            if hooked is not None:
                return hooked
        if getattr(tp, "__module__", "").startswith("torch") and getattr(tp, "__name__", "") == "dtype":
            return {"type": "string"}
        return {}

    def union(self, args) -> dict:
        # Union[SomeEnum, str] is how HF declares enum-valued options: the str is converted by the Enum
        # in __post_init__, so only the enum values are accepted.
        enums = [a for a in args if isinstance(a, type) and issubclass(a, enum.Enum)]
        rest = [a for a in args if a not in enums]
        if enums and all(a is str for a in rest if a is not type(None)):
            values: list = []
            for e in enums:
                values.extend(m.value for m in e)
            sch = enum_schema(values)
            if type(None) in rest:
                return merge_any_of([sch, {"type": "null"}])
            return sch
        return merge_any_of([self(a) for a in args])


def numeric_constraints(metadata) -> dict:
    out: dict = {}
    for m in metadata or ():
        name = type(m).__name__
        if name == "Gt":
            out["exclusiveMinimum"] = m.gt
        elif name == "Ge":
            out["minimum"] = m.ge
        elif name == "Lt":
            out["exclusiveMaximum"] = m.lt
        elif name == "Le":
            out["maximum"] = m.le
        elif name == "Interval":
            for attr, key in (("gt", "exclusiveMinimum"), ("ge", "minimum"), ("lt", "exclusiveMaximum"), ("le", "maximum")):
                if getattr(m, attr, None) is not None:
                    out[key] = getattr(m, attr)
    return {k: v for k, v in out.items() if jsonable(v)[0]}


def apply_constraints(schema: dict, cons: dict) -> dict:
    if not cons:
        return schema
    if schema_types(schema) & {"integer", "number"}:
        return {**schema, **cons}
    if "anyOf" in schema:
        return {**schema, "anyOf": [apply_constraints(o, cons) for o in schema["anyOf"]]}
    return schema


def accepts_null(schema: dict) -> bool:
    if schema == {} or "null" in schema_types(schema) or None in schema.get("enum", [1]):
        return True
    return any(accepts_null(o) for o in schema.get("anyOf", []))


def finish_property(schema: dict, description=None, default=dataclasses.MISSING, extra=None) -> dict:
    """Put description/default next to the type information (outside any anyOf).

    A default of None means an explicit null is the same as leaving the key out, so null is accepted."""
    if default is None and not accepts_null(schema):
        schema = merge_any_of([{"type": "null"}, schema]) if "anyOf" in schema or set(schema) - {"type"} else merge_any_of([schema, {"type": "null"}])
    out = dict(schema)
    if description:
        out["description"] = description
    if default is not dataclasses.MISSING:
        ok, j = jsonable(default)
        if ok:
            out["default"] = j
    if extra:
        out.update(extra)
    return out


# --------------------------------------------------------------------------------------------------
# DeepSpeed


# Short descriptions for DeepSpeed fields that carry no docstring of their own.
DS_EXTRA_DESCRIPTIONS = {
    ("CommsLoggerConfig", "enabled"): "Log communication operations.",
    ("CommsLoggerConfig", "prof_all"): "Profile all communication operations.",
    ("CommsLoggerConfig", "prof_ops"): "Names of the communication operations to profile when prof_all is false.",
    ("CommsLoggerConfig", "verbose"): "Print every logged operation immediately.",
    ("CommsLoggerConfig", "debug"): "Add the calling function's name to each log entry.",
    ("HybridEngineConfig", "enabled"): "Enable the hybrid engine (training plus fast generation, for RLHF).",
    ("HybridEngineConfig", "max_out_tokens"): "Maximum number of tokens the inference side generates.",
    ("HybridEngineConfig", "inference_tp_size"): "Tensor-parallel degree of the inference side.",
    ("HybridEngineConfig", "release_inference_cache"): "Release the inference KV cache after generation.",
    ("HybridEngineConfig", "pin_parameters"): "Keep gathered parameters pinned during generation.",
    ("HybridEngineConfig", "tp_gather_partition_size"): "Partition size used when gathering tensor-parallel weights.",
    ("HybridEngineConfig", "enable_cuda_graph"): "Capture generation in CUDA graphs.",
}
FLOPS_PROFILER_DESCRIPTIONS = {
    "enabled": "Enable the FLOPs profiler (also turns on wall_clock_breakdown).",
    "recompute_fwd_factor": "Share of the forward pass recomputed in backward (activation checkpointing), for FLOP counts.",
    "profile_step": "Training step at which to profile.",
    "module_depth": "Depth of the module tree to print (-1: all).",
    "top_modules": "Number of top modules to print.",
    "detailed": "Print the detailed per-module profile.",
    "output_file": "File to write the profile to (null: stdout).",
}
PIPELINE_DESCRIPTIONS = {
    "stages": "Number of pipeline stages (\"auto\": from the model).",
    "partition": "How layers are split across stages (e.g. best, uniform, parameters).",
    "seed_layers": "Seed each layer differently.",
    "activation_checkpoint_interval": "Checkpoint activations every N layers (0: off).",
    "pipe_partitioned": "Partition activations sent between stages.",
    "grad_partitioned": "Partition gradients sent between stages.",
}

# Minimums that DeepSpeed enforces in model validators rather than in Field(ge=...) metadata.
DS_VALIDATOR_MINIMUMS = {
    ("DeepSpeedFP16Config", "loss_scale"): 0,  # "fp16.loss_scale must be >= 0 (0 enables dynamic loss scaling)"
}


def gen_deepspeed() -> dict:
    import deepspeed  # noqa: F401
    from deepspeed.runtime import constants as C
    from deepspeed.runtime import config as ds_config
    from deepspeed.runtime.config_utils import DeepSpeedConfigModel
    from deepspeed.runtime.zero.config import DeepSpeedZeroConfig
    from deepspeed.runtime.precision_config import DeepSpeedBF16Config, DeepSpeedFP16Config
    from deepspeed.monitor.config import TensorBoardConfig, WandbConfig, CSVConfig, CometConfig
    from deepspeed.comm.config import CommsLoggerConfig
    from deepspeed.compile.config import CompileConfig
    from deepspeed.runtime.tensor_parallel.config import TPTrainingConfig
    from deepspeed.utils.config import DeepSpeedThroughputTimerConfig
    from pydantic_core import PydanticUndefined

    defs: dict[str, dict] = {}

    def model_hook(tp):
        if isinstance(tp, type) and issubclass(tp, DeepSpeedConfigModel):
            model_def(tp)
            return {"$ref": f"#/$defs/{tp.__name__}"}
        return None

    mapper = TypeMapper(model_hook)

    def model_def(cls) -> None:
        name = cls.__name__
        if name in defs:
            return
        defs[name] = {}  # placeholder against recursion
        docs = attr_docstrings(cls)
        props: dict[str, dict] = {}
        for fname, f in cls.model_fields.items():
            base = apply_constraints(mapper(f.annotation), numeric_constraints(f.metadata))
            if (name, fname) in DS_VALIDATOR_MINIMUMS:
                base = apply_constraints(base, {"minimum": DS_VALIDATOR_MINIMUMS[(name, fname)]})
            if name == "DeepSpeedZeroConfig" and fname == "stage":
                base = {"type": "integer", "enum": sorted({int(m.value) for m in f.annotation})}
            extra: dict = {}
            jse = f.json_schema_extra if isinstance(f.json_schema_extra, dict) else {}
            if jse.get("deprecated") or f.deprecated:
                extra["deprecated"] = True
                if jse.get("new_param"):
                    extra["x-trainlint-replacement"] = jse["new_param"]
            default = dataclasses.MISSING
            if f.default is not PydanticUndefined:
                default = f.default
            elif f.default_factory is not None:
                try:
                    default = f.default_factory()
                except TypeError:
                    default = dataclasses.MISSING
            if isinstance(default, DeepSpeedConfigModel):
                default = dataclasses.MISSING
            desc = clean_text(f.description) or docs.get(fname) or DS_EXTRA_DESCRIPTIONS.get((name, fname))
            # DeepSpeedConfigModel.__init__ drops every key whose value is "auto" (non-strict mode).
            prop = finish_property(with_auto(base), desc, default, extra)
            if f.alias and f.alias != fname:
                prop["x-trainlint-aliases"] = [f.alias]
                props[f.alias] = {**prop, "x-trainlint-alias-of": fname}
                props[f.alias].pop("x-trainlint-aliases")
            props[fname] = prop
        forbid = cls.model_config.get("extra") == "forbid"
        d = {
            "type": "object",
            "title": name,
            "properties": props,
            "additionalProperties": not forbid,
            "x-trainlint-unknown-keys": "forbidden" if forbid else "ignored",
            "x-trainlint-python": f"{cls.__module__}.{cls.__qualname__}",
        }
        desc = clean_text(cls.__doc__)
        if desc and "pydantic" not in desc.lower():
            d["description"] = desc
        defs[name] = d

    # ---- dict-read sections, from the *_DEFAULT constants ------------------------------------
    def constants_section(module, prefix: str, skip=(), types_=None, descriptions=None) -> dict:
        types_ = types_ or {}
        descriptions = descriptions or {}
        props = {}
        for const in sorted(vars(module)):
            if not const.startswith(prefix) or const.endswith("_DEFAULT") or const.endswith("_FORMAT"):
                continue
            key = getattr(module, const)
            if not isinstance(key, str) or not hasattr(module, const + "_DEFAULT") or key in skip:
                continue
            default = getattr(module, const + "_DEFAULT")
            if key in types_:
                base = types_[key]
            elif isinstance(default, bool):
                base = {"type": "boolean"}
            elif isinstance(default, int):
                base = {"type": "integer"}
            elif isinstance(default, float):
                base = {"type": "number"}
            elif isinstance(default, str):
                base = {"type": "string"}
            else:
                base = {}
            props[key] = finish_property(base, descriptions.get(key), default)
        return props

    def dict_section(title, props, description) -> dict:
        return {
            "type": "object",
            "title": title,
            "description": description,
            "properties": props,
            "additionalProperties": True,
            "x-trainlint-unknown-keys": "ignored",
        }

    from deepspeed.runtime.activation_checkpointing import config as act_cfg
    from deepspeed.runtime.swap_tensor import constants as aio_c
    from deepspeed.profiling import constants as prof_c
    from deepspeed.autotuning import constants as at_c

    act_props = constants_section(
        act_cfg,
        "ACT_CHKPT_",
        types_={"number_checkpoints": {"type": ["integer", "null"], "minimum": 1}},
        descriptions={
            "partition_activations": "Partition checkpointed activations across model-parallel ranks.",
            "number_checkpoints": "Number of activation checkpoints kept (Megatron-style checkpointing only).",
            "contiguous_memory_optimization": "Copy partitioned activations into one contiguous buffer.",
            "synchronize_checkpoint_boundary": "Synchronize the device at each checkpoint boundary.",
            "profile": "Log forward/backward time of each checkpointed function.",
            "cpu_checkpointing": "Offload partitioned activations to CPU (requires partition_activations).",
        },
    )
    aio_props = constants_section(
        aio_c,
        "AIO_",
        descriptions={
            "block_size": "I/O block size in bytes for NVMe offload.",
            "queue_depth": "I/O queue depth.",
            "intra_op_parallelism": "Number of I/O threads per request.",
            "single_submit": "Submit requests one at a time instead of in batches.",
            "overlap_events": "Overlap submission and completion of I/O requests.",
            "use_gds": "Use NVIDIA GPUDirect Storage.",
        },
    )
    prof_props = constants_section(prof_c, "FLOPS_PROFILER_", descriptions=FLOPS_PROFILER_DESCRIPTIONS)
    at_props = constants_section(at_c, "AUTOTUNING_")

    # checkpoint: runtime constants + model_checkpointing constants
    ckpt_props = {
        C.CHECKPOINT_TAG_VALIDATION: finish_property(
            {"type": "string"},
            "Checkpoint tag validation across ranks: Warn, Ignore or Fail (case-insensitive).",
            C.CHECKPOINT_TAG_VALIDATION_DEFAULT,
            {"examples": [str(m) for m in C.CHECKPOINT_TAG_VALIDATION_MODES]},
        ),
        C.LOAD_UNIVERSAL_CHECKPOINT: finish_property({"type": "boolean"}, "Load a universal checkpoint.", C.LOAD_UNIVERSAL_CHECKPOINT_DEFAULT),
        C.USE_NODE_LOCAL_STORAGE_CHECKPOINT: finish_property(
            {"type": "boolean"}, "Save checkpoints to node-local storage (HF sets it from save_on_each_node).", C.USE_NODE_LOCAL_STORAGE_CHECKPOINT_DEFAULT
        ),
        C.CHECKPOINT_PARALLEL_WRITE: finish_property(
            {"type": "object", "properties": {C.CHECKPOINT_PARALLEL_WRITE_PIPELINE_STAGE: {"type": "boolean", "default": C.CHECKPOINT_PARALLEL_WRITE_PIPELINE_STAGE_DEFAULT}}},
            "Parallel checkpoint writing.",
        ),
    }
    try:
        from deepspeed.runtime.model_checkpointing import constants as mc_c

        mc_props = constants_section(
            mc_c,
            "CHECKPOINT_",
            types_={"data_parallel": {"type": ["string", "null"]}},
            descriptions={
                "checkpoint_serialization": "Save checkpoints with torch serialization (False selects the faster non-serialized format).",
                "type": "Checkpoint writer implementation (MOCK, PYTHON, FAST).",
                "decoupled": "Write checkpoints in a decoupled (background) process.",
                "io_buffer_size": "I/O buffer size in bytes of the fast writer.",
                "io_buffer_double": "Use double buffering in the fast writer.",
                "show_statistics": "Print checkpoint write statistics.",
                "data_parallel": "Unit of data-parallel checkpoint writing (REPLICA, SOCKET, MACHINE).",
                "io_multiplier": "I/O multiplier of the fast writer.",
            },
        )
        writer_keys = {"type", "decoupled", "io_buffer_size", "io_buffer_double", "show_statistics", "data_parallel", "io_multiplier"}
        writer_props = {k: v for k, v in mc_props.items() if k in writer_keys}
        for key in ("type", "data_parallel"):
            if key in writer_props:
                writer_props[key]["examples"] = sorted(
                    getattr(mc_c, "CHECKPOINT_WRITER_TYPES" if key == "type" else "CHECKPOINT_DATA_PARALLEL_UNITS", [])
                )
        for k, v in mc_props.items():
            if k not in writer_keys and k != "writer":
                ckpt_props.setdefault(k, v)
        ckpt_props["writer"] = finish_property(
            {"type": "object", "properties": writer_props}, "Checkpoint writer settings (null: the default torch.save writer).", None
        )
    except ImportError:
        pass

    dtype_names = sorted({v for m in ds_config.DtypeEnum for v in m._all_values if isinstance(v, str) and not v.startswith("torch.")})
    data_types_props = {
        C.GRAD_ACCUM_DTYPE: finish_property({"type": ["string", "null"]}, "Data type used to accumulate gradients (fp16, bf16, fp32).", C.GRAD_ACCUM_DTYPE_DEFAULT, {"examples": dtype_names}),
        C.PARAM_DTYPE: finish_property({"type": ["string", "null"]}, "Parameter data type; must agree with the enabled fp16/bf16 mode.", C.PARAM_DTYPE_DEFAULT, {"examples": dtype_names}),
        C.BUFFER_DTYPE: finish_property({"type": ["string", "null"]}, "Buffer data type; null keeps buffers at their loaded dtype.", C.BUFFER_DTYPE_DEFAULT, {"examples": dtype_names}),
        C.KEEP_IN_FP32_MODULES: finish_property(
            {"anyOf": [{"const": "auto"}, {"type": "array", "items": {"type": "string"}}]},
            'Modules whose buffers stay fp32 under 16-bit training: "auto" or a list of name patterns.',
            C.KEEP_IN_FP32_MODULES_DEFAULT,
        ),
    }

    pipeline_defaults = ds_config.get_pipeline_config({})
    pipeline_props = {k: finish_property({}, PIPELINE_DESCRIPTIONS.get(k), v) for k, v in pipeline_defaults.items()}

    autocast_props = {
        C.TORCH_AUTOCAST_ENABLED: finish_property({"type": "boolean"}, "Run the forward pass under torch.autocast.", C.TORCH_AUTOCAST_ENABLED_DEFAULT),
        C.TORCH_AUTOCAST_DTYPE: finish_property({"type": "string"}, "Autocast data type (e.g. bfloat16, float16).", extra={"examples": dtype_names}),
        C.TORCH_AUTOCAST_LOWER_PRECISION_SAFE_MODULES: finish_property({"type": "array", "items": {"type": "string"}}, "Module classes that run in the lower precision."),
    }

    opt_names = sorted(ds_config.DEEPSPEED_OPTIMIZERS)
    optimizer = dict_section(
        "optimizer",
        {
            C.TYPE: finish_property(
                {"type": "string"},
                "Optimizer name, case-insensitive: a DeepSpeed optimizer or a torch.optim class name.",
                extra={"examples": opt_names},
            ),
            C.OPTIMIZER_PARAMS: finish_property(
                {"type": "object", "additionalProperties": {"anyOf": [{"type": ["number", "boolean", "string", "array", "null"]}]}},
                "Optimizer constructor arguments (lr, betas, eps, weight_decay, ...); HF Trainer fills \"auto\" values.",
            ),
            C.LEGACY_FUSION: finish_property({"type": "boolean"}, "Use the legacy fused optimizer step.", C.LEGACY_FUSION_DEFAULT),
        },
        "Optimizer built by DeepSpeed (read with dict.get).",
    )
    scheduler = dict_section(
        "scheduler",
        {
            C.TYPE: finish_property(
                {"type": "string"},
                "Learning-rate scheduler name.",
                extra={"examples": sorted(getattr(importlib.import_module("deepspeed.runtime.lr_schedules"), "VALID_LR_SCHEDULES", []))},
            ),
            C.OPTIMIZER_PARAMS: finish_property({"type": "object"}, "Scheduler arguments; HF Trainer fills \"auto\" values."),
        },
        "Learning-rate scheduler built by DeepSpeed (read with dict.get).",
    )

    for cls in (
        DeepSpeedZeroConfig,
        DeepSpeedFP16Config,
        DeepSpeedBF16Config,
        TensorBoardConfig,
        WandbConfig,
        CSVConfig,
        CometConfig,
        CommsLoggerConfig,
        CompileConfig,
        TPTrainingConfig,
        DeepSpeedThroughputTimerConfig,
        ds_config.HybridEngineConfig,
    ):
        model_def(cls)
    # tensor_parallel: mpu / tp_group are Python objects, never set from a file
    for key in ("injection_policy_tuple",):
        defs["TPTrainingConfig"]["properties"].pop(key, None)
    tp = defs.get("TPConfig")
    if tp:
        for key in ("mpu", "tp_group"):
            tp["properties"].pop(key, None)

    def ref(name):
        return {"$ref": f"#/$defs/{name}"}

    comm_types = ["fp16", "bf16", "fp32"]
    top: dict[str, dict] = {}

    def scalar(key, base, desc, default=dataclasses.MISSING, auto=True, extra=None):
        top[key] = finish_property(with_auto(base) if auto else base, desc, default, extra)

    scalar(C.TRAIN_BATCH_SIZE, {"type": "integer", "minimum": 1}, "Global batch size per optimizer step: micro batch x gradient accumulation x data-parallel world size. DeepSpeed derives whichever of the three is missing.", C.TRAIN_BATCH_SIZE_DEFAULT)
    scalar(C.TRAIN_MICRO_BATCH_SIZE_PER_GPU, {"type": "integer", "minimum": 1}, "Samples per GPU per forward/backward step.", C.TRAIN_MICRO_BATCH_SIZE_PER_GPU_DEFAULT)
    scalar(C.GRADIENT_ACCUMULATION_STEPS, {"type": "integer", "minimum": 1}, "Micro steps accumulated before each optimizer step.", C.GRADIENT_ACCUMULATION_STEPS_DEFAULT)
    scalar(C.MANAGED_GRADIENT_ACCUMULATION, {"type": "boolean"}, "Let the engine manage gradient accumulation boundaries.", C.MANAGED_GRADIENT_ACCUMULATION_DEFAULT)
    scalar(C.STEPS_PER_PRINT, {"type": ["integer", "null"]}, "Print progress every N steps.", C.STEPS_PER_PRINT_DEFAULT)
    scalar(C.WALL_CLOCK_BREAKDOWN, {"type": "boolean"}, "Time forward/backward/step of each iteration.", C.WALL_CLOCK_BREAKDOWN_DEFAULT)
    scalar(C.MEMORY_BREAKDOWN, {"type": "boolean"}, "Report memory usage breakdown.", C.MEMORY_BREAKDOWN_DEFAULT)
    scalar(C.DUMP_STATE, {"type": "boolean"}, "Print the DeepSpeed state after initialization.", C.DUMP_STATE_DEFAULT)
    scalar(C.DISABLE_PYTHON_GC, {"type": "boolean"}, "Disable Python garbage collection during training.", C.DISABLE_PYTHON_GC_DEFAULT)
    scalar(C.DISABLE_ALLGATHER, {"type": "boolean"}, "Disable allgather (use broadcast).", C.DISABLE_ALLGATHER_DEFAULT)
    scalar(C.GRADIENT_CLIPPING, {"type": "number", "minimum": 0}, "Clip gradients to this global norm (0 disables). HF Trainer fills it from max_grad_norm.", C.GRADIENT_CLIPPING_DEFAULT)
    scalar(C.COMMUNICATION_DATA_TYPE, {"enum": [*comm_types, None]}, "Data type for gradient communication.", C.COMMUNICATION_DATA_TYPE_DEFAULT, auto=False)
    scalar(C.SEQ_PARALLEL_COMMUNICATION_DATA_TYPE, {"enum": comm_types, "type": "string"}, "Data type for sequence-parallel communication.", C.SEQ_PARALLEL_COMMUNICATION_DATA_TYPE_DEFAULT, auto=False)
    scalar(C.PRESCALE_GRADIENTS, {"type": "boolean"}, "Scale gradients before all-reduce.", C.PRESCALE_GRADIENTS_DEFAULT)
    scalar(C.GRADIENT_PREDIVIDE_FACTOR, {"type": "number"}, "Divide gradients by this factor before all-reduce.", C.GRADIENT_PREDIVIDE_FACTOR_DEFAULT)
    scalar(C.GRADIENT_ALLREDUCE_OP, {"type": "string", "enum": list(C.GRADIENT_ALLREDUCE_OP_SUPPORTED)}, "Gradient all-reduce operation ('sum' is not supported with ZeRO stage 3).", C.GRADIENT_ALLREDUCE_OP_DEFAULT, auto=False)
    scalar(C.ZERO_ALLOW_UNTESTED_OPTIMIZER, {"type": "boolean"}, "Allow a client optimizer that DeepSpeed has not tested with ZeRO.", C.ZERO_ALLOW_UNTESTED_OPTIMIZER_DEFAULT)
    scalar(C.ZERO_FORCE_DS_CPU_OPTIMIZER, {"type": "boolean"}, "Require DeepSpeedCPUAdam when the optimizer is offloaded (raise with a client optimizer).", C.ZERO_FORCE_DS_CPU_OPTIMIZER_DEFAULT)
    scalar(C.VOCABULARY_SIZE, {"type": ["integer", "null"]}, "Vocabulary size (used for padding embeddings).", C.VOCABULARY_SIZE_DEFAULT)
    scalar(C.DATALOADER_DROP_LAST, {"type": "boolean"}, "Drop the last incomplete batch of the DeepSpeed dataloader.", C.DATALOADER_DROP_LAST_DEFAULT)
    scalar(C.LOG_LEVEL, {"type": ["string", "null"]}, "DeepSpeed logger level.", C.LOG_LEVEL_DEFAULT, auto=False)
    scalar(C.USE_DATA_BEFORE_EXPERT_PARALLEL, {"type": "boolean"}, "Order the data-parallel group before the expert-parallel group.", C.USE_DATA_BEFORE_EXPERT_PARALLEL_DEFAULT)
    scalar("sequence_parallel_size", {"type": "integer", "minimum": 1}, "Ulysses sequence-parallel degree; the data-parallel world size is divided by it.")

    top["zero_optimization"] = {
        "description": "ZeRO redundancy optimizer settings (pydantic DeepSpeedZeroConfig, unknown keys rejected). "
        "The legacy form `true`/`false` is accepted with a deprecation warning.",
        "anyOf": [ref("DeepSpeedZeroConfig"), {"type": "boolean", "deprecated": True}],
    }
    top[C.FP16] = {**ref("DeepSpeedFP16Config"), "description": "fp16 mixed precision with loss scaling (DeepSpeedFP16Config, unknown keys rejected)."}
    top[C.BFLOAT16] = {**ref("DeepSpeedBF16Config"), "description": "bfloat16 mixed precision (DeepSpeedBF16Config, unknown keys rejected)."}
    top[C.BFLOAT16_OLD] = {**ref("DeepSpeedBF16Config"), "description": "Legacy name of `bf16`, read only when `bf16` is absent.", "deprecated": True, "x-trainlint-replacement": C.BFLOAT16}
    for key, name in (("tensorboard", "TensorBoardConfig"), ("wandb", "WandbConfig"), ("csv_monitor", "CSVConfig"), ("comet", "CometConfig")):
        top[key] = {**ref(name), "description": f"{key} monitor ({name}, unknown keys rejected)."}
    top["comms_logger"] = {**ref("CommsLoggerConfig"), "description": "Communication logger (CommsLoggerConfig, unknown keys rejected)."}
    top["compile"] = {**ref("CompileConfig"), "description": "DeepCompile settings (CompileConfig, unknown keys rejected)."}
    top["tensor_parallel"] = {**ref("TPTrainingConfig"), "description": "AutoTP training settings (TPTrainingConfig, unknown keys rejected)."}
    top["hybrid_engine"] = {**ref("HybridEngineConfig"), "description": "Hybrid engine for RLHF generation (HybridEngineConfig, unknown keys rejected)."}
    top["timers"] = dict_section(
        "timers", {"throughput": {**ref("DeepSpeedThroughputTimerConfig"), "description": "Throughput timer."}}, "Timers; only `throughput` is read."
    )
    top[act_cfg.ACT_CHKPT] = dict_section("activation_checkpointing", act_props, "DeepSpeed activation checkpointing (only for models that call deepspeed.checkpointing; HF models use gradient_checkpointing instead). Read with dict.get.")
    top[aio_c.AIO] = dict_section("aio", aio_props, "Asynchronous I/O settings for NVMe offload (top level, not inside zero_optimization).")
    top[prof_c.FLOPS_PROFILER] = dict_section("flops_profiler", prof_props, "FLOPs profiler.")
    top[at_c.AUTOTUNING] = dict_section("autotuning", at_props, "Autotuner settings.")
    top[C.CHECKPOINT] = dict_section("checkpoint", ckpt_props, "Checkpoint settings.")
    top[C.DATA_TYPES] = dict_section("data_types", data_types_props, "Data types of gradient accumulation, parameters and buffers.")
    top["pipeline"] = dict_section("pipeline", pipeline_props, "Pipeline engine settings (defaults shown are DeepSpeed's).")
    top[C.TORCH_AUTOCAST] = dict_section("torch_autocast", autocast_props, "torch.autocast mixed precision.")
    top[C.OPTIMIZER] = optimizer
    top[C.SCHEDULER] = scheduler
    for key, desc in (
        ("data_efficiency", "Data efficiency library (data sampling / routing)."),
        ("datastates", "DataStates asynchronous checkpointing."),
        ("weight_quantization", "Weight quantization settings."),
        (getattr(ds_config, "EXPERT_PARALLEL", "expert_parallel"), "Automatic expert parallelism (AutoEP) settings."),
    ):
        top[key] = {"type": "object", "description": desc}

    top["$schema"] = {"type": "string", "description": "JSON Schema reference for editors; DeepSpeed ignores this key."}

    removed = {}
    for key, message in sorted(ds_config._REMOVED_TOP_LEVEL_CONFIG_KEYS.items()):
        removed[key] = {"message": " ".join(message.split()), "replacement": None}
    zero_removed = {key: {"message": " ".join(m.split()), "replacement": None} for key, m in sorted(ds_config._REMOVED_ZERO_CONFIG_KEYS.items())}
    for key, info in removed.items():
        top[key] = {"description": info["message"], "deprecated": True, "not": {}, "x-trainlint-removed-message": info["message"]}
    zprops = defs["DeepSpeedZeroConfig"]["properties"]
    for key, info in zero_removed.items():
        zprops.setdefault(key, {"description": info["message"], "deprecated": True, "not": {}, "x-trainlint-removed-message": info["message"]})
    defs["DeepSpeedZeroConfig"]["x-trainlint-removed"] = zero_removed

    defs["ClassPath"] = CLASS_PATH_DEF
    defs.pop("ClassPath")
    return {
        "$schema": DRAFT,
        "$id": BASE_ID + "deepspeed.schema.json",
        "title": "DeepSpeed configuration",
        "description": "DeepSpeed config (ds_config.json, read with hjson). Top-level keys are read with dict.get: "
        "unknown top-level keys are silently ignored by DeepSpeed (trainlint warns). Pydantic sections reject unknown keys. "
        "Any value inside a pydantic section may be \"auto\" (DeepSpeed drops it, or HF Trainer/Accelerate fill it).",
        "type": "object",
        "properties": top,
        "additionalProperties": True,
        "x-trainlint-unknown-keys": "ignored",
        "x-trainlint-removed": removed,
        "x-trainlint-source": {"package": "deepspeed", "version": version_of("deepspeed"), "pydantic": version_of("pydantic")},
        "$defs": defs,
    }


# --------------------------------------------------------------------------------------------------
# dataclass helpers (transformers, TRL, accelerate)

DEPRECATED_ALIAS = re.compile(r"^\W*deprecated\W+alias of `([A-Za-z_][A-Za-z0-9_]*)`", re.IGNORECASE)
USE_INSTEAD = re.compile(r"\b[Uu]se `([A-Za-z_][A-Za-z0-9_]*)`(?: instead)?")


def dataclass_properties(cls, mapper: TypeMapper, overrides=None) -> dict[str, dict]:
    overrides = overrides or {}
    hints = typing.get_type_hints(cls, include_extras=False)
    props = {}
    for f in dataclasses.fields(cls):
        if not f.init or f.name.startswith("_"):
            continue
        if f.name in overrides:
            base = overrides[f.name]
        else:
            base = mapper(hints.get(f.name, f.type))
            choices = f.metadata.get("choices") if f.metadata else None
            if choices:
                sch = enum_schema(list(choices))
                base = merge_any_of([sch, {"type": "null"}]) if "null" in schema_types(base) else sch
        default = dataclasses.MISSING
        if f.default is not dataclasses.MISSING:
            default = f.default
        elif f.default_factory is not dataclasses.MISSING:  # type: ignore[misc]
            try:
                default = f.default_factory()  # type: ignore[misc]
            except Exception:  # noqa: BLE001
                default = dataclasses.MISSING
        help_ = clean_text(f.metadata.get("help")) if f.metadata else None
        extra = {}
        if help_ and re.match(r"^\W*deprecated\b", help_, re.IGNORECASE):
            extra["deprecated"] = True
            m = DEPRECATED_ALIAS.match(help_) or USE_INSTEAD.search(help_)
            if m and m.group(1) != f.name:
                extra["x-trainlint-replacement"] = m.group(1)
        props[f.name] = finish_property(base, help_, default, extra)
    return props


# --------------------------------------------------------------------------------------------------
# transformers + TRL

# Keys of transformers v4 / older TRL that the current versions no longer accept, with their
# replacement. Each entry is checked at generation time to be absent from the current classes.
# Release history read from the PyPI wheels (transformers 4.40 - 5.24: the TrainingArguments fields of each
# release) and TRL's git tags (v0.15 - v1.9) plus wheels (1.14 - 1.16); see docs/rules/TL524.md.
# deprecated: first release that warns; removed: first release without the field; replacement_since: first
# release that accepts the replacement (a rename is only safe where it predates the removal).
_T, _TRL = "transformers", "TRL"
HF_REMOVED = {
    # key: (replacement key or dotted path, or None; package, deprecated, removed, replacement_since; hint)
    "evaluation_strategy": ("eval_strategy", _T, "4.41.0", "4.51.0", "4.41.0", None),
    "dispatch_batches": ("accelerator_config.dispatch_batches", _T, "4.40.0", "4.51.0", "4.40.0", None),
    "split_batches": ("accelerator_config.split_batches", _T, "4.40.0", "4.51.0", "4.40.0", None),
    "sharded_ddp": ("fsdp", _T, None, "4.40.0", "4.40.0", None),  # already gone in 4.40.2, the oldest release read
    "tp_size": ("parallelism_config", _T, None, "4.52.0", "4.56.0", "set tp_size inside parallelism_config"),
    "use_ipex": (None, _T, "4.53.0", "4.57.0", None, None),
    "per_gpu_train_batch_size": ("per_device_train_batch_size", _T, "4.40.0", "5.0.0", "4.40.0", None),
    "per_gpu_eval_batch_size": ("per_device_eval_batch_size", _T, "4.40.0", "5.0.0", "4.40.0", None),
    "no_cuda": ("use_cpu", _T, "4.40.0", "5.0.0", "4.40.0", None),
    "fp16_backend": (None, _T, "4.40.0", "5.0.0", None, "mixed precision always uses torch amp now"),
    "half_precision_backend": (None, _T, None, "5.0.0", None, "mixed precision always uses torch amp now"),
    "fp16_opt_level": (None, _T, None, "5.0.0", None, "apex opt levels are no longer supported"),
    "adafactor": ("optim", _T, "4.40.0", "5.0.0", "4.40.0", "write `optim: adafactor`"),
    "torchdynamo": ("torch_compile_backend", _T, "4.40.0", "5.0.0", "4.40.0", None),
    "fsdp_min_num_params": ("fsdp_config.min_num_params", _T, "4.40.0", "5.0.0", "4.40.0", None),
    "fsdp_transformer_layer_cls_to_wrap": ("fsdp_config.transformer_layer_cls_to_wrap", _T, "4.40.0", "5.0.0", "4.40.0", None),
    "push_to_hub_token": ("hub_token", _T, "4.40.0", "5.0.0", "4.40.0", None),
    "push_to_hub_model_id": ("hub_model_id", _T, "4.40.0", "5.0.0", "4.40.0", None),
    "push_to_hub_organization": ("hub_model_id", _T, "4.40.0", "5.0.0", "4.40.0", "write the organization into hub_model_id (org/name)"),
    "tpu_metrics_debug": ("debug", _T, "4.40.0", "5.0.0", "4.40.0", "write `debug: tpu_metrics_debug`"),
    "include_inputs_for_metrics": ("include_for_metrics", _T, "4.46.0", "5.0.0", "4.46.0", "write `include_for_metrics: [inputs]`"),
    "overwrite_output_dir": (None, _T, None, "5.0.0", None, None),
    "save_safetensors": (None, _T, None, "5.0.0", None, "checkpoints are always saved as safetensors"),
    "ray_scope": (None, _T, None, "5.0.0", None, None),
    "tpu_num_cores": (None, _T, None, "5.0.0", None, None),
    "use_mps_device": (None, _T, "4.40.0", "5.0.0", None, "MPS is used automatically"),
    "jit_mode_eval": (None, _T, None, "5.0.0", None, None),
    "group_by_length": ("train_sampling_strategy", _T, None, "5.2.0", "5.2.0", "write `train_sampling_strategy: group_by_length`"),
    "warmup_ratio": ("warmup_steps", _T, "5.0.0", "5.15.0", "5.0.0", "a warmup_steps value below 1 is read as a ratio of the total steps"),
    "logging_dir": (None, _T, "5.0.0", "5.15.0", None, "set the TENSORBOARD_LOGGING_DIR environment variable instead"),
    "max_seq_length": ("max_length", _TRL, "0.16.0", "0.20.0", "0.16.0", None),  # SFTConfig
    # GRPOConfig: deprecated 0.26.0, removed 0.28.0; DPOConfig/RLOOConfig: deprecated 0.28.0, removed 0.29.0.
    # TRL 1.x distillation configs (experimental sdpo, sdft, a2po, iw_opd) still have it.
    "max_prompt_length": (None, _TRL, "0.26.0", "0.28.0", None, "filter over-long prompts from the dataset instead"),
    "torch_dtype": ("dtype", _TRL, "0.23.0", "0.27.0", "0.23.0", None),  # ModelConfig
    # GRPOConfig: added 0.15.0 (78c5ce23f), deprecated 0.16.0, removed 0.18.0 (a8cfca6d0); vllm_max_model_length
    # came only in 0.26.0 (ca21dd94c): 0.18 - 0.25 have no such field
    "vllm_max_model_len": ("vllm_max_model_length", _TRL, "0.16.0", "0.18.0", "0.26.0",
                           "on TRL 0.18 - 0.25 set max_model_len in the vLLM server (trl vllm-serve --max_model_len)"),
}


# Enum values older releases accepted (OptimizerNames read from the wheels 4.49 - 5.24; TRL's packing strategies
# from its tags): key: {value: (package, first release without it, hint[, what refuses it, its message])}; without
# the last two, TrainingArguments refuses it with "{value} is not a valid OptimizerNames".
HF_REMOVED_VALUES = {
    "packing_strategy": {
        # SFTConfig default "ffd" in 0.19.0 - 0.19.1; renamed "bfd" in 0.20.0 (0353d6766, the packing was best-fit):
        # trl/data_utils.py pack_dataset raises when SFTTrainer packs the dataset (packing: true)
        "ffd": (_TRL, "0.20.0", "Write `packing_strategy: bfd` (the same packing, renamed in TRL 0.20).",
                "SFTTrainer's pack_dataset (packing: true)", "Invalid packing strategy: ffd. Use 'bfd' or 'wrapped'.",
                "packing"),
    },
    "optim": {
        "adamw_hf": (_T, "4.50.0", "Write `optim: adamw_torch` (the same AdamW update; transformers' own AdamW class went in 4.50)."),
        "adamw_apex_fused": (_T, "5.8.0", "Write `optim: adamw_torch_fused`."),
    },
}


def removed_entry(key: str) -> dict:
    replacement, package, deprecated, removed, replacement_since, hint = HF_REMOVED[key]
    return {"replacement": replacement, "since": f"{package} {removed.removesuffix('.0')}", "hint": hint,
            "package": package.lower(), "deprecated": deprecated, "removed": removed,
            "replacement_since": replacement_since}


# Bounds that TrainingArguments / TRL configs enforce in __post_init__ rather than in the field type.
# Each is applied only if its check is found in the class's source, so a framework change drops it.
HF_ENFORCED = {
    # key: (constraint, class name, source text of the check)
    "torch_empty_cache_steps": ({"exclusiveMinimum": 0}, "TrainingArguments", "self.torch_empty_cache_steps > 0"),
    "warmup_steps": ({"minimum": 0}, "TrainingArguments", "self.warmup_steps < 0"),
    "num_generations": ({"minimum": 2}, "GRPOConfig", "self.num_generations < 2"),
}


def _source_of(cls) -> str:
    try:
        return inspect.getsource(inspect.getmodule(cls))
    except (OSError, TypeError):
        return ""


TYPE_KEYS = {"type", "enum", "const", "anyOf", "oneOf", "items", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "properties", "additionalProperties", "$ref"}


def type_part(prop: dict) -> dict:
    return {k: v for k, v in prop.items() if k in TYPE_KEYS}


def gen_hf() -> dict:
    import transformers
    from transformers import Seq2SeqTrainingArguments, TrainingArguments
    import trl

    mapper = TypeMapper(lambda tp: {"type": "object"} if dataclasses.is_dataclass(tp) else None)
    classes: list[tuple[str, type]] = [("TrainingArguments", TrainingArguments), ("Seq2SeqTrainingArguments", Seq2SeqTrainingArguments)]
    for name in ("SFTConfig", "DPOConfig", "GRPOConfig", "RewardConfig", "KTOConfig", "RLOOConfig", "ORPOConfig", "CPOConfig", "ModelConfig", "ScriptArguments"):
        cls = getattr(trl, name, None)
        if cls is None:
            for mod in ("trl.experimental.orpo", "trl.experimental.cpo", "trl.experimental.kto"):
                try:
                    cls = getattr(importlib.import_module(mod), name, None)
                except ImportError:
                    cls = None
                if cls is not None:
                    break
        if cls is not None:
            classes.append((name, cls))

    overrides = {
        # __post_init__ accepts a bool (true -> full_shard), a space-separated string or a list
        "fsdp": {"anyOf": [{"type": ["string", "boolean", "null"]}, {"type": "array", "items": {"type": "string"}}]},
        # a path to a DeepSpeed JSON or an inline dict
        "deepspeed": {"type": ["string", "object", "null"]},
        # GRPOConfig.__post_init__ maps True -> "group" and False -> "none" (a bool field before TRL 0.22)
        "scale_rewards": {"type": ["string", "boolean"]},
        # scripts pass it to Trainer.train(resume_from_checkpoint: Optional[Union[str, bool]]): true resumes from the
        # last checkpoint in output_dir, false is None (trainer.py Trainer.train)
        "resume_from_checkpoint": {"type": ["null", "string", "boolean"]},
    }
    props: dict[str, dict] = {}
    owners: dict[str, list[str]] = {}
    defaults_by_class: dict[str, dict[str, typing.Any]] = {}
    for cname, cls in classes:
        for key, prop in dataclass_properties(cls, mapper, overrides).items():
            owners.setdefault(key, []).append(cname)
            if "default" in prop:
                defaults_by_class.setdefault(key, {})[cname] = prop["default"]
            if key not in props:
                props[key] = prop
                continue
            if "description" not in props[key] and "description" in prop:
                props[key]["description"] = prop["description"]
            # the same key may accept more in another class (e.g. TRL's `bf16: bool | None`)
            old_t, new_t = type_part(props[key]), type_part(prop)
            if old_t != new_t:
                merged = merge_any_of([old_t, new_t])
                rest = {k: v for k, v in props[key].items() if k not in TYPE_KEYS}
                props[key] = {**rest, **merged}
    by_name = dict(classes)
    for key, (constraint, cname, snippet) in HF_ENFORCED.items():
        if key in props and cname in by_name and snippet in _source_of(by_name[cname]):
            rest = {k: v for k, v in props[key].items() if k not in TYPE_KEYS}
            props[key] = {**rest, **apply_constraints(type_part(props[key]), constraint)}
    for key, prop in props.items():
        prop["x-trainlint-classes"] = owners[key]
        dflt = defaults_by_class.get(key, {})
        if len({json.dumps(v, sort_keys=True) for v in dflt.values()}) > 1:
            prop["x-trainlint-class-defaults"] = dflt

    for key, values in HF_REMOVED_VALUES.items():
        if key in props:
            allowed = set(props[key].get("enum") or ())
            kept = {v: {"package": pkg.lower(), "removed": rem, "hint": hint,
                        **({"refused_by": rest[0], "raises": rest[1], "when": rest[2]} if rest else {})}
                    for v, (pkg, rem, hint, *rest) in values.items()
                    if v not in allowed}  # a value the installed release still has needs no entry
            if kept:
                props[key]["x-trainlint-removed-values"] = kept

    removed = {}
    for key in sorted(HF_REMOVED):
        if key in props:  # still accepted by the installed versions
            continue
        removed[key] = removed_entry(key)

    return {
        "$schema": DRAFT,
        "$id": BASE_ID + "hf-training-args.schema.json",
        "title": "Hugging Face TrainingArguments / TRL config",
        "description": "Keys of transformers TrainingArguments (+ Seq2SeqTrainingArguments) and TRL configs as read by "
        "HfArgumentParser.parse_yaml_file/parse_dict or TrlParser. Unknown keys are rejected by HfArgumentParser; "
        "note that training scripts often add their own dataclasses (LLaMA-Factory, open-instruct, ...), whose keys "
        "are then legal too. `x-trainlint-classes` names the classes that accept each key.",
        "type": "object",
        "properties": props,
        "additionalProperties": False,
        "x-trainlint-unknown-keys": "forbidden",
        "x-trainlint-removed": removed,
        "x-trainlint-source": {
            "package": "transformers",
            "version": transformers.__version__,
            "trl": trl.__version__,
            "accelerate": version_of("accelerate"),
        },
    }


# --------------------------------------------------------------------------------------------------
# Lightning

LIGHTNING_REMOVED = {
    # Lightning's src/lightning/pytorch/CHANGELOG.md (2.0.0, "Removed"): key: (replacement, version, hint)
    "gpus": ("devices", "2.0", "together with `accelerator: gpu`"),
    "tpu_cores": ("devices", "2.0", "together with `accelerator: tpu`"),
    "ipus": ("devices", "2.0", "IPU support moved out of Lightning"),
    "num_processes": ("devices", "2.0", None),
    "auto_select_gpus": ("devices", "2.0", "`devices: auto` picks free GPUs"),
    "amp_backend": ("precision", "2.0", "native torch amp is the only backend"),
    "amp_level": ("precision", "2.0", "apex opt levels are gone"),
    "resume_from_checkpoint": ("ckpt_path", "2.0", "`ckpt_path` is an argument of fit, at the top level or under `fit:`"),
    "track_grad_norm": (None, "2.0", "log grad norms from a callback or the LightningModule"),
    "move_metrics_to_cpu": (None, "2.0", None),
    "multiple_trainloader_mode": (None, "2.0", "use CombinedLoader's mode"),
    "auto_scale_batch_size": (None, "2.0", "use Tuner.scale_batch_size"),
    "auto_lr_find": (None, "2.0", "use Tuner.lr_find"),
    "replace_sampler_ddp": ("use_distributed_sampler", "2.0", None),
    "weights_save_path": ("default_root_dir", "2.0", None),
    "flush_logs_every_n_steps": (None, "1.7", None),
    "progress_bar_refresh_rate": ("enable_progress_bar", "1.7", "or a TQDMProgressBar callback with refresh_rate"),
    "checkpoint_callback": ("enable_checkpointing", "1.7", None),
    "terminate_on_nan": ("detect_anomaly", "1.7", None),
    "stochastic_weight_avg": (None, "1.7", "use the StochasticWeightAveraging callback"),
    "prepare_data_per_node": (None, "1.7", "set prepare_data_per_node on the LightningModule/DataModule"),
    "log_gpu_memory": (None, "1.7", "use the DeviceStatsMonitor callback"),
    "reload_dataloaders_every_epoch": ("reload_dataloaders_every_n_epochs", "1.6", None),
}


# Bounds Lightning checks, with the file and the text of the check (applied only if found there).
LIGHTNING_ENFORCED = {
    "num_nodes": ({"minimum": 1}, "pytorch/trainer/connectors/accelerator_connector.py", "`num_nodes` must be a positive integer"),
    "max_epochs": ({"minimum": -1}, "pytorch/loops/fit_loop.py", "`max_epochs` must be a non-negative integer or -1"),
    "max_steps": ({"minimum": -1}, "pytorch/loops/training_epoch_loop.py", "`max_steps` must be a non-negative integer or -1"),
}


def parse_google_args(doc: str | None) -> dict[str, str]:
    out: dict[str, str] = {}
    if not doc:
        return out
    doc = inspect.cleandoc(doc)
    m = re.search(r"^Args:\s*$", doc, re.M)
    if not m:
        return out
    section = doc[m.end():]
    end = re.search(r"^(Raises|Returns|Example|Examples|Note):\s*$", section, re.M)
    if end:
        section = section[: end.start()]
    current = None
    buf: list[str] = []
    for line in section.splitlines():
        mm = re.match(r"^ {4}([A-Za-z_][A-Za-z0-9_]*)\s*(?:\([^)]*\))?:\s*(.*)$", line)
        if mm:
            if current:
                out[current] = " ".join(" ".join(buf).split())
            current, buf = mm.group(1), [mm.group(2)]
        elif current:
            buf.append(line.strip())
    if current:
        out[current] = " ".join(" ".join(buf).split())
    return {k: clean_text(v) for k, v in out.items() if v.strip()}


def gen_lightning() -> dict:
    import lightning
    from lightning.pytorch import Trainer
    from lightning.pytorch.accelerators import AcceleratorRegistry
    from lightning.pytorch.strategies import StrategyRegistry

    def hook(tp):
        if isinstance(tp, type) and tp.__module__.split(".")[0] in ("lightning", "pytorch_lightning", "lightning_fabric", "torch"):
            return merge_any_of([CLASS_PATH_REF, {"type": "string"}])
        return None

    mapper = TypeMapper(hook)
    docs = parse_google_args(Trainer.__init__.__doc__)
    sig = inspect.signature(Trainer.__init__)
    hints = typing.get_type_hints(Trainer.__init__)
    strategies = sorted(StrategyRegistry.available_strategies())
    accelerators = sorted(AcceleratorRegistry.available_accelerators())
    props: dict[str, dict] = {}
    for name, p in sig.parameters.items():
        if name == "self" or p.kind in (p.VAR_KEYWORD, p.VAR_POSITIONAL):
            continue
        tp = hints.get(name, p.annotation)
        if name == "strategy":
            base = {"anyOf": [{"type": "string", "enum": ["auto", *[s for s in strategies if s != "auto"]]}, CLASS_PATH_REF]}
        elif name == "accelerator":
            base = {"anyOf": [{"type": "string", "enum": sorted({"auto", "gpu", *accelerators})}, CLASS_PATH_REF]}
        elif name == "precision":
            base = mapper(tp)
        else:
            base = mapper(tp)
        extra = {}
        if name in LIGHTNING_ENFORCED:
            constraint, relpath, snippet = LIGHTNING_ENFORCED[name]
            source = pathlib.Path(lightning.__file__).parent / relpath
            if source.is_file() and snippet in source.read_text(encoding="utf-8"):
                base = apply_constraints(base, constraint)
        if name == "accumulate_grad_batches":
            # not checked up front, but 0 divides by zero in the training loop (`batch_idx % 0`)
            base = apply_constraints(base, {"minimum": 1})
        default = p.default if p.default is not inspect.Parameter.empty else dataclasses.MISSING
        props[name] = finish_property(base, docs.get(name), default, extra)
    if "strategy" in props:
        props["strategy"]["x-trainlint-note"] = "Lightning lower-cases a strategy name before the registry lookup."
    if "precision" in props:
        props["precision"]["x-trainlint-note"] = "null means the default, 32-true; 16 / '16' / 'bf16' are discouraged aliases of 16-mixed / bf16-mixed."

    trainer_def = {
        "type": "object",
        "title": "Trainer",
        "description": "Arguments of lightning.pytorch.Trainer.__init__ (jsonargparse rejects unknown keys).",
        "properties": props,
        "additionalProperties": False,
        "x-trainlint-unknown-keys": "forbidden",
        "x-trainlint-removed": {
            k: {"replacement": r, "since": f"Lightning {v}", "hint": h} for k, (r, v, h) in sorted(LIGHTNING_REMOVED.items()) if k not in props
        },
    }
    cls_or_any = {"anyOf": [CLASS_PATH_REF, {"type": ["object", "string", "null"]}]}
    section_props = {
        "seed_everything": {"type": ["integer", "boolean"], "description": "Seed for pseudo-random generators: an int, true (pick a random seed) or false (do not seed).", "default": True},
        "trainer": {"$ref": "#/$defs/Trainer", "description": "lightning.pytorch.Trainer arguments."},
        "model": {**cls_or_any, "description": "The LightningModule: {class_path, init_args} in subclass mode, or its init arguments directly."},
        "data": {**cls_or_any, "description": "The LightningDataModule: {class_path, init_args} in subclass mode, or its init arguments directly."},
        "optimizer": {**cls_or_any, "description": "Optimizer for automatic configure_optimizers (class_path + init_args)."},
        "lr_scheduler": {**cls_or_any, "description": "Learning-rate scheduler for automatic configure_optimizers (class_path + init_args)."},
        "ckpt_path": {"type": ["string", "null"], "description": "Checkpoint to resume from (\"last\", \"best\", or a path).", "default": None},
        "config": {"type": ["string", "array", "null"], "description": "Further config files to merge (jsonargparse --config)."},
    }
    sub = {
        "type": "object",
        "title": "Subcommand",
        "description": "Arguments of one LightningCLI subcommand.",
        "properties": section_props,
        "additionalProperties": True,
        "x-trainlint-unknown-keys": "script-defined",
    }
    top_props = dict(section_props)
    for name in ("fit", "validate", "test", "predict"):
        top_props[name] = {"$ref": "#/$defs/Subcommand", "description": f"Arguments of the `{name}` subcommand."}
    return {
        "$schema": DRAFT,
        "$id": BASE_ID + "lightning.schema.json",
        "title": "LightningCLI configuration",
        "description": "LightningCLI YAML (jsonargparse). `trainer` holds lightning.pytorch.Trainer arguments and is strict; "
        "top-level keys and `model`/`data` init_args depend on the script's LightningCLI and are not constrained.",
        "type": "object",
        "properties": top_props,
        "additionalProperties": True,
        "x-trainlint-unknown-keys": "script-defined",
        "x-trainlint-source": {"package": "lightning", "version": lightning.__version__},
        "$defs": {"Trainer": trainer_def, "Subcommand": sub, "ClassPath": CLASS_PATH_DEF},
    }


# --------------------------------------------------------------------------------------------------
# accelerate


def argparse_group_props(group, strip_prefix: str | None = None) -> dict[str, dict]:
    props = {}
    for action in group._group_actions:
        dest = action.dest
        if dest in ("help",):
            continue
        if action.choices:
            choices = list(action.choices)
            # YAML gives ints where the command line gives strings ("fsdp_version: 2")
            choices += [int(c) for c in choices if isinstance(c, str) and c.isdigit()]
            base = merge_any_of([enum_schema([c for c in choices if isinstance(c, str)]), enum_schema([c for c in choices if isinstance(c, int)]), {"type": "null"}])
            base = {"anyOf": [b for b in base["anyOf"] if b.get("enum") != []]} if "anyOf" in base else base
        elif action.nargs == 0:  # store_true / store_false
            base = {"type": "boolean"}
        elif action.type in (int,):
            base = {"type": ["integer", "null"]}
        elif action.type in (float,):
            base = {"type": ["number", "null"]}
        elif action.type is not None and getattr(action.type, "__name__", "") in ("str_to_bool", "_str_to_bool"):
            base = {"type": ["boolean", "null"]}
        elif action.nargs in ("+", "*"):
            base = {"type": ["array", "string", "null"]}
        else:
            base = {}
        desc = clean_text(action.help) if action.help and action.help != argparse.SUPPRESS else None
        default = action.default if action.default is not None and action.default is not argparse.SUPPRESS else dataclasses.MISSING
        props[dest] = finish_property(base, desc, default)
    return props


def gen_accelerate() -> dict:
    import accelerate
    from accelerate.commands.config.config_args import ClusterConfig
    from accelerate.commands.launch import launch_command_parser
    from accelerate.utils import PrecisionType

    mapper = TypeMapper()
    top = dataclass_properties(
        ClusterConfig,
        mapper,
        overrides={
            "mixed_precision": merge_any_of([enum_schema([p.value for p in PrecisionType]), {"type": "null"}]),
            # annotated bool, but `accelerate config` itself writes the string 'no'
            "downcast_bf16": {"type": ["boolean", "string"]},
        },
    )
    # compute_environment: AMAZON_SAGEMAKER configs are read into SageMakerConfig instead; its extra
    # fields are listed too (marked), so that such files do not read as full of unknown keys.
    from accelerate.commands.config.config_args import SageMakerConfig

    for key, prop in dataclass_properties(SageMakerConfig, mapper).items():
        if key not in top:
            prop["x-trainlint-compute-environment"] = "AMAZON_SAGEMAKER"
            prop["description"] = "Only with compute_environment: AMAZON_SAGEMAKER (SageMakerConfig)."
            top[key] = prop
    parser = launch_command_parser()
    groups = {g.title: g for g in parser._action_groups}

    def nested(title, group_title, note, prefix=None, filter_prefix=None):
        g = groups.get(group_title)
        props = argparse_group_props(g) if g else {}
        if filter_prefix:
            props = {k: v for k, v in props.items() if k.startswith(filter_prefix)}
        return {
            "type": ["object", "null"],
            "title": title,
            "description": note,
            "properties": props,
            "additionalProperties": True,
            "x-trainlint-unknown-keys": "ignored",
        }

    # Plugin keys the launch reads from the config file although `accelerate launch` has no flag for them
    # (the config loop copies every fsdp_config key onto the launch arguments; utils/launch.py reads this one).
    config_only = {
        "fsdp_config": {
            "fsdp_ignored_modules": {
                "description": "Modules (a regular expression over module names, or names) that FSDP leaves unsharded: "
                               "launch passes it as FSDP_IGNORED_MODULES and FullyShardedDataParallelPlugin reads it "
                               "(accelerate >= 1.10.0: utils/launch.py prepare_multi_gpu_env, 24e48f3d #3698; older "
                               "releases drop it).",
                "type": ["string", "null"],
                "x-trainlint-since": {"accelerate": "1.10.0"},
            },
        },
    }

    nested_specs = {
        "deepspeed_config": nested("deepspeed_config", "DeepSpeed Arguments", "DeepSpeed plugin settings (launch arguments). DeepSpeed JSON keys placed here do nothing; point `deepspeed_config_file` at a JSON instead. Unknown keys are ignored."),
        "fsdp_config": nested("fsdp_config", "FSDP Arguments", "FSDP plugin settings (launch arguments; the `fsdp_` prefix is added when missing). Unknown keys are ignored."),
        "fp8_config": nested("fp8_config", "FP8 Arguments", "FP8 settings (launch arguments). Unknown keys are ignored."),
        "megatron_lm_config": nested("megatron_lm_config", "Megatron-LM Arguments", "Megatron-LM plugin settings (launch arguments). Unknown keys are ignored."),
        "parallelism_config": nested("parallelism_config", "ParallelismConfig Arguments", "N-D parallelism sizes; their product must equal num_processes. Unknown keys are ignored."),
        "mpirun_config": nested("mpirun_config", "MPI Arguments", "mpirun settings. Unknown keys are ignored."),
        "dynamo_config": nested("dynamo_config", "Resource Selection Arguments", "torch.compile (dynamo) settings. Unknown keys are ignored.", filter_prefix="dynamo_"),
    }
    # ParallelismConfig checks each size ("dp_shard_size must be at least 1, ..."): apply where found
    import accelerate.parallelism_config as pc

    pc_source = _source_of(pc.ParallelismConfig)
    for key, prop in nested_specs["parallelism_config"]["properties"].items():
        field = key.removeprefix("parallelism_config_")
        if field.endswith("_size") and f"{field} must be at least 1" in pc_source:
            nested_specs["parallelism_config"]["properties"][key] = {
                **{k: v for k, v in prop.items() if k not in TYPE_KEYS},
                **apply_constraints(type_part(prop), {"minimum": 1}),
            }
    for section, extra in config_only.items():
        nested_specs[section]["properties"].update(extra)
    # `auto` is accepted where the launch flag is typed: DeepSpeedPlugin.__post_init__ keeps a non-digit
    # ACCELERATE_GRADIENT_ACCUMULATION_STEPS / ACCELERATE_GRADIENT_CLIPPING ("auto", also its default) for the
    # HF Trainer to fill (utils/dataclasses.py)
    ds_props = nested_specs["deepspeed_config"]["properties"]
    for key, kind in (("gradient_accumulation_steps", "integer"), ("gradient_clipping", "number")):
        if key in ds_props:
            prop = {k: v for k, v in ds_props[key].items() if k not in TYPE_KEYS}
            prop["anyOf"] = [{"type": [kind, "null"]}, {"enum": ["auto"]}]
            prop["description"] = prop.get("description", "") + (
                ' "auto" leaves it to the training script (an HF Trainer fills it from TrainingArguments): '
                "DeepSpeedPlugin keeps the string (utils/dataclasses.py: `int(gas) if gas.isdigit() else gas`).")
            ds_props[key] = prop
    for key, spec in nested_specs.items():
        if key in top:
            desc = top[key].get("description")
            top[key] = {**spec, **({"description": spec["description"]} if not desc else {})}
            if "default" not in top[key]:
                top[key]["default"] = None
    for key in ("num_processes",):
        pass
    top["distributed_type"]["description"] = top["distributed_type"].get("description") or "Kind of distributed launch (required)."
    # legacy keys converted by ClusterConfig.process_config
    top["fp16"] = {"type": "boolean", "deprecated": True, "x-trainlint-replacement": "mixed_precision", "description": "Legacy key: converted to mixed_precision: fp16."}
    top["dynamo_backend"] = {"type": "string", "deprecated": True, "x-trainlint-replacement": "dynamo_config.dynamo_backend", "description": "Legacy key: converted to dynamo_config."}
    descriptions = {
        "compute_environment": "Where the job runs (LOCAL_MACHINE or AMAZON_SAGEMAKER); defaults to LOCAL_MACHINE when missing.",
        "distributed_type": "Kind of distributed launch; required (\"A `distributed_type` must be specified in the config file.\").",
        "mixed_precision": "Mixed precision mode. Quote `'no'` in YAML: a bare no loads as the boolean false.",
        "num_processes": "Total number of processes across all machines.",
        "num_machines": "Number of machines (nodes).",
        "machine_rank": "Rank of this machine.",
        "gpu_ids": "Comma-separated GPU ids to use, or \"all\".",
        "use_cpu": "Force training on CPU.",
        "debug": "Enable distributed debug checks.",
        "downcast_bf16": "On TPU, downcast float32 to bfloat16.",
        "main_training_function": "Name of the function to launch (notebooks/TPU).",
        "same_network": "Whether all machines are on the same local network.",
        "rdzv_backend": "torchrun rendezvous backend.",
        "enable_cpu_affinity": "Pin processes to CPU cores (NVIDIA GPUs).",
    }
    for key, desc in descriptions.items():
        if key in top and not top[key].get("description"):
            top[key]["description"] = desc
    return {
        "$schema": DRAFT,
        "$id": BASE_ID + "accelerate.schema.json",
        "title": "Accelerate config file",
        "description": "accelerate config YAML (default_config.yaml / --config_file), as ClusterConfig reads it. "
        "Unknown top-level keys are fatal; nested *_config mappings are copied onto launch arguments without validation.",
        "type": "object",
        "properties": top,
        "required": ["distributed_type"],
        "additionalProperties": False,
        "x-trainlint-unknown-keys": "forbidden",
        "x-trainlint-source": {"package": "accelerate", "version": accelerate.__version__},
    }


# --------------------------------------------------------------------------------------------------


def gen_trainlint() -> dict:
    """trainlint's own settings ([tool.trainlint] in pyproject.toml, or trainlint.toml); written by hand
    to match trainlint/context/settings.py. Keys may be spelled with `-` or `_`."""
    positive_int = {"anyOf": [{"type": "integer", "minimum": 1}, {"type": "string", "pattern": "^\\s*[0-9]+\\s*$"}]}
    codes = {
        "anyOf": [
            {"type": "array", "items": {"type": "string", "pattern": "^[A-Za-z]+[0-9]*$"}},
            {"type": "string", "description": "Codes separated by commas or spaces."},
        ]
    }
    overrides = {
        "gpu": {"type": "string", "minLength": 1, "description": "Target GPU: a catalog name or alias (A100-80GB, h100, NVIDIA-A100-SXM4-80GB) or a bare capacity such as 96GB or 24GiB.", "examples": ["H100-80GB", "A100-80GB", "24GiB"]},
        "num-gpus": {**positive_int, "description": "Number of GPUs (world size) the config runs on."},
        "model": {"type": "string", "minLength": 1, "description": "Model name from the catalog, a Hugging Face id, or a local model directory."},
        "seq-len": {**positive_int, "description": "Sequence length in tokens used for activation estimates."},
        "micro-batch": {**positive_int, "description": "Per-GPU micro batch size, when the config does not say."},
        "grad-accum": {**positive_int, "description": "Gradient accumulation steps, when the config does not say."},
        "images-per-sample": {**positive_int, "description": "Images per training sample: a vision tower's activations are modelled over their patch tokens."},
        "image-size": {**positive_int, "description": "Square resolution (pixels per side) images reach the vision tower at, when the config does not say."},
        "eval-batch": {**positive_int, "description": "Per-GPU evaluation batch size, when the config does not say (docs/memory-model.md, phases)."},
        "eval-samples": {**positive_int, "description": "Samples in the evaluation set: with predictions kept on the GPU, how many the evaluation loop accumulates."},
        "eval-predictions": {"type": "string", "enum": ["none", "logits", "token_ids", "generated"], "description": "What evaluation keeps per sample for compute_metrics: none (the loss only), logits, token_ids (preprocess_logits_for_metrics) or generated (predict_with_generate)."},
    }

    def with_underscores(props: dict) -> dict:
        out = dict(props)
        for key, value in props.items():
            if "-" in key:
                out[key.replace("-", "_")] = {**value, "x-trainlint-alias-of": key}
        return out

    per_file_overrides = {
        "type": "object",
        "description": "Settings for the files matching this glob.",
        "properties": with_underscores(overrides),
        "additionalProperties": False,
    }
    props = {
        **overrides,
        "select": {**codes, "description": "Rule codes (or code prefixes) to enable; replaces the default selection."},
        "ignore": {**codes, "description": "Rule codes (or code prefixes) to disable."},
        "extend-select": {**codes, "description": "Rule codes (or code prefixes) to enable on top of the selection."},
        "fail-level": {"type": "string", "enum": ["error", "warning", "info"], "default": "warning", "description": "Lowest severity that makes `trainlint check` exit with 1."},
        "output-format": {"type": "string", "enum": ["text", "json", "sarif", "github"], "default": "text", "description": "Output format of `trainlint check`."},
        "per-file-ignores": {"type": "object", "description": "Glob -> rule codes to ignore in matching files.", "additionalProperties": codes},
        "per-file": {"type": "object", "description": "Glob -> settings (gpu, num-gpus, model, seq-len, ...) for matching files.", "additionalProperties": per_file_overrides},
    }
    return {
        "$schema": DRAFT,
        "$id": BASE_ID + "trainlint.schema.json",
        "title": "trainlint settings",
        "description": "trainlint's own settings: the [tool.trainlint] table of pyproject.toml, or trainlint.toml. "
        "Keys may be written with '-' or '_'.",
        "type": "object",
        "properties": with_underscores(props),
        "additionalProperties": False,
        "x-trainlint-unknown-keys": "forbidden",
        "x-trainlint-source": {"package": "trainlint", "version": "handwritten"},
    }


GENERATORS = {
    "trainlint": gen_trainlint,
    "deepspeed": gen_deepspeed,
    "hf-training-args": gen_hf,
    "lightning": gen_lightning,
    "accelerate": gen_accelerate,
}


def render(schema: dict) -> str:
    return json.dumps(schema, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("names", nargs="*", help=f"schemas to generate (default: all of {sorted(GENERATORS)})")
    ap.add_argument("--out", type=pathlib.Path, default=OUT_DIR)
    ap.add_argument("--check", action="store_true", help="compare with the files on disk instead of writing")
    args = ap.parse_args(argv)
    _quiet()
    stale = 0
    for name in args.names or sorted(GENERATORS):
        text = render(GENERATORS[name]())
        path = args.out / f"{name}.schema.json"
        if args.check:
            if not path.exists() or path.read_text(encoding="utf-8") != text:
                print(f"stale: {path}")
                stale += 1
            continue
        args.out.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        print(f"wrote {path} ({len(text)} bytes)")
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
