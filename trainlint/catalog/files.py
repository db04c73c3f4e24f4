"""The catalog's data files, read from the package folder (importing `importlib.resources` costs more than a lint:
it pulls in tempfile and random); resources are the fallback for an install that is not a plain folder."""

from __future__ import annotations

from pathlib import Path

DATA = Path(__file__).resolve().parent / "data"


def read_data_bytes(name: str) -> bytes:
    """The data file as stored (no decoding), for a lookup that decodes only the part it needs."""
    try:
        return (DATA / name).read_bytes()
    except OSError:  # pragma: no cover - zipped installs
        from importlib import resources

        return resources.files("trainlint.catalog").joinpath("data").joinpath(name).read_bytes()


def read_data(name: str) -> str:
    path = DATA / name
    try:
        return path.read_text(encoding="utf-8")
    except OSError:  # pragma: no cover - zipped installs
        from importlib import resources

        return resources.files("trainlint.catalog").joinpath("data").joinpath(name).read_text(encoding="utf-8")
