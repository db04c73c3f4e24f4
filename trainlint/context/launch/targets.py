"""Launch targets: a launch command that carries its whole configuration as script arguments, linted on its own.

A repository may configure a run with no config file at all (princeton-nlp/LESS: `torchrun ... -m less.train.train
--model_name_or_path ... --per_device_train_batch_size 1 ...` in its shell scripts). Such a command is a *launch
target*: its script arguments are read as the argument set HfArgumentParser's `parse_args_into_dataclasses` builds
(`as_document`: a mapping whose keys and values sit at the script's own line and column), and the HF flavor's reader
and rules judge it as they judge a YAML of TrainingArguments keys.

A command is a launch target when (`targets_in`):

- it is a line of a shell script, a Makefile or a README code block (`is_target_file`; CI workflows are not: they
  run tests, not trainings);
- a generic launcher (python, torchrun, accelerate launch, deepspeed) runs a script or module;
- it passes no config file: no config-file argument for the script (`--config x.yaml`, a lone `x.yaml`,
  `--deepspeed ds.json`, any argument value ending in .json/.yaml/.yml) and no launcher config (accelerate's
  `--config_file`, `--deepspeed_config_file`). A launch that passes one is linted with that config, as its launch
  (`finding.find`): its arguments are checked there, so no finding is made twice;
- its script's parser reads the command line alone (`parsing.script_arguments` says "command-line");
- it passes at least `MIN_TRAINING_ARGUMENTS` arguments that are TrainingArguments fields (a `python eval.py
  --model x` is no training run).

Whether its script is a known HF-style trainer (the script is in the repository and its parser is HfArgumentParser or
TrlParser: `context.dialect`) is decided by the engine with the dialect, as for a config.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple


from trainlint._patterns import compile_later
from trainlint.context import pins
from trainlint.context.launch.deciding import _span_of, from_parsed
from trainlint.context.launch.index import commands_in, has_launch_words
from trainlint.context.launch.parsing import CONFIG_SUFFIXES, Parsed, parse_command, script_arguments
from trainlint.context.launch.resolving import working_dirs
from trainlint.context.launch.values import Command, Launch
from trainlint.diagnostics import Span
from trainlint.document.tree import Document, Entry, Node
from trainlint.plan import Origin

# The files whose launch lines may be targets, by name: shell and SLURM scripts, Makefiles, Markdown READMEs.
TARGET_SUFFIXES = (".sh", ".bash", ".slurm", ".sbatch", ".job", ".mk", ".md")
# The launchers that run a Python script whose parser reads the command line.
LAUNCHERS = ("python", "torchrun", "accelerate", "deepspeed")
# Arguments that are TrainingArguments fields a command must pass to be a training run (not an evaluation or a
# data-preparation script that happens to take `--model_name_or_path`).
MIN_TRAINING_ARGUMENTS = 3
MAX_TARGETS = 64  # per file
MAX_FILE_CHARS = 512 * 1024


def is_target_file(path: str) -> bool:
    name = Path(path).name
    return name in ("Makefile", "makefile", "GNUmakefile") or name.endswith(TARGET_SUFFIXES)


class Argument(NamedTuple):
    """One script argument as written: its field name, the value the parser is handed (None: a shell variable this
    file does not set), and offsets in the file's text of the option (`--name`) and of its value word (-1: bare)."""

    key: str
    value: str | None
    written: str  # the option as written (`--per-device-train-batch-size`)
    key_start: int
    key_end: int
    value_start: int = -1
    value_end: int = -1
    quoted: str | None = None  # the value word's quote character, when quoted


class Target(NamedTuple):
    """A launch command linted on its own: the command, as parsed, and its located script arguments."""

    command: Command
    parsed: Parsed
    arguments: tuple[Argument, ...]
    start: int  # offset of the command's first word in the file's text
    end: int  # offset of the end of its last line


def _rank(path: str) -> int:
    name = Path(path).name
    if name.endswith(".md"):
        return 3
    if name.endswith(".mk") or name in ("Makefile", "makefile", "GNUmakefile"):
        return 1
    return 0


