"""What a rule is and what it sees.

A rule is a module with a docstring (its user documentation), a `RULE = Rule(...)` identity and a
`check(ctx)` generator of diagnostics. `trainlint/rules/__init__.py` registers it.

Evidence: a rule about a framework's behaviour names it. `Rule.framework` is the distribution (transformers, trl,
accelerate, deepspeed, peft, lightning, torchtune, axolotl, llamafactory, litgpt), `Rule.versions` the PEP 440
range where the claim holds (">=0.20", "<5.0"), `Rule.evidence` where the behaviour lives ("trl/scripts/utils.py:
TrlParser.parse_args_and_config") and `Rule.raises` the framework's own first message, quoted. The engine does not
run a rule whose range excludes the file's resolved version (`ctx.versions`) when that version is known (settings, a pin, the
installed distribution). When it is only assumed (a pin range, or trainlint's newest known release) or unknown,
the rule runs and its findings say so in `Diagnostic.assumptions`: none is an error, and where the assumed
version lies outside the range they are info.

What surrounds the file: `ctx.versions` (resolved framework versions, each with its origin and whether assumed:
`ctx.version_of("trl")`, `ctx.version_in("transformers", ">=4.46")` -> True / False, or None when unknown or
only assumed),
`ctx.launch` (the launch context: world size, nodes, sharding, precision, the accelerate config; see
`trainlint.context.launch`) and `ctx.dialect` (the parser that reads the file and, when known, its fields:
`ctx.dialect.accepts(key)` -> True / False / None).

Assumptions: a verdict that rests on a defaulted or assumed value that decides it passes
`assumptions=["assumed 1 GPU without sharding: no launch command names this file; set ..."]` to `Rule.at`.
The engine caps any diagnostic carrying assumptions at warning: an error is certain with what is known.
"""

from __future__ import annotations


from dataclasses import dataclass, field
from typing import NamedTuple

from trainlint.context.dialect import Dialect
from trainlint.context.launch import Launch
from trainlint.context.versions import FrameworkVersion, Versions, canonical, parse_specifier
from trainlint.diagnostics import Diagnostic, Fix, Severity, Span
from trainlint.document.tree import Document, Node
from trainlint.plan import Setting, TrainingPlan

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable, Iterable

DOCS_URL = "https://github.com/trainlint/trainlint/blob/main/docs/rules/{code}.md"


class Rule(NamedTuple):
    """A rule's metadata: code, name, severity, summary and the flavors it applies to."""
    code: str  # stable forever, never reused
    name: str  # kebab-case
    severity: Severity
    summary: str  # one line
    flavors: tuple[str, ...] = ()  # () = every flavor
    enabled_by_default: bool = True
    # Evidence (see the module docstring): the framework whose behaviour the rule states, the PEP 440 range of
    # its versions where the claim holds ("" = all), where in its source, and the message it raises (quoted).
    framework: str = ""
    versions: str = ""
    evidence: str = ""
    raises: str = ""
    # An error of this rule means the file's own reader refuses a value the plan is read from (an adapter the
    # framework does not have, a fine-tuning type it rejects): the memory verdicts built on that reading are not
    # reported (`engine._without_misread_verdicts`).
    misreads: bool = False

    def diagnostic(self, path: str, span: Span, message: str, fixes: Iterable[Fix] = (),
                   severity: Severity | None = None, assumptions: Iterable[str] = (), detail: str = "") -> Diagnostic:
        return Diagnostic(self.code, severity or self.severity, message, path, span, tuple(fixes), self.name,
                          assumptions=tuple(assumptions), detail=detail)

    def at(self, doc: Document, target: "Node | Span | None", message: str, fixes: Iterable[Fix] = (),
           severity: Severity | None = None, assumptions: Iterable[str] = (), detail: str = "") -> Diagnostic:
        """A diagnostic on a node (its span), a span, or the start of the file."""
        if isinstance(target, Node):
            span = target.span
        elif isinstance(target, Span):
            span = target
        else:
            span = doc.file_span
        return self.diagnostic(doc.path, span, message, fixes, severity, assumptions, detail)

    def applies_to(self, versions: Versions) -> bool | None:
        """Whether the claim's range holds for the version in play: True, False (known, or no release the pins
        admit is in the range), or None (no range, unknown, assumed, or it depends on the release)."""
        if not self.framework or not self.versions:
            return None
        return versions.admits(self.framework, self.versions)

    def version_assumptions(self, versions: Versions) -> tuple[str, ...]:
        """What a finding of this rule assumes about the framework's version (nothing when it is pinned)."""
        if not self.framework or not self.versions or parse_specifier(self.versions) is None:
            return ()
        found = versions.get(self.framework)
        name = canonical(self.framework)
        if versions.admits(self.framework, self.versions) is True:
            return ()
        if found is None:
            return (f"{name} version unknown; this holds for {name}{self.versions}: declare it with "
                    f"`versions = {{{name} = \"X.Y.Z\"}}` in [tool.trainlint] or `# trainlint: {name}=X.Y.Z`",)
        if found.assumed:
            return (f"assumed {found.describe()}; this holds for {name}{self.versions}: {found.declare_hint()}",)
        return ()

    @property
    def url(self) -> str:
        return DOCS_URL.format(code=self.code)


@dataclass(eq=False)  # state, compared by identity
class LintContext:
    """What a rule sees of one file: the document, its plan, linked files, estimate and run context."""
    document: Document
    flavor: str
    plan: TrainingPlan | None = None
    linked: list[Document] = field(default_factory=list)
    estimate: Any = None  # trainlint.memory.estimate.Breakdown, when one could be made
    gpu: Any = None  # trainlint.catalog.gpus.GPU of the target, when known
    architecture: Any = None  # trainlint.catalog.architecture.Architecture, when known
    replan: Callable[[dict], Any] | None = None  # re-estimate with plan field changes (the fix planner)
    unestimable: Any = None  # trainlint.memory.estimate.Unestimable: why there is no estimate
    settings_problems: list = field(default_factory=list)  # (Span | None, message) from settings sources
    versions: Versions = field(default_factory=Versions)  # resolved framework versions (trainlint.context.versions)
    launch: Launch = field(default_factory=Launch)  # how the file is launched (trainlint.context.launch)
    dialect: Dialect = field(default_factory=Dialect)  # the parser that reads it (trainlint.context.dialect)

    def version_of(self, name: str) -> FrameworkVersion | None:
        """The resolved version of a distribution (`.version`, `.origin`, `.assumed`), or None when unknown."""
        return self.versions.get(name)

    def version_in(self, name: str, spec: str) -> bool | None:
        """Whether `name`'s version satisfies the PEP 440 `spec`: True/False when it is known (a setting, an exact
        pin, the installed distribution) or when every release a pin range admits agrees; None when unknown, only
        assumed (the newest known release: `version_of(name)` has it) or when it depends on the release."""
        return self.versions.admits(name, spec)

    def linked_document(self, path: str) -> Document | None:
        return next((d for d in self.linked if d.path == path), None)

    def document_for(self, setting: Setting) -> Document | None:
        """The document a setting came from (this file or a linked one)."""
        path = setting.origin.path
        if not path or path == self.document.path:
            return self.document
        return self.linked_document(path)
