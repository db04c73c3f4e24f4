"""The repository's launch commands: the files that may hold them (shell and SLURM scripts, Makefiles, CI workflows,
READMEs), read once per repository with bounds; the command lines in each (continuation lines joined, the
variables set and the `cd`s before each); and the byte and text prefilters that skip what cannot name a config
(`has_launch_words`, `LaunchIndex.commands_naming`, `may_name`), each a superset of the full scan."""

from __future__ import annotations

import functools
import os
import re
from dataclasses import dataclass
from pathlib import Path

from trainlint._patterns import compile_later
from trainlint.context.launch import invoking
from trainlint.context.launch.resolving import _ASSIGN, _cd_target, _expand
from trainlint.context.launch.values import Command, Cut
from trainlint.document.reading import overlaid, read_regular_file

SKIP_DIRS = {".git", "node_modules", ".venv", "venv", "env", ".env", "__pycache__", "site-packages", ".tox", ".nox",
             ".mypy_cache", ".pytest_cache", ".ruff_cache", "build", "dist", "wandb", ".idea", ".vscode", ".cache",
             "htmlcov", ".eggs"}
MAX_FILES = 5000  # files looked at per repository
MAX_FILE_BYTES = 512 * 1024
MAX_TOTAL_BYTES = 24 * 1024 * 1024
MAX_DEPTH = 8
MAX_OVERLAID_CUTS = 8  # sets of stand-in texts whose cuts an index keeps (a language server's buffers change often)


# Files that hold launch commands; the number orders them (a script beats a README's example).
SCRIPT_KINDS = ((".sh", 0), (".bash", 0), (".slurm", 0), (".sbatch", 0), (".job", 0), ("Makefile", 1), (".mk", 1),
                (".yml", 2), (".yaml", 2), (".md", 3), (".rst", 3), (".txt", 4))


LAUNCH_WORDS = compile_later(
                    r"accelerate\s+launch|torchrun|torch\.distributed\.(run|launch)|\bdeepspeed\b|\btune\s+run|"
                    r"\blitgpt\s|\baxolotl\b|llamafactory-cli|\bpython[0-9.]*\s|\btrl\s+\w+|\bswift\s+\w+|"
                    r"\bsbatch\b|\bsrun\b|\bmegatron\s+(?:sft|pt|rlhf|export)\b")
_SCRIPT_NAME = compile_later(rb"[\w./-]*[\w-]\.(?:sh|bash|slurm|sbatch|job)\b")  # a script a command may run
_BRACE_BYTES = compile_later(rb"\{[^{}\s,]*,[^{}\s]*\}")  # a shell brace expansion (`config_{a,b}.yaml`)


# A word every match of LAUNCH_WORDS contains (held to it by tests/test_startup.py): this plain alternation scans
# text an order of magnitude faster than LAUNCH_WORDS (whose \b-led alternatives have no literal prefix), so a line
# or file without any of them is not scanned with it.
_LAUNCH_LITERALS = compile_later(r"accelerate|torchrun|torch\.distributed\.|deepspeed|tune|litgpt|axolotl|"
                        r"llamafactory-cli|python|trl|swift|sbatch|srun|megatron")


def has_launch_words(text: str) -> bool:
    """LAUNCH_WORDS.search(text) is not None, faster."""
    return _LAUNCH_LITERALS.search(text) is not None and LAUNCH_WORDS.search(text) is not None


