"""The core pipeline for one file, and the linked-file pass over a run.

`check_document` runs `_run`, whose stages each take what the ones before made:

1. `_declared`: the project settings that apply to the file and its `# trainlint:` directives (`Declared`);
2. `_flavor`: which reader reads it (deepspeed, huggingface, ...; "unknown" for a format it does not read);
3. `_surroundings`: the framework versions it runs under, its launch and the parser reading it (`Surroundings`);
4. `_PlanReader.read`: the `TrainingPlan` (the flavor reader's, the launch's decisions, the settings laid over);
5. `_lint_context` and `_estimate`: what the rules see, with the memory estimate;
6. `_rule_findings`: the findings of the rules that can apply;
7. `_filtered`: caps for an assumed launch, per-file ignores, suppressions (and TL009), one finding per place;
8. `_settled`: the fixes that settle (`fixes.settle`): each selection `--fix` makes applied together and linted
   again; a fix whose result is reported again is made whole with its follow-up or withdrawn, saying so.

A shell script, Makefile or README with launch targets (context/launch/targets.py: launch commands that carry their
whole configuration as script arguments) goes through `_run_launch_targets` instead: stages 1 - 6 per target, its
arguments read as a document of the file and the command itself as the launch, then 7 for the file.

Pure with respect to its inputs (text or path, settings); the CLI and the language server call it.
Bad input never raises out of here: it becomes diagnostics.
"""

from __future__ import annotations

import os
import re
import traceback
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, NamedTuple

from trainlint import flavors
from trainlint._patterns import compile_later
from trainlint.context import dialect as dialect_context
from trainlint.context import precision as load_precision
from trainlint.context import reference as reference_context
from trainlint.context import argclasses, codeargs, imports, links, pins
from trainlint.context import launch as launch_context
from trainlint.context.launch import index as launch_index
from trainlint.context.launch import targets as launch_targets
from trainlint.context import versions as version_context
from trainlint.context.dialect import Dialect, apply_builtin_deepspeed, implied_versions
from trainlint.context.settings import (Directive, Overrides, ProjectConfig, RuleSelection, Settings,
                                        SettingsError, find_project_config, parse_directives)
from trainlint.context.suppressions import Suppressions
from trainlint.diagnostics import Diagnostic, Severity
from trainlint.document.reading import (SURROGATE, has_surrogates, overlay, parse_document, read_document,
                                       read_regular_file)
from trainlint.document.tree import Document
from trainlint.fixes.settle import settle as settle_fixes
from trainlint.memory import estimate as estimator
from trainlint.plan import Origin, TrainingPlan
from trainlint.rules import REGISTRY, all_rules, reads_deepspeed_configs, tl009_unused_suppression
from trainlint.rules.base import LintContext
from trainlint.rules.dscommon import ds_configs

INTERNAL = "TL000"


@dataclass(eq=False)  # state, compared by identity
class FileResult:
    """What checking one file produced: its document, training plan, linked files and findings."""
    path: str
    flavor: str
    document: Document
    plan: TrainingPlan | None = None
    linked: list[Document] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    estimate: Any = None
    internal_error: bool = False
    linked_from: list[str] = field(default_factory=list)  # configs (not checked themselves) linking this file
    versions: Any = None  # trainlint.context.versions.Versions
    launch: Any = None  # trainlint.context.launch.Launch
    dialect: Any = None  # trainlint.context.dialect.Dialect


def check_path(path: str | Path, settings: Settings = Settings(), display_path: str | None = None) -> FileResult:
    doc = read_document(path, display_path)
    return check_document(doc, settings)


def check_launch_path(path: str | Path, settings: Settings = Settings(), display_path: str | None = None) -> FileResult:
    """A shell script, Makefile or README found by walking a folder: checked for its launch targets only
    (`_run_launch_targets`); one with none gives an empty result of flavor "unknown" (nothing else in it is a config)."""
    shown = display_path or str(path)
    data, _why = read_regular_file(path, launch_targets.MAX_FILE_CHARS)
    text = data.decode("utf-8", errors="replace") if data is not None else ""
    if not launch_targets.targets_in(text, str(path)):  # most scripts and READMEs: not read as a document at all
        return FileResult(shown, "unknown", Document(shown, "", "launch"))
    doc = read_document(path, display_path)
    result = check_document(doc, settings)
    return result if result.flavor == "launch" else FileResult(doc.path, "unknown", doc)


def check_text(text: str, path: str, settings: Settings = Settings()) -> FileResult:
    return check_document(parse_document(text, path), settings)


def check_document(doc: Document, settings: Settings = Settings(), settle: bool = True) -> FileResult:
    """The findings of one document. With `settle` (always but for the lint `fixes.settle` makes of a fixed text),
    the fixes offered are those that, applied together as `--fix` applies them, reach a fixed point."""
    result = FileResult(doc.path, "unknown", doc)
    try:
        if not _run_launch_targets(doc, settings, result):
            _run(doc, settings, result)
        if settle and not result.internal_error:
            result.diagnostics = _settled(doc, settings, result.diagnostics)
    except Exception as exc:  # noqa: BLE001 - one bad file or bug must not stop the others
        diagnostic, internal = failure(doc, "trainlint failed on this file", exc)
        result.internal_error = result.internal_error or internal
        result.diagnostics.append(diagnostic)
    try:
        result.path = printable(result.path)
        result.diagnostics = [_printable(d) for d in result.diagnostics]
        result.diagnostics.sort(key=Diagnostic.sort_key)
    except Exception as exc:  # noqa: BLE001
        result.internal_error = True
        result.diagnostics = [_internal(doc, f"trainlint failed on this file: {type(exc).__name__}", exc)]
    return result


