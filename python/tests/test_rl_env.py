"""leir.rl.StepEnv driven by a scripted agent through a catalogue workload:
the plain form, the Gymnasium form (when gymnasium is importable), and
reproducibility from the seed."""

from __future__ import annotations

import json

import pytest

import leir
import leir.rl as rl
from test_rl_helpers import WORKLOADS


def answer_of(c: leir.Candidate, strategy: str = "") -> str:
    return "<think>t</think><answer>" + json.dumps(
        {"transformed_IR": str(c.result), "applied_strategy": strategy or c.strategy}) + "</answer>"


def first_exact(program: leir.Program) -> leir.Candidate:
    return next(c for c in leir.candidates(program) if c.exactness == "exact")


def episode(env, target):
    obs, info = env.reset(target)
    trace = [(info["program"], None)]
    done = False
    while not done:
        c = first_exact(env.program)
        before = str(env.program)
        obs, reward, done, info = env.step(answer_of(c))
        assert info["accepted"] and info["verdict"] == "EQUAL", info
        assert info["program"] != before and info["program"] in obs
        trace.append((info["program"], round(reward, 9)))
    return trace, info


def test_scripted_agent_through_a_workload():
    env = rl.StepEnv(max_steps=3, workloads_dir=WORKLOADS, seed=5)
    trace, info = episode(env, "level1/ReLU")
    assert len(trace) == 4 and info["truncated"] and not info["terminated"] and env.done
    with pytest.raises(RuntimeError):
        env.step("anything")
    # the same seed and target give the same episode
    again, _ = episode(rl.StepEnv(max_steps=3, workloads_dir=WORKLOADS, seed=5), "level1/ReLU")
    assert again == trace


def test_rejected_answers_keep_the_state():
    env = rl.StepEnv(max_steps=4, workloads_dir=WORKLOADS)
    obs0, info = env.reset("level1/softmax")
    c = first_exact(env.program)
    other = "loop_reorder" if c.strategy != "loop_reorder" else "loop_split"
    for text, reason in [(answer_of(c, other), "strategy.not_grounded"), ("no answer", "answer.no_answer")]:
        obs, reward, done, info = env.step(text)
        assert not info["accepted"] and info["reason"] == reason and obs == obs0
        assert info["program"] == str(env.source) and info["components"]["verified"] == 0
    assert env.steps == 2 and not env.done


def test_gymnasium_form():
    gymnasium = pytest.importorskip("gymnasium", reason="gymnasium is not importable (scripts/packages-rl.txt)")
    env = rl.gym_env(max_steps=2, workloads_dir=WORKLOADS)
    assert isinstance(env, gymnasium.Env)
    obs, info = env.reset(seed=3, options={"target": "level1/ReLU"})
    assert env.observation_space.contains(obs)
    c = first_exact(env.unwrapped.env.program)
    obs, reward, terminated, truncated, info = env.step(answer_of(c))
    assert info["accepted"] and reward > 1 and not terminated and not truncated
    obs, reward, terminated, truncated, info = env.step("nothing")
    assert not info["accepted"] and truncated and not terminated
