"""What the leir.rl tests share (no tests here): a tiny dataset built with
the `leir` tool (docs/dataset.md's two programs), its records, and answers
written as the dataset writes them."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any, Dict, List

from leir_tool import ROOT, find_leir

PROGRAMS = [
    {"name": "relu", "leir": "L^{4}_{a=0}L^{8}_{c=0}[C^{f64,g}_{a,c}=max(A^{f64,g}_{a,c},0);];"},
    {"name": "rowsum", "leir": "L^{4}_{a=0}L^{8}_{c=0}[C^{f64,g}_{a}=C^{f64,g}_{a}+A^{f64,g}_{a,c};];"},
]
CONFIG = """name: tiny
seed: 1
sources:
  programs: programs.jsonl
walks: {count: 1, depth: 1}
sampling: {per_strategy: 1}
split: {test: 0.5, validation: 0}
"""
WORKLOADS = os.environ.get("LEIR_WORKLOADS_DIR") or os.path.join(ROOT, "workloads")


def build_tiny(directory: Path) -> Path:
    """Builds the tiny dataset in `directory`; returns its output folder."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "programs.jsonl").write_text("".join(json.dumps(p) + "\n" for p in PROGRAMS))
    (directory / "tiny.yaml").write_text(CONFIG)
    out = directory / "tiny"
    subprocess.run([find_leir(), "dataset", "build", "tiny.yaml", "--out", "tiny"], cwd=directory, check=True,
                   capture_output=True, timeout=300)
    return out


def rows(path: Path) -> List[Dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def answer(ir: str, strategy: str, think: str = "one step") -> str:
    """A single-variant answer as the dataset's assistant text is written."""
    return f"<think>{think}</think><answer>" + json.dumps({"transformed_IR": ir, "applied_strategy": strategy}) + "</answer>"


def columns(records: List[Dict[str, Any]]) -> Dict[str, List[Any]]:
    """The records as a trainer passes dataset columns: name -> one value per sample."""
    keys = sorted({k for r in records for k in r})
    return {k: [r.get(k) for r in records] for k in keys}