def _settled(doc: Document, settings: Settings, diagnostics: list[Diagnostic]) -> list[Diagnostic]:
    """Stage 8: the fixes that settle (`fixes.settle`): each selection applied together and the result linted again
    (the same settings, the fixed texts standing in for their files); a fix whose result is reported is withdrawn."""
    own = os.path.realpath(doc.path) if doc.path else doc.path

    def current(path: str) -> str | None:
        if path == doc.path or (path and os.path.realpath(path) == own):
            return doc.text
        other = read_document(path)
        return None if other.kind == "unreadable" else other.text

    def relint(texts: dict[str, str]) -> list[Diagnostic]:
        body = next((t for p, t in texts.items() if p == doc.path or os.path.realpath(p) == own), None)
        if body is None:
            with overlay(texts):
                return check_document(doc, settings, settle=False).diagnostics
        text = ("\ufeff" if doc.bom else "") + body
        others = {p: t for p, t in texts.items() if t is not body}
        with overlay({**others, doc.path: text} if doc.path else others):
            return check_document(parse_document(text, doc.path, doc.kind), settings, settle=False).diagnostics

    return settle_fixes(diagnostics, current, relint, doc)


# Failures caused by what the input names or how large it is, not by a bug: reported as TL001.
_INPUT_FAILURES = (OSError, MemoryError, RecursionError)


def failure(doc: Document, where: str, exc: BaseException) -> tuple[Diagnostic, bool]:
    """The diagnostic for an exception while checking `doc`, and whether it is trainlint's own bug
    (TL000) rather than input it cannot read (TL001: a file it names is unreadable, too large, too deep)."""
    try:
        text = str(exc)
    except Exception:  # noqa: BLE001 - even the message may fail (huge integers)
        text = ""
    text = text[:300]
    if isinstance(exc, _INPUT_FAILURES):
        if isinstance(exc, OSError):
            reason = f"a file or folder it names cannot be read: {exc.strerror or text}"
            if exc.filename is not None:
                reason += f" ({str(exc.filename)[:120]})"
        elif isinstance(exc, MemoryError):
            reason = "it is too large to check within memory"
        else:
            reason = "it is nested too deeply to check"
        return Diagnostic("TL001", Severity.ERROR, f"trainlint cannot check this file: {reason}", doc.path,
                          doc.file_span, name="syntax-error"), False
    return _internal(doc, f"{where}: {type(exc).__name__}: {text}", exc), True


def printable(text: str) -> str:
    """`text` without unpaired surrogates (a file name that is not UTF-8, a JSON `\\ud800` escape):
    each becomes `\\xNN` (a byte of the name) or `\\uXXXX`, so every output format can encode it."""
    if not has_surrogates(text):
        return text
    return SURROGATE.sub(lambda m: f"\\x{ord(m.group()) - 0xDC00:02x}" if 0xDC80 <= ord(m.group()) <= 0xDCFF
                         else f"\\u{ord(m.group()):04x}", text)


def _printable(d: Diagnostic) -> Diagnostic:
    if has_surrogates(d.message) or has_surrogates(d.path) or has_surrogates(d.detail):
        d = replace(d, message=printable(d.message), path=printable(d.path), detail=printable(d.detail))
    if any(has_surrogates(f.title) for f in d.fixes):
        d = replace(d, fixes=tuple(f._replace(title=printable(f.title)) for f in d.fixes))
    return d


def _internal(doc: Document, message: str, exc: BaseException | None = None) -> Diagnostic:
    detail = ""
    if exc is not None:
        frames = traceback.extract_tb(exc.__traceback__)
        if frames:
            last = frames[-1]
            ours = [f for f in frames if "trainlint" in Path(f.filename).parts]
            where = f"{Path(last.filename).name}:{last.lineno}"
            if ours and ours[-1] is not last:
                where += f", from {Path(ours[-1].filename).name}:{ours[-1].lineno}"
            detail = f"at {where}; please report this"
    return Diagnostic(INTERNAL, Severity.ERROR, message, doc.path, doc.file_span, name="internal-error",
                      detail=detail)


def _project(doc: Document, settings: Settings) -> ProjectConfig:
    if not settings.use_project_config:
        return ProjectConfig()
    return find_project_config(str(Path(os.path.realpath(doc.path)).parent))


# ---- the pipeline for one file, stage by stage -------------------------------------------------------------------

def _run(doc: Document, settings: Settings, result: FileResult) -> None:
    """Check one read document into `result`: each stage takes what the ones before it made."""
    declared = _declared(doc, settings)
    flavor, foreign = _flavor(doc)
    result.flavor = flavor
    around = _surroundings(doc, flavor, foreign, declared, settings)
    result.versions, result.launch, result.dialect = around.versions, around.launch, around.dialect
    reader = _PlanReader(doc, flavor, around.dialect, around.versions, declared.plan_layers(settings))
    result.plan, result.linked = reader.read(around.launch)
    ctx = _lint_context(doc, flavor, result, declared)
    _estimate(ctx, result)
    diagnostics = _without_misread_verdicts(_rule_findings(ctx, declared.selection, result), result)
    result.diagnostics = _filtered(diagnostics, ctx, declared, reader, result)


# ---- a launch target: a launch command that carries its whole configuration (context/launch/targets.py) ---------

# The rules a launch target's arguments are judged by: the HF rules on keys and values (an unknown or removed
# argument, a value outside its choices or range), precision and sharding settings, the memory verdicts, and TL012
# on the file's own commands that a backslash followed by blanks cuts. Not the
# rules of a file's syntax (YAML quoting, duplicate keys: argparse keeps the last), not TL520 (argparse converts a
# command line's strings through each field's type; a value that does not convert stops it with "invalid int
# value", not the silent string TL520 describes), not TL102 (a launch whose model is a shell parameter is no
# config to name one in).
LAUNCH_TARGET_CODES = frozenset({
    "TL012", "TL100", "TL101", "TL103", "TL104", "TL310", "TL311", "TL312", "TL313", "TL315", "TL316", "TL420", "TL421",
    "TL422", "TL425", "TL426", "TL521", "TL522", "TL523", "TL524", "TL527", "TL528", "TL529", "TL530", "TL531"})
