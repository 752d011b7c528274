"""The step environment in the form of the ``verifiers`` library (PyPI
``verifiers``, its classic ``vf.MultiTurnEnv`` API, pinned in
scripts/packages-rl.txt).

:func:`load_environment` is the entry point verifiers environments provide
(``vf-eval`` / ``verifiers.load_environment`` import a module and call it).
Each row of its dataset is one episode: a workload drawn and emitted from a
seed, its Step-TP prompt as the first user message and the program in
``info``. During a rollout ``env_response`` hands each assistant answer to a
:class:`leir.rl.StepEnv` started from that program; its next observation
(the new program's prompt, or the same prompt after a rejection, with the
verdict) is the next user message, and the episode ends when the StepEnv's
does (``max_steps`` answers, or no strategy left). The rubric scores the
episode with libleir's reward function in TRL's form
(:class:`leir.rl.Rewarder`), each answer against the record of the state it
answered, summed; components go in as metrics (weight 0).

Imports verifiers only when called (it is not a dependency of leir).
"""

from __future__ import annotations

import json
from typing import Any, Dict, List, Mapping, Optional, Sequence

from .env import DEFAULT_WORKLOADS, StepEnv
from .rewards import Rewarder

#: The per-episode metrics the rubric logs beside the reward.
METRICS = ("accepted_steps", "verified_steps", "speedup")


def episode_rows(
    workloads: Optional[Sequence[str]] = None,
    *,
    num_examples: int = 8,
    seed: int = 0,
    shape: str = "small",
    workloads_dir: Optional[str] = None,
) -> List[Dict[str, Any]]:
    """The dataset rows of :func:`load_environment`: ``prompt`` (chat),
    ``answer`` (empty: the reward needs none), ``info`` (JSON: the program,
    its known variables and name, from which the episode starts),
    ``example_id``. Reproducible from ``seed``."""
    env = StepEnv(workloads or DEFAULT_WORKLOADS, shape=shape, seed=seed, workloads_dir=workloads_dir)
    rows = []
    for i in range(num_examples):
        obs, _ = env.reset()
        rec = env.record or {}
        start = {k: rec[k] for k in ("original_IR", "known", "name")}
        rows.append({
            "example_id": i,
            "prompt": [{"role": "user", "content": obs}],
            "answer": "",
            "info": json.dumps({"start": start}),
        })
    return rows


def _answer_of(messages: Any) -> str:
    """The text of the last assistant message."""
    for m in reversed(list(messages or [])):
        role = m.get("role") if isinstance(m, Mapping) else getattr(m, "role", None)
        if role == "assistant":
            content = m.get("content") if isinstance(m, Mapping) else getattr(m, "content", None)
            if isinstance(content, list):  # content parts
                return "".join(str(p.get("text", "")) if isinstance(p, Mapping) else str(getattr(p, "text", "")) for p in content)
            return "" if content is None else str(content)
    return ""


def _feedback(info: Mapping[str, Any], obs: str) -> str:
    head = "Accepted." if info["accepted"] else f"Rejected: {info['reason']} ({info['verdict']})."
    return f"{head} Predicted speedup so far: {info['speedup']:.3f}x.\n\n{obs}"


def load_environment(
    workloads: Optional[Sequence[str]] = None,
    *,
    num_examples: int = 8,
    max_steps: int = 4,
    seed: int = 0,
    shape: str = "small",
    workloads_dir: Optional[str] = None,
    rewarder: Optional[Rewarder] = None,
    **kwargs: Any,
) -> Any:
    """A ``verifiers.MultiTurnEnv`` over :class:`leir.rl.StepEnv` (see the
    module comment); ``kwargs`` go to the MultiTurnEnv (``system_prompt``,
    ``timeout_seconds``, ...). Needs verifiers and datasets."""
    import verifiers as vf
    from datasets import Dataset

    rw = rewarder or Rewarder(threads=1)
    rows = episode_rows(workloads, num_examples=num_examples, seed=seed, shape=shape, workloads_dir=workloads_dir)

    def episode_steps(state: Any) -> List[Dict[str, Any]]:
        return list(state.get("leir_steps") or [])

    def leir_reward(state: Any) -> float:
        """libleir's reward function, called as TRL calls it, on each answer
        of the episode with the record of the state it answered."""
        total = 0.0
        for s in episode_steps(state):
            total += rw(completions=[s["answer"]], **{k: [v] for k, v in s["record"].items()})[0]
        return total

    def accepted_steps(state: Any) -> float:
        return float(sum(1 for s in episode_steps(state) if s["accepted"]))

    def verified_steps(state: Any) -> float:
        """Answers that earned the verification reward (grounded and EQUAL/CLOSE)."""
        return float(sum(1 for s in episode_steps(state) if s["verified"] > 0))

    def speedup(state: Any) -> float:
        steps = episode_steps(state)
        return float(steps[-1]["speedup"]) if steps else 1.0

    rubric = vf.Rubric(funcs=[leir_reward, accepted_steps, verified_steps, speedup], weights=[1.0, 0.0, 0.0, 0.0])

    class LeirMultiTurnEnv(vf.MultiTurnEnv):  # type: ignore[misc,valid-type]
        """leir.rl.StepEnv as a verifiers MultiTurnEnv (docs/rl.md)."""

        async def setup_state(self, state: Any) -> Any:
            info = state.get("info") or {}
            if isinstance(info, str):
                info = json.loads(info)
            step_env = StepEnv(max_steps=max_steps, rewarder=rw, shape=shape, seed=seed, workloads_dir=workloads_dir)
            step_env.reset(info["start"])
            state["leir_env"] = step_env
            state["leir_steps"] = []
            return state

        async def env_response(self, messages: Any, state: Any, **kw: Any) -> Any:
            step_env: StepEnv = state["leir_env"]
            record = dict(step_env.record or {})
            answer = _answer_of(messages)
            obs, reward, done, info = step_env.step(answer)
            state["leir_steps"].append({
                "answer": answer,
                "record": {k: record[k] for k in ("original_IR", "known", "name", "messages")},
                "reward": reward,
                "accepted": info["accepted"],
                "verdict": info["verdict"],
                "verified": info["components"]["verified"],
                "reason": info["reason"],
                "speedup": info["speedup"],
                "program": info["program"],
            })
            reply = [vf.UserMessage(content=_feedback(info, obs))]
            if done:
                state["final_env_response"] = reply
            return reply

    env_kwargs = dict(kwargs)
    # the StepEnv ends the episode; max_turns only guards against a runaway loop
    env_kwargs.setdefault("max_turns", max_steps + 1)
    return LeirMultiTurnEnv(dataset=Dataset.from_list(rows), eval_dataset=Dataset.from_list(rows), rubric=rubric, **env_kwargs)
