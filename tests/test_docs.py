"""The documentation as a user meets it: every relative link and anchor resolves, every install line
works without a package-index entry for trainlint, the documented commands, flags and settings exist,
the TOML/YAML/JSON snippets parse (the `[tool.trainlint]` examples are accepted by trainlint itself),
and the offline `repo: local` pre-commit recipe runs."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import sysconfig
import tomllib
import zipfile
from functools import lru_cache
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
GIT_URL = "git+https://github.com/trainlint/trainlint"
# Copies of third-party repositories keep their own (unchecked) docs.
THIRD_PARTY = ("tests/realworld/", "tests/fixtures/", "tests/data/", "benchmarks/accuracy/data/")


def markdown_files() -> list[Path]:
    listed = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "*.md"], cwd=ROOT,
                            capture_output=True, text=True, check=False).stdout.split()
    if not listed:  # not a git checkout: walk the tree
        listed = [str(p.relative_to(ROOT)) for p in ROOT.rglob("*.md") if "node_modules" not in p.parts]
    return sorted(ROOT / name for name in listed
                  if not name.startswith(THIRD_PARTY) and "node_modules/" not in name and (ROOT / name).is_file())


def rel(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


FENCE = re.compile(r"^([ \t]*)(```|~~~)([\w+-]*)[^\n]*\n(.*?)^\1\2[ \t]*$", re.M | re.S)


def code_blocks(text: str, *languages: str) -> list[str]:
    """Fenced blocks (also indented ones inside list items, dedented) in the given languages."""
    out = []
    for m in FENCE.finditer(text):
        if not languages or m.group(3) in languages:
            indent = len(m.group(1))
            out.append("".join(line[indent:] if line[:indent].isspace() else line
                               for line in m.group(4).splitlines(keepends=True)))
    return out


def prose(text: str) -> str:
    """The text without fenced code blocks and inline code spans (links there are examples)."""
    text = FENCE.sub("", text)
    return re.sub(r"`[^`\n]*`", "", text)


def github_slug(heading: str) -> str:
    """The anchor GitHub gives a heading: markup dropped, lower case, punctuation removed, spaces to `-`."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # links keep their text
    text = re.sub(r"<[^>]+>", "", text).replace("`", "").strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    seen: dict[str, int] = {}
    result = set()
    for m in re.finditer(r"^#{1,6}\s+(.*?)\s*#*\s*$", FENCE.sub("", path.read_text(encoding="utf-8")), re.M):
        slug = github_slug(m.group(1))
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        result.add(slug if n == 0 else f"{slug}-{n}")
    result |= set(re.findall(r'<a\s+(?:name|id)="([^"]+)"', path.read_text(encoding="utf-8")))
    return result


LINK = re.compile(r"(?<!\\)\[[^\]\n]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")


def test_relative_links_and_anchors_resolve():
    files = markdown_files()
    assert any(rel(p) == "README.md" for p in files)
    broken = []
    checked = 0
    for path in files:
        for target in LINK.findall(prose(path.read_text(encoding="utf-8"))):
            if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I):  # https:, mailto:, ...
                continue
            checked += 1
            file_part, _, fragment = target.partition("#")
            dest = (path.parent / file_part).resolve() if file_part else path
            if not dest.exists():
                broken.append(f"{rel(path)}: {target} (no such file)")
            elif fragment and dest.is_file() and dest.suffix == ".md" and fragment not in anchors(dest):
                broken.append(f"{rel(path)}: {target} (no heading #{fragment} in {rel(dest)})")
    assert checked > 20
    assert not broken, "\n".join(broken)


def test_no_reference_to_files_outside_the_repository():
    """docs/ci.md once pointed at a DESIGN.md that ships with no checkout."""
    for path in markdown_files():
        for name in re.findall(r"\b([A-Z][A-Z_]+\.md)\b", prose(path.read_text(encoding="utf-8"))):
            assert list(ROOT.rglob(name)), f"{rel(path)} mentions {name}, which is not in the repository"


