"""Launch command lines read as bash reads them (continuations, escaped blanks, comments, quotes), and TL012: a
backslash followed by blanks that ends a launch command its next lines were written to continue."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from trainlint import engine
from trainlint.context import launch as L
from trainlint.context.launch import index
from trainlint.context.settings import Settings
from trainlint.fixes.apply import compute_fixes

from ctxrepo import SFT, make_repo


def commands(text: str, path: str = "run.sh") -> list[tuple[int, str]]:
    return [(start, line) for start, line, *_ in index.shell_lines(text, path)]


def cuts(text: str, path: str = "run.sh") -> list[tuple[int, int, str]]:
    found: list = []
    list(index.shell_lines(text, path, cuts=found))
    return [(line, column, command) for _start, line, column, command in found]


# ---- bash's continuation rule --------------------------------------------------------------------------------

def test_a_backslash_then_blanks_ends_the_command():
    text = "torchrun --nproc_per_node 8 train.py \\\n    --output_dir out \\  \n    --max_prompt_length 512 \\\n    --bf16\n"
    assert commands(text) == [(0, "torchrun --nproc_per_node 8 train.py  --output_dir out"),
                              (2, "--max_prompt_length 512  --bf16")]
    assert cuts(text) == [(1, 21, "torchrun --nproc_per_node 8 train.py  --output_dir out")]


def test_a_backslash_then_blanks_and_a_comment_ends_it_too():
    text = "torchrun train.py \\\n    --dataset_name x \\  #https://hf.co/datasets/x\n    --max_prompt_length 1024\n"
    assert [c[0] for c in commands(text)] == [0, 2]
    assert cuts(text)[0][:2] == (1, 21)


@pytest.mark.parametrize("text,joined", [
    ("python train.py a \\\\\n--x\n", False),  # an escaped backslash
    ("python train.py a # note \\\n--x\n", False),  # a backslash inside a comment
    ("python -c 'print(1)' a\\\n--x\n", True),  # after a closed quote: continues
    ("python train.py \"a \\\nb\"\n", True),  # inside double quotes the backslash-newline is removed
    ("python train.py \\\n--x\n", True),
])
def test_continuation_only_where_bash_continues(text, joined):
    assert (len(commands(text)) == 1) is joined
    assert cuts(text) == []


def test_a_backslash_glued_to_the_next_line_joins_the_words():
    assert commands("python train.py --output_dir out\\\nput\n") == [(0, "python train.py --output_dir output")]


def test_an_escaped_blank_inside_quotes_or_followed_by_a_word_is_no_cut():
    assert cuts("python train.py \"a \\  \nb\"\n") == []  # inside double quotes: a literal backslash
    assert cuts("python train.py 'a \\  \nb'\n") == []
    assert cuts("python train.py a\\ b\n--x\n") == []  # `a\ b`: one word with a space, then the line ends


def test_commented_examples_keep_their_textual_reading():
    text = "# accelerate launch --config_file fsdp.yaml \\\n#   train.py --bf16\n"
    assert commands(text) == [(0, "accelerate launch --config_file fsdp.yaml  #   train.py --bf16")]


def test_crlf_line_endings():
    """bash reads `\\r` as a character (a CRLF file continues no line); trainlint reads the line ending as the line's
    end (a CRLF checkout of an LF file), so `\\` before CRLF continues and `\\  ` before CRLF cuts."""
    assert commands("torchrun train.py \\\r\n    --bf16\r\n") == [(0, "torchrun train.py  --bf16")]
    text = "torchrun train.py \\  \r\n    --bf16\r\n"
    assert [c[0] for c in commands(text)] == [0, 1]
    [cut] = index.cuts_in(text, "run.sh")
    assert (cut.line, cut.column, cut.offset, cut.end) == (0, 18, 18, 21)


@pytest.mark.skipif(shutil.which("bash") is None, reason="no bash here")
def test_bash_itself_agrees(tmp_path):
    """The readings above, checked against bash: the commands it runs are the ones shell_lines yields."""
    script = tmp_path / "t.sh"
    script.write_text("echo a \\  \n--x y\necho b \\\\\necho c # d \\\necho e\\\nf\n")
    proc = subprocess.run(["bash", str(script)], capture_output=True, text=True, timeout=30)
    assert proc.stdout.splitlines() == ["a  ", "b \\", "c", "ef"]
    assert "--x: command not found" in proc.stderr
    assert [line for _, line in commands(script.read_text())] == ["echo a", "--x y", "echo b \\\\", "echo c # d \\",
                                                                   "echo ef"]


# ---- which cuts are reported -----------------------------------------------------------------------------------

README = """# Train

