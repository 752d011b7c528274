"""leir.rl reward functions called the way trainers call them, on the eval
records of a dataset built here (right, CLOSE, wrong and unparsable
answers), against leir eval's own judgement."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

import leir
import leir.rl as rl
from test_rl_helpers import answer, build_tiny, columns, rows


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny(tmp_path_factory.mktemp("rl"))


@pytest.fixture(scope="module")
def evals(tiny: Path):
    return rows(tiny / "eval.jsonl")


def single(evals, depth=0):
    return next(r for r in evals if r["kind"] == "single" and r["depth"] == depth)


def test_labels_verify_and_ground_in_trl_convention(evals):
    rec = single(evals)
    comps, recs = [], []
    for lab in rec["labels"]:
        comps.append(answer(lab["transformed_IR"], lab["strategy"]))
        recs.append(rec)
    r = rl.Rewarder()
    out = r(prompts=[rec["messages"]] * len(comps), completions=comps, **columns(recs))
    assert len(out) == len(comps)
    for s, lab, x in zip(r.last_scores, rec["labels"], out):
        assert s.parsed and s.grounded and s.different and s.label, (lab["strategy"], s)
        assert s.verdict == lab["verdict"]
        assert s.components["format"] == 1.0 and s.components["valid_ir"] == 1.0
        assert s.components["verified"] == (1.0 if lab["verdict"] == "EQUAL" else 0.5)
        assert s.predicted_speedup is not None and s.predicted_speedup > 0
        want = sum(rl.DEFAULT_WEIGHTS[c] * s.components[c] for c in rl.COMPONENTS)
        assert math.isclose(x, want)


def test_close_answer_gets_close_value(evals):
    rec = single(evals)
    lab = next(l for l in rec["labels"] if l["verdict"] == "CLOSE")
    r = rl.Rewarder({"verified": 1.0}, close_value=0.25)
    assert r([answer(lab["transformed_IR"], lab["strategy"])], **columns([rec])) == [0.25]
    assert r.last_scores[0].verdict == "CLOSE"


def test_chat_completions_equal_string_completions(evals):
    rec = single(evals)
    lab = rec["labels"][0]
    text = answer(lab["transformed_IR"], lab["strategy"])
    r = rl.Rewarder(cache_size=0)
    a = r([text], **columns([rec]))
    b = r([[{"role": "assistant", "content": text}]], **columns([rec]))
    assert a == b and a[0] > 1


def test_agrees_with_leir_eval(tiny, evals, tmp_path):
    """Each component against the report of `leir eval` on the same answers."""
    rec = single(evals)
    texts = [answer(l["transformed_IR"], l["strategy"]) for l in rec["labels"][:6]]
    texts += ["no answer here", answer(rec["original_IR"], "loop_reorder"),
              answer("L^{4}_{a=0}L^{8}_{c=0}[C^{f64,g}_{a,c}=0;];", "loop_reorder")]
    from test_rl_helpers import find_leir
    import subprocess

    (tmp_path / "a.jsonl").write_text("".join(json.dumps({"id": rec["id"], "answer": t}) + "\n" for t in texts))
    rep = json.loads(subprocess.run([find_leir(), "eval", str(tmp_path / "a.jsonl"), "--dataset", str(tiny), "--json"],
                                    capture_output=True, text=True, check=True).stdout)
    r = rl.Rewarder()
    scores = r.score(texts, **columns([rec] * len(texts)))
    for s, a in zip(scores, rep["answers"]):
        assert s.parsed == a["parsed"]
        if not a["parsed"]:
            assert s.reason == a["reason"]
            continue
        it = a["items"][0]
        assert s.verdict == (it["verdict"] or "")
        assert s.grounded == (it["grounded"] and it["different"])
        assert (s.components["verified"] > 0) == (it["grounded"] and it["pass_close"])
        assert s.reason == (it["reason"] or "")


def test_train_rows_are_found_in_the_archive(tiny):
    train = rows(tiny / "train.jsonl")[:5]
    r = rl.Rewarder(dataset=str(tiny))
    out = r(prompts=[[t["messages"][0]] for t in train], completions=[t["messages"][1]["content"] for t in train])
    assert all(s.parsed for s in r.last_scores)
    single_rows = [s for s, t in zip(r.last_scores, train) if "[{'idx'" not in t["messages"][1]["content"]]
    assert single_rows and all(s.components["verified"] > 0 for s in single_rows)
    assert len(out) == 5
    with pytest.raises(KeyError):
        rl.Rewarder()(["x"], prompts=[[train[0]["messages"][0]]])


def test_multi_prompt_counts_distinct_passing_irs(evals):
    rec = next(r for r in evals if r["kind"] == "multi" and r["depth"] == 0)
    n = rec["n"]
    exact = [l for l in rec["labels"] if l["verdict"] == "EQUAL"]
    full = "<think>t</think><answer>" + str([{"idx": i, "transformed_IR": l["transformed_IR"], "applied_strategy": l["strategy"]}
                                             for i, l in enumerate(exact[:n])]) + "</answer>"
    one = "<think>t</think><answer>" + str([{"idx": 0, "transformed_IR": exact[0]["transformed_IR"], "applied_strategy": exact[0]["strategy"]}]) + "</answer>"
    r = rl.Rewarder({"verified": 1.0})
    assert r([full, one], **columns([rec, rec])) == [1.0, pytest.approx(1.0 / n)]


def test_component_functions_share_one_judgement(evals):
    rec = single(evals)
    lab = rec["labels"][0]
    texts = [answer(lab["transformed_IR"], lab["strategy"]), "garbage"]
    r = rl.Rewarder()
    fns = [r.component(c) for c in rl.COMPONENTS]
    assert [f.__name__ for f in fns][:2] == ["leir_format", "leir_valid_ir"]
    got = {c: f(texts, **columns([rec, rec])) for c, f in zip(rl.COMPONENTS, fns)}
    assert got["verified"] == [1.0, 0.0] and got["format"] == [1.0, 0.0]
    assert r.last_sources["text"] == 2  # the later components were cache hits
    with pytest.raises(ValueError):
        r.component("speed")
    with pytest.raises(ValueError):
        rl.Rewarder({"speed": 1.0})


def test_logging_hooks_receive_each_component(evals):
    rec = single(evals)
    lab = rec["labels"][0]
    extra, metric = {}, {}
    rl.Rewarder()([answer(lab["transformed_IR"], lab["strategy"]), "x"], **columns([rec, rec]),
                  log_extra=lambda k, v: extra.__setitem__(k, v), log_metric=lambda k, v: metric.__setitem__(k, v))
    assert extra["leir/verified"] == [1.0, 0.0]
    assert extra["leir/reason"][1] == "answer.no_answer"
    assert metric["leir/verified"] == 0.5


def test_cache_by_text_and_by_alpha_hash(evals):
    rec = single(evals)
    lab = next(l for l in rec["labels"] if l["strategy"] == "loop_reorder")
    r = rl.Rewarder()
    a = r([answer(lab["transformed_IR"], "loop_reorder")], **columns([rec]))
    assert r.last_sources["judged"] == 1
    # the same program with other loop names and other words: the alpha hash
    renamed = lab["transformed_IR"].replace("_{a", "_{q").replace(",a}", ",q}").replace("{a,", "{q,")
    assert leir.parse(renamed).hash(alpha=True) == leir.parse(lab["transformed_IR"]).hash(alpha=True)
    b = r([answer(renamed, "loop_reorder", think="other words")], **columns([rec]))
    assert r.last_sources["alpha"] == 1 and a == b and r.last_scores[0].cached
    # the same program without the dataset's layout: format 0.5, else the same
    c = r(["<answer>" + json.dumps({"transformed_IR": renamed, "applied_strategy": "loop_reorder"}) + "</answer>"], **columns([rec]))
    assert r.last_scores[0].components["format"] == 0.5 and c[0] == pytest.approx(a[0] - 0.05)
    r([answer(lab["transformed_IR"], "loop_reorder")], **columns([rec]))
    assert r.last_sources["text"] == 1


def test_threads_give_the_same_scores(evals):
    recs, texts = [], []
    for rec in evals:
        for lab in rec["labels"][:5]:
            recs.append(rec)
            texts.append(answer(lab["transformed_IR"], lab["strategy"]))
    texts.append("nothing")
    recs.append(evals[0])
    one = rl.Rewarder(threads=1, cache_size=0).score(texts, records=recs)
    two = rl.Rewarder(threads=2, cache_size=0).score(texts, records=recs)
    assert [s.as_dict() for s in one] == [s.as_dict() for s in two]


def test_swift_plugin_form(tiny, evals):
    rec = single(evals)
    lab = rec["labels"][0]
    cls = rl.swift_plugin("leir_test", weights={"verified": 1.0}, dataset=str(tiny))
    orm = cls(None)  # ms-swift may hand the plugin its tokenizer
    assert isinstance(orm, rl.SwiftReward)
    out = orm([answer(lab["transformed_IR"], lab["strategy"]), "x"], messages=[rec["messages"]] * 2, id=[rec["id"]] * 2)
    assert out == [1.0, 0.0]


def test_program_record_prompt_is_the_datasets(evals):
    rec = single(evals)
    p = leir.parse(rec["original_IR"])
    p.set_signature({"A": ("f64", (4, 8))}, {"C": ("f64", (4, 8))})
    assert rl.program_record(p, "relu")["messages"][0]["content"] == rec["messages"][0]["content"]


def test_timing_measures_verified_steps_only(evals):
    """timing=True times a verified step against the prompt's program (cpu
    backend); an unverified answer is not run."""
    rec = single(evals)
    lab = next(l for l in rec["labels"] if l["verdict"] == "EQUAL")
    r = rl.Rewarder(timing=True, cache_size=0, timing_options={"warmup": 1, "min_runs": 3, "max_runs": 5,
                                                               "min_seconds": 0.0, "max_seconds": 0.5})
    assert r.weights["measured_speedup"] == 0.5
    good, same = r.score([answer(lab["transformed_IR"], lab["strategy"]), answer(rec["original_IR"], lab["strategy"])],
                         **columns([rec, rec]))
    assert good.measured_speedup is not None and good.measured_speedup > 0, good.message
    assert -1.0 <= good.components["measured_speedup"] <= 1.0
    assert same.measured_speedup is None and same.components["measured_speedup"] == 0.0
