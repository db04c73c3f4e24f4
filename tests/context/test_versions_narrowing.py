"""Version ranges narrowed by what can be installed and imported together (context/narrowing.py, context/imports.py,
catalog/data/requirements.json, catalog/data/removed_names.json)."""

from __future__ import annotations

import json

from trainlint._versions import Version

from trainlint import engine
from trainlint.catalog import frameworks, releases
from trainlint.catalog.files import read_data
from trainlint.context import imports, narrowing
from trainlint.context.versions import FrameworkVersion, Versions, resolve
from trainlint.output import settings as settings_output

from ctxrepo import make_repo

HANDBOOK_SETUP = '_deps = [\n    "huggingface-hub>=0.33.4,<1.0",\n    "transformers>=4.53.3",\n    "trl>=0.19.1",\n]\n' \
                 'setup(name="alignment-handbook")\n'
RECIPE = """model_name_or_path: Qwen/Qwen2.5-0.5B
torch_dtype: bfloat16
max_seq_length: 2048
overwrite_output_dir: true
per_device_train_batch_size: 2
output_dir: data/out
"""
SFT_SCRIPT = ("from alignment import SFTConfig\nfrom trl import ModelConfig, TrlParser, setup_chat_format\n\n"
              "if __name__ == \"__main__\":\n    parser = TrlParser((SFTConfig, ModelConfig))\n")
DPO_SCRIPT = ("from alignment import DPOConfig\nfrom trl import ModelConfig, TrlParser\n\n"
              "if __name__ == \"__main__\":\n    parser = TrlParser((DPOConfig, ModelConfig))\n")
PACKAGE = {"src/alignment/__init__.py": "from .configs import DPOConfig, SFTConfig\n",
           "src/alignment/configs.py": "import trl\n\n\nclass SFTConfig(trl.SFTConfig):\n    pass\n\n\n"
                                       "class DPOConfig(trl.DPOConfig):\n    pass\n\n\n"
                                       "class ORPOConfig(trl.ORPOConfig):\n    pass\n"}


# --- the data ---------------------------------------------------------------------------------------------------

def test_requirement_rows_name_known_releases_and_parse():
    data = json.loads(read_data("requirements.json"))
    assert data["_doc"]
    for name, rows in data.items():
        if name.startswith("_"):
            continue
        known = frameworks.known(name)
        for row in rows:
            assert row["from"] in known and row["through"] in known, (name, row)
            assert Version(row["from"]) <= Version(row["through"])
            assert row["source"] and name in row["source"]
            for dep, spec in row["requires"].items():
                assert narrowing.hull(spec) is not None, (name, dep, spec)
    # the fact the alignment-handbook case rests on
    assert releases.requirements("transformers")["5.0.0"][0]["huggingface-hub"] == ">=1.3.0,<2.0"
    assert releases.requirements("transformers")["4.57.6"][0]["huggingface-hub"] == ">=0.34.0,<1.0"


def test_removed_names_carry_a_release_and_a_source():
    data = json.loads(read_data("removed_names.json"))
    for module, names in data.items():
        if module.startswith("_"):
            continue
        assert module.split(".")[0] in imports.FRAMEWORK_PACKAGES
        for name, (release, source) in names.items():
            assert Version(release) and source, (module, name)
    assert releases.removed("trl", "setup_chat_format")[0] == "0.26.0"
    assert releases.removed("trl", "ORPOConfig")[0] == "0.29.0"
    assert releases.removed("trl", "SFTConfig") is None
    assert releases.removed("transformers", "AdamW")[0] == "4.50.0"
    assert releases.removed("transformers.optimization", "AdamW")[0] == "4.50.0"


# --- intervals --------------------------------------------------------------------------------------------------

def test_hull_of_specifiers():
    h = narrowing.hull
    assert h(">=0.33.4,<1.0") == narrowing.Interval(Version("0.33.4"), True, Version("1.0"), False)
    assert h("~=0.16.0") == narrowing.Interval(Version("0.16.0"), True, Version("0.17"), False)
    assert h("==4.*") == narrowing.Interval(Version("4"), True, Version("5"), False)
    assert h("!=5.1.0") == narrowing.EVERYTHING
    assert h("not a spec") is None
    assert (h(">=1.3.0,<2.0") & h("<1.0")).empty
    assert not (h(">=0.34.0,<1.0") & h(">=0.33.4,<1.0")).empty
    assert (h("==1.0") & h("<1.0")).empty and not (h("<=1.0") & h(">=1.0")).empty
    assert (h(">=4.50") | h(">=4.46,<5")) == h(">=4.46")


# --- requirements -----------------------------------------------------------------------------------------------