# The parsers whose command line is HfArgumentParser's `parse_args_into_dataclasses`.
LAUNCH_TARGET_DIALECTS = ("hf", "trl", "open-r1")


def _run_launch_targets(doc: Document, settings: Settings, result: FileResult) -> bool:
    """A shell script, Makefile or README whose launch commands carry their whole configuration as script arguments
    (`targets.targets_in`): each such command's arguments read as a TrainingArguments argument set
    (`targets.as_document`, at the file's own lines and columns) and linted by the stages of `_run`, the launch being
    the command itself; the file's findings are theirs. False (nothing done) for a file with none, or whose
    launched scripts are not known HF-style trainers."""
    if not launch_targets.is_target_file(doc.path) or doc.kind == "unreadable":
        return False
    found = launch_targets.targets_in(doc.text, doc.path)
    if not found:
        return False
    documents = [launch_targets.as_document(t, doc.text, doc.path) for t in found]
    whole = launch_targets.whole_document(doc.text, doc.path, documents)
    declared = _declared(whole, settings)
    diagnostics: list[Diagnostic] = []
    linted = 0
    for target, first in zip(found, documents):
        sub = FileResult(doc.path, "huggingface", first)
        target_doc = _lint_launch_target(target, first, declared, settings, sub)
        if target_doc is None:
            continue
        linted += 1
        if result.plan is None:
            result.plan, result.estimate = sub.plan, sub.estimate
            result.versions, result.launch, result.dialect = sub.versions, sub.launch, sub.dialect
        result.internal_error = result.internal_error or sub.internal_error
        diagnostics.extend(_at_launch(d, target, target_doc) for d in sub.diagnostics)
    if not linted:
        return False
    result.flavor, result.document = "launch", whole
    diagnostics = [d for d in diagnostics if not any(d.code.startswith(c) for c in declared.ignored)]
    suppressions = Suppressions.from_document(whole)
    kept = suppressions.filter(diagnostics)
    if declared.selection.enabled("TL009", True):
        kept.extend(tl009_unused_suppression.report(suppressions, whole))
    result.diagnostics = _dedupe(kept)
    return True


def _lint_launch_target(target, first: Document, declared: Declared, settings: Settings,
                        result: FileResult) -> Document | None:
    """Stages 3 - 6 of `_run` for one launch target (flavor huggingface, its launch the command); gives the document
    its arguments were read into (an abbreviation read as the field of the parser in play it names), None when its
    script's parser is not HfArgumentParser's command line (or the script is not in the repository)."""
    launch = launch_targets.launch_of(target, first.path)
    around = _surroundings(first, "huggingface", None, declared, settings, given=launch)
    dialect = around.dialect
    if not dialect.known or dialect.name not in LAUNCH_TARGET_DIALECTS or around.launch.script_parser:
        return None
    root = str(pins.repo_root(pins.resolved(first.path).parent)) if first.path else ""
    script = dialect_context.script_path(around.launch.script, launch_context.bases_of(around.launch, root or None))
    if not script:
        return None  # the launched script is not in the repository: its own dataclasses may declare any argument
    codes = LAUNCH_TARGET_CODES
    if dialect.own_unresolved or argclasses.parser_classes(script, root, "hf").unresolved or \
            codeargs.declares(script, "") is None:
        # the script does not parse, or its parser takes classes whose fields trainlint cannot read (not in the
        # repository, not a framework's):
        # any argument may be theirs, a removed TrainingArguments field redeclared (BELLE's evaluation_strategy)
        codes = LAUNCH_TARGET_CODES - {"TL523", "TL524"}
    known = frozenset(launch_targets.training_fields() | (dialect.fields or frozenset()) | (dialect.own or frozenset()))
    target_doc = launch_targets.as_document(target, first.text, first.path, known)
    result.document = target_doc
    # the file's own cut commands (TL012), as a config's lint reports the repository's: one finding per place in a run
    launch = around.launch._replace(arguments=(), role="target", parser_reads="command-line",
                     cuts=tuple(launch_index.cuts_in(first.text, first.path)))
    result.versions, result.launch, result.dialect = around.versions, launch, dialect
    reader = _PlanReader(target_doc, "huggingface", dialect, around.versions, declared.plan_layers(settings))
    launch_targets.forget(target_doc)
    result.plan, result.linked = reader.read(launch)
    read = launch_targets.looked_up(target_doc)  # the arguments the plan took
    ctx = _lint_context(target_doc, "huggingface", result, declared)
    _estimate(ctx, result)
    found = _rule_findings(ctx, declared.selection, result, codes)
    result.diagnostics = _launch_memory(_without_misread_verdicts(found, result), target_doc, dialect, result, read)
    return target_doc


def _launch_memory(diagnostics: list[Diagnostic], target_doc: Document, dialect: Dialect,
                   result: FileResult, read: frozenset[str]) -> list[Diagnostic]:
    """A launch target's memory verdicts as far as its arguments make them: none (and no estimate) where the plan
    took an argument whose value a shell variable the file does not set holds (`--per_device_train_batch_size $BS`:
    the plan would price HfArgumentParser's default; `--output_dir $OUT` changes nothing); at most a warning that
    says so where it passes arguments only the script's own classes declare (LESS's `--lora True`: what the script
    does with them, a LoRA wrapper, is not read)."""
    root = target_doc.root
    entries = root.entries if root is not None else []
    unknown = [e.key_raw for e in entries if e.value.value is None and e.key in read]
    if unknown:
        result.estimate = None
        return [d for d in diagnostics if d.code not in MEMORY_VERDICTS]
    fields = launch_targets.training_fields()
    own = [e.key_raw for e in entries if e.key not in fields and dialect.declares(e.key)]
    if not own:
        return diagnostics
    note = (f"the script's own arguments ({', '.join(own[:4])}{', ...' if len(own) > 4 else ''}) are taken not to "
            "change what is trained or how: trainlint does not read what the script does with them")
    return [calibrate(d, (note,)) if d.code in MEMORY_VERDICTS else d for d in diagnostics]