@dataclass(eq=False)  # state, compared by identity
class LaunchIndex:
    """The files of a repository that may hold launch commands, read once; each file's commands are parsed when a
    lookup first needs them (most files name none of the configs looked up)."""

    root: str
    scripts: list  # [path, rank, bytes, the parsed commands or None] per file read, in walk order
    files: int = 0
    truncated: bool = False
    mentioned: dict | None = None  # _mentions, once built
    cut: dict | None = None  # {path: its cuts} as read from the files, once
    file_cuts: tuple | None = None  # all of them in walk order, once
    variable: list | None = None  # per file: whether it holds a `$` or a brace expansion (`commands_naming`), once
    real_paths: dict | None = None  # {real path: [paths]} of the scripts whose cuts an overlaid text may change
    plain_lines: dict | None = None  # {path: its shell lines as written}, of the files that invoke a script, once
    overlaid_cuts: dict | None = None  # {the stand-in texts of scripts (path, text): the cuts they give}, bounded

    def _commands_of(self, entry: list) -> list:
        if entry[3] is None:
            text = entry[2].decode("utf-8", errors="replace")
            # one scan of the file before the line-by-line reading
            entry[3] = self._read(text, entry[0], entry[1]) if has_launch_words(text) else []
        return entry[3]

    def _read(self, text: str, path: str, rank: int) -> list:
        """The file's commands; a script that reads its own arguments, once per invocation found elsewhere in the
        repository (invoking.invocations: its parameters bound to that invocation's arguments), else as written."""
        if rank != 0:
            return commands_in(text, path, rank)
        defaults = invoking.slurm_defaults(text) if "#SBATCH" in text else {}  # the script's own #SBATCH lines
        mentions = self._mentions().get(os.path.basename(path), ())
        found = invoking.invocations(Path(os.path.normpath(path)), text, mentions, self.root, self._plain_lines) \
            if mentions else []
        if not invoking.reads_arguments(text):
            found = [f for f in found if f[1]]  # only an invocation that sets its environment changes anything
        if not found:
            return commands_in(text, path, rank, extra_env=tuple(defaults.items()))
        options = invoking.options_of(text)
        out = []
        for args, slurm, where, line, here in found:
            bound = invoking.bindings(options, args)
            extra = tuple({**defaults, **slurm}.items())
            out.extend(commands_in(text, path, rank, bound=bound, via=f"{where}: {line}"[:300], extra_env=extra,
                                   start_dir=here))
        return out

    def _plain_lines(self, text: str, path: str) -> list:
        """`shell_lines(text, path)` of an indexed file (`text` its bytes decoded), read once: a README that invokes
        ten of the repository's scripts is looked through for each of them."""
        if self.plain_lines is None:
            self.plain_lines = {}
        lines = self.plain_lines.get(path)
        if lines is None:
            lines = self.plain_lines[path] = list(shell_lines(text, path))
        return lines

    def _mentions(self) -> dict:
        """{script file name: the entries whose text names it} for the scripts the repository's files name (built
        once: the invocations of a script are looked for only in these)."""
        if self.mentioned is None:
            self.mentioned = {}
            for entry in self.scripts:
                for name in set(_SCRIPT_NAME.findall(entry[2])):
                    self.mentioned.setdefault(os.path.basename(name.decode("utf-8", errors="replace")), []).append(entry)
        return self.mentioned

    def commands_naming(self, name: str, variables: bool = True) -> list:
        """The commands of the files that contain `name` (and, with `variables`, of those with a `$` or a brace
        expansion: a command may name a file through a variable or `config_{a,b}.yaml`), in walk order: a superset
        of the commands whose text contains it."""
        needle = name.encode("utf-8", errors="surrogateescape")
        if self.variable is None:  # which files may name any file through a variable: the same for every look-up
            self.variable = [b"$" in entry[2] or (b"{" in entry[2] and _BRACE_BYTES.search(entry[2]) is not None)
                             for entry in self.scripts]
        return [command for entry, through_variables in zip(self.scripts, self.variable)
                if (variables and through_variables) or needle in entry[2]
                for command in self._commands_of(entry)]

    def cuts(self) -> tuple[Cut, ...]:
        """The launch commands of the repository's scripts and READMEs that a backslash followed by blanks cuts
        short (`cuts_in`), in walk order: read once from the files, and again from the text that stands in for a
        file (an unsaved buffer, a fix being settled: `document.reading.overlay`)."""
        if self.cut is None:
            self.cut = {entry[0]: cuts_in(entry[2].decode("utf-8", errors="replace"), entry[0])
                        for entry in self.scripts if _may_cut(entry) and _CUT_BYTES.search(entry[2]) is not None}
        stand_ins: dict[str, str] = {}
        if overlaid():  # the few overlaid texts looked up by real path, not every script's path resolved per call
            if self.real_paths is None:
                self.real_paths = {}
                # os.walk descends into no linked folder: under a root that is its own real path every entry's
                # folder is real too, and only an entry that is itself a link needs resolving (one lstat, not one
                # per folder of its path)
                real_root = os.path.realpath(self.root) == self.root
                for entry in filter(_may_cut, self.scripts):
                    path = entry[0]
                    real = path if real_root and not os.path.islink(path) else os.path.realpath(path)
                    self.real_paths.setdefault(real, []).append(path)
            stand_ins = {path: text for real, text in overlaid().items() for path in self.real_paths.get(real, ())}
        if not stand_ins:  # as read from the files: the same for every config of the repository
            if self.file_cuts is None:
                self.file_cuts = tuple(cut for entry in self.scripts for cut in self.cut.get(entry[0], ()))
            return self.file_cuts
        # the same stand-ins give the same cuts: each of the fix-settling stage's re-lints while a script's fix is
        # applied, each config linted while a script's edited buffer is open
        key = tuple(sorted(stand_ins.items()))
        if self.overlaid_cuts is None or len(self.overlaid_cuts) >= MAX_OVERLAID_CUTS:
            self.overlaid_cuts = {}
        found = self.overlaid_cuts.get(key)
        if found is None:
            out: list[Cut] = []
            for entry in self.scripts:
                text = stand_ins.get(entry[0])
                if text is not None:
                    out.extend(cuts_in(text, entry[0]))
                else:
                    out.extend(self.cut.get(entry[0], ()))
            found = self.overlaid_cuts[key] = tuple(out)
        return found

    @property
    def commands(self) -> list:
        return [command for entry in self.scripts for command in self._commands_of(entry)]