def test_a_pin_rules_out_the_releases_that_require_what_it_excludes(tmp_path):
    repo = make_repo(tmp_path, {"setup.py": HANDBOOK_SETUP, "a.yaml": RECIPE})
    v = resolve(str(repo / "a.yaml"))
    t = v.get("transformers")
    assert t.version == "4.57.6" and t.assumed and t.origin == "pin"
    assert t.spec == ">=4.53.3,<5.0.0"
    assert any("huggingface-hub" in r and "rules out transformers 5.0.0" in r for r in t.narrowed)
    assert "narrowed:" in t.describe()
    assert v.admits("transformers", ">=5.0") is False
    assert v.admits("transformers", ">=4.55") is None
    # without the hub pin nothing rules transformers 5 out
    plain = make_repo(tmp_path / "plain", {"setup.py": '_deps = ["transformers>=4.53.3"]\n', "a.yaml": RECIPE})
    t = resolve(str(plain / "a.yaml")).get("transformers")
    assert t.version == frameworks.newest("transformers") and not t.narrowed
    assert resolve(str(plain / "a.yaml")).admits("transformers", ">=5.0") is None


def test_the_other_direction_and_a_distribution_in_the_run_narrows_what_it_requires(tmp_path):
    repo = make_repo(tmp_path, {"requirements.txt": "huggingface-hub>=1.0\n", "a.yaml": RECIPE})
    t = resolve(str(repo / "a.yaml")).get("transformers")
    assert t.version == frameworks.newest("transformers") and t.spec == ">=5.0.0"  # 4.x requires hub<1.0
    assert t.origin == "known" and t.assumed
    exact = make_repo(tmp_path / "exact", {"requirements.txt": "trl==0.18.2\n", "a.yaml": RECIPE})
    v = resolve(str(exact / "a.yaml"))
    assert v.get("trl").version == "0.18.2" and not v.get("trl").narrowed  # exact: never narrowed
    t = v.get("transformers")
    assert t.spec == ">=4.50.0" and t.assumed and "trl 0.18.2 requires transformers>=4.50.0" in t.narrowed[0]
    assert v.admits("transformers", "<4.50") is False
    assert v.admits("transformers", ">=5") is None
    # nothing pinned transformers: the cut rules releases out but makes no claim certain (no error from it)
    assert v.admits("transformers", ">=4.46") is None
    # an unpinned framework that only loses a release in between is left as it was
    mid = make_repo(tmp_path / "mid", {"requirements.txt": "transformers>=4.51,<4.57\n", "a.yaml": RECIPE})
    trl = resolve(str(mid / "a.yaml")).get("trl")
    assert trl.version == frameworks.newest("trl") and not trl.narrowed  # only trl 0.12.2 (transformers<4.47) is out


def test_contradicting_pins_narrow_nothing(tmp_path):
    repo = make_repo(tmp_path, {"requirements.txt": "huggingface-hub<0.10\ntransformers>=4.53\n", "a.yaml": RECIPE})
    t = resolve(str(repo / "a.yaml")).get("transformers")
    assert t.spec == ">=4.53" and not t.narrowed  # no known transformers >= 4.53 takes hub < 0.10


def test_cuts_cap_only_assumed_versions():
    base = Versions({"trl": FrameworkVersion("trl", "1.16.0", "pin", "setup.py", True, ">=0.19.1"),
                     "peft": FrameworkVersion("peft", "0.13.2", "pin", "requirements.txt")})
    cuts = (narrowing.Cut("trl", "0.26.0", "scripts/sft.py imports setup_chat_format"),
            narrowing.Cut("peft", "0.10.0", "x imports prepare_model_for_int8_training"))
    out = narrowing.apply(base, {}, cuts)
    assert out.get("trl").version == "0.25.1" and out.get("trl").spec == ">=0.19.1,<0.26.0"
    assert out.get("trl").narrowed == ("scripts/sft.py imports setup_chat_format",)
    assert out.get("peft") == base.get("peft")
    assert out.admits("trl", ">=0.27") is False and out.admits("trl", ">=0.20") is None


# --- imports ----------------------------------------------------------------------------------------------------

def test_the_launched_script_and_its_local_package_cut_the_range(tmp_path):
    imports.clear_cache()
    repo = make_repo(tmp_path, {"scripts/sft.py": SFT_SCRIPT, "scripts/dpo.py": DPO_SCRIPT, **PACKAGE})
    sft = imports.cuts_for(str(repo / "scripts/sft.py"), str(repo))
    assert [(c.name, c.below) for c in sft if c.below] == [("trl", "0.26.0")]
    assert sft[0].reason.startswith("scripts/sft.py imports setup_chat_format, removed in TRL 0.26.0")
    dpo = imports.cuts_for(str(repo / "scripts/dpo.py"), str(repo))
    assert [(c.name, c.below) for c in dpo if c.below] == [("trl", "0.29.0")]
    assert dpo[0].reason.startswith("src/alignment/configs.py (imported by scripts/dpo.py) uses trl.ORPOConfig")
    assert imports.weakest([sft, dpo])[0].below == "0.29.0"
    assert imports.weakest([sft, ()]) == ()
    # names added to trl raise the lower bound: trl.SFTConfig (configs.py) is in no release up to 0.8.6
    assert [(c.after, c.reason) for c in sft if c.after] == [
        ("0.8.6", "src/alignment/configs.py (imported by scripts/sft.py) uses trl.SFTConfig, which TRL 0.8.6 and older lack "
                  "(first in 0.9.3)")]


