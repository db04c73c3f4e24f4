"""Seeded mutations of real training configs: byte-level noise and structure-aware changes.

Every function takes a `random.Random` and returns new bytes; nothing here imports trainlint (the
fuzzer must not depend on the code it tests). Structure-aware mutations locate scalars, keys and
lines in the original text (PyYAML's composer for YAML, a small scanner for JSON) and replace them
in place, so the rest of the file (comments, layout) stays as written.
"""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

import yaml



def _find_corpus() -> Path:
    """$TL_CORPUS, or the first `shared/corpus` beside the checkout or a folder above it."""
    import os

    if os.environ.get("TL_CORPUS"):
        return Path(os.environ["TL_CORPUS"])
    for parent in Path(__file__).resolve().parents[2:]:
        if (parent / "shared" / "corpus").is_dir():
            return parent / "shared" / "corpus"
    return Path(__file__).resolve().parents[3] / "shared" / "corpus"


CORPUS = _find_corpus()


def corpus_files(root: Path = CORPUS) -> list[Path]:
    if not root.is_dir():
        return []
    return sorted(p for p in root.glob("*/*") if p.is_file() and p.suffix != ".md")


# ---- hostile values ------------------------------------------------------------------------------
HUGE_DIGITS = "1" + "0" * 4400
TAGGED = ["!!bool maybe", "!!timestamp x", "!!timestamp 2024-13-45", f"!!int {HUGE_DIGITS}", "!!int 0x" + "f" * 5000,
          "!!int abc", "!!float abc", "!!float", "!!null x", "!!binary ###", "!!binary", "!!set [1, 2]", "!!omap [1]",
          "!!pairs x", "!!map [1]", "!!seq {a: 1}", "!!str", "!!int", "!foo bar", "!<tag:yaml.org,2002:int> x",
          "!!python/object:os.system x", "!!python/name:os.system", "!!merge x", "!!value x", "!!yaml x",
          "!!int 1_0", "!!float .NaN", "!!timestamp 2001-12-14t21:59:43.10-05:00"]
NUMBERS = ["-1", "0", "-0", "1e999", "-1e999", ".nan", ".inf", "-.inf", "NaN", "Infinity", "-Infinity", "1e-5",
           "1.0e-5", "0x10", "0o17", "1_000", "+5", "10" * 40, HUGE_DIGITS, "0x" + "f" * 5000, "9" * 4299,
           "1e308", "4.9e-324", "2**31", "-2147483649", "18446744073709551617", "1:30", "1:30:00", "0b101",
           "3.", ".5", "1e", "1.5.6", "01", "-", "1e+", "1" + "0" * 30 + ".5"]
JSON_MALFORMED = ["1.", "01", "-", "1e", "1e+", "1.5.6", "0x10", "+1", ".5", "1" + "0" * 5000, "-" + "9" * 4400,
                  "1e99999", "1" + "0" * 4400 + "e1", "NaN", "-NaN", "Infinity", "infinity", "tru", "nul", "1_0",
                  "'x'", "\"\\ud800\"", "\"\\u12\"", "\"\\x41\"", "\"a\nb\"", "\"\t\"", "[1,,2]", "{,}"]
STRINGS = ["", "auto", "none", "None", "yes", "no", "on", "off", "~", "null", "true", "False", "8", "2e-5",
           "/" + "a" * 300, "a" * 300, "x" * 100_000, "/dev/zero", "/dev/urandom", "/dev/stdin", "/proc/self/mem",
           "../../../../etc/passwd", "~/.ssh/id_rsa", "$(touch /tmp/pwned)", "`id`", "%s%s%n", "\u202e", "\ufeff",
           "é\U0001F680", "\udcff", "\x00", "\x7f", "\u2028", "\u0085", "\x1b[31m", "C:\\Windows\\x", "nvme",
           "meta-llama/Llama-3.1-8B" * 20, "a:b", "- x", "# not a comment", "'", "\"", "{", "[", "*x", "&x", "!x",
           "%", "@", "`", "|", ">"]
COLLECTIONS = ["[]", "{}", "[1, 2]", "{a: 1}", "[[[]]]", "{a: {b: {c: 1}}}", "[null]", "[1, [2, [3, []]]]",
               "{\"a\": 1, \"a\": 2}", "[" * 300 + "]" * 300, "{a: " * 120 + "1" + "}" * 120]
KEYS = ["!!bool maybe", "!!timestamp x", "!!int " + HUGE_DIGITS, "!!float abc", "? [a, b]", "? {a: 1}", "[1, 2]",
        "{a: 1}", "<<", "!!merge <<", "\"\"", "''", "null", "~", "1", "1.5", "true", "on", "a" * 5000,
        "\"\\ud800\"", "é\U0001F680", "!!binary x", "*undefined", "&anc key"]
