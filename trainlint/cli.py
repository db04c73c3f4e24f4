"""The `trainlint` command line: a thin shell over the engine (`check`) and `estimating` (`estimate`): it parses
the flags, walks the folders, renders the results and decides the exit code.

Exit codes: 0 no findings at or above the fail level; 1 findings (or, with --diff, changes to make);
2 the tool failed or the usage was wrong.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from trainlint import __version__, engine, estimating, output, rules
from trainlint.catalog import gpus as gpu_catalog
from trainlint.catalog import models as model_catalog
from trainlint.catalog.naming import closest
from trainlint.context import links
from trainlint.context.discovery import CONFIG_SUFFIXES, discover
from trainlint.context.launch.targets import is_target_file
from trainlint.context.settings import (ContextSettings, Overrides, Settings, SettingsError, find_project_config,
                                        parse_versions, toml_position)
from trainlint.diagnostics import Severity
from trainlint.document.reading import MAX_FILE_BYTES, document_from_bytes, overlaid, overlay
from trainlint.document.tree import Document
from trainlint.fixes.apply import compute_fixes, write_fixed
from trainlint.memory.breakdown import GIB
from trainlint.memory.render import describe_run, render_table
from trainlint.output import settings as settings_output
from trainlint.plan import Origin

if TYPE_CHECKING:
    from trainlint import planning

EXIT_OK, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


class UsageError(Exception):
    pass


class InvalidProjectSettings(UsageError):
    """pyproject.toml / trainlint.toml settings that cannot be used: reported once per run, with positions."""


def _codes(text: str) -> tuple[str, ...]:
    return tuple(c.strip().upper() for c in text.replace(" ", ",").split(",") if c.strip())


def _patterns(text: str) -> tuple[str, ...]:
    return tuple(p.strip() for p in text.split(",") if p.strip())


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected at least 1, got {value}")
    return value


def _add_run_overrides(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("run settings (override the config and [tool.trainlint])")
    group.add_argument("--gpu", help="target GPU: a catalog name or alias (A100-80GB, h100) or a capacity (96GB)")
    group.add_argument("--num-gpus", type=_positive, help="total GPUs in the run (world size)")
    group.add_argument("--model", help="model name, HF id, or a local folder with config.json")
    group.add_argument("--seq-len", type=_positive, help="sequence length in tokens")
    group.add_argument("--micro-batch", type=_positive, help="per-GPU micro-batch size")
    group.add_argument("--grad-accum", type=_positive, help="gradient accumulation steps")


COMMAND_HELP = {
    "check": "lint config files (DeepSpeed, HF, Lightning, Accelerate, Axolotl, ...)",
    "estimate": "show the per-GPU memory breakdown of a config, or of flags alone",
    "rules": "list the rules",
    "rule": "explain one rule",
    "gpus": "list the GPU catalog",
    "models": "list the model catalog",
    "server": "run the language server over stdio",
}


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser; with a known `command`, only that subcommand (each costs an ArgumentParser); otherwise all of
    them, listed for --help and in the error for an unknown one."""
    parser = argparse.ArgumentParser(prog="trainlint", description="Lint training configs and predict per-GPU memory.")
    parser.add_argument("--version", action="version", version=f"trainlint {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    made = (command,) if command in COMMAND_HELP else tuple(COMMAND_HELP)
    parsers = {name: sub.add_parser(name, help=COMMAND_HELP[name]) for name in made}
    if "check" in parsers:
        _add_check_options(parsers["check"])
    if "estimate" in parsers:
        _add_estimate_options(parsers["estimate"])
    if "rule" in parsers:
        parsers["rule"].add_argument("code")
    if "server" in parsers:
        parsers["server"].add_argument("--stdio", action="store_true",
                                       help="accepted for clients that pass it; stdio is the default")
    return parser


def _add_check_options(check: argparse.ArgumentParser) -> None:
    check.add_argument("paths", nargs="*", metavar="PATH", help="files or directories (- for standard input)")
    _add_run_overrides(check)
    check.add_argument("--output-format", default=None,
                       choices=["text", "concise", "full", "json", "sarif", "github", "gitlab"])
    check.add_argument("--fix", action="store_true", help="apply safe fixes in place")
    check.add_argument("--unsafe-fixes", action="store_true", help="with --fix or --diff, also apply unsafe fixes")
    check.add_argument("--diff", action="store_true", help="print the fixes as a unified diff; write nothing")
    check.add_argument("--show-fixes", action="store_true", help="list the available fixes under each finding")
    check.add_argument("-q", "--quiet", action="store_true", help="print the findings and nothing else")
    check.add_argument("--statistics", action="store_true", help="how often each rule fired, instead of the findings")
    check.add_argument("--stdin-filename", metavar="PATH",
                       help="read the config from standard input, named PATH (its links and settings resolve from there)")
    check.add_argument("--watch", action="store_true", help="check again whenever a checked or linked file changes")
    check.add_argument("--select", type=_codes, default=(), help="only these rule codes or prefixes (comma-separated)")
    check.add_argument("--ignore", type=_codes, default=(), help="skip these rule codes or prefixes")
    check.add_argument("--fail-level", choices=["error", "warning", "info"], default=None,
                       help="lowest severity that makes the exit code 1 (default: warning)")
    check.add_argument("--exit-zero", action="store_true", help="exit 0 even with findings")
    check.add_argument("--isolated", action="store_true",
                       help="ignore pyproject.toml / trainlint.toml settings and the repository (pins, launch scripts)")
    check.add_argument("--versions", default=None, metavar="NAME=VER,...",
                       help="framework versions the run uses (trl=0.18.0,transformers>=4.52): beat pins and installs")
    check.add_argument("--launch", default=None, metavar="CMD_OR_FILE",
                       help="how the files are launched: an accelerate config file or a whole launch command line")
    check.add_argument("--show-settings", action="store_true",
                       help="print every resolved run setting (GPU, world size, sharding, launch, parser, versions) "
                            "and where it came from")
    check.add_argument("--exclude", type=_patterns, default=None, metavar="PATTERNS",
                       help="gitignore-style patterns to skip when walking folders (replaces the default list)")
    check.add_argument("--extend-exclude", type=_patterns, default=None, metavar="PATTERNS",
                       help="patterns to skip besides the default ones and those in the settings")
    check.add_argument("--force-exclude", action="store_true",
                       help="apply the excludes to files named on the command line too (for pre-commit)")


def _add_estimate_options(estimate: argparse.ArgumentParser) -> None:
    estimate.add_argument("path", nargs="?", metavar="PATH", help="a config file (optional: flags alone work too)")
    _add_run_overrides(estimate)
    what_if = estimate.add_argument_group("what if (override the config)")
    what_if.add_argument("--precision", choices=sorted(estimating.PRECISION_FLAGS), help="weights / compute / master copy")
    what_if.add_argument("--optimizer", help="optimizer name: adamw, adamw_torch_fused, adamw_bnb_8bit, adafactor, sgd, ...")
    what_if.add_argument("--zero", type=int, choices=[0, 1, 2, 3], help="DeepSpeed ZeRO stage")
    what_if.add_argument("--fsdp", choices=["full_shard", "shard_grad_op", "hybrid_shard", "no_shard"])
    what_if.add_argument("--offload-optimizer", choices=["cpu", "nvme", "none"])
    what_if.add_argument("--offload-params", choices=["cpu", "nvme", "none"])
    what_if.add_argument("--grad-ckpt", choices=["none", "full", "selective"], help="activation checkpointing")
    what_if.add_argument("--attn", choices=["eager", "sdpa", "flash_attention_2"], help="attention implementation")
    what_if.add_argument("--lora-r", type=_positive, help="LoRA rank (trains adapters only)")
    what_if.add_argument("--lora-targets", default=None, help="LoRA target modules, comma-separated (default all-linear)")
    what_if.add_argument("--qlora", action="store_true", help="4-bit NF4 base under the LoRA adapters")
    what_if.add_argument("--fused-loss", action="store_true", help="fused / chunked cross-entropy (Liger)")
    what_if.add_argument("--task", choices=["sft", "pretrain", "dpo", "orpo", "kto", "grpo"], help="training objective")
    what_if.add_argument("--head", choices=["lm", "seq_cls", "token_cls"],
                         help="the model's head: language model, or sequence / token classification (no vocabulary logits)")
    what_if.add_argument("--keep-zeroed-grads", action="store_true",
                         help="zero_grad fills the gradients with zeros instead of freeing them (torch < 2.0's default "
                              "set_to_none=False): they stay allocated through the next forward")
    plans = estimate.add_argument_group(
        "planning (each answer re-estimated with the memory model; docs/planning.md)",
        "With these, the output is the run, the answers and the assumptions instead of the breakdown table; the JSON "
        "adds `fit_table` and `max`.")
    plans.add_argument("--gpus", metavar="all|GPU,...",
                       help="for each GPU (`all`: the catalog; or names, comma-separated): the fewest of it on which "
                            "the run fits and the sharding/offload that gets it there (none, ZeRO-1/2/3, FSDP, CPU "
                            "offload), with the per-GPU peak and headroom; cheapest first: fewest GPUs, then the "
                            "card with the least memory, then the lower bf16 peak (trainlint knows no prices; less "
                            "memory is the cheaper card)")
    plans.add_argument("--max", action="append", default=[], metavar="micro-batch|seq-len",
                       help="the largest value that fits on the run's target GPU(s) (the next value does not); "
                            "repeat it or separate with commas for both")
    plans.add_argument("--max-gpus", type=_positive, default=None,
                       help="the largest GPU count --gpus tries (default 1024: 128 nodes of 8)")
    estimate.add_argument("--output-format", choices=["text", "json"], default="text")
    estimate.add_argument("--isolated", action="store_true", help="ignore pyproject.toml / trainlint.toml settings")
    estimate.add_argument("--exact-model", action="store_true",
                          help="also build the model with the installed torch + transformers on the meta device and "
                               "compare its parameter count with trainlint's (opt-in; nothing is downloaded)")


_gc_paused = False


def _pause_gc() -> None:
    """No cyclic garbage collection while a check imports its modules and reads its first file: the collector
    would scan the thousands of objects imports make (classes, functions, catalogs) again and again, about 5% of a
    one-file check's CPU time. `_resume_gc` ends the pause once the first file is linted."""
    global _gc_paused
    if gc.isenabled():
        gc.disable()
        _gc_paused = True


def _resume_gc() -> None:
    """After the start-up: what was made so far is kept out of later collections (gc.freeze), collection resumes,
    with the youngest generation collected after 20,000 allocations instead of 700 (as mypy's command line sets it):
    a check of many files keeps every file's results and documents to the end, and the default threshold had the
    collector walk them again and again (~10% of a 300-file run). A command-line run is short and bounded."""
    global _gc_paused
    if _gc_paused:
        _gc_paused = False
        gc.freeze()
        gc.set_threshold(20_000, 20, 20)
        gc.enable()


def run() -> None:
    """The `trainlint` command: `main`, then the process ends without the interpreter's teardown (as mypy's
    hard_exit does): freeing every module and object a check made costs ~2 ms of CPU, more than most of its rules.
    The output is flushed first; an exception or a usage error (SystemExit) leaves the usual way."""
    code = main()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe or stream: nothing more can be written
            pass
    os._exit(code if isinstance(code, int) else 1)


def main(argv: list[str] | None = None) -> int:
    words = sys.argv[1:] if argv is None else argv
    command = next((w for w in words if not w.startswith("-")), None)
    own = command == "check" and argv is None  # the process's own command line (not a caller's in-process run)
    if own:
        _pause_gc()
    try:
        return _main(argv, words, command)
    finally:
        _resume_gc()
        if own:
            gc.freeze()  # the interpreter's last collection at exit would scan all the run made, for nothing


def _main(argv: list[str] | None, words: list[str], command: str | None) -> int:
    parser = build_parser(command if command in COMMAND_HELP else None)
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse exits 2 on bad usage and 0 on --help
        return int(exc.code or 0)
    if args.command is None:
        parser.print_help()
        return EXIT_ERROR
    try:
        handler = {"check": cmd_check, "estimate": cmd_estimate, "rules": cmd_rules, "rule": cmd_rule, "gpus": cmd_gpus,
                   "models": cmd_models, "server": cmd_server}[args.command]
        return handler(args)
    except UsageError as exc:
        print(f"trainlint: error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except BrokenPipeError:
        return EXIT_OK
    except KeyboardInterrupt:
        return EXIT_ERROR


def expand_paths(paths: list[str], args=None) -> list:
    """The files to check (`Target`s): folders walked as ruff does (git's ignores, `exclude` / `extend-exclude`
    from flags or the project settings), files named on the command line kept unless `--force-exclude`."""
    exclude = getattr(args, "exclude", None)
    extend = tuple(getattr(args, "extend_exclude", None) or ())
    root, respect = Path.cwd(), True
    if not getattr(args, "isolated", False) and paths:
        first = Path(paths[0]) if paths[0] != "-" else Path.cwd()
        try:
            project = find_project_config(os.path.realpath(first if _is_dir(first) else first.parent))
        except SettingsError:
            project = None  # reported, with its position, when the settings are read for checking
        if project is not None and project.path:
            root, respect = Path(project.path).parent, project.respect_gitignore
            if exclude is None and project.exclude is not None:
                exclude = project.exclude
            extend = project.extend_exclude + extend
    targets, missing = discover(paths, exclude=tuple(exclude) if exclude is not None else None,
                                extend_exclude=extend, pattern_root=root, respect_gitignore=respect,
                                force_exclude=getattr(args, "force_exclude", False), launches=True)
    if missing:
        raise UsageError(f"{missing[0]}: no such file or directory")
    return targets


# The what-if flags, by their argparse names (`estimating.what_if_values` takes them as keywords); `check` has none
WHAT_IF_FLAGS = ("precision", "optimizer", "zero", "fsdp", "offload_optimizer", "offload_params", "grad_ckpt", "attn",
                 "lora_r", "lora_targets", "qlora", "fused_loss", "task", "head", "keep_zeroed_grads")


def _what_if_values(args) -> dict:
    return estimating.what_if_values(**{name: getattr(args, name, None) for name in WHAT_IF_FLAGS})


def _cli_overrides(args):
    values = _what_if_values(args)
    for flag, field in (("gpu", "gpu"), ("num_gpus", "num_gpus"), ("model", "model"), ("seq_len", "seq_len"),
                        ("micro_batch", "micro_batch"), ("grad_accum", "grad_accum")):
        value = getattr(args, flag, None)
        if value is not None:
            values[field] = value
    return Overrides(values, Origin("cli"))


def _cli_context(args):
    try:
        versions = parse_versions(args.versions, "--versions") if args.versions else {}
    except SettingsError as exc:
        raise UsageError(str(exc)) from None
    return ContextSettings(versions, (args.launch or "").strip(), "", Origin("cli"))


def cmd_check(args) -> int:
    if args.unsafe_fixes and not (args.fix or args.diff):
        raise UsageError("--unsafe-fixes goes with --fix or --diff")
    if args.watch and (args.fix or args.diff):
        raise UsageError("--watch does not go with --fix or --diff")
    if not args.paths:
        if not args.stdin_filename:
            raise UsageError("give the files or folders to check (or --stdin-filename PATH to read standard input)")
        args.paths = ["-"]
    if args.gpu is not None:
        _check_gpu_name(args.gpu)
    _check_rule_codes(args.select, "--select")
    _check_rule_codes(args.ignore, "--ignore")
    if args.watch:
        return _watch(args)
    return _check_once(args)


def _check_once(args, out=None) -> int:
    out = out or sys.stdout
    targets = expand_paths(args.paths, args)
    paths = [target.path for target in targets]
    explicit = {target.path for target in targets if target.explicit}
    launch_files = {target.path for target in targets if target.launch}
    projects = {} if args.isolated else project_configs(paths)
    settings = Settings(cli=_cli_overrides(args), selection=engine.selection_from(args.select, args.ignore),
                        fail_level=args.fail_level, use_project_config=not args.isolated,
                        context=_cli_context(args))

    links.clear_cache()  # the index of links is built once per run
    checked = {links.key(p) for p in paths if p != "-"}
    stdin_doc: list[Document] = []

    def lint_one(path: str):
        try:
            if path in launch_files:  # a walked script or README: only its launch targets are linted
                return engine.check_launch_path(path, settings, display_path=_relative(path))
            return engine.check_path(path, settings, display_path=_relative(path))
        finally:
            _resume_gc()  # the modules are imported and one file read: the rest of the run collects as usual

    # A config that names several of the linked files checked is linted once for all of them (its lint does not
    # depend on which one asks); not while a text stands in for a file (standard input), and not across --fix.
    linker_results: dict[str, engine.FileResult] = {}

    def lint_linker(path: str):
        if overlaid():
            return lint_one(path)
        if path not in linker_results:
            linker_results[path] = lint_one(path)
        return linker_results[path]

    def lint(path: str):
        if path == "-":
            if not stdin_doc:
                stdin_doc.append(_read_stdin(args.stdin_filename or "<stdin>"))
            doc = stdin_doc[0]
            result = engine.check_document(doc, settings)
            if args.stdin_filename and result.flavor in engine.LINKABLE_FLAVORS and doc.kind != "unreadable":
                text = ("\ufeff" if doc.bom else "") + doc.text
                with overlay({args.stdin_filename: text}):  # the configs linking it read this text
                    engine.add_linked_findings(result, engine.linking_results(doc.path, settings, checked, lint_one),
                                               settings)
            return result
        result = lint_one(path)
        if result.flavor in engine.LINKABLE_FLAVORS and not is_target_file(path):
            # A linked file checked without the configs that link it: lint those too, for their findings about it.
            engine.add_linked_findings(result, engine.linking_results(path, settings, checked, lint_linker), settings)
        return result

    fixed = 0
    if args.fix or args.diff:
        targets = [p for p in paths if p != "-"]
        outcome = compute_fixes(targets, lint, unsafe=args.unsafe_fixes, writable=checked)
        for problem in outcome.problems:
            print(f"trainlint: {problem}", file=sys.stderr)
        for note in outcome.not_applied:
            print(f"trainlint: {note}", file=sys.stderr)
        if args.diff:
            out.write(engine.printable(outcome.diff()))
            return EXIT_FINDINGS if outcome.fixed else EXIT_OK
        written = 0
        for path, text in outcome.fixed.items():
            refused = write_fixed(path, text, outcome.original[path])
            if refused:
                print(f"trainlint: {engine.printable(refused)}", file=sys.stderr)
            else:
                written += 1
        fixed = outcome.applied if written else 0
        linker_results.clear()  # the linked files may have been fixed: their configs are linted again

    # A file found by walking a folder that is not a training config (a workflow, a compose file) is skipped
    # without a finding; TL005 is for files named on the command line.
    results = engine.dedupe_across([r for p in paths for r in (lint(p),)
                                    if p in explicit or engine.is_training_config(r)])
    if not results and not args.force_exclude:
        # as ruff does: nothing to check is a note, not a failure of the tool (a CI job over a repository whose
        # settings all live in shell scripts none of which is a launch target must not fail); the chosen format
        # still prints its empty report
        print("trainlint: warning: no config files found in the given paths", file=sys.stderr)
    for note in links.notes():
        print(f"trainlint: {note}", file=sys.stderr)
    fmt = args.output_format or (_project_output_format(paths) if paths else None) or "text"
    if args.show_settings:
        (sys.stderr if fmt in ("json", "sarif", "gitlab") else out).write(settings_output.render(results))
    out.write(engine.printable(output.render(fmt, results, show_fixes=args.show_fixes, color=_use_color(fmt, out),
                            quiet=args.quiet, fixed=fixed, show_statistics=args.statistics)))
    if any(r.internal_error for r in results):
        return EXIT_ERROR
    if args.exit_zero:
        return EXIT_OK

    def threshold(result) -> int:
        project = projects.get(_settings_dir(result.path))
        return Severity(args.fail_level or (project.fail_level if project else None) or "warning").rank

    failing = any(d.severity.rank >= threshold(r) for r in results for d in r.diagnostics)
    return EXIT_FINDINGS if failing else EXIT_OK


def _use_color(fmt: str, stream) -> bool:
    """Colour for people: on a terminal, unless NO_COLOR is set; FORCE_COLOR asks for it anywhere."""
    if fmt not in ("text", "concise", "full") or os.environ.get("NO_COLOR"):
        return False
    force = os.environ.get("FORCE_COLOR")
    if force is not None and force not in ("", "0", "false"):
        return True
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty()) and os.environ.get("TERM") != "dumb"


def _watched_files(args) -> dict[str, float]:
    """Modification times of everything a check reads: the files found, the files they link, the settings."""
    stamps: dict[str, float] = {}
    for raw in args.paths:
        if raw == "-":
            continue
        for folder, dirs, files in os.walk(raw) if os.path.isdir(raw) else [(os.path.dirname(raw) or ".", [], [])]:
            dirs[:] = [d for d in dirs if not d.startswith(".") and d not in ("node_modules", "venv", "__pycache__")]
            names = files if os.path.isdir(raw) else [os.path.basename(raw)]
            for name in names:
                if os.path.splitext(name)[1].lower() in CONFIG_SUFFIXES or name in ("pyproject.toml", "trainlint.toml"):
                    path = os.path.join(folder, name)
                    try:
                        stamps[path] = os.stat(path).st_mtime_ns
                    except OSError:
                        pass
            for name in ("pyproject.toml", "trainlint.toml"):
                path = os.path.join(folder, name)
                if os.path.exists(path):
                    stamps[path] = os.stat(path).st_mtime_ns
    return stamps


def _watch(args) -> int:
    """Check, then check again each time a watched file changes, until interrupted (Ctrl-C exits 0)."""
    if "-" in args.paths:
        raise UsageError("--watch needs files or folders, not standard input")
    try:
        while True:
            find_project_config.cache_clear()
            if sys.stdout.isatty():
                sys.stdout.write("\x1b[2J\x1b[H")
            sys.stdout.write(f"[{time.strftime('%H:%M:%S')}] trainlint check {' '.join(args.paths)}\n")
            try:
                _check_once(args)
            except UsageError as exc:
                print(f"trainlint: error: {exc}", file=sys.stderr)
            sys.stdout.write("Watching for changes (Ctrl-C to stop)...\n")
            sys.stdout.flush()
            before = _watched_files(args)
            while _watched_files(args) == before:
                time.sleep(0.3)
    except KeyboardInterrupt:
        return EXIT_OK


def _settings_dir(path: str) -> str:
    return str((Path.cwd() if path in ("-", "<stdin>") else Path(os.path.realpath(path)).parent))


def _is_dir(path: Path) -> bool:
    try:
        return path.is_dir()
    except (OSError, ValueError):  # a name too long, a NUL: not a folder; the reader reports it
        return False


def _read_stdin(shown: str):
    """`check -`: the bytes on stdin (at most the file-size limit), through the same guards as a file."""
    stream = getattr(sys.stdin, "buffer", None)
    if stream is not None:
        data = stream.read(MAX_FILE_BYTES + 1)
    else:  # a text stream (tests, embedding)
        data = sys.stdin.read(MAX_FILE_BYTES + 1).encode("utf-8", "surrogateescape")
    return document_from_bytes(data, shown)


def _known_code(code: str) -> bool:
    return code == "ALL" or any(known.startswith(code) for known in rules.REGISTRY) or code == "TL000"


def _check_rule_codes(codes, where: str) -> None:
    unknown = [code for code in codes if not _known_code(code)]
    if unknown:
        hints = closest(unknown[0], list(rules.REGISTRY), n=1)
        hint = f"; did you mean {hints[0]}?" if hints else ""
        raise UsageError(f"{where}: unknown rule code{'s' if len(unknown) > 1 else ''} {', '.join(unknown)}{hint} "
                         "(see `trainlint rules`)")


def project_configs(paths: list[str]) -> dict:
    """The project settings of every folder the files are in, each read once. Any settings file among them that
    cannot be used is reported here, once, with its positions, and nothing is checked (exit 2), as ruff does."""
    configs: dict = {}
    problems: dict[str, tuple[str, tuple[str, ...], str]] = {}
    for path in paths:
        folder = _settings_dir(path)
        if folder in configs:
            continue
        try:
            config = configs[folder] = find_project_config(folder)
        except SettingsError as exc:
            configs[folder] = None
            problems.setdefault(str(exc), (exc.path or "", exc.key, str(exc)))
            continue
        for where, codes in _project_code_lists(config):
            unknown = [code for code in codes if not _known_code(code)]
            if unknown:
                message = (f"{config.path}: {'.'.join(where)}: unknown rule code{'s' if len(unknown) > 1 else ''} "
                           f"{', '.join(unknown)} (see `trainlint rules`)")
                problems.setdefault(message, (config.path, where, message))
    if problems:
        lines = [_settings_problem_line(*problem) for problem in problems.values()]
        raise InvalidProjectSettings("invalid trainlint settings; nothing was checked:\n" + "\n".join(lines))
    return {folder: config for folder, config in configs.items() if config is not None}


def _project_code_lists(config):
    selection = config.selection
    for name, codes in (("select", selection.select), ("ignore", selection.ignore),
                        ("extend-select", selection.extend_select)):
        if codes:
            yield (name,), codes
    for glob, codes in config.per_file_ignores:
        yield ("per-file-ignores", glob), codes


def _settings_problem_line(path: str, key: tuple[str, ...], message: str) -> str:
    line, column = toml_position(path, key) if path else (1, 1)
    if path and message.startswith(path + ": "):
        message = message[len(path) + 2:]
    shown = _relative(path) if path else "settings"
    return f"  {shown}:{line}:{column}: TL010 error {message}"


def _relative(path: str) -> str:
    """The path as people read it: relative to the working directory when it is under it (symlinks kept)."""
    absolute, cwd = os.path.abspath(path), os.getcwd()
    if absolute.startswith(cwd.rstrip(os.sep) + os.sep):
        return os.path.relpath(absolute, cwd)
    return path


def cmd_estimate(args) -> int:
    if args.gpu is not None:
        _check_gpu_name(args.gpu)
    overrides = _cli_overrides(args)
    try:
        if args.path:
            if not Path(args.path).exists():
                raise UsageError(f"{args.path}: no such file")
            if not args.isolated:
                project_configs([args.path])
            plan, document, linked = estimating.file_plan(args.path, overrides, use_project_config=not args.isolated)
            report = estimating.estimate(plan, document, linked, exact_model=args.exact_model)
        else:
            if not args.model:
                raise UsageError("give a config file, or at least --model (and --gpu, --micro-batch, --seq-len, ...)")
            report = estimating.estimate(estimating.flags_plan(overrides), exact_model=args.exact_model)
    except estimating.EstimateError as exc:
        raise UsageError(str(exc)) from None
    answers = _planning_answers(args, report)
    if args.output_format == "json":
        print(json.dumps({**report.to_json(), **(answers.to_json() if answers is not None else {})}, indent=2))
    elif answers is not None:
        sys.stdout.write(_planning_text(report, answers))
    else:
        sys.stdout.write(_estimate_text(report))
    return EXIT_FINDINGS if report.fits is False else EXIT_OK


def _planning_answers(args, report: estimating.EstimateReport) -> planning.Answers | None:
    """`--gpus` / `--max`, answered by `planning`; None when neither is asked."""
    knobs = tuple(word.strip() for value in args.max for word in value.split(",") if word.strip())
    if args.gpus is None and not knobs:
        return None
    # Imported here, as the language server is in cmd_server: making planning's dataclasses costs a `check` (which
    # imports this module) about 1 ms, and only `estimate --gpus / --max` needs them.
    from trainlint import planning  # noqa: PLC0415
    try:
        gpus = planning.catalog_gpus(args.gpus) if args.gpus is not None else None
        return planning.answer(report, gpus, knobs, args.max_gpus or planning.MAX_GPUS)
    except planning.PlanningError as exc:
        raise UsageError(str(exc)) from None


def _planning_text(report: estimating.EstimateReport, answers: planning.Answers) -> str:
    """The run, the fit table and the largest values, and the estimate's assumptions."""
    lines = [report.architecture.summary(), describe_run(report.plan, report.architecture)]
    if answers.fit_table is not None:
        lines += ["", "fewest GPUs of each kind on which the run fits (cheapest first: fewest GPUs, then least memory "
                      "per card; each re-estimated):"]
        head = ("GPU", "memory", "GPUs", "sharding / offload", "peak/GPU", "headroom", "extra time", "host RAM/node")
        rows = [head]
        for row in answers.fit_table:
            count = str(row.num_gpus) if row.memory_fits else f">{row.num_gpus}"
            rows.append((row.gpu.name, f"{row.gpu.memory_gib:.1f} GiB", count, row.layout.label if row.fits else "",
                         f"{row.total / GIB:.1f} GiB" if row.fits else "", f"{row.headroom / GIB:.1f} GiB" if row.fits
                         else "", f"{row.cost:+.0%}" if row.fits else "",
                         f"{row.host_bytes / GIB:.0f} GiB" if row.fits and row.host_bytes else ""))
        widths = [max(len(r[i]) for r in rows) for i in range(len(head))]
        right = {1, 2, 4, 5, 6, 7}
        for row_cells, fit in zip(rows, [None, *answers.fit_table]):
            cells = [c.rjust(w) if i in right else c.ljust(w) for i, (c, w) in enumerate(zip(row_cells, widths))]
            if fit is not None and not fit.fits:
                cells = cells[:3] + [fit.note or "does not fit"]
            elif fit is not None and fit.note:
                cells.append(f"({fit.note})")
            lines.append("  " + "  ".join(cells).rstrip())
    if answers.largest:
        first = next(iter(answers.largest.values()))
        lines += ["", f"largest that fits on {first.num_gpus} x {first.gpu.name} ({first.gpu.memory_gib:.1f} GiB "
                      "each; each re-estimated, the next value does not fit):"]
        for word, found in answers.largest.items():
            lines.append("  " + _largest_line(word, found))
    lines += ["", "assumptions:"] + [f"  - {note}" for note in report.estimate.assumptions]
    return "\n".join(lines) + "\n"


def _largest_line(word: str, found: planning.Largest) -> str:
    name = {"micro-batch": "micro-batch", "seq-len": "sequence length"}[word]
    unit = " tokens" if word == "seq-len" else ""
    now = f" (now {found.current:,})" if found.current else ""
    if found.value is None:
        return f"{name}: none: even 1 needs {(found.next_total or 0) / GIB:.1f} GiB per GPU"
    text = f"{name}: {found.value:,}{unit}{now}, {(found.total or 0) / GIB:.1f} GiB per GPU"
    if found.next_total is None:
        return text + f"; the largest tried: {found.bound_note}"
    return text + f"; {found.value + 1:,} needs {found.next_total / GIB:.1f} GiB"


def _estimate_text(report: estimating.EstimateReport) -> str:
    """The breakdown table, each suggestion on a line (with its flags for flags alone; a config file's first one
    said safe to apply when it is), and the exact count when asked."""
    est, capacity = report.estimate, report.estimate.capacity
    lines = []
    for offer in report.offers:
        if capacity is None:
            break  # the planner offers changes only for a known card
        line = offer.title(est.total, capacity)
        if report.document is None and offer.candidate.flags:
            line += f" [{offer.candidate.flags}]"
        elif report.document is not None and offer.candidate.safe and offer is report.offers[0]:
            line += " (safe: `trainlint check --fix` applies it)"
        lines.append(line)
    text = render_table(est, report.plan, report.architecture, lines, report.advice)
    if report.exact_model is not None:
        text += f"\nexact check: {report.exact_model['summary']}\n"
    return text


def _project_output_format(paths: list[str]) -> str | None:
    try:
        return find_project_config(str(Path(os.path.realpath(paths[0])).parent)).output_format
    except SettingsError:
        return None


def _check_gpu_name(name: str) -> None:
    try:
        gpu_catalog.resolve_gpu(name)
    except gpu_catalog.UnknownGPUError as exc:
        raise UsageError(f"--gpu: {exc}") from None


def cmd_rules(args) -> int:
    for module in rules.all_rules():
        rule = module.RULE
        print(f"{rule.code}  {rule.name:<32} {rule.severity.value:<8} {rule.summary}")
    return EXIT_OK


def cmd_rule(args) -> int:
    module = rules.get(args.code)
    if module is None:
        raise UsageError(f"no rule {args.code!r}; `trainlint rules` lists them")
    rule = module.RULE
    off = "" if rule.enabled_by_default else f", off by default: --select {rule.code} runs it"
    print(f"{rule.code} {rule.name} ({rule.severity.value}{off})\n")
    print((module.__doc__ or "").strip())
    return EXIT_OK


def cmd_gpus(args) -> int:
    for gpu in gpu_catalog.catalog():
        bf16 = "bf16" if gpu.bf16 else "no bf16"
        tflops = f"{gpu.bf16_tflops:g} TFLOP/s" if gpu.bf16_tflops else ""
        print(f"{gpu.name:<18} {gpu.memory_bytes / 2**30:7.2f} GiB  {bf16:<8} {tflops:<14} {', '.join(gpu.aliases[:4])}")
    return EXIT_OK


def cmd_models(args) -> int:
    for model in model_catalog.catalog():
        print(f"{model.name:<28} {model.published_params / 1e9:8.2f} B  {', '.join(model.hf_ids[:2])}")
    return EXIT_OK


def cmd_server(args) -> int:
    try:  # pygls and lsprotocol are heavy and needed only here (and may be missing)
        from trainlint.lsp.server import run
    except ImportError as exc:
        print(f"trainlint: the language server needs pygls and lsprotocol: {exc}", file=sys.stderr)
        return EXIT_ERROR
    run()
    return EXIT_OK


if __name__ == "__main__":
    raise SystemExit(main())
