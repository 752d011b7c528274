"""Step.params typed as in the step's JSON form, over every candidate of
corpus programs; Step.of; Candidate.assumed."""

from __future__ import annotations

import pytest
from conftest import corpus

import leir
from leir import catalogue as cg


def as_text(v: object) -> str:
    if isinstance(v, list):
        return ",".join(str(x) for x in v)
    return str(v)


def test_params_are_the_json_types_for_every_candidate() -> None:
    seen = set()
    for row in corpus(12):
        p = leir.parse(row["leir"])
        for c in p.candidates():
            s = c.step
            params = s.params
            assert params == {k: v for k, v in s.json.items() if k != "strategy"}
            assert list(params) == list(s.param_text)  # canonical key order
            for k, v in params.items():
                assert isinstance(v, (int, str, list)) and not isinstance(v, bool), (s, k)
                if isinstance(v, list):
                    assert v and len({type(x) for x in v}) == 1 and type(v[0]) in (int, str)
                assert as_text(v) == s.param_text[k], (s, k)
                seen.add((k, type(v).__name__))
                assert s[k] == v
            # the typed form rebuilds the step
            assert leir.Step.of(s.strategy, **params) == s
            params.clear()  # a copy: the step keeps its parameters
            assert s.params
    # the corpus exercises integers, names and lists
    assert {("nest", "int"), ("loop", "str"), ("factor", "int"), ("loops", "list")} <= seen


def test_paths_and_lists() -> None:
    s = leir.Step("expression_splitting nest=0 perm=1,0 eq=0 expr=1.0")
    assert s.params == {"nest": 0, "perm": [1, 0], "eq": 0, "expr": "1.0"}
    t = leir.Step.of("loop_tiling", nest=0, loops=["tx", "a"], factors=[2, 4])
    assert str(t) == "loop_tiling nest=0 loops=tx,a factors=2,4"
    assert t.param_text == {"nest": "0", "loops": "tx,a", "factors": "2,4"}
    with pytest.raises(KeyError):
        t["factor"]
    with pytest.raises(leir.ParseError):
        leir.Step.of("loop_split", nest=0, loop="a", factor="two")
    with pytest.raises(leir.NotFoundError):
        leir.Step.of("loop_spilt", nest=0)


def test_assumed_candidates() -> None:
    """The generic-values splits of Softsign are assumed, the proven ones
    not; leir.apply refuses an assumed step, Candidate.result applies it."""
    p = cg.Catalogue()["level1/Softsign"].emit("small")
    proven = {str(c) for c in p.candidates("additive_split")}
    generic = p.candidates("additive_split", generic_values=True)
    extra = [c for c in generic if str(c) not in proven]
    assert extra and all(c.assumed for c in extra)
    assert not any(c.assumed for c in generic if str(c) in proven)
    assert all(not c.assumed for c in p.candidates("additive_split"))
    c = extra[0]
    assert c.exactness == "reassociating" and c.result.is_valid
    assert p.apply(c.step) == c.result  # the step carries its listing's domain
    with pytest.raises(leir.NotApplicableError):
        p.apply(str(c.step))  # the bare text: the reference's domain