def _at_launch(d: Diagnostic, target, target_doc: Document) -> Diagnostic:
    """A launch target's finding as the file reports it: one located outside the command (a file-level verdict) at
    the command's first word; its fixes only where exact: each edit a rename of an option (`--name`), written with
    its dashes; the argument named as written (`--lr_scheduler_type`). Any other edit (a value, an inserted or deleted key) would not be the file's syntax: no fix."""
    if not target.start <= d.span.start.offset <= target.end:
        d = replace(d, span=launch_targets.command_span(target_doc, target))
    entry = launch_targets.entry_at(d.span, target_doc)
    if entry is not None and f"`{entry.key}`" in d.message:  # the argument as the command writes it
        d = replace(d, message=d.message.replace(f"`{entry.key}`", f"`{entry.key_raw}`", 1))
    fixes = []
    for f in d.fixes:
        edits = []
        for e in f.edits:
            entry = launch_targets.in_key(e.span, target_doc) if e.path == target_doc.path else None
            if entry is None or not re.fullmatch(r"--[A-Za-z_]\w*", e.new_text):
                break  # `fixes.edits.rename_key` writes a launch's option with its dashes
            edits.append(e)
        else:
            fixes.append(f._replace(title=re.sub(r"`(\w+)`", r"`--\1`", f.title, count=1), edits=tuple(edits)))
    return replace(d, fixes=tuple(fixes)) if d.fixes else d


# The memory verdicts: built on the plan as read, so not made when the file's own reader refuses it.
MEMORY_VERDICTS = frozenset({"TL100", "TL101", "TL103", "TL104"})


def _without_misread_verdicts(diagnostics: list[Diagnostic], result: FileResult) -> list[Diagnostic]:
    """Takes the rules' findings; gives them without the memory verdicts when an error says the file's reader
    refuses it (a rule with `misreads`): the estimate priced a run that does not start (LLaMA-Factory's
    `finetuning_type: qlora` read as a full fine-tune), so neither the verdict nor the estimate is reported."""
    refused = any(d.severity is Severity.ERROR and d.code in REGISTRY and getattr(REGISTRY[d.code].RULE, "misreads",
                                                                                 False) for d in diagnostics)
    if not refused:
        return diagnostics
    result.estimate = None
    return [d for d in diagnostics if d.code not in MEMORY_VERDICTS]


class Declared(NamedTuple):
    """What is declared for one file besides the command line: the project settings that apply to it
    (`[tool.trainlint]` / trainlint.toml, its per-file sections) and its own `# trainlint:` directives."""

    project: ProjectConfig
    project_error: str  # the project settings could not be used (reported by TL010); "" when they could
    overrides: Overrides  # plan values the project's settings (and its per-file section) set
    ignored: tuple[str, ...]  # the codes the per-file section ignores
    selection: RuleSelection  # the rules to run: the project's, with the command line's laid over
    directive: Directive | None  # None for a file that has no comments to read (unparsed JSON)

    def plan_layers(self, settings: Settings) -> tuple[Overrides, ...]:
        """The sources of plan values, weakest first: the project, the file's directives, the command line."""
        return (self.overrides, self.directive.overrides if self.directive else Overrides(), settings.cli)


def _declared(doc: Document, settings: Settings) -> Declared:
    """Takes the document and the run's settings; gives the project settings that apply to the file (none with
    `--isolated`), its directives, and the rule selection."""
    project_error = ""
    try:
        project = _project(doc, settings)
    except SettingsError as exc:
        project, project_error = ProjectConfig(), str(exc)
    overrides, ignored = project.for_file(doc.path)
    selection = project.selection
    if settings.selection is not None:
        selection = RuleSelection(settings.selection.select or selection.select,
                                  selection.ignore + settings.selection.ignore,
                                  selection.extend_select + settings.selection.extend_select)
    directive = parse_directives(doc.comments(), doc.path, doc.pos_at) if doc.root is not None or doc.kind == "yaml" else None
    return Declared(project, project_error, overrides, ignored, selection, directive)


def _flavor(doc: Document) -> tuple[str, str | None]:
    """Takes the document; gives its flavor ("unknown" when it does not parse or is a format trainlint recognises
    but does not read) and that foreign format's name (`flavors.foreign`), None for any other file."""
    if doc.syntax_error is not None:
        return "unknown", None
    flavor = flavors.detect(doc)
    foreign = flavors.foreign(doc, flavor)
    # a format trainlint does not read is not linted as its neighbour
    return ("unknown" if foreign is not None else flavor), foreign


class Surroundings(NamedTuple):
    """What surrounds one file: the framework versions it runs under, how it is launched, the parser reading it."""

    versions: version_context.Versions
    launch: launch_context.Launch
    dialect: Dialect


