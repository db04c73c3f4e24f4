"""What a rule is and what it sees.

A rule is a module with a docstring (its user documentation), a `RULE = Rule(...)` identity and a
`check(ctx)` generator of diagnostics. `trainlint/rules/__init__.py` registers it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Iterable

from trainlint.diagnostics import Diagnostic, Fix, Severity, Span
from trainlint.document.tree import Document, Node
from trainlint.plan import Setting, TrainingPlan

DOCS_URL = "https://github.com/trainlint/trainlint/blob/main/docs/rules/{code}.md"


@dataclass(frozen=True)
class Rule:
    code: str  # stable forever, never reused
    name: str  # kebab-case
    severity: Severity
    summary: str  # one line
    flavors: tuple[str, ...] = ()  # () = every flavor
    enabled_by_default: bool = True

    def diagnostic(self, path: str, span: Span, message: str, fixes: Iterable[Fix] = (),
                   severity: Severity | None = None) -> Diagnostic:
        return Diagnostic(self.code, severity or self.severity, message, path, span, tuple(fixes), self.name)

    def at(self, doc: Document, target: "Node | Span | None", message: str, fixes: Iterable[Fix] = (),
           severity: Severity | None = None) -> Diagnostic:
        """A diagnostic on a node (its span), a span, or the start of the file."""
        if isinstance(target, Node):
            span = target.span
        elif isinstance(target, Span):
            span = target
        else:
            span = doc.file_span
        return self.diagnostic(doc.path, span, message, fixes, severity)

    @property
    def url(self) -> str:
        return DOCS_URL.format(code=self.code)


@dataclass
class LintContext:
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

    def linked_document(self, path: str) -> Document | None:
        return next((d for d in self.linked if d.path == path), None)

    def document_for(self, setting: Setting) -> Document | None:
        """The document a setting came from (this file or a linked one)."""
        path = setting.origin.path
        if not path or path == self.document.path:
            return self.document
        return self.linked_document(path)
