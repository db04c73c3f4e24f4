"""The pre-commit hooks: the manifest's file patterns, and the REAL `pre-commit try-repo` installing
trainlint from a copy of this working tree and running it in a throwaway git repository."""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
MANIFEST = ROOT / ".pre-commit-hooks.yaml"

# The real file names of the corpus (its SOURCES.md, ../shared/corpus beside the checkout: each config's path in its own
# repository), which the default `files` pattern must select.
CORPUS_PATHS = """
config.yaml
config/data/cub_mae.yaml
config/fit.yaml
config/mae.yaml
config/multigpu.yaml
config_hub/finetune/llama-2-7b/full.yaml
config_hub/finetune/llama-2-7b/qlora.yaml
config_hub/finetune/llama-3.1-8b/lora.yaml
configs/default_offload_opt_param.json
configs/ds_configs/stage3_no_offloading.conf
configs/ds_configs/stage3_offloading_accelerate.conf
configs/train_configs/dpo/final_best_70b_dpo_config.yaml
configs/train_configs/olmo2/olmo2_1124_7b_sft.yaml
configs/train_configs/sft/default.yaml
deepspeed_configs/zero1_torch_compile.json
deepspeed_configs/zero2.json
deepspeed_configs/zero3_bf16_cpuoffload_all.json
ds_config.json
ds_config3.json
deepspeed_zero3.yaml
fsdp.yml
examples/accelerate/fsdp_config_offload.yaml
examples/accelerate_configs/alst_ulysses_4gpu.yaml
examples/accelerate_configs/deepspeed_zero2.yaml
examples/accelerate_configs/deepspeed_zero3.yaml
examples/accelerate_configs/fsdp2.yaml
examples/accelerate_configs/multi_gpu.yaml
examples/archived/openllama-3b/config.yml
examples/cli_configs/example_config.yaml
examples/config_yaml_templates/deepspeed.yaml
examples/config_yaml_templates/fsdp.yaml
examples/deepspeed/ds_z2_offload_config.json
examples/deepspeed/ds_z3_config.json
examples/deepspeed/ds_z3_fp8_config.json
examples/deepspeed/ds_z3_offload_config.json
examples/deepspeed_config_templates/zero_stage3_offload_config.json
examples/extras/fsdp_qlora/llama3_lora_sft.yaml
examples/gpt-oss/gpt-oss-20b-fft-deepspeed-zero3.yaml
examples/jamba/qlora_deepspeed.yaml
examples/llama-2/qlora.yml
examples/llama-3/fft-8b.yaml
examples/llama-3/lora-8b.yml
examples/llama-3/qlora-fsdp-70b.yaml
examples/mistral/bigstral/bigstral-ds-zero3.yaml
examples/summarize_rlhf/reward_model/ds_config_gpt_j.json
examples/train_full/qwen3_full_sft.yaml
examples/train_lora/qwen3_lora_sft_ds3.yaml
examples/train_qlora/qwen3_lora_sft_otfq.yaml
experiments/ssl4eo/landsat/conf/ssl4eo_l_oli_tirs_toa_simclr_vits16.yaml
experiments/torchgeo/conf/landcoverai.yaml
inference/sglang/ds_offload_nvme_aio.json
playground/deepspeed_config_s3.json
recipes/accelerate_configs/fsdp.yaml
recipes/accelerate_configs/zero3.yaml
recipes/configs/llama2/7B_qlora_single_device.yaml
recipes/configs/llama3_1/405B_qlora.yaml
recipes/configs/llama3_1/70B_full.yaml
recipes/configs/llama3_1/8B_full_single_device.yaml
recipes/configs/llama3_1/8B_lora_single_device.yaml
recipes/configs/llama3_2/1B_full.yaml
recipes/zephyr-141b-A35b/orpo/config_full.yaml
recipes/zephyr-7b-beta/dpo/config_full.yaml
recipes/zephyr-7b-beta/sft/config_full.yaml
recipes/zephyr-7b-beta/sft/config_qlora.yaml
tests/deepspeed/ds_config_zero2.json
tests/deepspeed/ds_config_zero3.json
train/deepspeed_config.json
training/DeepSpeed-ZenFlow/finetuning/zf_config.json
training/autotuning/hf/dsconfigs/ds_config_fp16_z3.json
training/autotuning/hf/dsconfigs/ds_config_z2.json
training/bf16_master_weight/configs/bf16_full.json
training/bing_bert/deepspeed_bsz64k_lamb_config_seq128.json
training/imagenet/config/ds_fp16_z1_config.json
training/pipeline_parallelism/ds_config.json
""".split()

# Common files in ML repositories that are not training configs.
NOT_CONFIGS = """
.github/workflows/train.yml .github/dependabot.yml .pre-commit-config.yaml .vscode/settings.json
package.json package-lock.json tsconfig.json web/tsconfig.app.json docker-compose.yml mkdocs.yml environment.yml
codecov.yml .readthedocs.yaml README.md src/train.py data/train.jsonl data/train.csv nginx/nginx.conf
configs/nginx.conf models/llama/tokenizer_config.json models/llama/generation_config.json
models/llama/model.safetensors.index.json adapter/adapter_config.json configs/train.yaml.bak
""".split()


