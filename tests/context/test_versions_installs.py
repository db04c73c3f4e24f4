"""Pins outside the config's ancestor folders that the repository's install commands install from, and git pins
(`trl @ git+...@REF`): a tag is its release, a commit release_commits.json places is a range, anything else unknown."""

from __future__ import annotations

from trainlint.context import pins
from trainlint.context.versions import resolve

from ctxrepo import SFT, make_repo

LIGHTNING = "trainer:\n  gpus: null\n  precision: 16\n"


def test_conda_env_file_named_by_docs(tmp_path):
    repo = make_repo(tmp_path, {
        "pyproject.toml": '[project]\nname = "climax"\ndependencies = []\n',
        "docker/environment.yml": "dependencies:\n  - pytorch=1.12.1=py3.8_cuda11.3_0\n  - pip:\n"
                                  "    - pytorch-lightning==1.8.0\n",
        "docker/other.yml": "dependencies:\n  - pip:\n    - pytorch-lightning==2.0.0\n",
        "docs/install.md": "```bash\ncd ClimaX\nconda env create --file docker/environment.yml\n```\n",
        "configs/a.yaml": LIGHTNING})
    v = resolve(str(repo / "configs/a.yaml"))
    assert (v.get("lightning").version, v.get("lightning").assumed) == ("1.8.0", False)
    assert v.get("lightning").source.endswith("docker/environment.yml (installed by docs/install.md:3)")
    assert v.get("torch").version == "1.12.1"  # conda's name=version=build


def test_editable_subproject_installed_by_setup_sh(tmp_path):
    repo = make_repo(tmp_path, {
        "setup.sh": "# comment\ncd src/open-r1-multimodal # edited\npip install -e \".[dev]\"\npip install wandb==0.18.3\n",
        "src/open-r1-multimodal/setup.py": '_deps = ["trl==0.17.0", "transformers==4.49.0"]\nsetup(name="open-r1")\n',
        "run_scripts/args.yaml": SFT})
    v = resolve(str(repo / "run_scripts/args.yaml"))
    assert (v.get("trl").version, v.get("trl").assumed) == ("0.17.0", False)
    assert "(installed by setup.sh:3)" in v.get("trl").source
    assert pins.pins_for(str(repo / "run_scripts/args.yaml"))[1] == ("open-r1",)
    same = make_repo(tmp_path / "b", {"setup.sh": "pip install -e src/sub\n",
                                      "src/sub/setup.py": '_deps = ["trl==0.16.1"]\n', "x/a.yaml": SFT})
    assert resolve(str(same / "x/a.yaml")).get("trl").version == "0.16.1"


def test_nearer_pins_win_and_dockerfile_pins(tmp_path):
    repo = make_repo(tmp_path, {
        "requirements.txt": "trl==0.18.2\n",
        "docker/Dockerfile": "FROM python:3.11\nCOPY docker/requirements-gpu.txt /tmp/\n"
                             "RUN pip install -r /tmp/requirements-gpu.txt && \\\n    pip install deepspeed==0.15.4\n",
        "docker/requirements-gpu.txt": "transformers==4.46.3\ntrl==0.16.1\n",
        "a.yaml": SFT})
    v = resolve(str(repo / "a.yaml"))
    assert v.get("trl").version == "0.18.2"  # the pin next to the config
    assert v.get("transformers").version == "4.46.3"  # through COPY
    assert v.get("deepspeed").version == "0.15.4" and "docker/Dockerfile:3" in v.get("deepspeed").source


def test_single_conventional_file_only_when_root_pins_nothing(tmp_path):
    repo = make_repo(tmp_path, {"envs/environment.yaml": "dependencies:\n  - pip:\n    - trl==0.16.1\n",
                                "a.yaml": SFT})
    v = resolve(str(repo / "a.yaml"))
    assert v.get("trl").version == "0.16.1" and "the only environment file" in v.get("trl").source
    two = make_repo(tmp_path / "two", {"envs/environment.yaml": "dependencies:\n  - pip:\n    - trl==0.16.1\n",
                                       "envs/requirements.txt": "trl==0.17.0\n", "a.yaml": SFT})
    assert resolve(str(two / "a.yaml")).get("trl").origin == "known"  # two candidates: none is taken
    pinned = make_repo(tmp_path / "pinned", {"requirements.txt": "transformers==4.49.0\n",
                                             "docker/requirements.txt": "trl==0.16.1\n", "a.yaml": SFT})
    assert resolve(str(pinned / "a.yaml")).get("trl").origin == "known"