def _may_cut(entry: list) -> bool:
    """Whether `cuts_in` reads this script entry: a shell script (rank 0) or a README."""
    return entry[1] == 0 or entry[0].endswith((".md", ".rst"))


_INDEX: dict[str, LaunchIndex] = {}  # by repository root


def clear_cache() -> None:
    """Forget the indexes built."""
    _INDEX.clear()
    _plain.cache_clear()


# A YAML file is a CI pipeline (whose steps may launch training) when it lies in a CI service's folder, is named as a
# service names its pipeline, or has "ci" as a word of its name (ci.yml, .gitlab-ci.yml, nightly-ci.yaml); never for
# the letters inside another word: recipe.yaml, precision.yaml, efficient_lora.yaml are training configs.
_CI_FOLDERS = frozenset({".github", ".gitlab", ".circleci", ".buildkite", ".azure-pipelines", ".woodpecker"})
_CI_NAMES = frozenset({".travis.yml", ".drone.yml", ".woodpecker.yml", "azure-pipelines.yml", "azure-pipelines.yaml",
                       "bitbucket-pipelines.yml", "cloudbuild.yaml", "cloudbuild.yml", "appveyor.yml", ".appveyor.yml"})
_CI_WORD = compile_later(r"(?<![a-z0-9])ci(?![a-z0-9])", re.IGNORECASE)


def is_ci_file(path: Path | str) -> bool:
    """Whether a .yml/.yaml file is a CI pipeline (see _CI_FOLDERS)."""
    parts = str(path).replace(os.sep, "/").split("/")
    name = parts[-1]
    return name in _CI_NAMES or _CI_WORD.search(name) is not None or not _CI_FOLDERS.isdisjoint(parts[:-1])


def is_launch_file(path: str) -> bool:
    name = Path(path).name
    return name == "Makefile" or name.endswith((".sh", ".bash", ".slurm", ".sbatch", ".job", ".mk", ".md")) or \
        (name.endswith((".yml", ".yaml")) and is_ci_file(path))


def _kind(path: Path | str) -> int | None:
    text = str(path)
    name = os.path.basename(text)
    for suffix, rank in SCRIPT_KINDS:
        if name == suffix or name.endswith(suffix):
            if suffix in (".yml", ".yaml"):
                return rank if is_ci_file(text) else None
            if suffix == ".txt":
                return None
            return rank
    return None


def index_for(root: str) -> LaunchIndex:
    if root not in _INDEX:
        _INDEX[root] = _build_index(Path(root))
    return _INDEX[root]


def _build_index(root: Path) -> LaunchIndex:
    scripts: list[list] = []
    files = total = 0
    truncated = False
    base = str(root)
    # Plain strings, not Path objects: a repository has thousands of folders and files to look at.
    for folder, dirs, names in os.walk(base):
        depth = 0 if folder == base else folder[len(base):].strip(os.sep).count(os.sep) + 1
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and not d.endswith(".egg-info")
                         and (not d.startswith(".") or d == ".github") and depth < MAX_DEPTH)
        for name in sorted(names):
            path = os.path.join(folder, name)
            rank = _kind(path)
            if rank is None:
                continue
            files += 1
            if files > MAX_FILES or total > MAX_TOTAL_BYTES:
                truncated = True
                break
            # Regular files only, never more than the limit: a FIFO named run.sh would block.
            data, _why = read_regular_file(path, MAX_FILE_BYTES)
            if data is None:
                continue
            total += len(data)
            scripts.append([path, rank, data, None])
        if truncated:
            break
    return LaunchIndex(str(root), scripts, files, truncated)