```bash
cd src/r1-v
torchrun --nproc_per_node="8" \\
    src/open_r1/grpo.py \\
    --model_name_or_path Qwen/Qwen2-VL-2B-Instruct \\ 
    --dataset_name leonardPKU/clevr_cogen_a_train \\  
    --deepspeed local_scripts/zero3.json \\
    --max_prompt_length 512 \\
    --num_generations 8   # a comment \\  
```
"""


def test_cuts_chain_through_the_lines_a_cut_left():
    found = index.cuts_in(README, "README.md")
    assert [(c.line, c.following.split()[0]) for c in found] == [(6, "--dataset_name"), (7, "--deepspeed")]
    assert found[1].command == "--dataset_name leonardPKU/clevr_cogen_a_train" and not found[1].comment


def test_no_cut_reported_where_nothing_follows_or_nothing_is_launched():
    assert index.cuts_in("torchrun train.py --bf16 \\  \n\n--x\n", "run.sh") == []  # a blank line ends it anyway
    assert index.cuts_in("torchrun train.py --bf16 \\  \n# done\n", "run.sh") == []
    assert index.cuts_in("```\ntorchrun train.py --bf16 \\  \n```\n", "README.md") == []
    assert index.cuts_in("echo start \\  \n--x\n", "run.sh") == []  # no launcher
    assert index.cuts_in("--x 1 \\  \n--y 2\n", "run.sh") == []  # a fragment no launch cut left
    assert index.cuts_in("# torchrun train.py \\  \n--x\n", "run.sh") == []  # a whole-line comment


# ---- TL012 -----------------------------------------------------------------------------------------------------

SCRIPT = """torchrun --nproc_per_node="8" \\
    src/open_r1/grpo.py \\
    --config recipes/sft.yaml \\
    --dataset_name x \\  #https://huggingface.co/datasets/x
    --max_prompt_length 1024 \\
    --bf16
"""


def _tl012(result) -> list:
    return sorted((d for d in result.diagnostics if d.code == "TL012"), key=lambda d: (d.path, d.span.start.line))


def test_tl012_in_scripts_and_readmes_of_the_repository(tmp_path):
    repo = make_repo(tmp_path, {"README.md": README, "src/scripts/run.sh": SCRIPT, "src/r1-v/setup.py": "",
                                "src/r1-v/recipes/sft.yaml": SFT, "src/scripts/plain.sh": "torchrun a.py \\\n --x\n"})
    result = engine.check_path(str(repo / "src/r1-v/recipes/sft.yaml"), Settings())
    found = _tl012(result)
    assert [(d.path.replace(str(repo) + "/", ""), d.span.start.line + 1, d.span.start.column + 1, d.severity.value)
            for d in found] == [("README.md", 7, 52, "error"), ("README.md", 8, 51, "error"),
                                ("src/scripts/run.sh", 4, 22, "error")]
    assert found[0].message.endswith("runs `--dataset_name` as a command")
    assert "--dataset_name: command not found" in found[0].detail and len(found[0].message) <= 120
    assert [len(d.fixes) for d in found] == [1, 1, 0]  # a comment after the blanks: no fix
    assert "Move the comment above the command" in found[2].detail


def test_the_launch_is_read_up_to_the_cut(tmp_path):
    repo = make_repo(tmp_path, {"run.sh": SCRIPT.replace("src/open_r1/", ""), "grpo.py": "", "recipes/sft.yaml": SFT})
    result = engine.check_path(str(repo / "recipes/sft.yaml"), Settings())
    assert result.launch.found and result.launch.origin.path.endswith("run.sh")
    assert result.launch.argument("dataset_name").value == "x"
    assert result.launch.argument("max_prompt_length") is None  # on the line bash runs as a command of its own


def test_tl012_warning_when_the_next_line_may_be_a_command(tmp_path):
    repo = make_repo(tmp_path, {"train.sh": "torchrun --nproc_per_node 8 \\  \n    train.py --config sft.yaml\n",
                                "sft.yaml": SFT})
    [d] = _tl012(engine.check_path(str(repo / "sft.yaml"), Settings()))
    assert d.severity.value == "warning" and "(`train.py --config sft.yaml`)" in d.detail


def test_tl012_not_read_without_the_repository(tmp_path):
    repo = make_repo(tmp_path, {"run.sh": SCRIPT, "recipes/sft.yaml": SFT})
    result = engine.check_path(str(repo / "recipes/sft.yaml"), Settings(use_project_config=False))
    assert _tl012(result) == []


def test_tl012_fix_deletes_the_blanks(tmp_path):
    repo = make_repo(tmp_path, {"README.md": README, "sft.yaml": SFT})
    config = str(repo / "sft.yaml")
    outcome = compute_fixes([config], lambda p: engine.check_path(p, Settings()), unsafe=False)
    assert outcome.problems == []
    fixed = outcome.fixed[str(repo / "README.md")]
    assert fixed == README.replace("Instruct \\ \n", "Instruct \\\n").replace("train \\  \n", "train \\\n")
    L.clear_cache()
    assert index.cuts_in(fixed, "README.md") == []


def test_tl012_says_what_the_escaped_blank_becomes(tmp_path):
    repo = make_repo(tmp_path, {"run.sh": "torchrun train.py --config sft.yaml --output_dir out\\ \n    --bf16\n",
                                "sft.yaml": SFT})
    [d] = _tl012(engine.check_path(str(repo / "sft.yaml"), Settings()))
    assert "(the word before it ends in a blank)" in d.detail and d.severity.value == "error"
    [d] = _tl012(engine.check_path(str(make_repo(tmp_path / "b", {"run.sh": SCRIPT, "sft.yaml": SFT}) / "sft.yaml"),
                                   Settings()))
    assert "(an extra argument ' ')" in d.detail