def test_slugs_follow_github():
    assert github_slug("Offline: a `repo: local` hook") == "offline-a-repo-local-hook"
    assert github_slug("Editors, pre-commit, CI") == "editors-pre-commit-ci"
    assert github_slug("Neovim 0.7 to 0.10 without plugins") == "neovim-07-to-010-without-plugins"


# --- install lines ---------------------------------------------------------------------------------

DOC_TEXT_FILES = ("*.md", "*.el", "*.lua", "*.toml", "*.ts", "*.yaml", "*.yml")


def doc_and_config_files() -> list[Path]:
    found = []
    for pattern in DOC_TEXT_FILES:
        for base in (ROOT / "docs", ROOT / "editors", ROOT / "examples"):
            found += [p for p in base.rglob(pattern) if "node_modules" not in p.parts]
    return sorted(set(found) | {ROOT / "README.md", ROOT / ".pre-commit-hooks.yaml", ROOT / ".ci" / "run"})


def install_commands() -> list[tuple[str, str]]:
    """(file, arguments) of every `pip install` / `pipx install` line in the docs and editor set-ups."""
    out = []
    for path in doc_and_config_files():
        if not path.is_file():
            continue
        for m in re.finditer(r"\bpipx? install\s+([^`\n;&|)]*)", path.read_text(encoding="utf-8")):
            out.append((rel(path), m.group(1).split("#", 1)[0].strip()))
    return out


def test_every_install_line_works_without_a_package_index_entry():
    """trainlint is not on PyPI: an install names a git URL or a path, never the bare name."""
    commands = install_commands()
    assert len(commands) >= 8, commands
    wrong = []
    for where, args in commands:
        try:
            words = shlex.split(args)
        except ValueError:
            words = args.split()
        targets = [w for w in words if not w.startswith("-")]
        for word in targets:
            if re.fullmatch(r"trainlint([\[=<>~!].*)?", word):
                wrong.append(f"{where}: pip install {args}")
            elif word.startswith("git+") and not word.startswith(GIT_URL):
                wrong.append(f"{where}: {word} is not {GIT_URL}")
    assert not wrong, "\n".join(wrong)
    assert any(GIT_URL in args for _, args in commands)


PACKAGE_FILES = ["pyproject.toml", "README.md", "LICENSE", "trainlint", "schemas"]


def _git(cwd: Path, *args: str) -> None:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.com", "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}
    subprocess.run(["git", "-c", "init.defaultBranch=main", "-c", "commit.gpgsign=false", *args], cwd=cwd, env=env,
                   check=True, capture_output=True, timeout=120)


@pytest.fixture(scope="module")
def fresh_install(tmp_path_factory):
    """docs/install.md's `pip install "git+https://github.com/trainlint/trainlint"`, with the URL pointing at a git
    repository holding this working tree, into a fresh virtual environment, offline: the wheel is built here
    without build isolation, and the dependencies come from this environment's site-packages (a .pth line),
    so no package index is asked for anything."""
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    try:
        import hatchling  # noqa: F401
    except ImportError:
        pytest.skip("hatchling is not installed (pip install '.[test]' brings it)")
    base = tmp_path_factory.mktemp("install")
    repo = base / "trainlint"
    repo.mkdir()
    for name in PACKAGE_FILES:
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, repo / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            shutil.copy2(source, repo / name)
    _git(repo, "init", "-q")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "snapshot")
    readme = [args for where, args in install_commands() if where == "docs/install.md" and GIT_URL in args]
    assert readme, "docs/install.md shows no install from git"
    url = shlex.split(readme[0])[-1].replace(GIT_URL, f"git+{repo.as_uri()}")
    wheels = base / "wheels"
    build = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index",
                            "-q", "-w", str(wheels), url], capture_output=True, text=True, timeout=300)
    assert build.returncode == 0, build.stdout + build.stderr
    (wheel,) = wheels.glob("trainlint-*.whl")
    venv = base / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    purelib = Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                                  capture_output=True, text=True, check=True).stdout.strip())
    (purelib / "zz_deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n", encoding="utf-8")
    # --ignore-installed: the trainlint this environment has (CI installs it non-editable) is visible through the
    # .pth line and would count as "already satisfied"; it must stay untouched, and the wheel go into the new venv.
    install = subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps",
                              "--ignore-installed", "--no-index", "-q", str(wheel)],
                             capture_output=True, text=True, timeout=300)
    assert install.returncode == 0, install.stdout + install.stderr
    return wheel, venv


