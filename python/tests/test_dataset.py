"""leir.dataset: builds from a config (as `leir dataset build`), resumes,
shards, and reads a built dataset back as typed records that agree with
the files and with the library (every label re-verified, every sample's
step re-applied, the leakage check recomputed here)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict

import pytest
from conftest import DATA

import leir
from leir import dataset as ds

# Four small programs of the conformance corpus: one held out for test, one
# for validation, two trained on.
PROGRAMS = ("level1/ReLU", "level1/Matrix_vector_multiplication", "level1/LogSoftmax", "level1/Softsign")
CONFIG: Dict[str, Any] = {
    "name": "four",
    "seed": 3,
    "sources": {"programs": "programs.jsonl"},
    "walks": {"count": 1, "depth": 1},
    "sampling": {"per_strategy": 1},
    "split": {"test": 0.25, "validation": 0.25},
}
CONFIG_YAML = """name: four
seed: 3
sources: {programs: programs.jsonl}
walks: {count: 1, depth: 1}
sampling: {per_strategy: 1}
split: {test: 0.25, validation: 0.25}
"""


def write_sources(d: Path) -> Path:
    path = DATA / "sources-small.jsonl"
    if not path.exists():
        pytest.skip(f"{path} is not there (run from the libleir source tree)")
    lines = [l for l in path.read_text().splitlines() if json.loads(l)["id"] in PROGRAMS]
    assert len(lines) == len(PROGRAMS)
    (d / "programs.jsonl").write_text("\n".join(lines) + "\n")
    (d / "four.yaml").write_text(CONFIG_YAML)
    return d / "four.yaml"


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> ds.BuildResult:
    d = tmp_path_factory.mktemp("four")
    config = write_sources(d)
    return ds.build(config)  # out: the config's path without .yaml


def test_build_writes_the_files_and_a_typed_summary(built: ds.BuildResult) -> None:
    assert built.complete and built.units_total == built.units_done == 4
    assert built.out.name == "four"
    for f in ("train.jsonl", "eval.jsonl", "validation.jsonl", "archive.jsonl", "rejections.jsonl",
              "summary.json", "README.md"):
        assert (built.out / f).is_file(), f
    s = built.summary
    assert s is not None
    raw = json.loads((built.out / "summary.json").read_text())
    assert s.raw == raw and s == ds.Summary.from_json(raw)
    assert (s.name, s.seed, s.units) == ("four", 3, 4)
    assert s.records == raw["records"] and s.verified == raw["verified"] > 0
    assert s.split.by == "program" and s.split.units == {"train": 2, "validation": 1, "test": 1}
    assert s.leakage.clean and s.leakage.checked_labels == raw["leakage"]["checked_labels"] > 0
    assert s.rejected == sum(s.rejected_by_stage.values())
    assert set(s.per_strategy) <= {i.name for i in leir.strategies()}
    d = built.dataset()
    assert d.summary == s
    assert d.card.startswith("---\n") and "# four" in d.card


def test_records_are_typed_and_match_the_counts(built: ds.BuildResult) -> None:
    d = built.dataset()
    s = d.summary
    train = list(d.train())
    assert len(train) == s.records["train_single"] + s.records["train_multi"]
    for r in train:
        assert [m.role for m in r.messages] == ["user", "assistant"]
        assert r.user.startswith("Give the following IR of ") and r.cot and r.answer
    test, val = list(d.test()), list(d.validation())
    assert len(test) == s.records["eval_single"] + s.records["eval_multi"]
    assert len(val) == s.records["validation_single"] + s.records["validation_multi"]
    assert {p.split for p in test} == {"test"} and {p.split for p in val} == {"validation"}
    assert list(d.eval()) == test and list(d.prompts()) == test + val
    for p in test + val:
        assert p.kind in ("single", "multi") and (p.n == 1) == (p.kind == "single")
        assert p.labels and p.prompt == p.messages[0].content and p.original_ir in p.prompt
        assert [k.name for k in p.known] == [t.name for t in p.program().signature]
    assert d.prompt(test[0].id) == test[0]
    with pytest.raises(leir.NotFoundError):
        d.prompt("no-such-id")
    arch = list(d.archive())
    assert len(arch) == len(train) + len(test) + len(val)
    assert {a.split for a in arch} == {"train", "validation", "test"}
    for r in d.rejections():
        assert r.stage and r.unit


def test_every_label_verifies_and_every_sample_replays(built: ds.BuildResult) -> None:
    d = built.dataset()
    prompt = next(p for p in d.test() if p.kind == "single")
    before = prompt.program()
    for label in prompt.labels:
        v = leir.verify(before, label.program(), backend="interp")
        assert v.name == label.verdict, (label.strategy, v)
    n = 0
    for s in d.samples("train"):
        step = s.as_step()
        assert step.strategy == s.strategy and step.params == {k: v for k, v in s.step_json.items() if k != "strategy"}
        after = s.original().apply(step)
        assert after.hash_hex(alpha=True) == s.transformed_alpha_hash
        assert s.original().hash_hex(alpha=True) == s.state
        n += 1
    assert n > 0


def test_leakage_recomputed_from_the_records(built: ds.BuildResult) -> None:
    """No held-out state or label is a train prompt state or target, by
    alpha hashes recomputed here from the texts."""
    d = built.dataset()
    train_hashes = set()
    for s in d.samples("train"):
        train_hashes.add(s.original().hash_hex(alpha=True))
        train_hashes.add(s.transformed().hash_hex(alpha=True))
    held = list(d.prompts())
    for p in held:
        assert p.program().hash_hex(alpha=True) not in train_hashes
        for label in p.labels:
            assert label.program().hash_hex(alpha=True) not in train_hashes
    units = {a.unit: a.split for a in d.archive() if a.split == "train"}
    assert not {p.unit for p in held} & set(units)


def test_a_mapping_config_gives_the_same_files(built: ds.BuildResult, tmp_path: Path) -> None:
    write_sources(tmp_path)
    r = ds.build(CONFIG, tmp_path / "again", base_dir=tmp_path)
    assert r.complete
    for f in ("train.jsonl", "eval.jsonl", "validation.jsonl", "archive.jsonl"):
        assert (tmp_path / "again" / f).read_bytes() == (built.out / f).read_bytes(), f


def test_shards_and_resume_give_the_one_process_files(built: ds.BuildResult, tmp_path: Path) -> None:
    config = write_sources(tmp_path)
    out = tmp_path / "sharded"
    first = ds.build(config, out, shard=(0, 2))
    assert not first.complete and first.summary is None
    assert (first.units_total, first.units_done) == (4, 2)
    with pytest.raises(leir.LeirIOError) as ei:
        first.dataset()
    assert ei.value.rule == "dataset.incomplete"
    last = ds.build(config, out, shard=(1, 2))
    assert last.complete and last.units_done == 4
    assert (out / "train.jsonl").read_bytes() == (built.out / "train.jsonl").read_bytes()


def test_progress_can_stop_a_build_that_then_resumes(built: ds.BuildResult, tmp_path: Path) -> None:
    config = write_sources(tmp_path)
    out = tmp_path / "stopped"
    seen = []

    def stop_after_one(p: ds.Progress) -> bool:
        seen.append(p)
        return True

    with pytest.raises(leir.CancelledError):
        ds.build(config, out, progress=stop_after_one)
    assert len(seen) == 1 and seen[0].units_done == 1 and seen[0].units_total == 4
    with pytest.raises(leir.LeirIOError):
        ds.Dataset(out)
    seen.clear()
    r = ds.build(config, out, progress=seen.append)
    assert r.complete and seen[-1].units_resumed == 1 and seen[-1].units_done == 4
    assert (out / "train.jsonl").read_bytes() == (built.out / "train.jsonl").read_bytes()

    def fails(p: ds.Progress) -> None:
        raise ZeroDivisionError("from the callback")

    with pytest.raises(ZeroDivisionError):
        ds.build(config, tmp_path / "failed", progress=fails)


def test_workload_sources_use_the_catalogue(tmp_path: Path) -> None:
    cfg = {
        "name": "relu",
        "seed": 1,
        "sources": {"workloads": ["level1/ReLU", "level1/Softsign"], "shapes": ["small"]},
        "sampling": {"per_strategy": 1},
        "split": {"test": 0.5, "validation": 0},
    }
    r = ds.build(cfg, tmp_path / "wl")
    assert r.complete and r.summary is not None and r.summary.units == 2
    units = {s.unit for s in r.dataset().samples()}
    assert units == {"level1/ReLU@small", "level1/Softsign@small"}
    assert {s.name for s in r.dataset().samples()} == {"ReLU", "Softsign"}


def test_errors(built: ds.BuildResult, tmp_path: Path) -> None:
    with pytest.raises(leir.ParseError) as ei:
        ds.build({"name": "x", "seeed": 1}, tmp_path / "bad")
    assert ei.value.rule == "dataset.config" and ei.value.line == 1 and "seeed" in ei.value.message
    with pytest.raises(leir.LeirIOError):
        ds.build(tmp_path / "missing.yaml")
    # a directory built from another config is refused
    write_sources(tmp_path)
    other = dict(CONFIG, seed=4)
    with pytest.raises(leir.ArgumentError):
        ds.build(other, built.out, base_dir=tmp_path)
    with pytest.raises(TypeError):
        ds.build(CONFIG)  # a mapping needs out=
    with pytest.raises(leir.NotFoundError):
        ds.build({"name": "x", "sources": {"workloads": ["level1/NoSuchWorkload"], "shapes": ["small"]}},
                 tmp_path / "nowl")
    with pytest.raises(leir.LeirIOError):
        ds.Dataset(tmp_path / "nothing-here")
    # a damaged file is a ParseError at its line
    broken = tmp_path / "broken"
    broken.mkdir()
    for f in ("summary.json", "eval.jsonl"):
        (broken / f).write_bytes((built.out / f).read_bytes())
    with open(broken / "eval.jsonl", "a") as f:
        f.write('{"id": "truncated\n')
    lines = (built.out / "eval.jsonl").read_text().count("\n")
    with pytest.raises(leir.ParseError) as pe:
        list(ds.Dataset(broken).test())
    assert pe.value.line == lines + 1 and pe.value.rule == "dataset.jsonl"
    with pytest.raises(leir.LeirIOError):
        list(ds.Dataset(broken).train())
