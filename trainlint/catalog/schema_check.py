"""A small JSON Schema (draft 2020-12) checker for the keywords trainlint's own schemas use.

Importing `jsonschema` (and `referencing`, `attrs`, `rpds`) costs more CPU than linting a config does, so a plain
`trainlint check` validates with this module instead. It yields errors with the attributes trainlint reads from
`jsonschema.ValidationError` (`validator`, `validator_value`, `schema`, `instance`, `absolute_path`,
`relative_schema_path`, `context`, `message`), with jsonschema's semantics and messages for those keywords;
`tests/test_schema_check.py` holds it to jsonschema's output on every config in the test corpus. A subschema
that uses a validation keyword this module does not implement is not handled here: meeting one while validating
raises `Unsupported`, and the caller validates with jsonschema instead (walking the whole schema first to know,
`supports()`, cost more than the validation).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

# Validation keywords implemented here.
IMPLEMENTED = frozenset({
    "type", "enum", "const", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "minLength", "pattern",
    "properties", "patternProperties", "additionalProperties", "required", "items", "anyOf", "not", "$ref",
})
# Draft 2020-12 keywords that validate something; any of these outside IMPLEMENTED sends a schema to jsonschema.
# Everything else (description, default, $defs, x-trainlint-*, ...) is an annotation jsonschema ignores too.
VALIDATING = IMPLEMENTED | frozenset({
    "allOf", "oneOf", "if", "then", "else", "dependentRequired", "dependentSchemas", "uniqueItems", "maxLength",
    "prefixItems", "contains", "minContains", "maxContains", "propertyNames", "minItems", "maxItems", "multipleOf",
    "unevaluatedItems", "unevaluatedProperties", "minProperties", "maxProperties", "$dynamicRef", "format",
})
_SUBSCHEMA_MAPS = ("properties", "patternProperties", "$defs", "definitions")


@dataclass
class SchemaViolation:
    """One JSON-Schema error as jsonschema reports it: the keyword, the failing value and where it is."""
    validator: str
    validator_value: Any
    schema: dict
    instance: Any
    absolute_path: tuple
    message: str
    relative_schema_path: tuple = ()
    context: list = field(default_factory=list)


class Unsupported(Exception):
    """A subschema the document reaches uses a validation keyword this module does not implement."""


def supports(schema: Any) -> bool:
    """True when every validating keyword anywhere in `schema` is one this module implements."""
    stack = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, list):
            stack.extend(node)
            continue
        if not isinstance(node, dict):
            continue
        for key, value in node.items():
            if key in VALIDATING and key not in IMPLEMENTED:
                return False
            if key in _SUBSCHEMA_MAPS and isinstance(value, dict):
                stack.extend(value.values())
            elif key in ("items", "additionalProperties", "not") or key == "anyOf":
                stack.append(value)
    return True


def _is_type(instance: Any, kind: str) -> bool:
    if kind == "object":
        return isinstance(instance, dict)
    if kind == "array":
        return isinstance(instance, list)
    if kind == "string":
        return isinstance(instance, str)
    if kind == "boolean":
        return isinstance(instance, bool)
    if kind == "null":
        return instance is None
    if isinstance(instance, bool):
        return False
    if kind == "number":
        return isinstance(instance, (int, float))
    if kind == "integer":
        return isinstance(instance, int) or (isinstance(instance, float) and instance.is_integer())
    return False


def _equal(a: Any, b: Any) -> bool:
    """jsonschema's equality: booleans are not numbers, 1 == 1.0, containers compared item by item."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_equal(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_equal(a[k], b[k]) for k in a)
    if isinstance(a, (list, dict)) or isinstance(b, (list, dict)):
        return False
    try:
        return a == b
    except Exception:  # noqa: BLE001 - exotic values are simply unequal
        return False


_REGEX_CACHE: dict[str, re.Pattern] = {}


def _search(pattern: str, text: str) -> bool:
    compiled = _REGEX_CACHE.get(pattern)
    if compiled is None:
        compiled = _REGEX_CACHE[pattern] = re.compile(pattern)
    return compiled.search(text) is not None


class Checker:
    """Validates documents against one schema (its `$ref`s resolved within the same document)."""

    def __init__(self, root: dict):
        self.root = root
        self._targets: dict[str, Any] = {}  # $ref -> its target: the schema is not modified, each file walks the refs

    def iter_errors(self, instance: Any) -> Iterator[SchemaViolation]:
        yield from self._errors(instance, self.root, ())

    def is_valid(self, instance: Any, schema: Any) -> bool:
        return next(self._errors(instance, schema, ()), None) is None

    def _resolve(self, ref: str) -> Any:
        if ref in self._targets:
            return self._targets[ref]
        target = self._targets[ref] = self._follow(ref)
        return target

    def _follow(self, ref: str) -> Any:
        if not ref.startswith("#"):
            raise ValueError(f"only local $refs are supported, got {ref!r}")
        node: Any = self.root
        for part in filter(None, ref[1:].split("/")):
            part = part.replace("~1", "/").replace("~0", "~")
            node = node[int(part)] if isinstance(node, list) else node[part]
        return node

    def _errors(self, instance: Any, schema: Any, path: tuple) -> Iterator[SchemaViolation]:
        if schema is True or schema == {}:
            return
        if schema is False:
            yield SchemaViolation("false", False, {}, instance, path, f"False schema does not allow {instance!r}")
            return
        if not isinstance(schema, dict):
            return
        for keyword, value in schema.items():
            check = _KEYWORDS.get(keyword)
            if check is None:
                if keyword in VALIDATING:
                    raise Unsupported(keyword)
                continue
            for error in check(self, value, instance, schema, path):
                if not error.validator:
                    error.validator, error.validator_value, error.schema = keyword, value, schema
                    error.instance = instance
                    error.absolute_path = path
                yield error