def test_git_url_install_gives_a_working_trainlint(fresh_install):
    wheel, venv = fresh_install
    exe = venv / "bin" / "trainlint"
    assert exe.is_file()
    where = subprocess.run([str(venv / "bin" / "python"), "-c", "import trainlint; print(trainlint.__file__)"],
                           capture_output=True, text=True, check=True, cwd=venv).stdout
    assert where.startswith(str(venv)), where  # the installed copy, not this checkout
    # The README's first command, `trainlint check examples/`, and the editors' `trainlint server` entry point.
    check = subprocess.run([str(exe), "check", "examples/"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert check.returncode in (0, 1), check.stdout + check.stderr
    assert "examples/hf-llama3-8b-sft/train.yaml" in check.stdout
    server = subprocess.run([str(exe), "server", "--help"], capture_output=True, text=True, timeout=60)
    assert server.returncode == 0, server.stderr


def test_wheel_ships_the_apache_license(fresh_install):
    wheel, _ = fresh_install
    text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert text.lstrip().startswith("Apache License") and "Version 2.0, January 2004" in text
    assert "END OF TERMS AND CONDITIONS" in text
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        (license_name,) = [n for n in names if n.endswith(".dist-info/licenses/LICENSE")]
        assert archive.read(license_name).decode() == text
        (metadata,) = [n for n in names if n.endswith(".dist-info/METADATA")]
        headers = archive.read(metadata).decode()
    assert "License-Expression: Apache-2.0" in headers
    assert "License-File: LICENSE" in headers
    assert tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["license"] == "Apache-2.0"


def test_wheel_ships_the_py_typed_marker(fresh_install):
    """PEP 561: type checkers read an installed package's annotations only when it ships py.typed."""
    wheel, _ = fresh_install
    with zipfile.ZipFile(wheel) as archive:
        assert "trainlint/py.typed" in archive.namelist()


# --- documented commands, flags and snippets -------------------------------------------------------


@lru_cache(maxsize=None)
def help_text(*command: str) -> str:
    proc = subprocess.run([sys.executable, "-m", "trainlint", *command, "--help"], capture_output=True, text=True,
                          timeout=120, env={**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "200"})
    assert proc.returncode == 0, f"trainlint {' '.join(command)} --help: {proc.stderr}"
    return proc.stdout


def documented_commands() -> list[tuple[str, str]]:
    """(file, command line) for every `trainlint ...` line in the shell/YAML blocks of the docs."""
    out = []
    for path in markdown_files():
        if rel(path).startswith(("tests/", "benchmarks/", "schemas/")):
            continue
        text = path.read_text(encoding="utf-8")
        for span in re.findall(r"`(trainlint (?:check|estimate|rules|rule|gpus|models|server)\b[^`]*)`", FENCE.sub("", text)):
            out.append((rel(path), span.removeprefix("trainlint ").strip()))
        for block in code_blocks(text, "sh", "shell", "bash", "console", "yaml", "yml"):
            joined = re.sub(r"\\\n\s*", " ", block)
            for line in joined.splitlines():
                for m in re.finditer(r"(?:^|&&|[\s\"'`:-])trainlint ((?:check|estimate|rules|rule|gpus|models|server)\b(?:[^#\n&|>]|\|(?=\w))*)", line):
                    for part in m.group(1).split(" / trainlint "):  # `trainlint gpus / trainlint models`
                        out.append((rel(path), part.strip()))
    return out


def test_documented_commands_use_existing_flags():
    commands = documented_commands()
    assert len(commands) >= 10, commands
    assert {c.split()[0] for _, c in commands} >= {"check", "estimate", "rules", "rule", "gpus", "models", "server"}
    missing = []
    for where, command in commands:
        sub = command.split()[0]
        known = help_text(sub)
        for value in ",".join(re.findall(r"--output-format[ =]([\w|,]+)", command)).replace("|", ",").split(","):
            if value.islower() and not re.search(rf"\b{value}\b", known):
                missing.append(f"{where}: `trainlint {command}`: `trainlint {sub} --help` names no output format {value}")
        for flag in re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]*)", command):
            if not re.search(rf"(?<![\w-]){re.escape(flag)}(?![\w-])", known):
                missing.append(f"{where}: `trainlint {command}` uses {flag}, which `trainlint {sub} --help` lacks")
    assert not missing, "\n".join(missing)


