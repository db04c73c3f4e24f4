"""The VS Code extension under editors/vscode: its manifest, a real npm build of the .vsix, and the
built client driven in Node (tests/editors/fake_vscode_host.js) against the stub server in conftest.py."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
EXTENSION = REPO / "editors" / "vscode"
SCHEMAS = REPO / "schemas"
BUILD_TIMEOUT_S = 300

# The settings contract shared with the server (initializationOptions / workspace configuration).
SERVER_SETTINGS = ["gpu", "numGpus", "model", "seqLen", "select", "ignore", "failLevel"]


def manifest() -> dict:
    return json.loads((EXTENSION / "package.json").read_text(encoding="utf-8"))


def schema_urls(data: dict) -> list[str]:
    contributes = data["contributes"]
    entries = contributes.get("jsonValidation", []) + contributes.get("yamlValidation", [])
    return [entry["url"] for entry in entries]


def repo_schemas() -> list[str]:
    return sorted(p.name for p in SCHEMAS.glob("*.json")) if SCHEMAS.is_dir() else []


def test_manifest_identity_and_entry_point():
    data = manifest()
    assert data["name"] == "trainlint"
    assert data["publisher"] == "trainlint"
    assert data["engines"]["vscode"] == "^1.82.0"
    assert data["main"] == "./dist/extension.js"
    assert data["dependencies"] == {"vscode-languageclient": "9.0.1"}
    dev = data["devDependencies"]
    assert dev["@vscode/vsce"] == "3.9.2"  # vsce 4 needs node 22
    assert dev["@types/vscode"].lstrip("~^").startswith("1.82")
    for name in ("typescript", "@types/node", "esbuild"):
        assert name in dev


def test_manifest_activation_events():
    events = manifest()["activationEvents"]
    for event in (
        "onLanguage:yaml",
        "onLanguage:json",
        "onLanguage:jsonc",
        "workspaceContains:**/trainlint.toml",
    ):
        assert event in events
    assert "*" not in events


def test_manifest_settings_and_commands():
    data = manifest()
    properties = data["contributes"]["configuration"]["properties"]
    for key in ["interpreter", "path", *SERVER_SETTINGS, "trace.server"]:
        assert f"trainlint.{key}" in properties, key
    # Server settings default to unset, so the project's [tool.trainlint] applies.
    for key in SERVER_SETTINGS:
        assert properties[f"trainlint.{key}"]["default"] is None, key
    assert properties["trainlint.trace.server"]["enum"] == ["off", "messages", "verbose"]
    commands = {c["command"] for c in data["contributes"]["commands"]}
    assert "trainlint.restart" in commands
    # Executable paths must not come from an untrusted workspace.
    restricted = data["capabilities"]["untrustedWorkspaces"]["restrictedConfigurations"]
    assert set(restricted) == {"trainlint.interpreter", "trainlint.path"}


def test_extension_source_sends_every_server_setting():
    source = (EXTENSION / "src" / "extension.ts").read_text(encoding="utf-8")
    for key in SERVER_SETTINGS:
        assert f"{key}:" in source, key
    assert "'-m', 'trainlint', 'server'" in source
    assert "args: ['server']" in source


def test_build_scripts():
    scripts = manifest()["scripts"]
    assert scripts["compile"].startswith("tsc --noEmit && esbuild ")
    for flag in ("--bundle", "--outfile=dist/extension.js", "--external:vscode", "--platform=node", "--format=cjs"):
        assert flag in scripts["compile"]
    assert scripts["package"].startswith("vsce package --no-dependencies")
    assert "--skip-license" not in scripts["package"]  # vsce fails when the LICENSE is missing
    assert "copy-schemas" in scripts["vscode:prepublish"]
    lock = json.loads((EXTENSION / "package-lock.json").read_text(encoding="utf-8"))
    assert lock["name"] == "trainlint"
    assert lock["packages"]["node_modules/vscode-languageclient"]["version"] == "9.0.1"


def test_schemas_are_not_kept_twice_in_git():
    ignored = (EXTENSION / ".gitignore").read_text(encoding="utf-8").split()
    for pattern in ("node_modules/", "dist/", "out/", "*.vsix", "schemas/"):
        assert pattern in ignored
    tracked = subprocess.run(
        ["git", "ls-files", "editors/vscode/schemas"], cwd=REPO, capture_output=True, text=True, check=False
    )
    assert tracked.stdout.strip() == ""


def test_schema_urls_point_at_repo_schemas():
    urls = schema_urls(manifest())
    assert "./schemas/deepspeed.schema.json" in urls
    for url in urls:
        assert url.startswith("./schemas/") and url.endswith(".json"), url
    available = repo_schemas()
    if not available:
        pytest.skip(f"{SCHEMAS} has no JSON schemas yet; the build copies them from there")
    for url in urls:
        assert url.removeprefix("./schemas/") in available, f"{url} is not in {SCHEMAS}"


NETWORK_ERRORS = ("ENOTFOUND", "EAI_AGAIN", "ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "ENETUNREACH")
needs_npm = pytest.mark.skipif(shutil.which("npm") is None, reason="npm is not installed; cannot build the .vsix")


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """`npm ci && npm run package` in a copy of the repository layout; returns (folder, expected schema names)."""
    root = tmp_path_factory.mktemp("vscode-build")
    work = root / "editors" / "vscode"
    shutil.copytree(
        EXTENSION,
        work,
        ignore=shutil.ignore_patterns("node_modules", "dist", "out", "schemas", "*.vsix", "LICENSE"),
    )
    # The build reads ../../schemas, like in the repository. Until the real schemas exist, stand-ins
    # with the names package.json expects keep the packaging path under test.
    if repo_schemas():
        shutil.copytree(SCHEMAS, root / "schemas")
        expected = repo_schemas()
    else:
        (root / "schemas").mkdir()
        expected = sorted({url.removeprefix("./schemas/") for url in schema_urls(manifest())})
        for name in expected:
            (root / "schemas" / name).write_text('{"type": "object"}\n', encoding="utf-8")

    shutil.copy(REPO / "LICENSE", root / "LICENSE")  # scripts/copy-schemas.mjs ships ../../LICENSE
    env = {k: v for k, v in os.environ.items() if k != "TRAINLINT_SCHEMAS_DIR"}
    deadline = time.monotonic() + BUILD_TIMEOUT_S
    for command in (["npm", "ci", "--no-audit", "--no-fund"], ["npm", "run", "package"]):
        result = subprocess.run(
            command,
            cwd=work,
            env=env,
            capture_output=True,
            text=True,
            timeout=max(1.0, deadline - time.monotonic()),
            check=False,
        )
        output = result.stdout + result.stderr
        if result.returncode != 0 and command[1] == "ci" and any(code in output for code in NETWORK_ERRORS):
            pytest.skip(f"the npm registry is unreachable, so `npm ci` cannot install: {output.strip()[-300:]}")
        assert result.returncode == 0, f"{' '.join(command)} failed:\n{result.stdout[-4000:]}\n{result.stderr[-4000:]}"
    return work, expected


@needs_npm
def test_npm_build_produces_vsix(built):
    """The .vsix holds the bundle, the manifest and every schema, and no sources or node_modules."""
    work, expected = built
    data = manifest()
    vsix = work / f"trainlint-{data['version']}.vsix"
    assert vsix.is_file(), sorted(p.name for p in work.iterdir())
    with zipfile.ZipFile(vsix) as archive:
        names = set(archive.namelist())
        packaged = json.loads(archive.read("extension/package.json"))
    assert "extension/dist/extension.js" in names
    assert "extension/package.json" in names
    for name in expected:
        assert f"extension/schemas/{name}" in names
    for url in schema_urls(data):
        assert "extension/" + url.removeprefix("./") in names
    assert not any(n.startswith(("extension/node_modules/", "extension/src/")) for n in names), sorted(names)
    assert packaged["main"] == "./dist/extension.js"
    # The Apache-2.0 LICENSE of the repository, as package.json's "license" says (vsce names it LICENSE.txt).
    (license_name,) = [n for n in names if n in ("extension/LICENSE", "extension/LICENSE.txt")]
    with zipfile.ZipFile(vsix) as archive:
        assert archive.read(license_name).decode() == (REPO / "LICENSE").read_text(encoding="utf-8")
    assert packaged["license"] == "Apache-2.0"


def run_host(built, tmp_path, stub, settings, changed=None, wait_ms=15000, **extra_env):
    """Activates the built extension under tests/editors/fake_vscode_host.js; returns its summary."""
    work, _ = built
    (tmp_path / "workspace").mkdir()
    env = stub.env(
        **extra_env,
        EXTENSION_JS=str(work / "dist" / "extension.js"),
        WORKSPACE=str(tmp_path / "workspace"),
        SETTINGS=json.dumps(settings),
        CHANGED_SETTINGS=json.dumps(changed or {}),
        WAIT_MS=str(wait_ms),
        RESULT=str(tmp_path / "result.json"),
    )
    host = Path(__file__).with_name("fake_vscode_host.js")
    proc = subprocess.run(["node", str(host)], env=env, capture_output=True, text=True, timeout=120, check=False)
    result = json.loads((tmp_path / "result.json").read_text(encoding="utf-8"))
    assert proc.returncode == 0, (proc.stdout, proc.stderr, result)
    return result


NORMALIZED = {
    "gpu": "H100-80GB",
    "numGpus": 8,
    "model": None,
    "seqLen": None,
    "select": ["TL1"],
    "ignore": None,
    "failLevel": "warning",
}


@needs_npm
def test_client_sends_settings_to_interpreter_server(built, tmp_path, lsp_stub):
    """`<interpreter> -m trainlint server`, settings as initializationOptions, in workspace/configuration
    answers, and in didChangeConfiguration after a change (without a restart)."""
    settings = {
        "interpreter": sys.executable,
        "gpu": " H100-80GB ",
        "numGpus": 8,
        "model": "",
        "seqLen": 0,
        "select": ["TL1"],
        "ignore": [],
        "failLevel": "warning",
    }
    result = run_host(built, tmp_path, lsp_stub, settings, changed={"gpu": "A100-80GB", "select": None})
    assert result["started"], result["log"]
    assert result["exports"] == ["activate", "deactivate", "serverSettings"]
    (server,) = result["servers"]
    assert server["orig_argv"][1:] == ["-m", "trainlint", "server"]
    assert Path(server["cwd"]) == tmp_path / "workspace"
    assert server["initializationOptions"] == NORMALIZED
    assert server["configuration"] == [NORMALIZED]
    assert result["notified"] and not result["restarted"]
    assert server["didChangeConfiguration"] == [
        {"settings": {"trainlint": {**NORMALIZED, "gpu": "A100-80GB", "select": None}}}
    ]
    assert server.get("shutdown") is True


@needs_npm
def test_client_restarts_with_trainlint_path(built, tmp_path, lsp_stub):
    """Setting trainlint.path restarts the server as `<path> server`."""
    script = str(lsp_stub.executable)
    result = run_host(built, tmp_path, lsp_stub, {"interpreter": sys.executable}, changed={"path": script})
    assert result["started"] and result["restarted"], result["log"]
    first, second = sorted(result["servers"], key=lambda s: s["via"] or "")
    assert first["via"] is None and first.get("shutdown") is True
    assert second["via"] == "path" and second["orig_argv"][-1] == "server"
    assert "didChangeConfiguration" not in first
    assert second["initializationOptions"] == {k: None for k in NORMALIZED}


@needs_npm
def test_client_explains_missing_interpreter(built, tmp_path, lsp_stub):
    missing = tmp_path / "no-such-python"
    result = run_host(built, tmp_path, lsp_stub, {"interpreter": str(missing)}, wait_ms=2000)
    assert not result["started"] and result["servers"] == []
    errors = [line for line in result["log"] if line.startswith("showErrorMessage")]
    assert len(errors) == 1 and f"Cannot run the Python interpreter {missing}" in errors[0]
    assert "pip install git+https://github.com/trainlint/trainlint" in errors[0]


@needs_npm
def test_client_explains_interpreter_without_trainlint(built, tmp_path, make_lsp_stub):
    stub = make_lsp_stub("raise ImportError('stub: no trainlint')\n")
    result = run_host(built, tmp_path, stub, {"interpreter": sys.executable}, wait_ms=2000)
    assert not result["started"] and result["servers"] == []
    errors = [line for line in result["log"] if line.startswith("showErrorMessage")]
    assert len(errors) == 1 and f"trainlint is not installed for {sys.executable}" in errors[0]
    assert any("stub: no trainlint" in line for line in result["log"])


@needs_npm
def test_client_finds_trainlint_on_path(built, tmp_path, lsp_stub):
    """No settings and no Python extension: `trainlint server` from PATH, where `pipx install` puts it."""
    result = run_host(built, tmp_path, lsp_stub, {})
    assert result["started"], result["log"]
    (server,) = result["servers"]
    assert server["via"] == "path" and server["orig_argv"][-1] == "server"
    assert any(f"Starting: {lsp_stub.executable} server (PATH)" in line for line in result["log"]), result["log"]


@needs_npm
def test_client_without_trainlint_on_path_falls_back_to_python3(built, tmp_path, lsp_stub):
    lsp_stub.executable.unlink()
    result = run_host(built, tmp_path, lsp_stub, {}, HOME=str(tmp_path / "empty-home"), PIPX_BIN_DIR="")
    assert result["started"], result["log"]
    (server,) = result["servers"]
    assert server["via"] is None and server["orig_argv"][-3:] == ["-m", "trainlint", "server"]


@needs_npm
def test_client_finds_trainlint_in_pipx_bin_dir_off_path(built, tmp_path, lsp_stub):
    """A VS Code started from the desktop may not have ~/.local/bin on PATH: pipx's bin folder is looked at too."""
    home = tmp_path / "home"
    (home / ".local" / "bin").mkdir(parents=True)
    pipx_exe = home / ".local" / "bin" / "trainlint"
    shutil.copy(lsp_stub.executable, pipx_exe)
    lsp_stub.executable.unlink()
    result = run_host(built, tmp_path, lsp_stub, {}, HOME=str(home), PIPX_BIN_DIR="")
    assert result["started"], result["log"]
    (server,) = result["servers"]
    assert server["via"] == "path" and server["orig_argv"][-1] == "server"
    assert any(f"Starting: {pipx_exe} server (pipx's bin folder)" in line for line in result["log"]), result["log"]