def _v(message: str, **extra: Any) -> SchemaViolation:
    """A violation of the keyword being checked; `_errors` fills in which keyword, schema and instance."""
    return SchemaViolation("", None, {}, None, (), message, **extra)


def _type(checker, types, instance, schema, path):
    kinds = [types] if isinstance(types, str) else list(types)
    if not any(_is_type(instance, kind) for kind in kinds):
        yield _v(f"{instance!r} is not of type {', '.join(repr(k) for k in kinds)}")


def _enum(checker, options, instance, schema, path):
    if not any(_equal(instance, option) for option in options):
        yield _v(f"{instance!r} is not one of {options!r}")


def _const(checker, expected, instance, schema, path):
    if not _equal(instance, expected):
        yield _v(f"{expected!r} was expected")


def _number_bound(compare, words):
    def check(checker, bound, instance, schema, path):
        if _is_type(instance, "number") and not compare(instance, bound):
            yield _v(f"{instance!r} {words} {bound!r}")
    return check


def _min_length(checker, limit, instance, schema, path):
    if isinstance(instance, str) and len(instance) < limit:
        yield _v(f"{instance!r} {'should be non-empty' if limit == 1 else 'is too short'}")


def _pattern(checker, pattern, instance, schema, path):
    if isinstance(instance, str) and not _search(pattern, instance):
        yield _v(f"{instance!r} does not match {pattern!r}")


def _properties(checker, properties, instance, schema, path):
    if isinstance(instance, dict):
        for key, subschema in properties.items():
            if key in instance:
                yield from checker._errors(instance[key], subschema, path + (key,))


def _pattern_properties(checker, patterns, instance, schema, path):
    if isinstance(instance, dict):
        for pattern, subschema in patterns.items():
            for key, value in instance.items():
                if _search(pattern, key):
                    yield from checker._errors(value, subschema, path + (key,))


def _additional_properties(checker, allowed, instance, schema, path):
    if not isinstance(instance, dict):
        return
    properties = schema.get("properties", {})
    patterns = schema.get("patternProperties", {})
    extras = [key for key in instance if key not in properties and not any(_search(p, key) for p in patterns)]
    if not extras:
        return
    if isinstance(allowed, dict):
        for key in extras:
            yield from checker._errors(instance[key], allowed, path + (key,))
    elif allowed is False:
        listed = ", ".join(repr(k) for k in sorted(extras, key=str))
        verb = "was" if len(extras) == 1 else "were"
        yield _v(f"Additional properties are not allowed ({listed} {verb} unexpected)")


def _required(checker, names, instance, schema, path):
    if isinstance(instance, dict):
        for name in names:
            if name not in instance:
                yield _v(f"{name!r} is a required property")


def _items(checker, items, instance, schema, path):
    if not isinstance(instance, list) or not instance:
        return
    if items is False:
        rest = instance if len(instance) != 1 else instance[0]
        yield _v(f"Expected at most 0 items but found {len(instance)} extra: {rest!r}")
        return
    for index, item in enumerate(instance):
        yield from checker._errors(item, items, path + (index,))


def _any_of(checker: Checker, branches: list[Any], instance: Any, schema: Any,
            path: tuple) -> Iterator[SchemaViolation]:
    collected: list[SchemaViolation] = []
    for index, branch in enumerate(branches):
        errors = list(checker._errors(instance, branch, path))
        if not errors:
            return
        for error in errors:
            error.relative_schema_path = (index,) + tuple(error.relative_schema_path)
        collected.extend(errors)
    yield _v(f"{instance!r} is not valid under any of the given schemas", context=collected)


def _not(checker, forbidden, instance, schema, path):
    if checker.is_valid(instance, forbidden):
        yield _v(f"{instance!r} should not be valid under {forbidden!r}")


def _ref(checker, ref, instance, schema, path):
    yield from checker._errors(instance, checker._resolve(ref), path)


_KEYWORDS = {
    "type": _type,
    "enum": _enum,
    "const": _const,
    "minimum": _number_bound(lambda x, b: x >= b, "is less than the minimum of"),
    "maximum": _number_bound(lambda x, b: x <= b, "is greater than the maximum of"),
    "exclusiveMinimum": _number_bound(lambda x, b: x > b, "is less than or equal to the minimum of"),
    "exclusiveMaximum": _number_bound(lambda x, b: x < b, "is greater than or equal to the maximum of"),
    "minLength": _min_length,
    "pattern": _pattern,
    "properties": _properties,
    "patternProperties": _pattern_properties,
    "additionalProperties": _additional_properties,
    "required": _required,
    "items": _items,
    "anyOf": _any_of,
    "not": _not,
    "$ref": _ref,
}
