"""Shared fixtures. The library comes from $LEIR_LIBRARY when set (the
meson test sets it to the build's libleir.so.0), else as leir finds it."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Dict, List

import sys

import pytest

try:
    import leir
except ModuleNotFoundError:  # not installed: the package next to the tests
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    import leir

DATA = Path(__file__).resolve().parents[2] / "tests" / "data"

RELU = "B^{2}_{tx=0}L^{8}_{a=0}[C^{f64,g}_{tx,a}=max(A^{f64,g}_{tx,a},0);];"
ROWSUM = "B^{4}_{tx=0}L^{6}_{a=0}[C^{f64,g}_{tx}=C^{f64,g}_{tx}+A^{f64,g}_{tx,a};];"
SOFTMAX = (
    "B^{2}_{tx=0} L^{8}_{a=0} [D^{f64,g}_{tx} = max(D^{f64,g}_{tx}, A^{f64,g}_{tx,a});];\n"
    "B^{2}_{tx=0} L^{8}_{a=0} [E^{f64,g}_{tx} = E^{f64,g}_{tx} + exp(A^{f64,g}_{tx,a} - D^{f64,g}_{tx});];\n"
    "B^{2}_{tx=0} L^{8}_{a=0} [C^{f64,g}_{tx,a} = exp(A^{f64,g}_{tx,a} - D^{f64,g}_{tx}) / E^{f64,g}_{tx};];\n"
)
NESTED_BAD = "B^{2}_{tx=0}[C^{f64,g}_{tx}=1;]L^{2}_{a=0}[C^{f64,g}_{a}=2;];"


def have_cc() -> bool:
    return shutil.which(os.environ.get("CC", "cc")) is not None


def corpus(n: int = 40) -> List[Dict]:
    """The first n programs of the conformance corpus (tests/data)."""
    path = DATA / "sources-small.jsonl"
    if not path.exists():
        pytest.skip(f"{path} is not there (run from the libleir source tree)")
    rows = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            rows.append(json.loads(line))
            if len(rows) == n:
                break
    return rows


@pytest.fixture
def relu() -> leir.Program:
    return leir.parse(RELU)


@pytest.fixture
def rowsum() -> leir.Program:
    return leir.parse(ROWSUM)


@pytest.fixture(scope="session")
def interp() -> leir.Backend:
    return leir.Backend("interp")


@pytest.fixture(scope="session")
def cpu(tmp_path_factory: pytest.TempPathFactory) -> leir.Backend:
    if not have_cc():
        pytest.skip("no C compiler for the cpu backend")
    return leir.Backend("cpu", cache_dir=str(tmp_path_factory.mktemp("kernels")), threads=1)
