"""trainlint._toml.loads reads TOML as tomllib does: the same dict for every document its own reader takes, and
tomllib's value or error for everything else (the reader never accepts what tomllib rejects)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from trainlint import _toml

try:  # Python 3.11+
    import tomllib
except ModuleNotFoundError:  # Python 3.10: the dependency it falls back to
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent

VALID = [
    "", "a = 1", "a = -0\nb = +17\nc = 1_000", "f = 1.5\ng = -2e-3\nh = 6.626e+34\ni = 1_0.2_5", 'k = "v" # comment',
    "b1 = true\nb2 = false", "'lit.key' = 'C:\\\\path'", '"quoted key" = "\\t\\n\\\\\\"\\u00e9\\U0001F600"',
    'a.b.c = 1\na.b.d = "x"\na.e = [1, 2]', "arr = [\n  1, # one\n  2,\n]\n", "nested = [[1, 2], ['a'], [], [{x = 1}]]",
    "t = {}\nu = { a = 1, b.c = [1, {d = 2}] }", '[tool.poetry.dependencies]\npython = "^3.10"\ntorch = { version = "2.1", '
    'optional = true }', "[[package]]\nname = 'a'\n[[package]]\nname = 'b'\n[package.source]\nregistry = 'x'",
    "[a.b]\nx = 1\n[a]\ny = 2", "[a]\n[a.b]\n[a.c]\nz = 3", '[[a.b]]\n[[a.b]]\nq = 1\n[a.b.c]\nr = 2',
    's = """\nline one\n  line two"""\nt = \'\'\'\nraw \\ text\'\'\'', 'u = """trimmed \\\n    continues"""',
"w = 'a'\r\nx = 'b'\r\n", '"" = 1\n[x.""]\na = 2', "k = 'v'\t# tab before comment",
    '[ spaced . header ]\n  indented = "yes"', "x.'y'.\"z\" = 1",
]
INVALID = [
    "a = ", "a = 1\na = 2", "[a]\n[a]", "a = 1 b = 2", "a = [1, 2", "a = {x = 1,}", "a = {x = 1\n}", 'a = "\\q"',
    'a = "unterminated', "a = 01", "a = 1.", "a = .5", "[a]\nb = 1\n[a.b]", "a = [1]\n[[a]]", "[[a]]\n[a]",
    "a.b = 1\n[a.b]", "a = 'x'\na.b = 1", "a = \x00", "= 1", "a = 1 # \x01", 'a = "\\ud800"', "a = tru", "a = 1_",
    "a = 1__0", "[a]]", "[[a]", "a = 'line\nbreak'", "a\r= 1", "t = {a = 1}\nt.b = 2", "[t]\nx = {a = 1}\n[t.x]",
]
FALLBACK_VALID = ["d = 1979-05-27", "t = 07:32:00", "dt = 1979-05-27T07:32:00Z", "h = 0xDEAD_BEEF", "o = 0o755",
                  "b = 0b1101", "x = inf\ny = -nan", "[fruit]\napple.color = 'red'\n[fruit.apple.texture]\nsmooth = true",
                  'v = """ends with a quote\\""""', 'q = """two quotes before the end"""""']


def _outcome(loads, text):
    try:
        return ("ok", repr(loads(text)))
    except tomllib.TOMLDecodeError:
        return ("error",)


def _fast(text: str):
    """The own reader's result, or None where it hands the text to tomllib."""
    try:
        return _toml._Reader(text.replace("\r\n", "\n")).document()
    except (_toml._Unsupported, IndexError, RecursionError):
        return None


@pytest.mark.parametrize("text", VALID)
def test_read_here_as_tomllib_reads_it(text):
    assert _fast(text) is not None, "the own reader should take this"
    assert repr(_fast(text)) == repr(tomllib.loads(text))
    assert _toml.loads(text) == tomllib.loads(text)


@pytest.mark.parametrize("text", INVALID)
def test_what_is_not_toml_1_0_goes_to_tomllib(text):
    """Errors in TOML 1.0; tomli 2.3+ (Python 3.10's) reads TOML 1.1, which takes a few of them (newlines and a
    trailing comma in an inline table): whichever it is, the result is the installed parser's."""
    assert _fast(text) is None
    assert _outcome(_toml.loads, text) == _outcome(tomllib.loads, text)


@pytest.mark.parametrize("text", FALLBACK_VALID)
def test_the_rest_is_tomllib_s(text):
    assert _fast(text) is None
    assert repr(_toml.loads(text)) == repr(tomllib.loads(text))


def _repository_toml_texts() -> list[str]:
    paths = [p for p in (ROOT / "tests").rglob("*") if p.name.endswith((".toml", ".lock")) or p.name == "Pipfile"]
    texts = [p.read_text(encoding="utf-8") for p in paths + [ROOT / "pyproject.toml"]]
    assert len(texts) >= 10
    return texts


def test_real_files_and_mutations_of_them_read_as_tomllib_reads_them():
    """Every TOML file of this repository (pyproject.toml, the real-world repositories' pyproject/uv.lock files)
    reads the same; so does each of a few thousand random mutations of them (deleted, inserted and replaced
    characters, TOML's punctuation included) that the reader takes, and it takes none that tomllib rejects."""
    rng = random.Random(20261201)
    alphabet = list("[]{}=,.\"'#\n \t\\ab01-_+e:") + ['"""', "'''", "\r\n", "\r", "[[", "]]", "\x7f", "\x00", "é"]
    read_here = 0
    for text in _repository_toml_texts():
        assert _fast(text) is not None and repr(_fast(text)) == repr(tomllib.loads(text))
        for _ in range(200 if len(text) < 20_000 else 5):
            chars = list(text)
            for _ in range(rng.randint(1, 3)):
                i = rng.randrange(len(chars) + 1)
                op = rng.random()
                if op < 0.4 and i < len(chars):
                    del chars[i]
                elif op < 0.8:
                    chars.insert(i, rng.choice(alphabet))
                elif i < len(chars):
                    chars[i] = rng.choice(alphabet)
            mutant = "".join(chars)
            mine = _fast(mutant)
            if mine is not None:
                read_here += 1
                assert _outcome(lambda _: mine, mutant) == _outcome(tomllib.loads, mutant), mutant
    assert read_here > 500