def _passes_config(p: Parsed, flags: Sequence[tuple]) -> bool:
    """Whether the command hands its script or launcher a config file (then it is that config's launch)."""
    if any(p.values.get(name) for name in ("config_file", "deepspeed_config")):
        return True
    if any(key == "config" for key, *_ in flags):
        return True
    for arg in p.args:
        value = arg.split("=", 1)[1] if arg.startswith("-") and "=" in arg else arg
        if value.strip("\"'").lower().endswith(CONFIG_SUFFIXES):
            return True
    return False


def training_fields() -> frozenset:
    try:
        from trainlint.catalog import schemas
        return frozenset(schemas.known_keys("hf-training-args", ()) or ())
    except Exception:  # noqa: BLE001 - no schema: no command is a target
        return frozenset()


def targets_in(text: str, path: str) -> list[Target]:
    """The launch targets of one file's text (see the module's docstring), in the file's order."""
    if not is_target_file(path) or len(text) > MAX_FILE_CHARS or not has_launch_words(text):
        return []
    fields = training_fields()
    if not fields:
        return []
    starts = _line_starts(text)
    out: list[Target] = []
    for command in commands_in(text, path, _rank(path)):
        if len(out) >= MAX_TARGETS:
            break
        parsed = parse_command(command.text, dict(command.env))
        if parsed is None or parsed.launcher not in LAUNCHERS or not parsed.script or "\0" in parsed.script:
            continue
        flags, config, reads = script_arguments(parsed)
        if config or reads != "command-line" or _passes_config(parsed, flags):
            continue
        if sum(1 for key, *_ in flags if key in fields) < MIN_TRAINING_ARGUMENTS:
            continue
        located = _locate(text, starts, command, flags)
        if located is None:
            continue
        arguments, start, end = located
        out.append(Target(command, parsed, tuple(arguments), start, end))
    return out


def _line_starts(text: str) -> list[int]:
    starts = [0]
    for m in re.finditer(r"\n", text):
        starts.append(m.end())
    return starts


_WORD_END = compile_later(r"[\s;|&<>()]")


def _words(text: str, starts: list[int], command: Command) -> list[tuple[str, int, int, str | None]]:
    """The shell words of the command's physical lines as written in `text`: (word, start, end offsets, the quote
    character of a word that is one quoted string). Stops at a comment; `\\` at a line's end continues it."""
    out: list[tuple[str, int, int, str | None]] = []
    count = max(1, len(command.lines))
    for i in range(count):
        line = command.line + i
        if line >= len(starts):
            break
        begin = starts[line]
        stop = starts[line + 1] if line + 1 < len(starts) else len(text)
        body = text[begin:stop].rstrip("\r\n")
        if command.lines and command.lines[i].strip() and command.lines[i].strip() not in body:
            return []  # the command's lines are not the file's (a substituted invocation): no exact position
        j = 0
        while j < len(body):
            c = body[j]
            if c in " \t":
                j += 1
                continue
            if c == "\\" and body[j + 1:].strip() == "":
                break  # a continuation
            if c == "#":
                break  # a comment ends the line
            k, quote = j, None
            while k < len(body):
                ch = body[k]
                if ch in "\"'":
                    close = body.find(ch, k + 1)
                    if close < 0:
                        k = len(body)
                        break
                    if k == j and (close + 1 == len(body) or _WORD_END.match(body[close + 1])):
                        quote = ch
                    k = close + 1
                    continue
                if ch == "\\" and k + 1 < len(body):
                    k += 2
                    continue
                if _WORD_END.match(ch):
                    break
                k += 1
            if k == j:  # an operator
                k = j + 1
            out.append((body[j:k], begin + j, begin + k, quote))
            j = k
    return out