def _surroundings(doc: Document, flavor: str, foreign: str | None, declared: Declared,
                  settings: Settings, given: launch_context.Launch | None = None) -> Surroundings:
    """Takes the document, its flavor and what is declared; gives its versions, launch and dialect, each from the
    declared settings and, unless isolated, the repository around it. Their order matters: the launch and the
    versions name the dialect, the dialect's own pins narrow the versions and its parser rereads the launch's
    script arguments, and the launched script's imports narrow the versions last. `given`: the launch itself (a
    launch target's own command), not looked up."""
    try:
        versions, launch = surroundings(doc, declared.project, declared.directive, settings, given)
    except (OSError, RuntimeError, ValueError):  # a path that cannot be resolved (symlink loop): no context
        versions, launch = version_context.Versions(), launch_context.Launch()
    try:
        dialect = _dialect(doc, flavor, launch, versions, declared.project, declared.directive, settings)
    except (OSError, RuntimeError, ValueError):
        dialect = Dialect()
    versions = implied_versions(dialect, versions)
    # the script's arguments, as its parser reads them
    launch = launch_context.for_dialect(launch, dialect.name, _script_syntax(doc, launch, settings))
    if settings.use_project_config and doc.path:
        versions = _imports_narrow(doc, flavor, launch, dialect, versions)
    if foreign is not None:
        dialect = Dialect(foreign, Origin("inferred",
                                          note=f"recognised as {flavors.FOREIGN_LABELS.get(foreign, foreign)}"))
    return Surroundings(versions, launch, dialect)


def surroundings(doc: Document, project: ProjectConfig, directive: Directive | None,
                 settings: Settings, given: launch_context.Launch | None = None
                 ) -> tuple[version_context.Versions, launch_context.Launch]:
    """The framework versions and the launch of one file, from the declared settings (CLI, directive,
    [tool.trainlint], strongest first) and, unless isolated, the repository around it; `given`: the launch, when it
    is the file's own command (a launch target)."""
    layers = [project.context_for(doc.path)]
    if directive is not None and directive.context:
        layers.append(directive.context)
    if settings.context:
        layers.append(settings.context)
    declared_versions: dict = {}
    declared_launch = None
    for layer in layers:  # weakest first: later layers overwrite
        for name, spec in layer.versions.items():
            declared_versions[name] = (spec, layer.origin.kind, layer.origin.describe())
        if layer.launch:
            declared_launch = layer
    on_disk = Path(doc.path).parent.is_dir() if doc.path else False
    use_repo = settings.use_project_config and on_disk
    versions = version_context.resolve(doc.path, declared_versions, use_repository=use_repo)
    launch = given
    if given is not None:
        return versions, given
    if declared_launch is not None:
        bases = [Path(doc.path).resolve().parent]
        if declared_launch.origin.path:
            bases.insert(0, Path(declared_launch.origin.path).resolve().parent)
        launch = launch_context.declared(declared_launch.launch, Origin(declared_launch.origin.kind,
                                                                        declared_launch.origin.path), bases)
    if launch is None and use_repo:
        launch = launch_context.find(doc.path, doc.comments() if doc.kind == "yaml" else [])
    elif launch is None:
        launch = launch_context.find_in_comments(doc.path, doc.comments() if doc.kind == "yaml" else [])
    launch = launch or launch_context.Launch()
    if use_repo:
        launch = launch._replace(cuts=launch_context.cuts_for(doc.path))
    return versions, launch


def _dialect(doc: Document, flavor: str, launch: launch_context.Launch, versions: version_context.Versions,
             project: ProjectConfig, directive: Directive | None, settings: Settings) -> Dialect:
    declared, declared_origin = "", None
    for layer in (project.context_for(doc.path), directive.context if directive is not None else None,
                  settings.context):
        if layer is not None and layer.dialect:
            declared, declared_origin = layer.dialect, Origin(layer.origin.kind, layer.origin.path)
    project_names: tuple = ()
    pinned: tuple = ()
    root = ""
    if settings.use_project_config and doc.path and Path(doc.path).parent.is_dir():
        found, project_names = pins.pins_for(doc.path)
        pinned = tuple(found)
        root = str(pins.repo_root(pins.resolved(doc.path).parent))
    return dialect_context.decide(doc, flavor, launch, versions, project_names, pinned, declared, declared_origin,
                                  root)


def _script_syntax(doc: Document, launch: launch_context.Launch, settings: Settings) -> str:
    """The argument syntax the launched script's own text names (alignment-handbook's H4ArgumentParser)."""
    if launch is None or not launch.found or launch.launcher not in ("accelerate", "torchrun", "deepspeed", "python"):
        return ""
    try:
        root = str(pins.repo_root(pins.resolved(doc.path).parent)) if settings.use_project_config and doc.path else ""
        return dialect_context.script_syntax(launch, root)
    except (OSError, RuntimeError, ValueError):
        return ""


def _imports_narrow(doc: Document, flavor: str, launch: launch_context.Launch, dialect: Dialect,
                    versions: version_context.Versions) -> version_context.Versions:
    """Versions cut by what the launched script imports (trainlint.context.imports): a name a release removed
    means the run cannot use that release or later. The script the launch runs when it is a file; else, with no
    launch (or one naming a script that is not there), the cut that holds whichever of the repository's own scripts
    that parse with the file's parser runs (the weakest), as an assumption said so.
    The requirement narrowing then runs again with the cuts."""
    try:
        root = str(pins.repo_root(pins.resolved(doc.path).parent))
        cuts: tuple = ()
        script = ""
        if launch is not None and launch.found and launch.script:
            script = dialect_context.script_path(launch.script, launch_context.bases_of(launch, root or None))
        stale = launch is not None and launch.found and launch.script.endswith(".py") and not script
        if script:
            cuts = imports.cuts_for(script, root)
        elif flavor == "huggingface" and dialect is not None and dialect.known and \
                (stale or launch is None or not launch.found):
            scripts = dialect_context.repository_scripts(root, dialect.name)
            if scripts:
                cuts = imports.weakest([imports.cuts_for(s, root) for s in scripts])
            why = f"the launch's {launch.script} is not in the repository" if stale else "no launch names this file"
            cuts = tuple(c.with_reason(f"{why}; each of the repository's {len(scripts)} {dialect.label} scripts "
                                       f"stops at import from there, e.g. {c.reason}") for c in cuts)
        if not cuts:
            return versions
        narrowed = version_context.narrow(versions, doc.path, cuts=cuts)
        if script:
            return narrowed
        # which script runs was assumed: the cut rules releases out, but a claim is certain only without it
        items = dict(narrowed.items)
        for name, found in items.items():
            before = versions.get(name)
            if before is not None and found.spec != before.spec and not found.sure:
                items[name] = found._replace(sure=before.spec or ">=0")
        return version_context.Versions(items)
    except Exception:  # noqa: BLE001 - a refinement of the versions: an unreadable script cuts nothing, never a crash
        return versions