def hooks() -> dict:
    return {h["id"]: h for h in yaml.safe_load(MANIFEST.read_text(encoding="utf-8"))}


def selected(hook: dict, path: str) -> bool:
    """pre-commit's own file filter: `files` and `exclude` are searched with Python's re."""
    return re.search(hook["files"], path) is not None and re.search(hook["exclude"], path) is None


def test_manifest_declares_both_hooks():
    found = hooks()
    assert set(found) == {"trainlint", "trainlint-fix"}
    assert found["trainlint"]["entry"] == "trainlint check --force-exclude"  # the project excludes apply
    assert found["trainlint-fix"]["entry"] == "trainlint check --fix --force-exclude"
    for hook in found.values():
        assert hook["language"] == "python"
        assert hook["files"] == found["trainlint"]["files"] and hook["exclude"] == found["trainlint"]["exclude"]


def test_corpus_file_names_are_selected():
    hook = hooks()["trainlint"]
    assert len(CORPUS_PATHS) == 74  # 75 corpus files; two of them are both called ds_config.json
    assert [p for p in CORPUS_PATHS if not selected(hook, p)] == []


def test_corpus_sources_list_matches_when_available():
    from shared_corpus import corpus_path

    sources = corpus_path("SOURCES.md")
    listed = re.findall(r"path: `([^`]+)`", sources.read_text(encoding="utf-8"))
    real = [p for p in listed if not p.startswith("issue")]
    hook = hooks()["trainlint"]
    assert [p for p in real if not selected(hook, p)] == []


def test_other_files_are_not_selected():
    hook = hooks()["trainlint"]
    assert [p for p in NOT_CONFIGS if selected(hook, p)] == []


def test_hook_types_accept_every_corpus_extension(tmp_path):
    identify = pytest.importorskip("identify.identify", reason="identify (installed with pre-commit) missing")
    hook = hooks()["trainlint"]
    for name in {Path(p).name for p in CORPUS_PATHS}:
        path = tmp_path / name
        path.write_text("{}\n")
        tags = identify.tags_from_path(str(path))
        assert set(hook.get("types", ["file"])) <= tags, (name, tags)
        assert not hook.get("types_or") or set(hook["types_or"]) & tags, (name, tags)


# ---- the real pre-commit ---------------------------------------------------------------------

HF_BAD = "model_name_or_path: gpt2\noutput_dir: out\nlearning_rate: 2e-5\n"
HF_CLEAN = "model_name_or_path: gpt2\noutput_dir: out\nlearning_rate: 2.0e-5\n"
NOT_SELECTED = "learning_rate: 2e-5\n"  # notes.yaml: not a config name, so the hook never sees it
PROJECT_SETTINGS = 'select = ["TL0"]\n'  # only the file-level rules: the test is about the hook, not the rules

# What `pip install .` needs from the working tree (pyproject.toml's build includes).
PACKAGE_FILES = ["pyproject.toml", "README.md", "LICENSE", ".pre-commit-hooks.yaml", "trainlint", "schemas"]


def _tools():
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    if importlib.util.find_spec("pre_commit") is None:
        pytest.skip("pre-commit is not installed (pip install pre-commit)")


def _env(home: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "PRE_COMMIT", "VIRTUAL_ENV"))}
    env.update(PRE_COMMIT_HOME=str(home), GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@example.com",
               GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@example.com", GIT_CONFIG_NOSYSTEM="1",
               GIT_CONFIG_GLOBAL=os.devnull, PRE_COMMIT_COLOR="never")
    return env


def _git(cwd: Path, env: dict, *args: str) -> None:
    subprocess.run(["git", "-c", "init.defaultBranch=main", "-c", "commit.gpgsign=false", *args], cwd=cwd, env=env,
                   check=True, capture_output=True, timeout=120)


def _commit_all(repo: Path, env: dict) -> None:
    _git(repo, env, "init", "-q")
    _git(repo, env, "add", "-A")
    _git(repo, env, "commit", "-q", "-m", "snapshot")


@pytest.fixture(scope="module")
def hook_repo(tmp_path_factory):
    """The current working tree (not HEAD: `try-repo` would leave out uncommitted and new files) copied
    into a fresh git repository and committed, so pre-commit installs exactly this code."""
    _tools()
    base = tmp_path_factory.mktemp("precommit")
    env = _env(base / "cache")
    repo = base / "hookrepo"
    repo.mkdir()
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info")
    for name in PACKAGE_FILES:
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, repo / name, ignore=ignore)
        elif source.is_file():
            shutil.copy2(source, repo / name)
    _commit_all(repo, env)
    return repo, env


def _project(root: Path, env: dict, files: dict[str, str]) -> Path:
    root.mkdir()
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    _commit_all(root, env)
    return root


def _try_repo(hook_repo, project: Path, hook_id: str) -> subprocess.CompletedProcess:
    repo, env = hook_repo
    return subprocess.run([sys.executable, "-m", "pre_commit", "try-repo", str(repo), hook_id, "--all-files"],
                          cwd=project, env=env, capture_output=True, text=True, timeout=900)