def test_git_pins(tmp_path):
    setup = ('_deps = ["trl @ git+https://github.com/huggingface/trl.git@69ad852e5654a77f1695eb4c608906fe0c7e8624",'
             ' "peft @ git+https://github.com/huggingface/peft.git@main", "transformers==4.49.0"]\n')
    repo = make_repo(tmp_path, {"setup.py": setup, "requirements-dev.txt":
                                "git+https://github.com/huggingface/accelerate.git@v1.4.0\n", "a.yaml": SFT})
    v = resolve(str(repo / "a.yaml"), use_environment=False)
    trl = v.get("trl")  # 69ad852e: after the 0.15 release branch left main, before v0.16.0
    assert trl.assumed and trl.origin == "pin" and trl.spec.startswith(">=0.15") and "<=0.16.0" in trl.spec
    assert trl.version.startswith("0.15") and "between releases" in trl.source
    assert v.admits("trl", ">=0.27") is False  # a key removed in TRL 0.27 is still accepted there
    peft = v.get("peft")  # a branch: a development version trainlint cannot name
    assert peft.origin == "pin" and peft.assumed and not peft.spec and "release unknown" in peft.source
    assert v.admits("peft", ">=0.1") is None
    acc = v.get("accelerate")  # a release tag is that release
    assert (acc.version, acc.assumed) == ("1.4.0", False)


def test_unknown_git_commit_is_not_the_newest_release(tmp_path):
    repo = make_repo(tmp_path, {"setup.py": '_deps = ["trl @ git+https://github.com/huggingface/trl.git@0123456789ab"]\n',
                                "a.yaml": SFT})
    trl = resolve(str(repo / "a.yaml"), use_environment=False).get("trl")
    assert trl.origin == "pin" and trl.assumed and "release unknown" in trl.source


GRPO = ("model_name_or_path: Qwen/Qwen2.5-0.5B\nvllm_max_model_len: 4096\ntorch_dtype: bfloat16\n"
        "per_device_train_batch_size: 2\ngradient_accumulation_steps: 2\nlearning_rate: 1.0e-5\nnum_generations: 4\n"
        "use_vllm: true\nbf16: true\noutput_dir: out\n")


def test_git_commit_range_decides_removed_keys(tmp_path):
    from trainlint import engine

    pin = "trl @ git+https://github.com/huggingface/trl.git@69ad852e5654a77f1695eb4c608906fe0c7e8624"
    repo = make_repo(tmp_path, {"setup.py": f'_deps = ["{pin}"]\n', "a.yaml": GRPO})
    codes = {(d.code, d.span.start.line) for d in engine.check_path(repo / "a.yaml").diagnostics}
    assert not {c for c in codes if c[0] in ("TL523", "TL524")}, codes  # both keys exist in TRL 0.15 - 0.16
    newer = make_repo(tmp_path / "n", {"requirements.txt": "trl==0.20.0\n", "a.yaml": GRPO})
    found = [d for d in engine.check_path(newer / "a.yaml").diagnostics if d.code == "TL524"]
    assert any("vllm_max_model_len" in d.message and "0.18" in d.message for d in found)


def test_install_files_invalidate_the_caches(tmp_path):
    from trainlint.context import installs

    repo = make_repo(tmp_path, {"docker/Dockerfile": "RUN pip install trl==0.16.1\n", "a.yaml": SFT})
    assert resolve(str(repo / "a.yaml")).get("trl").version == "0.16.1"
    assert installs.is_install_file(str(repo / "docker/Dockerfile"))
    (repo / "docker/Dockerfile").write_text("RUN pip install trl==0.17.0\n")
    pins.clear_cache()
    assert resolve(str(repo / "a.yaml")).get("trl").version == "0.17.0"
    assert not installs.is_install_file(str(repo / "a.yaml"))