class _PlanReader:
    """The plan of one file under a given launch; made once, read again by `_cap_assumed_launch` without the
    launch."""

    def __init__(self, doc: Document, flavor: str, dialect: Dialect, versions: version_context.Versions,
                 layers: tuple[Overrides, ...]):
        self.doc, self.flavor, self.dialect, self.versions, self.layers = doc, flavor, dialect, versions, layers

    def read(self, launch: launch_context.Launch) -> tuple[TrainingPlan | None, list[Document]]:
        """Takes a launch; gives the plan (None for a file of no flavor) and the documents it links: the flavor
        reader's plan (the launch's script arguments over the file's keys, where they win), the launch's decisions
        where the file leaves them, the settings (project, directives, command line), then the ZeRO stage and
        offload of a DeepSpeed file the parser bundles (ms-swift's `zero3_offload`)."""
        if self.flavor == "unknown":
            return None, []
        arguments = launch_context.view_overrides(launch, self.flavor)
        reader = flavors.READERS[self.flavor]
        extra = {"script": launch.script} if self.flavor in flavors.READS_SCRIPT and launch.found and \
            launch.role == "config" and launch.script else {}
        read = reader.read(self.doc, overrides=arguments, **extra) if arguments else reader.read(self.doc, **extra)
        plan = launch_context.apply(read.plan, launch)
        for overrides in self.layers:
            plan = overrides.apply(plan)
        plan = apply_builtin_deepspeed(plan, self.doc, self.dialect, self.versions)
        plan = load_precision.apply(plan, self.dialect, self.versions)
        return reference_context.apply(plan, launch), read.linked


def _lint_context(doc: Document, flavor: str, result: FileResult, declared: Declared) -> LintContext:
    """Takes the file's plan and surroundings (in `result`) and what is declared; gives what the rules see,
    with the settings that could not be used (the project's, the directives' bad entries) for TL010."""
    ctx = LintContext(document=doc, flavor=flavor, plan=result.plan, linked=result.linked, versions=result.versions,
                      launch=result.launch, dialect=result.dialect)
    if declared.project_error:
        ctx.settings_problems.append((None, declared.project_error))
    if declared.directive is not None:
        for line, message in declared.directive.problems:
            start = doc.line_start(line)
            ctx.settings_problems.append((doc.span(start, start + len(doc.line_text(line))), message))
    return ctx


def _estimate(ctx: LintContext, result: FileResult) -> None:
    """Takes the rules' context; fills its estimate (and the result's) when there is a plan to estimate."""
    if ctx.plan is None:
        return
    estimator.attach(ctx)
    result.estimate = ctx.estimate


def _rule_findings(ctx: LintContext, selection: RuleSelection, result: FileResult,
                   codes: frozenset[str] | None = None) -> list[Diagnostic]:
    """Takes the rules' context and the selection; gives the findings of every selected rule that can apply to
    the file: of its flavor, whose version range the file's versions do not exclude (a range only an assumed
    version lies outside of gives info findings that say so), each calibrated (`calibrate`). A rule that fails
    becomes a finding (marking `result` when it is a bug)."""
    doc, flavor = ctx.document, ctx.flavor
    deepspeed_configs = bool(ds_configs(ctx)) if reads_deepspeed_configs(flavor) else True
    root = doc.root
    top_keys = frozenset(k for k in root.keys() if isinstance(k, str)) \
        if root is not None and root.kind == "mapping" else frozenset()
    diagnostics: list[Diagnostic] = []
    for rule in all_rules(flavor, deepspeed_configs, top_keys):  # only the rules that can apply are imported
        identity = rule.RULE
        if identity.flavors and flavor not in identity.flavors:
            continue
        if codes is not None and identity.code not in codes:
            continue
        if not selection.enabled(identity.code, identity.enabled_by_default):
            continue
        applies = identity.applies_to(ctx.versions)
        resolved = ctx.versions.get(identity.framework) if identity.framework else None
        if applies is False:
            continue  # the claim does not hold for the version(s) this file runs under
        if applies is None and resolved is not None and resolved.assumed and identity.versions and \
                ctx.versions.includes(identity.framework, identity.versions) is False:
            applies = False  # only the assumed release lies outside the range: report, as info
        try:
            found = list(rule.check(ctx))
            if applies is False:  # only an assumed version excludes it: a hint that names the range
                found = [_outside_range(d, identity, resolved) for d in found]
            assumed = identity.version_assumptions(ctx.versions)
            diagnostics.extend(calibrate(d, assumed) for d in found)
        except Exception as exc:  # noqa: BLE001
            diagnostic, internal = failure(doc, f"rule {identity.code} ({identity.name}) failed", exc)
            result.internal_error = result.internal_error or internal
            diagnostics.append(diagnostic)
    return diagnostics


def _filtered(diagnostics: list[Diagnostic], ctx: LintContext, declared: Declared, reader: _PlanReader,
              result: FileResult) -> list[Diagnostic]:
    """Takes the rules' findings; gives those to report: capped at warning where only an assumed launch makes
    them (`_cap_assumed_launch`), without the codes the per-file settings ignore and those the file's
    `disable=` comments suppress, with TL009 for the suppressions that suppressed nothing, one per place and
    code."""
    if ctx.launch.assumed and any(d.severity in (Severity.ERROR, Severity.WARNING) for d in diagnostics):
        diagnostics = _cap_assumed_launch(diagnostics, ctx, reader, result)
    diagnostics = [d for d in diagnostics if not any(d.code.startswith(c) for c in declared.ignored)]
    suppressions = Suppressions.from_document(ctx.document)
    kept = suppressions.filter(diagnostics)
    if declared.selection.enabled("TL009", True):
        kept.extend(tl009_unused_suppression.report(suppressions, ctx.document))
    return _dedupe(kept)