def test_precommit_hook_fails_on_a_bad_config_and_prints_the_finding(hook_repo, tmp_path):
    project = _project(tmp_path / "project", hook_repo[1], {
        "configs/train.yaml": HF_BAD, "ds_config.json": '{"train_micro_batch_size_per_gpu": 4}\n',
        "notes.yaml": NOT_SELECTED, "trainlint.toml": PROJECT_SETTINGS})
    proc = _try_repo(hook_repo, project, "trainlint")
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out
    assert re.search(r"trainlint\.*Failed", out), out
    assert "configs/train.yaml:3:16: TL003 warning" in out, out
    findings = out.split("Failed", 1)[1]
    assert "notes.yaml" not in findings and "ds_config.json" not in findings, out


def _run_configured(hook_repo, project: Path, hook_id: str) -> subprocess.CompletedProcess:
    """`pre-commit run` with a .pre-commit-config.yaml as docs/ci.md shows it (repo, rev, hooks). Unlike
    `try-repo`, which builds a fresh environment every time, this reuses the cached one."""
    repo, env = hook_repo
    rev = subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, env=env, capture_output=True, text=True,
                         check=True).stdout.strip()
    (project / ".pre-commit-config.yaml").write_text(
        f"repos:\n  - repo: {repo.as_posix()}\n    rev: {rev}\n    hooks:\n      - id: {hook_id}\n")
    _git(project, env, "add", ".pre-commit-config.yaml")
    return subprocess.run([sys.executable, "-m", "pre_commit", "run", hook_id, "--all-files"],
                          cwd=project, env=env, capture_output=True, text=True, timeout=900)


def test_precommit_hook_passes_on_a_clean_config(hook_repo, tmp_path):
    project = _project(tmp_path / "project", hook_repo[1], {
        "configs/train.yaml": HF_CLEAN, "notes.yaml": NOT_SELECTED, "trainlint.toml": PROJECT_SETTINGS})
    proc = _run_configured(hook_repo, project, "trainlint")
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    assert re.search(r"trainlint\.*Passed", out), out


def test_precommit_fix_hook_rewrites_the_file(hook_repo, tmp_path):
    project = _project(tmp_path / "project", hook_repo[1], {
        "configs/train.yaml": HF_BAD, "trainlint.toml": PROJECT_SETTINGS})
    proc = _run_configured(hook_repo, project, "trainlint-fix")
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out  # pre-commit fails a hook that changed files
    assert "files were modified by this hook" in out, out
    assert (project / "configs" / "train.yaml").read_text(encoding="utf-8") == HF_CLEAN
    again = _run_configured(hook_repo, project, "trainlint-fix")
    assert again.returncode == 0, again.stdout + again.stderr


def test_precommit_commit_of_only_the_deepspeed_json_that_breaks_the_agreement_fails(hook_repo, tmp_path):
    """pre-commit passes only the staged file: a commit of ds/zero2.json alone must still be checked against
    configs/train.yaml, which links it (HF stops on a micro-batch mismatch: TL600)."""
    from test_links import DS_BAD, DS_GOOD, TRAIN  # tests/ is on sys.path (rootdir-relative imports)

    repo, env = hook_repo
    project = _project(tmp_path / "project", env, {
        "pyproject.toml": '[project]\nname = "demo"\n\n[tool.trainlint]\nselect = ["TL0", "TL6"]\n',
        ".gitignore": "outputs/\n", "configs/train.yaml": TRAIN, "ds/zero2.json": DS_GOOD})
    rev = subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, env=env, capture_output=True, text=True,
                         check=True).stdout.strip()
    (project / ".pre-commit-config.yaml").write_text(
        f"repos:\n  - repo: {repo.as_posix()}\n    rev: {rev}\n    hooks:\n      - id: trainlint\n")
    _git(project, env, "add", ".pre-commit-config.yaml")
    _git(project, env, "commit", "-q", "-m", "hooks")
    subprocess.run([sys.executable, "-m", "pre_commit", "install"], cwd=project, env=env, check=True,
                   capture_output=True, timeout=120)

    (project / "ds" / "zero2.json").write_text(DS_BAD, encoding="utf-8")
    _git(project, env, "add", "ds/zero2.json")
    proc = subprocess.run(["git", "commit", "-m", "bigger micro-batch"], cwd=project, env=env, capture_output=True,
                          text=True, timeout=900)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0, out  # the hook failed, so did the commit
    assert re.search(r"trainlint\.*Failed", out), out
    assert "ds/zero2.json:2:37: TL600 error" in out and "configs/train.yaml" in out, out

    (project / "ds" / "zero2.json").write_text(DS_GOOD.replace('"stage": 2', '"stage": 3'), encoding="utf-8")
    _git(project, env, "add", "ds/zero2.json")
    proc = subprocess.run(["git", "commit", "-m", "zero 3"], cwd=project, env=env, capture_output=True, text=True,
                          timeout=900)
    assert proc.returncode == 0, proc.stdout + proc.stderr