def _locate(text: str, starts: list[int], command: Command,
            flags: Sequence[tuple]) -> tuple[list[Argument], int, int] | None:
    """The arguments `flags` (`parsing._flag_tokens`) with the offsets of their words, in order; an argument whose
    option is not written literally (a shell variable holds it) is left out."""
    words = _words(text, starts, command)
    if not words:
        return None
    arguments: list[Argument] = []
    cursor = 0
    for key, value, written, _shown in flags:
        j = next((n for n in range(cursor, len(words)) if words[n][0] == written or
                  words[n][0].startswith(written + "=")), None)
        if j is None:
            continue
        word, start, end, _quote = words[j]
        key_end = start + len(written)
        if word.startswith(written + "="):
            quote = word[len(written) + 1] if word[len(written) + 1:][:1] in ("'", '"') else None
            arguments.append(Argument(key, _plain(value), written, start, key_end, key_end + 1, end, quote))
            cursor = j + 1
            continue
        nxt = words[j + 1] if j + 1 < len(words) else None
        if nxt is not None and not nxt[0].startswith("--") and nxt[0] not in ("|", ";", "&", ">", "<", "(", ")"):
            arguments.append(Argument(key, _plain(value), written, start, key_end, nxt[1], nxt[2], nxt[3]))
            cursor = j + 2
        else:
            arguments.append(Argument(key, _plain(value), written, start, key_end))
            cursor = j + 1
    end_line = command.line + max(1, len(command.lines)) - 1
    end = (starts[end_line + 1] - 1) if end_line + 1 < len(starts) else len(text)
    return arguments, words[0][1], end


def _plain(value: str | None) -> str | None:
    return None if value is None or "\0" in value else value


# ---- the argument set as a document -------------------------------------------------------------------------------

class _Arguments(Node):
    """The argument set's mapping, recording the keys looked up in it (`read`): which arguments the plan's reader
    took, so that one whose value a shell variable leaves unknown is known to reach the plan."""

    def entry(self, key: str) -> Entry | None:
        self.__dict__.setdefault("_read", set()).add(key)
        return super().entry(key)

    def read(self) -> frozenset[str]:
        return frozenset(self.__dict__.get("_read", ()))

    def forget(self) -> None:
        self.__dict__["_read"] = set()


def looked_up(doc: Document) -> frozenset[str]:
    """The keys looked up in a target's document since `forget` (all of them where it is not one)."""
    root = doc.root
    return root.read() if isinstance(root, _Arguments) else frozenset(e.key for e in (root.entries if root else []))


def forget(doc: Document) -> None:
    if isinstance(doc.root, _Arguments):
        doc.root.forget()


def _types(key: str, schema: dict) -> set[str]:
    prop = (schema.get("properties") or {}).get(key) or {}
    found: set[str] = set()
    for part in [prop, *(prop.get("anyOf") or [])]:
        kind = part.get("type")
        found.update([kind] if isinstance(kind, str) else (kind or []))
        if part.get("enum"):
            found.add("enum")
    return found


_TRUE = ("yes", "true", "t", "y", "1")
_FALSE = ("no", "false", "f", "n", "0")


def converted(key: str, value: str | None, bare: bool, schema: dict):
    """The value HfArgumentParser hands the dataclass for `--key value` (`hf_argparser.py: _parse_dataclass_field`):
    a bool field through `string_to_bool` (a bare `--flag` is True), an int or float field through int() / float();
    a string otherwise, or where the conversion fails (argparse then stops). A key of no known type (the script's own
    dataclass): an int, float or bool when it reads as one, for the plan's reader."""
    if value is None:
        return None
    types = _types(key, schema)
    if "boolean" in types and (bare or value.lower() in _TRUE + _FALSE):
        return True if bare else value.lower() in _TRUE
    for kind, cast in (("integer", int), ("number", float)):
        if kind in types:
            try:
                number = cast(value)
                return int(number) if kind == "number" and float(number).is_integer() and "." not in value \
                    and "e" not in value.lower() else number
            except ValueError:
                pass
    if types:
        return value
    if value in ("True", "False", "true", "false"):
        return value.lower() == "true"
    if re.fullmatch(r"-?\d+", value):
        return int(value)
    if re.fullmatch(r"-?(\d+\.\d*|\.\d+|\d+)([eE][-+]?\d+)?", value):
        return float(value)
    return value


def _field_of(key: str, known: frozenset) -> str:
    """The field an option names: itself, else the one field it is a prefix of (argparse's `allow_abbrev`, on in
    HfArgumentParser: `--num_train_epoch` is `--num_train_epochs`); an ambiguous or unknown prefix stays as written."""
    if not known or key in known:
        return key
    longer = [k for k in known if k.startswith(key)]
    return longer[0] if len(longer) == 1 else key


