r"""TL012 launch-line-cut: a backslash followed by blanks ends a launch command its next lines continue.

**What**: a line of a launch command in a shell script or a README code block (`torchrun ...`, `accelerate launch
...`, `python train.py ...`) that ends with a backslash followed by spaces or tabs, perhaps then a comment
(`--dataset_name x \  ` or `--dataset_name x \  # the dataset`), where the next line carries on the command
(`--max_prompt_length 512 \`). It is checked in the scripts and READMEs of the repository of any config linted with
its repository (not with `--isolated`), whichever file the command launches; a README's blocks are what people copy
into bash.

**Why**: bash continues a line only when an unquoted backslash is its very last character: "If a \newline pair
appears, and the backslash itself is not quoted, the \newline is treated as a line continuation" (Bash Reference
Manual, 3.1.2.1 Escape Character). A backslash followed by a blank escapes that blank instead: the launch gets an
extra argument `' '` (or, `x\ `, a word ending in a blank) and the command ends at the newline, so every argument on the lines after it is dropped (the
script runs with their defaults, or stops on the stray `' '`: HfArgumentParser's "Some specified arguments are not
used by the HfArgumentParser: [' ']"). Bash then runs the next line as a command of its own; a line that begins
with `--` fails: "line 13: --max_prompt_length: command not found" (exit 127). An error when the next line begins
with `-` (it cannot be a command); a warning otherwise (the next line, run alone, may be a command). The lines are
read without their line ending: `\` before CRLF is taken as a continuation (bash itself reads `\r` as a character,
so in a CRLF file no line continues; git's `core.autocrlf` checks LF files out that way, and such a script fails in
bash at its first line whatever its continuations). Whole-line comments (`# torchrun ... \  `) are not checked.

**Evidence**: bash's manual, 3.1.2.1 Escape Character (quoted above), and bash 5.2.15 itself: a file `t.sh` holding
`echo a \  ` then `--x y` prints `a  ` (the escaped blank is an argument) and then "t.sh: line 2: --x: command not
found" (tests/context/test_launch_lines.py runs bash on such a file where bash is installed). First message:
"--max_prompt_length: command not found".

**Example**: `    --dataset_name leonardPKU/clevr_cogen_a_train \  ` (two spaces after the backslash) →
`    --dataset_name leonardPKU/clevr_cogen_a_train \`.

**Fix** (safe): delete the blanks after the backslash. None where a comment follows them: a comment cannot sit
inside a continued command (move it above the command, then delete the rest of the line).
"""

from __future__ import annotations

import os

from trainlint.diagnostics import Edit, Fix, Pos, Severity, Span
from trainlint.rules.base import LintContext, Rule

RULE = Rule("TL012", "launch-line-cut", Severity.ERROR,
            "A backslash followed by blanks ends a launch command that its next lines continue",
            framework="bash", evidence="Bash Reference Manual, 3.1.2.1 Escape Character",
            raises="{word}: command not found")

MAX_SHOWN = 40  # characters of the next line shown


def check(ctx: LintContext):
    doc_path = ctx.document.path or ""
    for cut in ctx.launch.cuts:
        shown = cut.path
        if doc_path and not os.path.isabs(doc_path):
            try:
                shown = os.path.relpath(cut.path)
            except ValueError:
                shown = cut.path
        word = cut.following.split()[0] if cut.following.split() else cut.following
        if len(word) > MAX_SHOWN:
            word = word[:MAX_SHOWN] + "..."
        certain = cut.following.startswith("-")
        span = Span(Pos(cut.line, cut.column, cut.offset), Pos(cut.line, cut.end, cut.offset + cut.end - cut.column))
        fixes: tuple[Fix, ...] = ()
        if not cut.comment:
            blanks = Span(Pos(cut.line, cut.column + 1, cut.offset + 1), span.end)
            fixes = (Fix("delete the blanks after the backslash", (Edit(shown, blanks, ""),)),)
        rest = cut.following if len(cut.following) <= 80 else cut.following[:80] + "..."
        runs = (f"bash then runs the next line as a command: \"{word}: command not found\" (exit 127)" if certain else
                f"bash then runs the next line (`{rest}`) as a command of its own")
        extra = "the word before it ends in a blank" if cut.glued else "an extra argument ' '"
        how = ("Delete the blanks after the backslash." if not cut.comment else
               "Move the comment above the command and end the line with the backslash.")
        yield RULE.diagnostic(
            shown, span,
            f"`\\` followed by a blank does not continue the line: bash ends the command here and runs `{word}` "
            "as a command" if certain else
            "`\\` followed by a blank does not continue the line: bash ends the command here",
            fixes, severity=Severity.ERROR if certain else Severity.WARNING,
            detail=f"Bash continues a line only when the backslash is its very last character; here it escapes the "
                   f"blank after it ({extra}), and the command ends at the newline: "
                   f"`{cut.command[:160]}{'...' if len(cut.command) > 160 else ''}` runs without the arguments on "
                   f"the lines after it, and {runs}. {how}")