def _outside_range(d: Diagnostic, identity, resolved) -> Diagnostic:
    """A finding of a rule whose range excludes the *assumed* version: kept as info, saying so."""
    note = (f"this holds for {resolved.name}{identity.versions}; assumed {resolved.describe()}, outside that range: "
            f"{resolved.declare_hint()}")
    return replace(d, severity=Severity.INFO, assumptions=d.assumptions + (note,))


def _cap_assumed_launch(diagnostics: list[Diagnostic], ctx: LintContext, reader: _PlanReader,
                        result: FileResult) -> list[Diagnostic]:
    """A launch matched from a working directory that is only plausible (`Launch.assumed`) makes nothing certain:
    each error or warning the rules do not also make without that launch (same code, place and severity) carries
    the assumption, so is at most a warning and says what it assumed."""
    bare = launch_context.Launch(cuts=ctx.launch.cuts)  # the repository's cut commands are not the file's launch
    plan, linked = reader.read(bare)
    alone = replace(ctx, launch=bare, plan=plan, linked=linked, estimate=None)
    _estimate(alone, FileResult(ctx.document.path, ctx.flavor, ctx.document))
    serious = (Severity.ERROR, Severity.WARNING)
    codes = {d.code for d in diagnostics if d.severity in serious}
    still: set = set()
    for rule in all_rules(ctx.flavor):
        if rule.RULE.code not in codes:
            continue
        try:
            still.update((d.code, d.span, d.severity) for d in rule.check(alone) if d.severity in serious)
        except Exception:  # noqa: BLE001 - then the finding is not known to stand without the launch
            continue
    note = "the launch: " + ctx.launch.assumed
    return [calibrate(d, (note,)) if d.severity in serious and (d.code, d.span, d.severity) not in still else d
            for d in diagnostics]


def calibrate(d: Diagnostic, extra: tuple[str, ...] = ()) -> Diagnostic:
    """Severity policy: an error only when it is certain with what is known. A finding that carries
    assumptions (what the verdict rested on: a defaulted world size, GPU, sharding, an assumed framework
    version) is at most a warning."""
    assumptions = d.assumptions + tuple(a for a in extra if a not in d.assumptions)
    if assumptions != d.assumptions:
        d = replace(d, assumptions=assumptions)
    if d.assumptions and d.severity is Severity.ERROR:
        d = replace(d, severity=Severity.WARNING)
    return d


def _dedupe(diagnostics: list[Diagnostic], seen: set | None = None) -> list[Diagnostic]:
    """One finding per (file, position, code): a linked file is seen from every config that uses it."""
    seen = set() if seen is None else seen
    out = []
    for d in diagnostics:
        key = (d.path, d.span, d.code)
        if key not in seen:
            seen.add(key)
            out.append(d)
    return out


def dedupe_across(results: list[FileResult]) -> list[FileResult]:
    """One finding per (file, position, code) over a run. Where a linked file is reported both on its own and
    from the config that links it, the most severe wins: the config makes certain what the file alone assumed."""
    best: dict = {}
    for result in results:
        for d in result.diagnostics:
            key = (d.path, d.span, d.code)
            if key not in best or d.severity.rank > best[key].severity.rank:
                best[key] = d
    seen: set = set()
    for result in results:
        kept = []
        for d in result.diagnostics:
            key = (d.path, d.span, d.code)
            if key not in seen and best[key] is d:
                seen.add(key)
                kept.append(d)
        result.diagnostics = kept
    return results


# ---- linked files both ways ------------------------------------------------------------------------------------
# A DeepSpeed JSON (or accelerate config) checked on its own is checked as the configs that link it read it: they
# are found with the repository's link index (context/links.py), linted, and their findings about the pair added.

# Flavors of files other configs link (a JSON too small to be recognised is "unknown").
LINKABLE_FLAVORS = frozenset({"deepspeed", "accelerate", "unknown"})
# Findings located in the linking config that are about the pair (its settings against the linked file's).
NO_ESTIMATE = "TL102"
PAIR_CODES = frozenset({"TL006", "TL300", "TL301", "TL600", "TL601", "TL602", "TL603", "TL604", "TL623"})


def _key(path: str) -> str:
    return links.key(path)


def links_to(result: FileResult, target: str) -> bool:
    """Whether a lint read `target` as a linked file."""
    key = _key(target)
    paths = [d.path for d in result.linked or ()] + list(getattr(result.plan, "linked_paths", ()) or ())
    launch = result.launch
    if launch is not None and launch.found:  # launched with it: the accelerate config, a --deepspeed_config_file
        paths.append(launch.accelerate_config)
        if launch.deepspeed_config and launch.origin.path:
            paths.append(os.path.join(os.path.dirname(launch.origin.path), launch.deepspeed_config))
            paths.append(os.path.join(str(links.root_of(launch.origin.path)), launch.deepspeed_config))
    return any(_key(p) == key for p in paths if p)


def linking_results(path: str, settings: Settings = Settings(), skip: frozenset[str] | set[str] = frozenset(),
                    lint=None) -> list[FileResult]:
    """Lints of the configs in the repository of `path` that link it (the candidates of the link index, confirmed
    by their own flavor reader), except those whose resolved path is in `skip` (checked in this run anyway).
    `lint(candidate)` lints one file (default: check_path with a path relative to the working directory)."""
    if path in ("-", "<stdin>") or not settings.use_project_config:  # --isolated: the repository is not read
        return []
    out = []
    seen: set[str] = set()
    for candidate in links.candidates(path) + links.launched_with(path):
        if _key(candidate) in skip or _key(candidate) in seen:
            continue
        seen.add(_key(candidate))
        result = lint(candidate) if lint is not None else check_path(candidate, settings, display_path=_shown(candidate))
        if links_to(result, path):
            out.append(result)
    return out


