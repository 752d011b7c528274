"""leir.rl's verifiers environment driven through the verifiers library's
own rollout: its MultiTurnEnv loop calls env_response on each answer and its
Rubric scores the episode. The model is a scripted client (verifiers'
OpenAI chat client with the network call replaced by scripted replies), so
nothing leaves the machine. The rewards must equal libleir's reward function
called directly and the plain StepEnv's rewards for the same answers."""

from __future__ import annotations

import asyncio
import json

import pytest

import leir
import leir.rl as rl
from leir.rl.verifiers_env import load_environment
from test_rl_helpers import WORKLOADS

vf = pytest.importorskip("verifiers", reason="verifiers is not importable (scripts/packages-rl.txt)")
from verifiers.clients import OpenAIChatCompletionsClient  # noqa: E402
from openai.types.chat import ChatCompletion  # noqa: E402


class ScriptedClient(OpenAIChatCompletionsClient):
    """Answers each model call with the next scripted reply; records the
    prompts it was sent."""

    def __init__(self, replies):
        super().__init__(object())  # no OpenAI client: get_native_response is ours
        self.replies = list(replies)
        self.prompts = []

    async def get_native_response(self, prompt, model, sampling_args, tools=None, **kwargs):
        self.prompts.append(prompt)
        text = self.replies.pop(0)
        return ChatCompletion.model_validate({
            "id": f"scripted-{len(self.prompts)}", "object": "chat.completion", "created": 0, "model": model,
            "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": text}}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        })

    async def close(self):
        pass


def answer_of(c: leir.Candidate, strategy: str = "") -> str:
    return "<think>t</think><answer>" + json.dumps(
        {"transformed_IR": str(c.result), "applied_strategy": strategy or c.strategy}) + "</answer>"


def first_exact(program: leir.Program) -> leir.Candidate:
    return next(c for c in leir.candidates(program) if c.exactness == "exact")


def test_rollout_rewards_equal_the_reward_function():
    env = load_environment(["level1/softmax"], num_examples=1, max_steps=3, workloads_dir=WORKLOADS, seed=2)
    assert isinstance(env, vf.MultiTurnEnv)
    row = env.get_eval_dataset()[0]
    start = json.loads(row["info"])["start"]

    # the script: an exact step, a step under another strategy's name, an
    # exact step from the new state; planned on a plain StepEnv
    plain = rl.StepEnv(max_steps=3, workloads_dir=WORKLOADS)
    plain.reset(start)
    replies, records, expected = [], [], []
    for kind in ("exact", "misnamed", "exact"):
        c = first_exact(plain.program)
        other = "loop_reorder" if c.strategy != "loop_reorder" else "loop_split"
        text = answer_of(c) if kind == "exact" else answer_of(c, other)
        records.append(dict(plain.record))
        replies.append(text)
        expected.append(plain.step(text))
    assert [e[3]["accepted"] for e in expected] == [True, False, True] and expected[-1][2]

    client = ScriptedClient(replies)
    out = asyncio.run(env.run_rollout(dict(row), client, "scripted", {}))
    assert not client.replies and len(client.prompts) == 3
    assert client.prompts[0][-1]["content"] == records[0]["messages"][0]["content"]
    assert "Rejected: strategy.not_grounded" in client.prompts[2][-1]["content"]

    direct = rl.Rewarder(threads=1)
    per_answer = [direct(completions=[a], **{k: [r[k]] for k in ("original_IR", "known", "name", "messages")})[0]
                  for a, r in zip(replies, records)]
    assert per_answer == pytest.approx([e[1] for e in expected])
    assert per_answer[0] > 1 and per_answer[1] < per_answer[0]
    assert out["reward"] == pytest.approx(sum(per_answer))
    metrics = out["metrics"]
    assert metrics["leir_reward"] == pytest.approx(sum(per_answer))
    assert metrics["accepted_steps"] == 2 and metrics["verified_steps"] == 2
    assert metrics["speedup"] == pytest.approx(expected[-1][3]["speedup"])


def test_dataset_is_reproducible():
    a = rl.verifiers_env.episode_rows(["level1/ReLU", "level1/softmax"], num_examples=3, seed=4, workloads_dir=WORKLOADS)
    b = rl.verifiers_env.episode_rows(["level1/ReLU", "level1/softmax"], num_examples=3, seed=4, workloads_dir=WORKLOADS)
    assert a == b and len({r["info"] for r in a}) >= 2
