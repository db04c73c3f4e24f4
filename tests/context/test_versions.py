"""Framework versions: declared > the repository's pins > installed > newest known (assumed)."""

from __future__ import annotations

from trainlint import engine
from trainlint.context import pins
from trainlint.context.settings import ContextSettings, Settings
from trainlint.context.versions import resolve
from trainlint.plan import Origin

from ctxrepo import SFT, make_repo


def test_setup_py_pins(tmp_path):
    repo = make_repo(tmp_path, {"setup.py": '_deps = ["transformers==4.52.3", "trl[vllm]==0.18.0", "peft>=0.14"]\n'
                                            'setup(name="open-r1")\n', "recipes/a.yaml": SFT})
    v = resolve(str(repo / "recipes/a.yaml"))
    assert (v.get("trl").version, v.get("trl").origin, v.get("trl").assumed) == ("0.18.0", "pin", False)
    assert v.get("transformers").version == "4.52.3"
    peft = v.get("peft")
    assert peft.assumed and peft.origin == "pin" and peft.spec == ">=0.14"
    assert pins.pins_for(str(repo / "recipes/a.yaml"))[1] == ("open-r1",)


def test_nearest_pin_wins_and_lock_files(tmp_path):
    repo = make_repo(tmp_path, {
        "requirements.txt": "transformers>=4.40,<5  # comment\n-r other.txt\ngit+https://x/y\n",
        "sub/uv.lock": '[[package]]\nname = "transformers"\nversion = "4.46.3"\n',
        "sub/pyproject.toml": '[project]\nname = "x"\ndependencies = ["trl~=0.16.0"]\n',
        "sub/c.yaml": SFT, "d.yaml": SFT})
    near = resolve(str(repo / "sub/c.yaml"))
    assert near.get("transformers").version == "4.46.3" and not near.get("transformers").assumed
    assert near.get("trl").assumed and near.get("trl").version.startswith("0.16")
    far = resolve(str(repo / "d.yaml"))
    assert far.get("transformers").version == "4.57.6" and far.get("transformers").assumed


def test_other_pin_formats(tmp_path):
    repo = make_repo(tmp_path, {
        "environment.yml": "dependencies:\n  - python=3.11\n  - deepspeed=0.14.5\n  - pip:\n    - accelerate==0.34.2\n",
        "Pipfile.lock": '{"default": {"peft": {"version": "==0.13.2"}}}',
        "setup.cfg": "[options]\ninstall_requires =\n    lightning==2.4.0\n",
        "a.yaml": SFT})
    v = resolve(str(repo / "a.yaml"))
    assert v.get("deepspeed").version == "0.14.5"
    assert v.get("accelerate").version == "0.34.2"
    assert v.get("peft").version == "0.13.2"
    assert v.get("lightning").version == "2.4.0"


def test_poetry_caret(tmp_path):
    repo = make_repo(tmp_path, {"pyproject.toml": '[tool.poetry]\nname = "p"\n[tool.poetry.dependencies]\n'
                                                  'python = "^3.10"\ntransformers = "^4.40"\n', "a.yaml": SFT})
    t = resolve(str(repo / "a.yaml")).get("transformers")
    assert t.version.startswith("4.") and t.assumed


def test_declared_beats_pins_and_broken_files_are_no_pins(tmp_path):
    repo = make_repo(tmp_path, {"requirements.txt": "trl==0.18.0\n", "uv.lock": "not [toml", "a.yaml": SFT,
                                "pyproject.toml": '[tool.trainlint]\nversions = {trl = "0.20.0"}\n'})
    result = engine.check_path(repo / "a.yaml")
    assert (result.versions.get("trl").version, result.versions.get("trl").origin) == ("0.20.0", "project")
    text = "# trainlint: trl=0.19.1 transformers=\">=4.46,<4.50\"\n" + SFT
    (repo / "a.yaml").write_text(text)
    result = engine.check_path(repo / "a.yaml")
    assert result.versions.get("trl").version == "0.19.1"
    assert result.versions.get("transformers").version == "4.49.0" and result.versions.get("transformers").assumed
    cli = Settings(context=ContextSettings({"trl": "0.17.0"}, origin=Origin("cli")))
    assert engine.check_path(repo / "a.yaml", cli).versions.get("trl").version == "0.17.0"


def test_unknown_is_newest_known_assumed(tmp_path):
    repo = make_repo(tmp_path, {"a.yaml": SFT})
    t = resolve(str(repo / "a.yaml"), use_environment=False).get("transformers")
    assert t.origin == "known" and t.assumed