def test_a_name_added_in_a_release_raises_the_lower_bound(tmp_path):
    imports.clear_cache()
    repo = make_repo(tmp_path, {"grpo.py": "from trl import GRPOConfig, GRPOTrainer, TrlParser\n"})
    cuts = imports.cuts_for(str(repo / "grpo.py"), str(repo))
    assert [(c.name, c.below, c.after) for c in cuts] == [("trl", "", "0.13.0")]
    base = Versions({"trl": FrameworkVersion("trl", "1.16.0", "pin", "setup.py", True, "<0.20")})
    out = narrowing.apply(base, {}, cuts)
    assert out.get("trl").spec == ">0.13.0,<0.20" and out.get("trl").version == "0.19.1"
    assert out.admits("trl", ">=0.14") is True and out.admits("trl", "<0.14") is False
    assert imports.weakest([cuts, cuts])[0].after == "0.13.0"


def test_guarded_and_deferred_imports_do_not_cut(tmp_path):
    imports.clear_cache()
    text = ("try:\n    from trl import setup_chat_format\nexcept ImportError:\n    setup_chat_format = None\n"
            "def main():\n    from trl import ORPOTrainer\n"
            "if False:\n    from trl import PPOTrainer\n"
            "import transformers\nx = transformers.TextDataset\n")
    repo = make_repo(tmp_path, {"train.py": text, "broken.py": "from trl import (\n"})
    cuts = imports.cuts_for(str(repo / "train.py"), str(repo))
    assert [(c.name, c.below) for c in cuts if c.below] == [("transformers", "5.0.0")]
    assert "uses transformers.TextDataset" in cuts[0].reason
    assert imports.cuts_for(str(repo / "broken.py"), str(repo)) == ()
    assert imports.cuts_for(str(repo / "missing.py"), str(repo)) == ()


# --- the whole path -----------------------------------------------------------------------------------------------

def _handbook(tmp_path, readme: str):
    imports.clear_cache()
    return make_repo(tmp_path, {"setup.py": HANDBOOK_SETUP, "scripts/sft.py": SFT_SCRIPT, "scripts/dpo.py": DPO_SCRIPT,
                                **PACKAGE, "README.md": readme, "recipes/sft/config.yaml": RECIPE})


def _findings(result):
    return {(d.code, d.span.start.line + 1): d for d in result.diagnostics if d.code == "TL524"}


def test_a_launched_recipe_is_judged_on_the_releases_its_script_can_import(tmp_path):
    repo = _handbook(tmp_path, "```shell\naccelerate launch scripts/sft.py --config recipes/sft/config.yaml\n```\n")
    result = engine.check_path(repo / "recipes/sft/config.yaml")
    found = _findings(result)
    assert ("TL524", 2) not in found  # torch_dtype: removed in TRL 0.27, sft.py fails at import from 0.26
    assert ("TL524", 4) not in found  # overwrite_output_dir: removed in transformers 5, hub<1.0 rules it out
    assert ("TL524", 3) in found  # max_seq_length: removed in TRL 0.20, inside >=0.19.1,<0.26.0
    finding = found[("TL524", 3)]
    assert finding.severity.value == "warning"  # rests on the assumed release inside the range
    assert any("setup_chat_format" in a for a in finding.assumptions)  # the JSON output's `assumptions`
    trl = result.versions.get("trl")
    assert trl.spec == ">=0.19.1,<0.26.0" and trl.assumed and not trl.sure  # the launch names the script: a fact
    assert result.versions.admits("trl", "<0.26") is True
    rows = {name: where for name, _value, where in settings_output.entries(result)}
    assert "scripts/sft.py imports setup_chat_format, removed in TRL 0.26.0" in rows["trl"]
    assert "rules out transformers 5.0.0" in rows["transformers"]
    from trainlint.lsp.features import context_markdown

    hover = context_markdown(result)  # the language server's hover on the first line
    assert "setup_chat_format" in hover and "rules out transformers 5.0.0" in hover


def test_without_a_launch_the_cut_that_holds_for_every_script_of_the_parser(tmp_path):
    repo = _handbook(tmp_path, "nothing here\n")
    result = engine.check_path(repo / "recipes/sft/config.yaml")
    trl = result.versions.get("trl")
    assert trl.spec == ">=0.19.1,<0.29.0"  # dpo.py (via alignment's ORPOConfig) is the weaker cut
    assert "no launch names this file" in trl.narrowed[-1]
    # which script runs is assumed: the cut rules TRL 0.29+ out but makes nothing certain that the pin does not
    assert trl.sure == ">=0.19.1"
    assert result.versions.admits("trl", ">=0.29") is False and result.versions.admits("trl", "<0.29") is None
    assert ("TL524", 2) in _findings(result)  # torch_dtype: TRL 0.27-0.28 still admitted


def test_isolated_runs_read_no_scripts(tmp_path):
    from trainlint.context.settings import Settings

    repo = _handbook(tmp_path, "```shell\naccelerate launch scripts/sft.py --config recipes/sft/config.yaml\n```\n")
    result = engine.check_path(repo / "recipes/sft/config.yaml", Settings(use_project_config=False))
    assert not any(v.narrowed for v in result.versions)