NEWLINES = ["\r\n", "\r", "\x85", "\u2028", "\u2029", "\n\r", "\x0c\n", "\x0b\n"]


def _scalar_spans_yaml(text: str) -> list[tuple[int, int, bool]]:
    """(start, end, is_key) of every plain scalar in a YAML text (code-point offsets)."""
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except Exception:  # noqa: BLE001 - not YAML: no structure to mutate
        return []
    out, stack = [], [root] if root is not None else []
    seen = set()
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                if isinstance(key, yaml.ScalarNode):
                    out.append((key.start_mark.index, key.end_mark.index, True))
                stack.append(value)
        elif isinstance(node, yaml.SequenceNode):
            stack.extend(node.value)
        elif isinstance(node, yaml.ScalarNode) and node.style is None:
            out.append((node.start_mark.index, node.end_mark.index, False))
    return [s for s in out if s[0] < s[1]]


_JSON_VALUE = re.compile(r'("(?:[^"\\\n]|\\.)*")(\s*:\s*)(-?[0-9][0-9.eE+-]*|true|false|null|"(?:[^"\\\n]|\\.)*")')


def _scalar_spans_json(text: str) -> list[tuple[int, int, bool]]:
    out = []
    for m in _JSON_VALUE.finditer(text):
        out.append((m.start(1), m.end(1), True))
        out.append((m.start(3), m.end(3), False))
    return out


def scalar_spans(text: str, is_json: bool) -> list[tuple[int, int, bool]]:
    return _scalar_spans_json(text) if is_json else _scalar_spans_yaml(text)


# ---- structure-aware operators --------------------------------------------------------------------
def _replace(text: str, span: tuple[int, int, bool], new: str) -> str:
    return text[:span[0]] + new + text[span[1]:]


def op_value(text: str, rng: random.Random, is_json: bool) -> str:
    spans = [s for s in scalar_spans(text, is_json) if not s[2]]
    if not spans:
        return text
    span = rng.choice(spans)
    if is_json:
        pool = rng.choice([JSON_MALFORMED, NUMBERS, [json.dumps(s) for s in STRINGS[:40]], COLLECTIONS[:6]])
    else:
        pool = rng.choice([TAGGED, NUMBERS, STRINGS, COLLECTIONS])
    new = rng.choice(pool)
    if not is_json and pool is STRINGS and rng.random() < 0.5:
        new = json.dumps(new)
    return _replace(text, span, new)


def op_type_swap(text: str, rng: random.Random, is_json: bool) -> str:
    spans = [s for s in scalar_spans(text, is_json) if not s[2]]
    if not spans:
        return text
    span = rng.choice(spans)
    raw = text[span[0]:span[1]]
    choices = [f'"{raw.strip(chr(34))}"', "[" + raw + "]", ("{\"v\": " if is_json else "{v: ") + raw + "}", "true",
               "null", "1", "-1", "0.5", '"8"', '"auto"', '""']
    return _replace(text, span, rng.choice(choices))


def op_key(text: str, rng: random.Random, is_json: bool) -> str:
    spans = [s for s in scalar_spans(text, is_json) if s[2]]
    if not spans:
        return text
    span = rng.choice(spans)
    if is_json:
        new = rng.choice(['"' + "k" * 5000 + '"', '"\\ud800"', '""', '"é\U0001F680"', "k", "1", '"a" "b"'])
    else:
        new = rng.choice(KEYS)
    return _replace(text, span, new)


def op_duplicate_line(text: str, rng: random.Random, is_json: bool) -> str:
    lines = text.splitlines(keepends=True)
    if not lines:
        return text
    i = rng.randrange(len(lines))
    for _ in range(rng.choice([1, 1, 2, 50])):
        lines.insert(i, lines[i])
    return "".join(lines)


def op_unknown_keys(text: str, rng: random.Random, is_json: bool) -> str:
    n = rng.choice([5, 200, 2000])
    if is_json:
        stripped = text.rstrip()
        if not stripped.endswith("}"):
            return text
        extra = "".join(f',\n  "unknown_key_{i}": {i}' for i in range(n))
        return stripped[:-1].rstrip() + extra + "\n}\n"
    lines = "".join(f"unknown_key_{i}: {i}\n" for i in range(n))
    return text + ("" if text.endswith("\n") else "\n") + lines