def as_document(target: Target, doc_text: str, path: str, known: frozenset = frozenset()) -> Document:
    """The target's arguments as a document of the file (`doc_text` at `path`): a mapping with one entry per
    argument, its key span the option as written (`--name`), its value span the value word; the last of a repeated
    option wins, as argparse keeps it. Positions are the file's own. `known`: the fields of the parser in play (an
    abbreviation of one of them names it)."""
    try:
        from trainlint.catalog import schemas
        schema = schemas.load_schema("hf-training-args") or {}
    except Exception:  # noqa: BLE001
        schema = {}
    doc = Document(path=path, text=doc_text, kind="launch")
    entries: dict[str, Entry] = {}
    for arg in target.arguments:
        key = _field_of(arg.key, known)
        key_span = doc.span(arg.key_start, arg.key_end)
        bare = arg.value_start < 0
        value_span = doc.span(arg.value_start, arg.value_end) if not bare else key_span
        raw = arg.value if arg.value is not None else ""
        node = Node("scalar", value_span, (key,), converted(key, arg.value, bare, schema), raw, arg.quoted)
        entries.pop(key, None)
        entries[key] = Entry(key, arg.written, key_span, None, node)
    doc.root = _Arguments("mapping", doc.span(target.start, target.end), (), entries=list(entries.values()))
    return doc


def launch_of(target: Target, path: str) -> Launch:
    """What the target's command decides (`deciding.from_parsed`: world size, nodes, sharding, precision, the
    accelerate config it names), with its script arguments left out of it: they are the target's document, and the
    rules that check a config's launch arguments (TL523, TL524) see none of them (role "target")."""
    command = target.command
    try:
        repo = pins.repo_root(pins.resolved(path).parent)
        bases, certain = working_dirs(command, repo)
    except (OSError, RuntimeError, ValueError):
        repo, bases, certain = None, [Path(path).parent], False
    origin = Origin("launch", path, span=_span_of(command.line))
    launch = from_parsed(target.parsed, origin, list(bases), command.text, command)
    return launch._replace(arguments=(), role="target", parser_reads="command-line",
                   cwd=str(bases[0]) if certain and bases else "", dirs=tuple(str(b) for b in bases))


def whole_document(doc_text: str, path: str, documents: list[Document]) -> Document:
    """The file as one document holding every target's arguments (its comments are the file's: `# trainlint:`
    directives and suppressions are read from them, the argument words left out)."""
    doc = Document(path=path, text=doc_text, kind="launch")
    entries = [e for d in documents if d.root is not None for e in d.root.entries]
    doc.root = Node("mapping", doc.span(0, len(doc_text)), (), entries=entries)
    return doc


def command_span(doc: Document, target: Target) -> Span:
    """The span of the command's first word (where a finding about the whole launch is reported)."""
    word_end = target.start
    while word_end < len(doc.text) and not doc.text[word_end].isspace():
        word_end += 1
    return doc.span(target.start, word_end)


def entry_at(span: Span, target_doc: Document) -> Entry | None:
    """The entry whose option or value word `span` lies in."""
    root = target_doc.root
    if root is None:
        return None
    for entry in root.entries:
        for part in (entry.key_span, entry.value.span):
            if part.start.offset <= span.start.offset and span.end.offset <= part.end.offset:
                return entry
    return None


def in_key(span: Span, target_doc: Document) -> Entry | None:
    """The entry whose option `span` is exactly (a rename edit of the key)."""
    root = target_doc.root
    if root is None:
        return None
    for entry in root.entries:
        if entry.key_span.start.offset == span.start.offset and entry.key_span.end.offset == span.end.offset:
            return entry
    return None


__all__ = ["Argument", "MIN_TRAINING_ARGUMENTS", "Target", "as_document", "command_span", "converted",
           "entry_at", "forget", "in_key", "is_target_file", "launch_of", "looked_up", "targets_in", "training_fields", "whole_document"]