def _shown(path: str) -> str:
    """A linking config's path as messages name it: relative to the working directory, `../` included (as ruff names
    files), so that a message never carries the machine's own folders."""
    try:
        return os.path.relpath(os.path.abspath(path), os.getcwd())
    except (OSError, ValueError):  # no working directory, another drive
        return path


def add_linked_findings(result: FileResult, linking: list[FileResult], settings: Settings = Settings()) -> FileResult:
    """Add to the lint of a linked file what the configs linking it report about it: their findings located in it
    (named after the linking config), and those located in the linking config that are about the pair."""
    if not linking:
        return result
    try:
        ignored = _project(result.document, settings).for_file(result.document.path)[1]
    except SettingsError:
        ignored = ()
    result.linked_from.extend(other.path for other in linking)
    found = linked_findings(result.document.path, result.path, linking, ignored)
    # The JSON's memory is estimated in the configs that link it (they name the model): its own "no memory
    # estimate, name a model" note would send people the wrong way.
    own = [d for d in result.diagnostics if d.code != NO_ESTIMATE]
    result.diagnostics = _dedupe(found + own)
    result.diagnostics.sort(key=Diagnostic.sort_key)
    return result


def linked_findings(target_path: str, shown: str, linking: list[FileResult],
                    ignored: tuple[str, ...] = ()) -> list[Diagnostic]:
    """What the lints `linking` (of configs linking `target_path`) say about it: their findings located in it,
    renamed `shown` and prefixed with the linking config unless their first sentence names it, and their findings
    located in themselves that are about the pair (PAIR_CODES, or naming the file)."""
    target = _key(target_path)
    name = Path(target_path).name
    found: list[Diagnostic] = []
    for other in linking:
        for d in other.diagnostics:
            if d.code == INTERNAL:
                continue
            if d.path == shown or _key(d.path) == target:
                if any(d.code.startswith(c) for c in ignored):
                    continue
                d = _moved(d, target, shown)
                if other.path not in d.message.split(". ", 1)[0]:  # named relative to the working folder
                    d = replace(d, message=f"{_shown(other.path)} links this file: {d.message}")
                found.append(d)
            elif d.path == other.path and (d.code in PAIR_CODES or name in d.message):
                found.append(_moved(d, target, shown, located=False))
    return _merged(found, linking)


def _merged(found: list[Diagnostic], linking: list[FileResult]) -> list[Diagnostic]:
    """One finding per (file, position, code), as everywhere: where several linking configs report the same one,
    the first is kept and names the others."""
    first: dict[tuple, int] = {}
    others: dict[tuple, list[str]] = {}
    out: list[Diagnostic] = []
    for d in found:
        key = (d.path, d.span, d.code)
        if key not in first:
            first[key] = len(out)
            out.append(d)
            continue
        source = next((o.path for o in linking if o.path in d.message or o.path == d.path), "")
        if source and source not in out[first[key]].message and source not in others.setdefault(key, []):
            others[key].append(source)
    for key, names in others.items():
        if names:
            d = out[first[key]]
            also = f"Also reported from {', '.join(names)}."
            out[first[key]] = replace(d, detail=f"{also} {d.detail}" if d.detail else also)
    return out


def _moved(d: Diagnostic, target: str, shown: str, located: bool = True) -> Diagnostic:
    """The diagnostic with the linked file named as this run names it (in its location and its fixes' edits)."""
    def edit(e):
        return e._replace(path=shown) if e.path != shown and _key(e.path) == target else e

    fixes = tuple(f._replace(edits=tuple(edit(e) for e in f.edits)) for f in d.fixes)
    return replace(d, path=shown if located else d.path, fixes=fixes)


# Keys that only training configs have: a file that does not parse, but names some of them, is a broken training
# config (worth a TL001); one that names none is some other YAML/JSON (a workflow, a compose file) to leave alone.
# LightningCLI files are known by their Trainer keys and a top-level `trainer:` section (jsonargparse stops on a
# file that does not parse, as terratorch's examples/confs/object_detection_vhr10_vit.yaml does).
_TRAINING_KEYS = compile_later(
    r"""(?:^|[\s{,"'])(?:per_device_train_batch_size|gradient_accumulation_steps|train_batch_size|"""
    r"""train_micro_batch_size_per_gpu|zero_optimization|learning_rate|model_name_or_path|num_train_epochs|"""
    r"""distributed_type|base_model|micro_batch_size|_component_|lr_scheduler_type|fsdp_config|deepspeed|"""
    r"""gradient_checkpointing|max_seq_length|accumulate_grad_batches|mixed_precision|seed_everything|max_epochs|"""
    r"""check_val_every_n_epoch|gradient_clip_val)["']?\s*:|^trainer:[ \t]*(?:#.*)?$""",
    re.MULTILINE)


def is_training_config(result: FileResult) -> bool:
    """Whether the file is (or, if it does not parse, looks like) a training config trainlint reads."""
    if result.flavor != "unknown":
        return True
    doc = result.document
    if doc.syntax_error is None or doc.kind == "unreadable" and not doc.text:
        return False
    return _TRAINING_KEYS.search(doc.text[:200_000]) is not None


def selection_from(select: tuple[str, ...], ignore: tuple[str, ...]) -> RuleSelection | None:
    if not select and not ignore:
        return None
    return RuleSelection(tuple(c.upper() for c in select), tuple(c.upper() for c in ignore))