def commands_in(text: str, path: str, rank: int = 0, markdown: bool | None = None, bound: dict | None = None,
                via: str = "", extra_env: tuple = (), start_dir: str = "") -> list[Command]:
    """Launch-like command lines in a script, Makefile, workflow or the code blocks of a README. `bound`: the
    variables an invocation of the script sets through its arguments (`invoking.bindings`; `via` says which
    invocation, `extra_env` what else it sets, such as SLURM_NNODES, `start_dir` the folder it runs the script in)."""
    first = ("\0at" + start_dir,) if start_dir else ()
    return [Command(path, start, line, rank, env, pieces, first + where, via)
            for start, line, pieces, env, where in shell_lines(text, path, markdown, bound, extra_env)
            if has_launch_words(line)]


_CUT_BYTES = compile_later(rb"\\[ \t]+(?:#[^\n]*)?\r?\n")  # a backslash, blanks, maybe a comment, the line's end


def cuts_in(text: str, path: str) -> list[Cut]:
    """Where a backslash followed by blanks ends a launch command that its next lines were written to continue
    (`shell_lines`' cuts): the command up to the backslash names a launcher, or is itself what such a cut left of
    one (`--dataset_name x \\ ` after a cut line); and the next line holds what bash now runs as a command (not a
    blank line, a comment or a code block's end)."""
    found: list[tuple] = []
    for _ in shell_lines(text, path, cuts=found):
        pass
    lines = text.splitlines()
    starts = [0]
    for kept in text.splitlines(keepends=True):
        starts.append(starts[-1] + len(kept))
    bom = 1 if text.startswith("\ufeff") else 0
    out: list[Cut] = []
    last = -2  # the line of the last cut kept
    for start, line, column, command in found:
        if not (has_launch_words(command) or (command.startswith("-") and start == last + 1)):
            continue
        following = lines[line + 1].strip() if line + 1 < len(lines) else ""
        if not following or following.startswith(("#", "```", "~~~")):
            continue
        comment = "#" in lines[line][column + 1:]
        shift = bom if line == 0 else 0  # the mark counts in the first line's columns, in every offset
        glued = column > 0 and lines[line][column - 1] not in " \t"
        out.append(Cut(path, line, column - shift, starts[line] + column - bom, len(lines[line]) - shift, comment,
                       glued, command, following))
        last = line
    return out


