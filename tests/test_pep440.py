"""trainlint._pep440 answers as `packaging` does: parsing (valid or not), normalization, ordering and equality of
versions; parsing of specifiers and specifier sets; and contains(version, prereleases=True) over every pair of
many versions and specifiers."""

from __future__ import annotations

import itertools

import pytest
from packaging import specifiers as pspec
from packaging import version as pver

from trainlint import _pep440 as ours

RELEASES = ["0", "1", "1.0", "1.0.0", "1.2", "1.2.0", "1.2.3", "1.10", "2", "2.0.1", "4.41.0", "4.46", "0.16.4",
            "1!1.0", "1!2.3"]
SUFFIXES = ["", "a1", "a", "b2", "rc1", "c3", "alpha1", "beta", "pre2", "preview", ".post1", "-1", "post", "rev2",
            "r3", ".dev0", "dev", ".dev3", "a1.dev2", "rc1.post2", ".post1.dev1", "+local", "+abc.5", "+1.2",
            "a1+ubuntu-1", ".post2+x", "-a1", "_b2", ".RC1", "DEV1"]
VERSIONS = [r + s for r in RELEASES for s in SUFFIXES] + [
    "v1.0", "V2.1", " 1.0 ", "1.0.", "1..0", "a1", "", "1.0+", "1.0+a_b", "1.0+-a", "01.02", "1.0-dev", "1.0.post",
    "1.0-post1", "1.0a1a1", "1.0.post1.post2", "1!", "!1", "1.0+ABC", "1.*", "latest", "main", "1,0", "1.0 a1",
    "4.36.2", "0.9.6", "2.1.0+cu121", "2.5.1+cpu", "0.0.0.dev20240101", "1.0.0rc1.dev0", "1e3", "٣.١",
]
OPS = ["==", "!=", "<", "<=", ">", ">=", "~=", "==="]
SPEC_VERSIONS = ["1", "1.0", "1.2", "1.2.3", "1.2.0", "2", "1!1.0", "1.0a1", "1.2rc1", "1.2.post1", "1.2.dev1",
                 "1.2+local", "1.*", "1.2.*", "1!1.*", "0.*", "1.2a1.*", "1.2+local.*", "", "1.2.3.4", "v1.2",
                 "4.41", "0.16"]
SPECS = [op + v for op in OPS for v in SPEC_VERSIONS] + [
    " >= 1.0 ", ">=1.0 ,<2", ">=1.0,<2,!=1.5.*", "~=1.4.5", "~=1.4.5a4", "~=2.2.post3", "~=1", "===foo", "=== 1.0",
    "== 1.0", ">=1.0;", "<1.0)", "=1.0", "1.0", ">>1.0", ">=", ",", "", ">=1,", "<=1.2.*", "~=1.2.*", ">1.2+l",
    ">=4.41,<5", "==0.18.0", ">=0.16", "<5", "!=1.0+local", "==1.0+local", "===1.0+local",
]


def _version(module, text):
    try:
        v = module.Version(text)
    except (pver.InvalidVersion, ours.InvalidVersion):
        return None
    return v


def _spec(module_set, text):
    try:
        return module_set(text)
    except (pspec.InvalidSpecifier, ours.InvalidSpecifier):
        return None


def test_versions_parse_and_normalize_as_packaging():
    for text in VERSIONS:
        theirs, mine = _version(pver, text), _version(ours, text)
        assert (theirs is None) == (mine is None), text
        if theirs is None:
            continue
        assert str(mine) == str(theirs), text
        assert (mine.epoch, mine.release, mine.pre, mine.post, mine.dev, mine.local) == \
            (theirs.epoch, theirs.release, theirs.pre, theirs.post, theirs.dev, theirs.local), text
        assert (mine.public, mine.base_version, mine.is_prerelease, mine.is_postrelease, mine.is_devrelease) == \
            (theirs.public, theirs.base_version, theirs.is_prerelease, theirs.is_postrelease,
             theirs.is_devrelease), text
        assert (mine.major, mine.minor, mine.micro) == (theirs.major, theirs.minor, theirs.micro), text


def test_versions_order_as_packaging():
    pairs = [(t, _version(pver, t), _version(ours, t)) for t in VERSIONS]
    pairs = [p for p in pairs if p[1] is not None]
    for (_, a_t, a_m), (_, b_t, b_m) in itertools.product(pairs, repeat=2):
        assert (a_m < b_m, a_m <= b_m, a_m == b_m, a_m != b_m, a_m > b_m, a_m >= b_m) == \
            (a_t < b_t, a_t <= b_t, a_t == b_t, a_t != b_t, a_t > b_t, a_t >= b_t), (str(a_t), str(b_t))
        if a_m == b_m:
            assert hash(a_m) == hash(b_m)
    assert [str(v) for v in sorted(p[2] for p in pairs)] == [str(v) for v in sorted(p[1] for p in pairs)]


