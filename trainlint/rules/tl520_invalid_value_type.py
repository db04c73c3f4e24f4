"""TL520 invalid-value-type: a value of the wrong type for its key.

**What**: a key of an HF TrainingArguments/TRL/LLaMA-Factory file, a LightningCLI `trainer:` section
or an Accelerate config whose value has the wrong JSON type for the framework: a quoted number
(`per_device_train_batch_size: "8"`), a quoted boolean (`bf16: "true"`), a list where a string is
expected, ... Types come from the JSON Schemas generated from the frameworks (schemas/, via
trainlint.catalog.schemas.validation_errors).

**Why**: `HfArgumentParser.parse_yaml_file`/`parse_json_file`/`parse_dict` (transformers
`hf_argparser.py`) build the dataclasses with `dtype(**inputs)`, without type coercion: a string batch
size reaches the DataLoader and a string "false" is truthy. LLaMA-Factory reads its YAML with
OmegaConf and hands `OmegaConf.to_container(...)` to `parse_dict`, so its quoted values are not
converted either. Accelerate passes its YAML values on unconverted (`BaseConfig.from_yaml_file`).
Not reported: TRL files (TrlParser sets each value as an argparse default, and argparse converts a
string default through the option's type, `string_to_bool` included) and LightningCLI files
(jsonargparse loads a string as YAML for non-string types); unquoted numbers like `2e-5` (TL003) and
yes/no booleans (TL004) have their own rules. Holds for transformers 4.40 - 5.24, TRL 0.18 - 1.16,
accelerate 1.13 - 1.15.

A string where the schema declares a list is valid where the value's consumer takes a string
(`catalog/data/value_conversions.json`): `lora_target_modules: all-linear` reaches TRL's ModelConfig as that string
under either parser (parse_dict does not convert; argparse passes a string default through `type=str`), and
`trl/trainer/utils.py: get_peft_config` hands it to peft's `LoraConfig(target_modules=...)`, typed
`Optional[Union[list[str], str]]` (a regex or 'all-linear'). LightningCLI files are judged by Lightning 2.x's
Trainer signature (the schema, 2.6): where the pins or settings say Lightning 1.x, whose Trainer typed
`accelerator`, `strategy`, `devices`, `gradient_clip_algorithm`, ... as `Optional` (default None), they are not
checked (TL521 and TL522 alike).

An Accelerate config key that every `accelerate launch` running the file sets with its own option
(`--num_processes $NUM_GPUS`, `--num_machines`, `--machine_rank`, `--mixed_precision`, `--zero_stage`, ...:
`Launch.overrides`) is not checked: `_validate_launch_command` (accelerate `commands/launch.py`) copies a config value
only onto the options not given, so the file's value is never read (huggingface/smollm's vloom configs keep
`num_processes: null` for it). Where a launch that runs the file is known and does not give the option, a null
`num_processes` / `num_machines` is an error: the launcher does not fall back to the device count when a config file
is given and stops on `num_machines > 1`. Where no launch that runs the file is known, such a finding rests on the
assumption that the launch gives no option for the key: a warning that says so and how to declare the launch. The
same holds for TL521 and TL522.

**Evidence**: `transformers/hf_argparser.py: HfArgumentParser.parse_dict` (silent at load: the value
reaches the run as written); verified against transformers 4.40 - 5.24, accelerate 1.13 - 1.15.

Not reported where the script that reads the file sets the key itself in code (an assignment to what its parser
returned, `training_args.do_eval = False`, or a constant keyword of the TrainingArguments it builds: context.codeargs):
the file's value never reaches the run.

**Example**: `per_device_train_batch_size: "8"` → `per_device_train_batch_size: 8`.

**Fix** (safe): write a quoted number or boolean without quotes, quote a number where a string is
expected (`gpu_ids: 0` → `gpu_ids: "0"`); other type errors have no fix.
"""

from __future__ import annotations

from trainlint.context import codeargs
from trainlint.diagnostics import Severity
from trainlint.fixes.edits import fix, replace_value
from trainlint.flavors.base import as_float
from trainlint.rules._schema_checks import findings
from trainlint.rules._frameworks import Claim
from trainlint.plan import COUNT_LIMIT
from trainlint.rules.base import LintContext, Rule

RULE = Rule("TL520", "invalid-value-type", Severity.ERROR,
            "A value of the wrong type for its key", flavors=("huggingface", "lightning", "accelerate"),
            framework="transformers", evidence="transformers/hf_argparser.py: HfArgumentParser.parse_dict")

CLAIMS = (
    Claim("transformers", "hf_argparser.py HfArgumentParser.parse_dict", "", "silent"),
    Claim("accelerate", "commands/config/config_args.py BaseConfig.from_yaml_file", "", "silent"),
)


def check(ctx: LintContext):
    doc = ctx.document
    script = ctx.dialect.script if ctx.dialect.known else ""  # the launched script, or the one the parser is read from
    for f in findings(ctx):
        if f.kind != "type":
            continue
        names = [part for part in f.node.key_path if isinstance(part, str)]
        code = codeargs.code_value(script, names[0]) if script and len(names) == 1 else None
        if code is not None and code.known:
            continue  # the script that reads the file sets it in its own code (SPPO: `training_args.do_eval = False`)
        fixes = []
        node = f.node
        if node.kind == "scalar" and isinstance(node.value, str):
            text = node.value.strip()
            if text.lower() in ("true", "false") and "true or false" in f.expected:
                fixes = [fix(f"write {text.lower()} without quotes", replace_value(doc, node, text.lower() == "true"))]
            elif (number := as_float(text)) is not None and ("integer" in f.expected or "number" in f.expected):
                if "integer" in f.expected and "number" not in f.expected:
                    if number.is_integer() and abs(number) <= COUNT_LIMIT:  # no fix writes a number beyond any run
                        fixes = [fix(f"write {int(number)} without quotes", replace_value(doc, node, int(number)))]
                else:
                    value = int(number) if number.is_integer() and "e" not in text.lower() and "." not in text else number
                    if isinstance(value, int) and abs(value) > COUNT_LIMIT:
                        value = number  # written as the float it is, never as hundreds of digits
                    fixes = [fix("write the number without quotes", replace_value(doc, node, value))]
        elif node.kind == "scalar" and isinstance(node.value, (int, float)) and not isinstance(node.value, bool) \
                and f.expected.startswith("a string"):
            fixes = [fix(f'quote it: "{node.raw}"', replace_value(doc, node, text=f'"{node.raw}"'))]
        yield RULE.at(doc, node, f"{f.message.rstrip('.')}: read as written, the run fails or misbehaves", fixes,
                      assumptions=f.assumptions,
                      detail=f"The framework reads the value as written (no conversion), so the run fails or "
                             f"misbehaves; write {f.expected}.")