def test_git_tables_in_pipfile_and_poetry(tmp_path):
    repo = make_repo(tmp_path, {
        "Pipfile": '[packages]\ntrl = {git = "https://github.com/huggingface/trl.git", ref = "v0.16.1"}\n',
        "sub/pyproject.toml": '[tool.poetry.dependencies]\npython = "^3.10"\n'
                              'trl = {git = "https://github.com/huggingface/trl.git", branch = "main"}\n',
        "a.yaml": SFT, "sub/b.yaml": SFT})
    v = resolve(str(repo / "a.yaml"), use_environment=False)
    assert (v.get("trl").version, v.get("trl").assumed) == ("0.16.1", False)
    near = resolve(str(repo / "sub/b.yaml"), use_environment=False).get("trl")
    assert near.origin == "pin" and "git reference main" in near.source


def test_unknown_git_pin_is_still_narrowed_by_the_launched_scripts_imports(tmp_path):
    from trainlint import engine
    from trainlint.context import imports

    imports.clear_cache()
    script = ("from trl import ModelConfig, TrlParser, SFTConfig, setup_chat_format\n\n"
              "if __name__ == \"__main__\":\n    parser = TrlParser((SFTConfig, ModelConfig))\n")
    repo = make_repo(tmp_path, {
        "setup.py": '_deps = ["trl @ git+https://github.com/huggingface/trl.git@main"]\n',
        "scripts/sft.py": script, "README.md": "```shell\naccelerate launch scripts/sft.py --config recipes/a.yaml\n```\n",
        "recipes/a.yaml": "model_name_or_path: Qwen/Qwen2.5-0.5B\ntorch_dtype: bfloat16\nper_device_train_batch_size: 2\n"
                          "output_dir: data/out\n"})
    result = engine.check_path(repo / "recipes/a.yaml")
    trl = result.versions.get("trl")
    assert trl.origin == "pin" and "git reference main" in trl.source and "<0.26.0" in trl.spec
    assert any("setup_chat_format" in why for why in trl.narrowed)
    assert not [d for d in result.diagnostics if d.code == "TL524"]  # torch_dtype: removed only in TRL 0.27


def test_framework_checkout_in_a_readme(tmp_path):
    """`git clone <transformers> && cd transformers && git checkout v4.43.4` pins that release; `-b v0.16.0` at clone
    time too; a commit release_commits.json places is its range; a clone of no framework pins nothing; a range on
    pip's command line is a pin of its own."""
    readme = ("```bash\ngit clone https://github.com/huggingface/transformers.git\ncd transformers\n"
              "git checkout v4.43.4\npip install -e .\ncd ..\n"
              "git clone -b v0.16.0 --depth 1 https://github.com/huggingface/trl.git my-trl\n"
              "git clone https://github.com/someone/tools.git && cd tools && git checkout v9.9.9\n"
              "pip install 'peft>=0.10,<0.11'\n```\n")
    repo = make_repo(tmp_path, {"README.md": readme, "c.yaml": SFT})
    v = resolve(str(repo / "c.yaml"))
    assert (v.get("transformers").version, v.get("transformers").assumed) == ("4.43.4", False)
    assert "README.md:4" in v.get("transformers").source and "git tag v4.43.4" in v.get("transformers").source
    assert (v.get("trl").version, v.get("trl").assumed) == ("0.16.0", False)
    assert v.get("peft").spec == "<0.11,>=0.10"
    pins.clear_cache()
    commit = "```bash\ngit clone https://github.com/huggingface/trl\ngit -C trl checkout 69ad852e\n```\n"
    repo = make_repo(tmp_path / "b", {"README.md": commit, "c.yaml": SFT})
    found = pins.pins_for(str(repo / "c.yaml"))[0]["trl"]
    assert "git commit 69ad852e" in found.note and "between releases" in found.note and found.spec.startswith(">=0.15")