def op_anchors(text: str, rng: random.Random, is_json: bool) -> str:
    if is_json:
        return text
    roll = rng.random()
    if roll < 0.3:  # a billion-laughs bomb
        lines = ['a0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
        for i in range(1, rng.choice([4, 9, 12])):
            lines.append(f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]")
        return text + "\n" + "\n".join(lines) + "\n"
    if roll < 0.6:  # merge keys, including odd merge sources
        src = rng.choice(["{bf16: true, per_device_train_batch_size: 64}", "[1, 2]", "x", "*missing", "&self {a: *self}",
                          "[{a: 1}, {b: 2}, 3]", "null", "!!merge {a: 1}"])
        return f"base: &base {src}\n" + text + ("" if text.endswith("\n") else "\n") + "<<: *base\n"
    spans = [s for s in _scalar_spans_yaml(text) if not s[2]]
    if len(spans) < 2:
        return text
    a, b = sorted(rng.sample(spans, 2))
    # anchor a value, alias it from another (later) place
    raw = text[a[0]:a[1]]
    return text[:a[0]] + "&anc " + raw + text[a[1]:b[0]] + rng.choice(["*anc", "*nope", "&anc x"]) + text[b[1]:]


def op_multidoc(text: str, rng: random.Random, is_json: bool, other: str = "") -> str:
    choices = ["---\n" + text, text + "\n---\n" + other, "%YAML 1.1\n---\n" + text, "%YAML 2.0\n---\n" + text,
               "%TAG ! tag:example.com,2000:\n---\n" + text, text + "\n...\n", "--- !!map\n" + text,
               text + "\n---\n" + text]
    return rng.choice(choices)


def op_nesting(text: str, rng: random.Random, is_json: bool) -> str:
    depth = rng.choice([50, 201, 1000, 5000, 30000])
    if is_json:
        deep = rng.choice(["[" * depth + "]" * depth, '{"a": ' * depth + "1" + "}" * depth, "[" * depth])
    else:
        deep = rng.choice(["[" * depth + "]" * depth, "{a: " * depth + "1" + "}" * depth,
                           "".join("  " * i + f"k{i}:\n" for i in range(min(depth, 3000))) + "  " * min(depth, 3000) + "1",
                           "- " * min(depth, 2000) + "x"])
    spans = [s for s in scalar_spans(text, is_json) if not s[2]]
    if spans and rng.random() < 0.7 and not deep.startswith(("k0", "-")):
        return _replace(text, rng.choice(spans), deep)
    return deep if rng.random() < 0.5 else text + "\n" + deep


def op_long_string(text: str, rng: random.Random, is_json: bool) -> str:
    spans = [s for s in scalar_spans(text, is_json) if not s[2]]
    if not spans:
        return text
    value = rng.choice(["/" + "a" * 300, "a" * 300, "x" * rng.choice([1000, 100_000, 2_000_000]),
                        "/".join(["a" * 255] * 20)])
    return _replace(text, rng.choice(spans), json.dumps(value) if is_json or rng.random() < 0.5 else value)


def op_linked(text: str, rng: random.Random, is_json: bool) -> str:
    """Point the linked DeepSpeed config (or an inline one) at something hostile."""
    target = rng.choice(["/dev/zero", "/dev/urandom", "/dev/null", "/dev/stdin", "/proc/self/fd/0", "missing.json",
                         ".", "/", "a" * 300 + ".json", "\x00.json", "ds.json\n", "%2e%2e/x.json", "C:\\x.json",
                         "http://example.com/ds.json", "self.yaml", "link.json", "fifo.json", "loop.json",
                         "~/ds.json", "$HOME/ds.json", "ds.json" * 60])
    if is_json:
        return text
    return re.sub(r"(?m)^deepspeed:.*$", lambda m: f"deepspeed: {json.dumps(target)}", text) if "deepspeed:" in text \
        else text + ("" if text.endswith("\n") else "\n") + f"deepspeed: {json.dumps(target)}\n"


def op_tabs(text: str, rng: random.Random, is_json: bool) -> str:
    lines = text.splitlines(keepends=True)
    if not lines:
        return text
    for _ in range(rng.randint(1, 3)):
        i = rng.randrange(len(lines))
        lines[i] = re.sub(r"^( +)", lambda m: "\t" * max(1, len(m.group(1)) // 2), lines[i]) if rng.random() < 0.5 \
            else lines[i].replace(": ", ":\t", 1)
    return "".join(lines)


STRUCTURE_OPS = [op_value, op_value, op_value, op_type_swap, op_type_swap, op_key, op_duplicate_line,
                 op_unknown_keys, op_anchors, op_anchors, op_multidoc, op_nesting, op_long_string, op_linked, op_tabs]


# ---- whole-text transforms (line ends, encodings) ----------------------------------------------------
def newline_transform(text: str, rng: random.Random) -> str:
    roll = rng.random()
    if roll < 0.5:
        nl = rng.choice(NEWLINES)
        out = text.replace("\n", nl)
    elif roll < 0.75:
        out = "".join(line.rstrip("\n") + rng.choice(["\n", "\r\n", "\r", "\u2028", "\x85"])
                      for line in text.splitlines(keepends=True))
    else:
        out = text
    if rng.random() < 0.5:
        out = out.rstrip("\r\n\x85\u2028\u2029")  # no final newline
    return out


def encode(text: str, rng: random.Random) -> bytes:
    roll = rng.random()
    if roll < 0.6:
        return text.encode("utf-8", "surrogatepass")
    if roll < 0.7:
        return b"\xef\xbb\xbf" + text.encode("utf-8", "surrogatepass")
    if roll < 0.78:
        return text.encode(rng.choice(["utf-16", "utf-16-le", "utf-16-be", "utf-32"]), "surrogatepass")
    if roll < 0.86:
        return text.encode("latin-1", "replace") + "é".encode("latin-1")
    if roll < 0.93:
        data = bytearray(text.encode("utf-8", "surrogatepass"))
        for _ in range(rng.randint(1, 3)):
            data.insert(rng.randrange(len(data) + 1), rng.choice([0xFF, 0xC0, 0x80, 0xED, 0xF8]))
        return bytes(data)
    return text.encode("utf-8", "surrogatepass").replace(b": ", b":\x00 ", 1)


# ---- byte-level operators ----------------------------------------------------------------------------
def byte_mutate(data: bytes, rng: random.Random, other: bytes = b"") -> bytes:
    buf = bytearray(data)
    for _ in range(rng.randint(1, 8)):
        roll = rng.random()
        pos = rng.randrange(len(buf) + 1)
        if roll < 0.25 and buf:
            buf[min(pos, len(buf) - 1)] ^= 1 << rng.randrange(8)
        elif roll < 0.45:
            buf[pos:pos] = bytes([rng.randrange(256)])
        elif roll < 0.6:
            del buf[pos:pos + rng.randint(1, 32)]
        elif roll < 0.75:
            token = rng.choice([b"{", b"}", b"[", b"]", b":", b",", b'"', b"'", b"\n", b"\t", b"- ", b"&a ", b"*a",
                                b"!!", b"<<: ", b"#", b"//", b"/*", b"\\", b"\x00", b"\r", b"\xc2\x85",
                                b"\xe2\x80\xa8", b"\xef\xbb\xbf", b"---\n", b"? ", b"%", b"@", b"|\n", b">-\n"])
            buf[pos:pos] = token
        elif roll < 0.9 and other:
            start = rng.randrange(len(other))
            buf[pos:pos] = other[start:start + rng.randint(1, 200)]
        else:
            start = rng.randrange(len(buf) + 1)
            buf[pos:pos] = buf[start:start + rng.randint(1, 64)]
    if rng.random() < 0.05:
        del buf[rng.randrange(len(buf) + 1):]
    return bytes(buf)


def random_garbage(rng: random.Random) -> bytes:
    n = rng.choice([0, 1, 17, 300, 4096, 70_000])
    if rng.random() < 0.5:
        return bytes(rng.randrange(256) for _ in range(n))
    return bytes(rng.randrange(1, 256) for _ in range(n))  # NUL-free binary


def mutate(path: Path, rng: random.Random, files: list[Path]) -> tuple[bytes, list[str]]:
    """One mutated input derived from `path`, and the names of the operators applied."""
    original = path.read_bytes()
    text = original.decode("utf-8", "surrogateescape")
    is_json = path.suffix in (".json", ".conf")
    other_path = rng.choice(files)
    other = other_path.read_text(encoding="utf-8", errors="replace")
    ops: list[str] = []
    roll = rng.random()
    if roll < 0.03:
        return random_garbage(rng), ["garbage"]
    if roll < 0.25:
        ops.append("bytes")
        return byte_mutate(original, rng, other.encode()), ops
    for _ in range(rng.choice([1, 1, 1, 2, 3])):
        op = rng.choice(STRUCTURE_OPS)
        ops.append(op.__name__[3:])
        text = op_multidoc(text, rng, is_json, other) if op is op_multidoc else op(text, rng, is_json)
    if rng.random() < 0.25:
        ops.append("newlines")
        text = newline_transform(text, rng)
    if rng.random() < 0.15:
        ops.append("encoding")
        return encode(text, rng), ops
    return text.encode("utf-8", "surrogateescape"), ops