def shell_lines(text: str, path: str, markdown: bool | None = None, bound: dict | None = None,
                extra_env: tuple = (), cuts: list | None = None):
    """The shell command lines of a script, Makefile, workflow or the code blocks of a README, as the shell reads
    them: (first line, the line (continuation lines and multi-line quoted strings joined), its physical lines when
    more than one, the variables set before it, the `cd`s before it). Assignments are not yielded: their values,
    expanded when assigned (as the shell does), are in the variables of the lines after them; one made inside a
    conditional block (`if`, `case`, a loop) that changes a value set before it leaves the variable unknown, unless
    it is one of the script's parameters that `bound` (an invocation's arguments) decides.

    A line continues only as bash continues it (`_scan`): an unquoted (or double-quoted) backslash that is the
    line's very last character. A backslash followed by blanks (and perhaps a comment) escapes a blank, and bash
    ends the command at that newline: the command is read up to the backslash, the next line is a command of its
    own, and `cuts` (when given) gets (the command's first line, the line of the backslash, its column, the command
    up to it). Whole-line comments keep the textual reading of commented examples (`# cmd \\` then `#  args`)."""
    markdown = path.endswith((".md", ".rst")) if markdown is None else markdown
    env: dict[str, str] = dict(extra_env)
    if bound:
        env.update({k: v for k, v in bound.items() if k.isdigit() and v is not None})
    cds: list[str] = []  # the `cd X` seen so far (a README's shell session, a script's own cd)
    step_dir = ""  # a CI step's `working-directory: X`
    workflow = path.endswith((".yml", ".yaml"))
    makefile = os.path.basename(path) == "Makefile" or path.endswith(".mk")
    lines = text.splitlines()
    in_block = not markdown
    depth = 0  # conditional blocks (if / case / loops) open
    i = 0
    while i < len(lines):
        raw = lines[i]
        if markdown and raw.lstrip().startswith(("```", "~~~")):
            in_block = not in_block
            i += 1
            continue
        if not in_block and not (markdown and raw.startswith("    ")):
            i += 1
            continue
        start = i
        joined = raw.rstrip()
        if raw.lstrip().startswith("#"):
            # a commented example (`# accelerate launch ... \` then `#   train.py ...`): read as the text it shows
            while i + 1 < len(lines) and joined.endswith("\\"):
                joined = joined[:-1] + " " + lines[i + 1].strip()
                i += 1
        else:
            quote, continues, cut = _scan(raw)
            offset = 0  # where the physical line last scanned begins in `joined`
            while i + 1 < len(lines):
                piece = lines[i + 1].lstrip()
                if continues:  # bash removes the backslash-newline (`a\` + `b` is `ab`)
                    glued = len(joined) > 1 and not joined[-2].isspace() and lines[i + 1][:1] not in (" ", "\t")
                    joined = joined[:-1] + ("" if glued else " ")
                elif quote == '"' and not workflow and not makefile and in_block and i - start < MAX_JOINED and \
                        not piece.startswith(("```", "~~~")):
                    joined += " "  # a quoted string spans lines (`export CMD=" ... "`)
                else:
                    break
                offset = len(joined)
                joined += piece
                quote, continues, cut = _scan(piece, quote)
                i += 1
            if cut >= 0:
                # `\` then blanks: bash reads an escaped blank and ends the command at the newline
                if cuts is not None:
                    physical = lines[i]
                    column = cut + (len(physical) - len(physical.lstrip()) if i > start else 0)
                    cuts.append((start, i, column, joined[:offset + cut].strip().lstrip("$> ").strip()))
                joined = joined[:offset + cut]
        i += 1
        pieces = tuple(lines[start:i]) if i - start > 1 else ()
        line = joined.strip().lstrip("$> ").strip()
        if workflow:
            wd = _WORKING_DIR.match(line)
            if wd:
                step_dir = wd.group(1).strip("\"'")
                continue
            if line.startswith("- "):
                step_dir = ""  # the next step
        if line.startswith("- "):  # a YAML list item in a workflow: `- run: accelerate launch ...`
            line = line[2:]
        if line.startswith(("run", "script", "command")):
            line = re.sub(r"^(run|script|command)\s*:\s*[|>]?\s*", "", line)
        if line.startswith("#") and "trainlint" not in line:
            line = line.lstrip("#").strip()  # commented examples (`# tune run ... --config X`) still tell
        elif not markdown and not workflow and not makefile:
            depth = max(0, depth + len(_OPENS.findall(line)) - len(_CLOSES.findall(line)))
        assign = _ASSIGN.match(line) if "=" in line else None
        if assign and not has_launch_words(line[assign.end():]):
            pairs, rest = [(assign.group(1), assign.group(2))], line[assign.end():].strip()
            while rest and (more := _ASSIGN.match(rest)) is not None and "=" in rest.split()[0]:
                pairs.append((more.group(1), more.group(2)))
                rest = rest[more.end():].strip()
            if not rest or rest.startswith((";", "&&", "#")) or line.lstrip().startswith("export "):
                for name, raw_value in pairs:
                    _assign(env, name, raw_value, depth, bound)
                continue
            # `NAME=value command ...`: the value is the command's environment alone (`N=4 bash train.sh`)
        if makefile:
            cds.clear()  # each recipe line runs in a shell of its own
        change = _CD.match(line) if "cd" in line or "pushd" in line or "popd" in line else None
        if change:
            if change.group(1) == "popd":
                cds.append("\0popd")
            else:
                cds.append(_expand(_cd_target(change.group(2)), env))
            line = line[change.end():].strip()
            if not line:
                continue
        where = tuple(cds[-16:]) + ((step_dir,) if step_dir else ())
        yield start, line, pieces, tuple(env.items())[-MAX_VARIABLES:], where


MAX_JOINED = 64  # physical lines a quoted string may span into one command (continuation lines: any number)
MAX_VARIABLES = 128  # variables kept per command (the last set)
# A statement that opens / closes a conditional block (`if`, `case`, `for`, `while`, `until`; `fi`, `esac`, `done`).
_OPENS = compile_later(r"(?:^|[;&|(]\s*|\b(?:then|do|else)\s+)(?:if|case|for|while|until|select)\b")
_CLOSES = compile_later(r"(?:^|[;&|]\s*|\b(?:then|do|else)\s+)(?:fi|esac|done)\b")


