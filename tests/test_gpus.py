"""The GPU catalog (trainlint/catalog/data/gpus.json) and name/capacity resolution (trainlint/catalog/gpus.py)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from importlib import resources

import pytest

from trainlint.catalog import gpus
from trainlint.catalog.gpus import (GPU, UnknownGPUError, catalog, closest_gpus, find_gpu, parse_capacity, reported_share,
                                    resolve_gpu, split_count)
from trainlint.catalog.naming import normalize

GIB = 2**30
MIB = 2**20


def _raw_entries() -> list[dict]:
    text = resources.files("trainlint.catalog").joinpath("data").joinpath("gpus.json").read_text(encoding="utf-8")
    return json.loads(text)["gpus"]


# ---------------------------------------------------------------- the data


def test_catalog_has_at_least_34_gpus():
    assert len(catalog()) >= 34


def test_catalog_names_are_unique():
    names = [normalize(g.name) for g in catalog()]
    assert len(names) == len(set(names))


REQUIRED_KEYS = {
    "name": str,
    "vendor": str,
    "memory_bytes": int,
    "memory_basis": str,
    "memory_source": str,
    "marketing_memory": str,
    "bf16": bool,
    "fp8": bool,
    "aliases": list,
    "source": str,
}
NULLABLE_KEYS = {
    "bf16_tflops": (int, float),
    "memory_bandwidth_gbs": (int, float),
    "interconnect": str,
    "compute_capability": str,
}
MEMORY_BASES = {"cuda-total", "torch-mib", "torch-oom-gib", "nvidia-smi", "hl-smi", "derived", "unverified"}


@pytest.mark.parametrize("entry", _raw_entries(), ids=lambda e: e["name"])
def test_every_entry_has_every_field_with_a_sane_type(entry):
    for key, typ in REQUIRED_KEYS.items():
        assert key in entry, key
        assert isinstance(entry[key], typ), (key, entry[key])
        if typ is not bool:
            assert not isinstance(entry[key], bool), key
    for key, typ in NULLABLE_KEYS.items():
        assert key in entry, key
        assert entry[key] is None or isinstance(entry[key], typ), (key, entry[key])
    assert entry["vendor"] in {"NVIDIA", "AMD", "Intel"}
    assert entry["memory_basis"] in MEMORY_BASES
    assert entry["source"].startswith("https://")
    assert entry["memory_source"].strip()
    assert all(isinstance(a, str) and a.strip() for a in entry["aliases"])
    if entry["bf16_tflops"] is not None:
        assert 10 < entry["bf16_tflops"] < 10_000
    if entry["memory_bandwidth_gbs"] is not None:
        assert 100 < entry["memory_bandwidth_gbs"] < 20_000
    if entry["vendor"] == "NVIDIA":
        assert re.fullmatch(r"\d+\.\d+", entry["compute_capability"] or ""), entry["compute_capability"]
        assert entry["interconnect"]
    else:
        assert entry["compute_capability"] is None
    if not entry["bf16"]:
        assert entry["bf16_tflops"] is None, "no bf16 hardware, so no bf16 rate"
    if entry["fp8"]:
        assert entry["bf16"], "every fp8 part also does bf16"


@pytest.mark.parametrize("entry", _raw_entries(), ids=lambda e: e["name"])
def test_figures_that_were_not_checked_against_cuda_say_so(entry):
    if entry["memory_basis"] in {"nvidia-smi", "hl-smi", "derived", "unverified"}:
        assert "UNVERIFIED" in entry["memory_source"]
    if entry["memory_basis"] in {"nvidia-smi", "hl-smi"}:
        assert entry["memory_bytes"] % MIB == 0, "a tool's MiB figure times 2^20"


@pytest.mark.parametrize("gpu", catalog(), ids=lambda g: g.name)
def test_memory_is_close_to_the_marketing_figure(gpu):
    # The driver reports a little less than the marketing size (ECC, reserved memory); never much more.
    match = re.match(r"(\d+(?:\.\d+)?)\s*GB", gpu.marketing_memory)
    assert match, gpu.marketing_memory
    marketed_gib = float(match.group(1))
    assert 0.9 <= gpu.memory_gib / marketed_gib <= 1.05, (gpu.name, gpu.memory_gib, marketed_gib)


def test_no_alias_points_at_two_gpus():
    owner: dict[str, str] = {}
    for gpu in catalog():
        keys = {normalize(label) for label in (gpu.name, *gpu.aliases)}
        assert len(keys) == len((gpu.name, *gpu.aliases)), f"{gpu.name} lists the same alias twice"
        for key in keys:
            assert owner.setdefault(key, gpu.name) == gpu.name, (key, owner[key], gpu.name)


@pytest.mark.parametrize("gpu", catalog(), ids=lambda g: g.name)
def test_every_name_and_alias_resolves_to_its_own_gpu(gpu):
    for label in (gpu.name, *gpu.aliases):
        found = find_gpu(label)
        assert found is gpu, (label, found and found.name)
        assert find_gpu(label.upper()) is gpu
        assert find_gpu(f"  {label.lower()}  ") is gpu


@pytest.mark.parametrize("gpu", catalog(), ids=lambda g: g.name)
def test_no_alias_looks_like_a_bare_capacity(gpu):
    for label in (gpu.name, *gpu.aliases):
        assert parse_capacity(label) is None, label


def test_hardware_capabilities():
    by_name = {g.name: g for g in catalog()}
    for name in ("V100-16GB", "V100-32GB", "T4"):
        assert not by_name[name].bf16 and not by_name[name].fp8
    for name in ("A100-80GB", "A10G", "L4", "RTX-3090", "MI250X"):
        assert by_name[name].bf16
    for name in ("A100-80GB", "A100-40GB", "A10G", "RTX-3090", "MI250X"):
        assert not by_name[name].fp8
    for name in ("H100-80GB", "H200", "L40S", "RTX-4090", "B200", "MI300X", "Gaudi3"):
        assert by_name[name].fp8
    assert by_name["A100-80GB"].compute_capability == "8.0"
    assert by_name["H100-80GB"].compute_capability == "9.0"
    assert all(g.capabilities_known and g.in_catalog for g in catalog())


def test_reference_memory_figures():
    # The figures the memory estimate leans on most, as CUDA reports them.
    assert find_gpu("a100").memory_bytes == 84987740160  # 81051 MiB, "79.15 GiB total capacity"
    assert find_gpu("h100").memory_bytes == 85028896768  # 81090 MiB
    assert find_gpu("h200").memory_bytes == 143156 * MIB
    assert find_gpu("mi300x").memory_bytes == 196592 * MIB
    assert round(find_gpu("A100-80GB").memory_gib, 2) == 79.15


# ---------------------------------------------------------------- name resolution


@pytest.mark.parametrize(
    "text, expected",
    [
        # A100: bare "a100" is the 80 GB SXM4; sized and PCIe names resolve exactly.
        ("a100", "A100-80GB"),
        ("A100-80GB", "A100-80GB"),
        ("a100 80gb", "A100-80GB"),
        ("A100_80GB", "A100-80GB"),
        ("NVIDIA-A100-SXM4-80GB", "A100-80GB"),
        ("NVIDIA A100-SXM4-80GB", "A100-80GB"),
        ("A100-SXM4-80GB", "A100-80GB"),
        ("nvidia-a100-80gb", "A100-80GB"),
        ("p4de", "A100-80GB"),
        ("a100-40gb", "A100-40GB"),
        ("NVIDIA A100-SXM4-40GB", "A100-40GB"),
        ("p4d", "A100-40GB"),
        ("NVIDIA A100-PCIE-40GB", "A100-40GB-PCIe"),
        ("a100-80gb-pcie", "A100-80GB-PCIe"),
        ("NVIDIA A100 80GB PCIe", "A100-80GB-PCIe"),
        ("a100 pcie", "A100-80GB-PCIe"),
        # Hopper
        ("h100", "H100-80GB"),
        ("H100", "H100-80GB"),
        ("H100 80GB HBM3", "H100-80GB"),
        ("NVIDIA H100 80GB HBM3", "H100-80GB"),
        ("h100-sxm", "H100-80GB"),
        ("NVIDIA H100 Tensor Core GPU", "H100-80GB"),
        ("NVIDIA H100 PCIe", "H100-PCIe"),
        ("h100 nvl", "H100-NVL"),
        ("NVIDIA H100 NVL", "H100-NVL"),
        ("h200", "H200"),
        ("NVIDIA H200", "H200"),
        ("gh200", "GH200-96GB"),
        ("NVIDIA GH200 480GB", "GH200-96GB"),
        ("NVIDIA GH200 144G HBM3e", "GH200-144GB"),
        ("gh200-144gb", "GH200-144GB"),
        # Volta / Turing / Ampere / Ada
        ("v100", "V100-16GB"),
        ("Tesla V100-SXM2-16GB", "V100-16GB"),
        ("v100-32gb", "V100-32GB"),
        ("Tesla V100-SXM2-32GB", "V100-32GB"),
        ("Tesla V100-PCIE-32GB", "V100-32GB-PCIe"),
        ("t4", "T4"),
        ("Tesla T4", "T4"),
        ("a10", "A10"),
        ("NVIDIA A10", "A10"),
        ("a10g", "A10G"),
        ("NVIDIA A10G", "A10G"),
        ("l4", "L4"),
        ("NVIDIA L4", "L4"),
        ("l40", "L40"),
        ("l40s", "L40S"),
        ("NVIDIA L40S", "L40S"),
        ("a40", "A40"),
        ("a6000", "RTX-A6000"),
        ("NVIDIA RTX A6000", "RTX-A6000"),
        ("rtx 6000 ada", "RTX-6000-Ada"),
        ("NVIDIA RTX 6000 Ada Generation", "RTX-6000-Ada"),
        ("rtx3090", "RTX-3090"),
        ("NVIDIA GeForce RTX 3090", "RTX-3090"),
        ("4090", "RTX-4090"),
        ("GeForce RTX 4090", "RTX-4090"),
        ("NVIDIA GeForce RTX 5090", "RTX-5090"),
        # Blackwell
        ("b200", "B200"),
        ("NVIDIA B200", "B200"),
        ("gb200", "GB200"),
        ("b300", "B300"),
        ("NVIDIA B300 SXM6 AC", "B300"),
        ("rtx pro 6000", "RTX-PRO-6000"),
        ("NVIDIA RTX PRO 6000 Blackwell Server Edition", "RTX-PRO-6000"),
        # AMD and Intel
        ("mi210", "MI210"),
        ("mi250", "MI250"),
        ("mi250x", "MI250X"),
        ("AMD Instinct MI250X/MI250", "MI250X"),
        ("mi300x", "MI300X"),
        ("MI300X", "MI300X"),
        ("AMD Instinct MI300X", "MI300X"),
        ("mi325x", "MI325X"),
        ("mi355x", "MI355X"),
        ("gaudi2", "Gaudi2"),
        ("Gaudi 2", "Gaudi2"),
        ("HL-225", "Gaudi2"),
        ("gaudi3", "Gaudi3"),
        ("HL-325L", "Gaudi3"),
    ],
)
def test_what_people_write_resolves(text, expected):
    gpu = find_gpu(text)
    assert gpu is not None, text
    assert gpu.name == expected
    assert gpu.in_catalog


def test_lookups_return_the_cached_catalog_objects():
    assert find_gpu("a100") is find_gpu("A100-80GB")
    assert find_gpu("a100") in catalog()


def test_gpu_is_frozen_and_reports_gib():
    gpu = find_gpu("a100")
    with pytest.raises(AttributeError):
        gpu.memory_bytes = 1  # type: ignore[misc]
    assert gpu.memory_gib == gpu.memory_bytes / GIB


@pytest.mark.parametrize("text", ["A1OO-80GB", "h1000", "xyz", "nvidia", "", "   ", "a100-80gb-sxm9", "80", "GB"])
def test_unknown_names_are_none(text):
    assert find_gpu(text) is None


def test_unknown_non_strings_are_none():
    assert find_gpu(None) is None  # type: ignore[arg-type]
    assert parse_capacity(None) is None  # type: ignore[arg-type]


# ---------------------------------------------------------------- did you mean


def test_closest_puts_the_obvious_gpu_first():
    assert closest_gpus("A1OO-80GB")[0] == "A100-80GB"
    assert closest_gpus("A1OO")[0] == "A100-80GB"
    assert closest_gpus("h1000")[0] == "H100-80GB"
    assert closest_gpus("rtx409")[0] == "RTX-4090"
    assert closest_gpus("mi300xx")[0] == "MI300X"
    assert closest_gpus("l40x")[:2] == ["L40", "L40S"]
    assert closest_gpus("gaudi4")[0] in {"Gaudi2", "Gaudi3"}


def test_closest_gives_catalog_names_without_repeats():
    names = {g.name for g in catalog()}
    for text in ("A1OO-80GB", "NVIDIA A1OO-SXM4-80GB", "h100 80gb hbm", "rtx 6000", "mi-300-x2"):
        found = closest_gpus(text)
        assert 1 <= len(found) <= 3
        assert len(found) == len(set(found))
        assert set(found) <= names
    assert len(closest_gpus("a100", n=5)) <= 5
    assert closest_gpus("a100", n=0) == []


def test_closest_ignores_vendor_words_and_gives_nothing_for_nonsense():
    assert closest_gpus("xyz") == []
    assert closest_gpus("NVIDIA xyz") == []


def test_resolve_gpu_raises_with_suggestions():
    assert resolve_gpu("h100").name == "H100-80GB"
    assert resolve_gpu("96GB").memory_bytes == int(96 * GIB * reported_share()[0])
    with pytest.raises(UnknownGPUError) as err:
        resolve_gpu("A1OO")
    assert err.value.suggestions[0] == "A100-80GB"
    assert "A1OO" in str(err.value) and "A100-80GB" in str(err.value)
    assert isinstance(err.value, ValueError)


# ---------------------------------------------------------------- capacities


@pytest.mark.parametrize(
    "text, expected",
    [
        ("96GB", 96 * GIB),
        ("24GiB", 24 * GIB),
        ("80 GB", 80 * GIB),
        ("141gb", 141 * GIB),
        ("1.5TB", 1536 * GIB),
        ("1.5 TiB", 1536 * GIB),
        ("40960MiB", 40 * GIB),
        ("81920 MB", 80 * GIB),
        ("48G", 48 * GIB),
        (" 0.5gib ", GIB // 2),
        (".5GB", GIB // 2),
    ],
)
def test_parse_capacity(text, expected):
    assert parse_capacity(text) == expected


@pytest.mark.parametrize(
    "text", ["", "GB", "80", "eighty GB", "80 GBs", "80 PB", "80 KB", "-8GB", "0GB", "8 8GB", "a100", "80GB!", "1e3GB"]
)
def test_parse_capacity_rejects_garbage(text):
    assert parse_capacity(text) is None


@pytest.mark.parametrize("text, gib, name", [("96GB", 96, "96GB"), ("24GiB", 24, "24GiB"), ("80 GB", 80, "80GB")])
def test_a_bare_capacity_is_a_custom_gpu(text, gib, name):
    gpu = find_gpu(text)
    assert isinstance(gpu, GPU)
    assert gpu.name == name
    # What the device reports of a card sold with that capacity: the share measured catalog cards report.
    assert gpu.memory_bytes == int(gib * GIB * reported_share()[0])
    assert gpu.marketing_memory == f"{gib} GB"
    assert not gpu.in_catalog
    assert not gpu.capabilities_known
    # Placeholders that never trigger a "your GPU lacks bf16/fp8" warning.
    assert gpu.bf16 and gpu.fp8
    assert gpu.bf16_tflops is None and gpu.memory_bandwidth_gbs is None and gpu.interconnect is None


def test_a_capacity_that_equals_a_catalog_gpu_is_still_custom():
    # "141GB" is a capacity, not the H200: the user said nothing about which card.
    gpu = find_gpu("141GB")
    assert gpu is not None and not gpu.in_catalog and gpu.memory_bytes == int(141 * GIB * reported_share()[0])


def test_a_bare_capacity_reports_what_measured_cards_report():
    share, cards = reported_share()
    # 30 cards measured on CUDA/ROCm keep 0.98-1.0 of their marketed memory; the median is in that band.
    assert cards >= 20 and 0.98 < share < 1.0
    assert find_gpu("80GB").memory_bytes < 80 * GIB


@pytest.mark.parametrize("text, name", [
    ("RTX4090-24GB", "RTX-4090"), ("RTX-4090-24GB", "RTX-4090"), ("rtx 4090", "RTX-4090"), ("4090", "RTX-4090"),
    ("A6000-48GB", "RTX-A6000"), ("RTX 6000 Ada", "RTX-6000-Ada"), ("H100 SXM", "H100-80GB"),
    ("H100 NVL", "H100-NVL"), ("H100-94GB", "H100-NVL"), ("GH200", "GH200-96GB"), ("B200", "B200"),
    ("MI300X", "MI300X"), ("L40S", "L40S"), ("A10G", "A10G"), ("8x H100", "H100-80GB"), ("8xH100", "H100-80GB"),
    ("H100 x8", "H100-80GB"), ("NVIDIA-A100-SXM4-80GB", "A100-80GB"), ("NVIDIA H100 80GB HBM3", "H100-80GB"),
    ("H200-141GB", "H200"), ("T4-16GB", "T4"), ("gh200 144gb", "GH200-144GB"), ("MI250-128GB", "MI250"),
    ("NVIDIA GeForce RTX 4090", "RTX-4090"), ("Tesla V100-SXM2-32GB", "V100-32GB"),
])
def test_names_people_write(text, name):
    assert find_gpu(text).name == name


@pytest.mark.parametrize("text, count, rest", [
    ("8x H100", 8, "H100"), ("8xH100", 8, "H100"), ("16 × A100-80GB", 16, "A100-80GB"), ("H100 x8", 8, "H100"),
    ("H100", None, "H100"), ("4090", None, "4090"), ("MI300X", None, "MI300X"),
])
def test_a_count_in_the_name(text, count, rest):
    assert split_count(text) == (rest, count)


@pytest.mark.parametrize("text, says", [
    ("H100-40GB", "H100 comes with 80 GB (H100-80GB) or 94 GB (H100-NVL), not 40 GB"),
    ("RTX4090-48GB", "RTX4090 comes with 24 GB (RTX-4090), not 48 GB"),
])
def test_a_capacity_the_card_does_not_come_with_matches_nothing(text, says):
    assert find_gpu(text) is None
    with pytest.raises(UnknownGPUError) as err:
        resolve_gpu(text)
    assert says in str(err.value)


# ---------------------------------------------------------------- cost of importing


def test_importing_does_not_read_the_catalog():
    code = (
        "import trainlint.catalog.gpus as g\n"
        "assert g._load.cache_info().currsize == 0\n"
        "g.find_gpu('a100'); g.find_gpu('h100'); g.catalog()\n"
        "info = g._load.cache_info()\n"
        "assert info.currsize == 1 and info.misses == 1, info\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_catalog_returns_a_fresh_list():
    first = catalog()
    first.clear()
    assert len(catalog()) >= 34
    assert gpus.catalog() is not first


def test_a_lookup_makes_only_the_gpu_it_finds():
    code = (
        "import trainlint.catalog.gpus as g\n"
        "a = g.find_gpu('A100-80GB'); b = g.find_gpu('nvidia a100 sxm4 80gb')\n"
        "assert a is b and g._gpu_at.cache_info().currsize == 1 and g._load.cache_info().currsize == 0\n"
        "every = g.catalog()\n"
        "assert a in every and all(g.find_gpu(label) is gpu for gpu in every for label in (gpu.name, *gpu.aliases))\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_a_name_as_written_is_found_in_the_files_bytes():
    # A name or alias written as in gpus.json is found in its bytes, only its entry decoded (gpus._written_position):
    # the entry the normalized index finds, decoded as the parsed file has it.
    code = (
        "import trainlint.catalog.gpus as g\n"
        "a = g.find_gpu('A100-80GB'); b = g.find_gpu('Tesla V100-SXM2-16GB')\n"
        "print(a.name, b.name, g._entries.cache_info().currsize, g._index.cache_info().currsize)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["A100-80GB", "V100-16GB", "0", "0"]


def test_an_entry_decoded_alone_is_the_parsed_files():
    from trainlint.catalog.files import ENTRY_START, read_data_bytes

    entries = gpus._entries()
    assert read_data_bytes("gpus.json").count(ENTRY_START) == len(entries)  # the layout the lookup reads
    for cached in (gpus._written_position, gpus._entries, gpus._gpu_at, gpus._index, gpus._load):
        cached.cache_clear()
    gpus._DECODED.clear()
    try:
        labels = [(e["name"], label) for e in entries for label in (e["name"], *e.get("aliases", ()))]
        found = {label: gpus._written_position(label) for _owner, label in labels}
        assert gpus._entries.cache_info().currsize == 0
        for owner, label in labels:
            assert entries[found[label]]["name"] == owner, label
            assert gpus._DECODED[found[label]] == entries[found[label]], label
        assert gpus._written_position("no-such-gpu") is None and gpus._written_position("a100-80gb") is None
        index = gpus._index()
        for _owner, label in labels:
            assert found[label] == index[normalize(label)], label
    finally:
        for cached in (gpus._written_position, gpus._entries, gpus._gpu_at, gpus._index, gpus._load):
            cached.cache_clear()
        gpus._DECODED.clear()

