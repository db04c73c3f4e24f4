"""The values a launch is read into: `Launch`, what the launch of one file decides, and `Command`, one launch
command line found in a file of the repository."""

from __future__ import annotations

from typing import NamedTuple

from trainlint.plan import Origin, Setting

NO_LAUNCH = Origin("default", note="no launch command names this file")


def _unknown() -> Setting:
    return Setting(None, NO_LAUNCH)


class Launch(NamedTuple):
    """What the launch of one file decides, each value with where it was decided; `Launch()`: none found."""

    launcher: str = ""  # accelerate | torchrun | deepspeed | tune | litgpt | axolotl | llamafactory | python | recipe | settings | ""
    command: str = ""  # the command line as written (joined continuation lines), when one was found
    origin: Origin = NO_LAUNCH  # where the command / setting was found (file and line)
    script: str = ""  # the script or module the launch runs (scripts/run_sft.py, -m axolotl.cli.train, a recipe)
    num_processes: Setting = _unknown()  # world size (GPUs x nodes, total processes), int or None
    num_machines: Setting = _unknown()  # nodes, int or None
    sharding: Setting = _unknown()  # "none" | "zero1" | "zero2" | "zero3" | "fsdp" | None (unknown)
    mixed_precision: Setting = _unknown()  # "no" | "bf16" | "fp16" | "fp8" | None
    accelerate_config: str = ""  # the accelerate config file that applies (resolved path), when any
    deepspeed_config: str = ""  # a DeepSpeed JSON the launch names (--deepspeed_config_file / --deepspeed)
    extra: tuple = ()  # (name, value): offload_optimizer / offload_param devices, fsdp_strategy
    others: int = 0  # further launch commands that name the file (the first, by script kind and path, decides)
    # The script's own command-line arguments, as its parser reads them: (key, Setting) with the raw value (a
    # string, "true" for a bare flag, None when a shell variable left it unknown) and the script file and line
    # that set it. Keys are field names (`gradient_accumulation_steps`; dotted for LitGPT / torchtune nesting).
    arguments: tuple = ()
    # How the script's parser combines a config file with those arguments: "override" (the config file, then
    # the command line wins: TrlParser --config, ms-swift, LLaMA-Factory, axolotl, torchtune, LitGPT),
    # "command-line" (no config file: HfArgumentParser reads the command line alone, every other field keeps
    # its default), "file" (HfArgumentParser's parse_yaml_file: the file alone), "" (unknown).
    parser_reads: str = ""
    # The parser class the script's own text names, when it differs from its dialect's: "h4" (alignment-handbook's
    # H4ArgumentParser: HfArgumentParser.parse_yaml_file, so unknown keys stop it the HfArgumentParser way).
    script_parser: str = ""
    script_config: str = ""  # the config file the script reads (as written), when it names one
    # How the launch names the linted file: "config" (the script's config), "hf-deepspeed" (`--deepspeed X`, the
    # TrainingArguments field), "deepspeed" (`--deepspeed_config X`, `--deepspeed_config_file X`), "accelerate"
    # (`--config_file X` of accelerate launch / trl).
    role: str = ""
    autotuning: str = ""  # "run" | "tune": `deepspeed --autotuning ...` (the autotuner writes each experiment's config)
    script_args: tuple = ()  # the tokens after the script, as the command has them (to read them again per parser)
    command_lines: tuple = ()  # the physical lines of the command (to say on which line an argument is)
    other_scripts: tuple = ()  # the scripts the other launch commands that name the file run
    other_arguments: tuple = ()  # per other launch command: ((key, raw value), ...) it passes its script
    # Where the command runs is not certain (a script in a subfolder run from any of the folders above it, a README
    # below the root): the relative path matched from one of several candidate working directories, so the launch
    # is an assumption, said here; a finding it makes an error is then at most a warning (engine.calibrate).
    assumed: str = ""
    cwd: str = ""  # the directory the command runs in, when certain (relative paths in it are read from there)
    dirs: tuple = ()  # the directories it may run in, the likeliest first (launch.resolving.working_dirs)
    # The accelerate config keys (dotted: `num_processes`, `deepspeed_config.zero_stage`) that every accelerate
    # launch naming the file as its --config_file sets on its own command line: the file's value is never used.
    overrides: tuple = ()
    # The repository's launch commands that a backslash followed by blanks cuts short (index.Cut), whatever file
    # they launch: read with the repository (never for a file checked alone).
    cuts: tuple = ()

    def get(self, name: str):
        return dict(self.extra).get(name)

    def agreed(self, key: str) -> bool:
        """Whether every other launch command that names the file passes the script the same `key` (or, like
        this one, none): then the first launch's value is the run's whichever command is used."""
        mine = self.argument(key)
        value = mine.value if mine is not None else None
        return all(dict(other).get(key) == value for other in self.other_arguments)

    def argument(self, key: str) -> Setting | None:
        """The script argument `key` the launch passes (its Setting), None when the command line does not set it."""
        for name, setting in self.arguments:
            if name == key:
                return setting
        return None

    @property
    def found(self) -> bool:
        return bool(self.launcher)

    def describe(self) -> str:
        if not self.found:
            return "none found (" + NO_LAUNCH.note + ")"
        where = self.origin.path + (f":{self.origin.span.start.line + 1}" if self.origin.span else "")
        parts = [self.launcher]
        if self.num_processes.value is not None:
            parts.append(f"{self.num_processes.value} processes")
        if self.num_machines.value is not None:
            parts.append(f"{self.num_machines.value} node(s)")
        if self.sharding.value is not None:
            parts.append(f"sharding {self.sharding.value}")
        if self.mixed_precision.value is not None:
            parts.append(f"mixed precision {self.mixed_precision.value}")
        if self.accelerate_config:
            parts.append(f"accelerate config {self.accelerate_config}")
        if self.autotuning:
            parts.append(f"DeepSpeed autotuning ({self.autotuning})")
        return ", ".join(parts) + (f" ({where})" if where else "") + (f"; assumed: {self.assumed}" if self.assumed else "")


class Command(NamedTuple):
    """One launch command line found in a file of the repository, with what the file set before it."""

    path: str  # the file holding it
    line: int  # 0-based first line
    text: str  # continuation lines joined
    rank: int  # the kind of file holding it, in index.SCRIPT_KINDS order (a script before a README)
    env: tuple = ()  # (name, value) assignments seen in the file before it
    lines: tuple = ()  # the physical lines it spans, as written (to say on which line an argument is)
    cd: tuple = ()  # the `cd X` (and CI `working-directory: X`) before it in the file, in order, as written
    via: str = ""  # the invocation of the script that set its parameters (`README.md:12: sbatch train.slurm ...`)


class Cut(NamedTuple):
    """A launch command that a backslash followed by blanks ends where its next lines were written to continue it
    (bash reads `\\ ` as an escaped blank, then ends the command at the newline)."""

    path: str  # the file holding it
    line: int  # 0-based line of the backslash
    column: int  # the backslash's column
    offset: int  # the backslash's offset in the file's text (a byte-order mark left out)
    end: int  # the length of that line (the blanks, or blanks and a comment, after the backslash end there)
    comment: bool  # a comment follows the blanks
    glued: bool  # the backslash follows a word's last character (`x\ `: the word gets a blank; else `' '` is a word)
    command: str  # the command as bash runs it, up to the backslash
    following: str  # the next line, which bash runs as a command of its own (stripped)