def _scan(text: str, quote: str = "") -> tuple[str, bool, int]:
    """One physical line as bash reads it, from inside `quote` ("", "'" or '"': what the lines before left open):
    (the quote still open at its end, whether the line continues, the column of a cut or -1).

    bash (Bash Reference Manual, 3.1.2.1 Escape Character: "If a \\newline pair appears, and the backslash itself is
    not quoted, the \\newline is treated as a line continuation"; 3.1.2.3: inside double quotes too) continues a line
    only when an unquoted or double-quoted backslash is its very last character: not `\\\\` (an escaped backslash),
    not in single quotes, not in a comment (a `#` that begins a word). A cut: an unquoted backslash that escapes a
    blank, after which the line holds only blanks, or blanks and a comment (`--x y \\  # note`): the escaped blank is
    an argument of its own and the newline ends the command. The lines are split without their line ending, so
    `\\` before CRLF continues: bash itself reads `\r` as a character (in a CRLF file no backslash continues a
    line and each line's last word ends in `\r`), but a CRLF checkout (git's core.autocrlf) of an LF file is the
    likelier reading, and the file fails in bash at its first line whatever its continuations."""
    i, n = 0, len(text)
    cut = -1
    word_start = True  # an unquoted `#` here begins a comment
    while i < n:
        c = text[i]
        if quote == "'":
            if c == "'":
                quote = ""
            i += 1
            continue
        if c == "\\":
            if i + 1 == n:
                return quote, True, -1
            cut = i if not quote and text[i + 1] in " \t" else -1
            i += 2
            word_start = False
            continue
        if quote == '"':
            if c == '"':
                quote = ""
            i += 1
            continue
        if c == "#" and word_start:
            return quote, False, cut  # a comment to the line's end
        if c in "'\"":
            quote = c
            cut = -1
        elif c not in " \t":
            cut = -1
        word_start = c in " \t;&|()<>"
        i += 1
    return quote, False, cut


def _assign(env: dict, name: str, raw: str, depth: int, bound: dict | None) -> None:
    """Record `name=raw` as the shell does: the value expanded now (single quotes kept literal). A parameter an
    invocation binds takes the invocation's value where its assignment reads a positional parameter (or, with the
    option not given, keeps the value before it); inside a conditional block, a value that changes one set before
    becomes unknown (which branch runs is not followed)."""
    value = raw[1:-1] if len(raw) >= 2 and raw[0] == raw[-1] == "'" else _expand(raw.strip("\""), env)
    if bound and name in bound and _POSITIONAL.search(raw):
        if bound[name] is not None:
            env[name] = bound[name]
        return
    if depth and name in env and env[name] != value:
        value = "\0"
    env[name] = value


_POSITIONAL = compile_later(r"\$\{?[0-9#@*]")


_CD = compile_later(
    r"^\(?\s*(cd|pushd|popd)\b\s*((?:\"[^\"]*\"|'[^']*'|\$\([^)]*\)[^\s;&|)]*|[^\s;&|)])*)\s*(?:&&|;|$)\s*")
_WORKING_DIR = compile_later(r"^(?:-\s+)?working-directory\s*:\s*(\S+)\s*$")

_UNQUOTE = str.maketrans("", "", "\"'\\")


def may_name(command: Command, config: Path) -> bool:
    """False only when the command cannot name `config` (a cheap superset of what parse_command + names_config
    match; shlex's split costs about half a millisecond a command): a token names it with its exact name once its
    variables are expanded, or, with a variable left unknown, as a pattern that ends in the name's own extension.
    The test is on the whole text, its quotes and backslashes dropped, its variables expanded: a token's characters
    are contiguous there. A brace expansion, or a name holding a quote or backslash, is always parsed."""
    name = config.name
    if name in command.text or "{" in command.text or any(c in name for c in "\"'\\"):
        return True
    plain = _plain(command)
    return name in plain or ("\0" in plain and bool(config.suffix) and config.suffix.lower() in plain.lower())


@functools.lru_cache(maxsize=4096)
def _plain(command: Command) -> str:
    """`may_name`'s text of a command (its quotes and backslashes dropped, its variables expanded): the same for
    every config looked up, and each config of a repository is tested against each command that holds a variable."""
    return _expand(command.text.translate(_UNQUOTE), dict(command.env))
