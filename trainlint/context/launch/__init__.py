"""How a config is launched and what the launch decides: world size, nodes, sharding, precision, and the
accelerate / DeepSpeed config that applies.

`Launch` is the answer for one file. Each value is a `Setting` with an `Origin` (kind "launch": a launch
command found in the repository, an accelerate config it names, the recipe itself, or a `launch` entry in the
settings), so rules and the estimate can say which command decided it. `Launch()` (the default) means no launch
was found: everything in it is unknown, and a verdict that depends on it says what it assumed.

The modules, in the order a lookup uses them:

- `index`: the repository's files that may hold launch commands, the command lines in each, and the prefilters
  that skip what cannot name a config;
- `parsing`: one command line read per launcher (`parse_command` -> `Parsed`), and the arguments it passes its
  script as that script's parser reads them (`script_arguments`);
- `resolving`: shell variables and brace expansions, the folders a command runs in (`working_dirs`) and the files
  its relative paths name from there (`names_config`, `bases_of`);
- `deciding`: what one command decides (`from_parsed` -> `Launch`, with the accelerate config it names), and a
  declared `launch` setting (`declared`);
- `finding`: the launch of a config file (`find`: the repository's commands that name it, else a usage line in its
  comments);
- `applying`: a launch laid over a plan (`apply`, `view_overrides`) and whether the sharding is known;
- `values`: `Launch` and `Command`, the values the others pass.
"""

from __future__ import annotations

from trainlint.context.launch.applying import apply, sharding_known, view_overrides
from trainlint.context.launch.deciding import (declared, for_dialect, from_accelerate_file, from_command_line,
                                               from_parsed, is_cached_config, read_accelerate_config)
from trainlint.context.launch.finding import (_names_file, clear_cache, cuts_for, find, find_in_comments,
                                              forget_lookups, parsed_command)
from trainlint.context.launch.index import (LAUNCH_WORDS, SKIP_DIRS, LaunchIndex, _build_index, _LAUNCH_LITERALS,
                                            commands_in, has_launch_words, index_for, is_launch_file, may_name)
from trainlint.context.launch.parsing import (Parsed, accelerate_option_for, accelerate_overrides, parse_command,
                                              script_arguments)
from trainlint.context.launch.resolving import (MAX_BRACE_WORDS, _resolve_path, bases_for, bases_of, brace_words,
                                                names_config, working_dirs)
from trainlint.context.launch.values import NO_LAUNCH, Command, Cut, Launch
from trainlint.plan import Origin

__all__ = [
    "LAUNCH_WORDS", "MAX_BRACE_WORDS", "NO_LAUNCH", "SKIP_DIRS", "Command", "Cut", "Launch", "LaunchIndex", "Origin",
    "Parsed", "_LAUNCH_LITERALS", "_build_index", "_names_file", "_resolve_path", "accelerate_option_for",
    "accelerate_overrides", "apply", "bases_for", "bases_of", "brace_words", "clear_cache", "commands_in",
    "cuts_for", "declared", "find", "find_in_comments", "for_dialect", "forget_lookups", "from_accelerate_file",
    "from_command_line",
    "from_parsed", "has_launch_words", "index_for", "is_cached_config", "is_launch_file", "may_name",
    "names_config", "parse_command", "parsed_command", "read_accelerate_config", "script_arguments", "sharding_known",
    "view_overrides", "working_dirs",
]