def test_readme_commands_run(tmp_path):
    """The README's runnable commands on the bundled examples exit as documented (0 clean, 1 findings)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "NO_COLOR": "1"}
    for args in (["check", "examples/"], ["check", "--diff", "examples/hf-llama3-8b-sft/train.yaml"],
                 ["rules"], ["rule", "TL100"], ["gpus"], ["models"],
                 ["estimate", "--model", "meta-llama/Llama-3.1-8B", "--gpu", "A100-80GB", "--num-gpus", "8",
                  "--zero", "3", "--precision", "bf16-master", "--micro-batch", "2", "--seq-len", "4096",
                  "--grad-ckpt", "full"]):
        proc = subprocess.run([sys.executable, "-m", "trainlint", *args], cwd=ROOT, env=env, capture_output=True,
                              text=True, timeout=300)
        assert proc.returncode in (0, 1), (args, proc.stdout[-2000:], proc.stderr[-2000:])
        assert proc.stdout.strip(), args


def test_toml_yaml_json_snippets_parse():
    counts = {"toml": 0, "yaml": 0, "json": 0}
    for path in markdown_files():
        if rel(path).startswith(("tests/", "benchmarks/")):
            continue
        text = path.read_text(encoding="utf-8")
        for block in code_blocks(text, "toml"):
            tomllib.loads(block)
            counts["toml"] += 1
        for block in code_blocks(text, "yaml", "yml"):
            # A fragment that continues a block above it (more-indented `- id:` lines) parses once dedented.
            lines = block.splitlines()
            indent = min((len(x) - len(x.lstrip()) for x in lines if x.strip() and not x.lstrip().startswith("#")),
                         default=0)
            yaml.safe_load("\n".join(x[indent:] for x in lines))
            counts["yaml"] += 1
        for block in code_blocks(text, "json", "jsonc"):
            if "|" in block and "..." in block:  # the JSON output contract lists alternatives
                continue
            json.loads(re.sub(r"^\s*//.*$", "", block, flags=re.M))
            counts["json"] += 1
    assert counts["toml"] >= 3 and counts["yaml"] >= 5 and counts["json"] >= 2, counts


def test_documented_project_settings_are_accepted(tmp_path):
    """Each `[tool.trainlint]` / trainlint.toml example, as pyproject.toml, passes trainlint's own settings check
    (a setting it cannot use exits 2)."""
    examples = []
    for path in markdown_files():
        for block in code_blocks(path.read_text(encoding="utf-8"), "toml"):
            if "[tool.trainlint" in block:
                examples.append((rel(path), block))
    assert examples
    config = (ROOT / "examples" / "hf-llama3-8b-sft").resolve()
    for i, (where, block) in enumerate(examples):
        project = tmp_path / f"p{i}"
        shutil.copytree(config, project / "configs")
        (project / "pyproject.toml").write_text(block, encoding="utf-8")
        proc = subprocess.run([sys.executable, "-m", "trainlint", "check", "configs/"], cwd=project,
                              env={**os.environ, "PYTHONPATH": str(ROOT), "NO_COLOR": "1"}, capture_output=True,
                              text=True, timeout=300)
        assert proc.returncode in (0, 1), f"{where}:\n{block}\n{proc.stdout[-2000:]}{proc.stderr[-2000:]}"


# --- the offline pre-commit recipe -----------------------------------------------------------------

HF_BAD = "model_name_or_path: gpt2\noutput_dir: out\nlearning_rate: 2e-5\n"  # TL003: 2e-5 is a string in YAML


def test_precommit_local_recipe_runs_offline(tmp_path):
    try:
        import pre_commit  # noqa: F401
    except ImportError:
        pytest.skip("pre-commit is not installed (pip install '.[test]' brings it)")
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    ci = (ROOT / "docs" / "ci.md").read_text(encoding="utf-8")
    (recipe,) = [b for b in code_blocks(ci, "yaml") if "repo: local" in b]
    project = tmp_path / "project"
    (project / "configs").mkdir(parents=True)
    (project / ".pre-commit-config.yaml").write_text(recipe, encoding="utf-8")
    (project / "configs" / "train.yaml").write_text(HF_BAD, encoding="utf-8")
    (project / "notes.yaml").write_text("title: not a training config\n", encoding="utf-8")
    (project / "trainlint.toml").write_text('select = ["TL0"]\n', encoding="utf-8")
    _git(project, "init", "-q")
    _git(project, "add", "-A")
    # `trainlint` on PATH, as after `pipx install` or in an activated virtual environment: a shim that runs
    # this checkout. No network: pre-commit installs nothing for `language: system`.
    shim = tmp_path / "bin"
    shim.mkdir()
    (shim / "trainlint").write_text(f'#!/bin/sh\nexec "{sys.executable}" -m trainlint "$@"\n', encoding="utf-8")
    (shim / "trainlint").chmod(0o755)
    env = {**os.environ, "PATH": f"{shim}{os.pathsep}{os.environ.get('PATH', '')}", "PYTHONPATH": str(ROOT),
           "PRE_COMMIT_HOME": str(tmp_path / "cache"), "PRE_COMMIT_COLOR": "never", "NO_COLOR": "1",
           "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull,
           "PIP_NO_INDEX": "1", "http_proxy": "http://127.0.0.1:9", "https_proxy": "http://127.0.0.1:9"}
    proc = subprocess.run([sys.executable, "-m", "pre_commit", "run", "--all-files"], cwd=project, env=env,
                          capture_output=True, text=True, timeout=600)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out
    assert re.search(r"trainlint\.*Failed", out), out
    assert "configs/train.yaml:3:16: TL003 warning" in out, out
    (project / "configs" / "train.yaml").unlink()
    _git(project, "add", "-A")
    clean = subprocess.run([sys.executable, "-m", "pre_commit", "run", "--all-files"], cwd=project, env=env,
                           capture_output=True, text=True, timeout=600)
    assert clean.returncode == 0, clean.stdout + clean.stderr


def test_the_readme_sets_up_with_exactly_two_commands_and_ci_runs_the_second():
    """One command installs and runs trainlint on the bundled examples, one runs the tests; CI runs the latter."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    setup = text.split("## Set up", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```sh\n(.*?)```", setup, flags=re.S)
    commands = [line for block in blocks for line in block.splitlines() if line.strip() and not line.startswith("#")]
    assert len(commands) == 2, commands
    assert commands[0].endswith("trainlint check examples/")
    assert "pytest" in commands[1]
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    test_command = commands[1].split("&&", 2)[-1].strip()  # after the venv is made and activated
    assert test_command.split(" && ")[0] in ci and "python -m pytest" in ci
