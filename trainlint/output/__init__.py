"""Shell, output: small modules that turn FileResults into text (text, full, json, sarif, github, gitlab).
They never compute anything. May import the core; nothing in the core imports them."""

from __future__ import annotations

import importlib
import importlib.util  # find_spec: available() lists the formats without importing each one

FORMATS = {
    "text": "trainlint.output.text",
    "concise": "trainlint.output.text",
    "full": "trainlint.output.full",
    "json": "trainlint.output.json_format",
    "sarif": "trainlint.output.sarif",
    "github": "trainlint.output.github",
    "gitlab": "trainlint.output.gitlab",
}


def render(name: str, results: list, **options) -> str:
    module = importlib.import_module(FORMATS[name])
    return module.render(results, **options)


def available() -> list[str]:
    return [name for name, module in FORMATS.items() if importlib.util.find_spec(module) is not None]