def test_specifiers_parse_as_packaging():
    for text in SPECS:
        theirs, mine = _spec(pspec.SpecifierSet, text), _spec(ours.SpecifierSet, text)
        assert (theirs is None) == (mine is None), text
        if theirs is None:
            continue
        assert len(mine) == len(theirs), text
        assert sorted((s.operator, s.version) for s in mine) == sorted((s.operator, s.version) for s in theirs), text
        assert str(mine) == str(theirs), text


@pytest.mark.parametrize("as_text", [False, True], ids=["Version", "text"])
def test_contains_as_packaging(as_text):
    sets = [(t, _spec(pspec.SpecifierSet, t), _spec(ours.SpecifierSet, t)) for t in SPECS]
    sets = [s for s in sets if s[1] is not None]
    sets += [(a + "," + b, pspec.SpecifierSet(a + "," + b), ours.SpecifierSet(a + "," + b))
             for a, b in itertools.combinations(["<2", ">=1.0", "!=1.2.*", "~=1.2", "==1.*", ">1.0a1"], 2)]
    wrong = []
    for text in VERSIONS:
        theirs, mine = _version(pver, text), _version(ours, text)
        if theirs is None and not as_text:
            continue
        for spec_text, spec_t, spec_m in sets:
            expected = spec_t.contains(text if as_text else theirs, prereleases=True)
            got = spec_m.contains(text if as_text else mine, prereleases=True)
            if expected != got:
                wrong.append((spec_text, text, expected))
    assert not wrong, wrong[:20]


def test_contains_as_packaging_on_random_versions_and_specifiers():
    import random

    rng = random.Random(440)

    def version():
        text = ("1!" if rng.random() < 0.05 else "") + ".".join(str(rng.choice([0, 0, 1, 2, 3, 10]))
                                                                for _ in range(rng.randint(1, 4)))
        for part, chance in (([f"a{rng.randint(0, 2)}", f"b{rng.randint(0, 2)}", f"rc{rng.randint(0, 2)}"], 0.25),
                             ([f".post{rng.randint(0, 2)}"], 0.2), ([f".dev{rng.randint(0, 2)}"], 0.2),
                             ([f"+l{rng.randint(0, 2)}", "+1.x"], 0.1)):
            if rng.random() < chance:
                text += rng.choice(part)
        return text

    versions = [version() for _ in range(300)]
    specs = []
    for _ in range(150):
        op = rng.choice(OPS[:-1])
        v = version().split("+")[0] if op not in ("==", "!=") else version()
        if op in ("==", "!=") and rng.random() < 0.3:
            v = v.split("a")[0].split("b")[0].split("rc")[0].split(".post")[0].split(".dev")[0].split("+")[0] + ".*"
        if op == "~=" and "." not in v.split("!")[-1]:
            v = v.replace(v.split("!")[-1], v.split("!")[-1] + ".0", 1) if v[0].isdigit() else v
        specs.append(op + v)
    wrong = []
    for spec_text in specs:
        theirs, mine = _spec(pspec.SpecifierSet, spec_text), _spec(ours.SpecifierSet, spec_text)
        assert (theirs is None) == (mine is None), spec_text
        if theirs is None:
            continue
        for text in versions:
            expected = theirs.contains(pver.Version(text), prereleases=True)
            if mine.contains(ours.Version(text), prereleases=True) != expected:
                wrong.append((spec_text, text, expected))
    assert not wrong, wrong[:20]
    assert [str(v) for v in sorted(map(ours.Version, versions))] == [str(v) for v in sorted(map(pver.Version, versions))]


def test_a_version_text_is_read_once():
    assert ours.Version("4.41.0") is ours.Version("4.41.0")
    assert ours.Version("4.41.0") == ours.Version("4.41") and ours.Version("4.41.0") is not ours.Version("4.41")
    with pytest.raises(ours.InvalidVersion):
        ours.Version("not a version")
    spec = ours.SpecifierSet(">1.0.post1,<2,~=1.2,!=1.5.*")
    assert [spec.contains(v) for v in ("1.0.post2", "1.2", "1.5.1", "1.9", "2.0a1")] == \
        [pspec.SpecifierSet(str(spec)).contains(v, prereleases=True) for v in ("1.0.post2", "1.2", "1.5.1", "1.9", "2.0a1")]
