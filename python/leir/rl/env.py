"""A multi-turn step environment over libleir.

The state is a program. ``reset(target)`` starts an episode from a workload
of the catalogue (``"level1/ReLU"``), LEIR text, a :class:`leir.Program`
(with its signature) or a dataset record, and returns the Step-TP prompt of
the program, worded as the dataset builder words it. ``step(answer)``
judges the model's answer as the reward functions do (``leir eval``'s
judgement of one single-variant prompt, :class:`leir.rl.Rewarder`'s
weights): a grounded, verified step becomes the new state; anything else
leaves the state as it was. The episode ends after ``max_steps`` answers,
or when no strategy applies to the state any more.

Reproducible: the workload drawn by ``reset()`` without a target, a
"random" shape, and verification's inputs all come from seeds.

Adapters, each importing its library only when asked: :func:`gym_env`
(gymnasium.Env), :func:`openenv_environment` (OpenEnv's
``openenv.core.env_server.Environment``).
"""

from __future__ import annotations

import random
import string
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

from ..program import Program
from ..strategy import candidates
from . import _native
from .answers import program_of
from .rewards import Rewarder, Score, program_record

#: The workloads ``reset()`` draws from when given none (small shapes).
DEFAULT_WORKLOADS: Tuple[str, ...] = (
    "level1/ReLU",
    "level1/softmax",
    "level1/LayerNorm",
    "level1/Sum_reduction_over_a_dimension",
    "level1/Matmul3D",
    "level2/Gemm_Divide_Sum_Scaling",
)

Target = Union[None, str, Program, Mapping[str, Any]]


class StepEnv:
    """See the module comment. ``rewarder``: the :class:`Rewarder` that
    judges each answer (default: one with the default weights);
    ``workloads``: what ``reset()`` draws from; ``shape``: the workloads'
    shape ("small", "default", "random"); ``seed``: the draw's seed."""

    def __init__(
        self,
        workloads: Optional[Sequence[str]] = None,
        *,
        max_steps: int = 4,
        rewarder: Optional[Rewarder] = None,
        shape: str = "small",
        seed: int = 0,
        workloads_dir: Optional[str] = None,
    ) -> None:
        if max_steps < 1:
            raise ValueError("max_steps must be at least 1")
        self.workloads = tuple(workloads or DEFAULT_WORKLOADS)
        self.max_steps = int(max_steps)
        self.rewarder = rewarder or Rewarder(threads=1)
        self.shape = shape
        self.seed = int(seed)
        self.workloads_dir = workloads_dir
        self._rng = random.Random(self.seed)
        self.name = "Model"
        self.source: Optional[Program] = None
        self.program: Optional[Program] = None
        self.record: Optional[Dict[str, Any]] = None
        self.steps = 0
        self.done = True
        self.history: List[Dict[str, Any]] = []

    # -- episode -------------------------------------------------------------------
    def reset(self, target: Target = None, *, seed: Optional[int] = None) -> Tuple[str, Dict[str, Any]]:
        """Starts an episode; returns (observation, info)."""
        if seed is not None:
            self._rng = random.Random(int(seed))
        if target is None:
            target = self.workloads[self._rng.randrange(len(self.workloads))]
        self.source, self.name = self._program(target)
        self.program = self.source.copy()
        self.steps = 0
        self.done = False
        self.history = []
        obs = self._observe()
        return obs, {"program": str(self.program), "name": self.name, "step": 0, "speedup": 1.0}

    def step(self, answer: Any) -> Tuple[str, float, bool, Dict[str, Any]]:
        """Judges ``answer`` (text or chat messages) against the current
        program; returns (observation, reward, done, info). ``info``:
        ``accepted``, ``verdict``, ``reason``, ``message``, ``components``,
        ``strategy``, ``step``, ``speedup`` (the cost model's, source over
        current), ``measured_speedup`` (with a timing rewarder), and
        ``terminated`` / ``truncated``."""
        if self.done or self.program is None or self.record is None:
            raise RuntimeError("step() on a finished episode: call reset() first")
        score: Score = self.rewarder.score([answer], records=[self.record])[0]
        self.steps += 1
        accepted = score.components["verified"] > 0 and score.program is not None
        measured = None
        if accepted:
            nxt = program_of(score.program or "", self.record["known"])
            if nxt is None:  # cannot happen for a verified single answer; be safe
                accepted = False
            else:
                nxt.name = self.name
                self.program = nxt
                if self.rewarder.timing:
                    measured = self._measured()
        terminated = accepted and not candidates(self.program)
        truncated = not terminated and self.steps >= self.max_steps
        self.done = terminated or truncated
        obs = self._observe() if accepted else self.record["messages"][0]["content"]
        info = {
            "accepted": accepted,
            "verdict": score.verdict,
            "reason": score.reason,
            "message": score.message,
            "components": dict(score.components),
            "strategy": score.strategy,
            "step": self.steps,
            "speedup": self.speedup(),
            "measured_speedup": measured,
            "program": str(self.program),
            "terminated": terminated,
            "truncated": truncated,
        }
        self.history.append({"answer": answer if isinstance(answer, str) else str(answer), **info, "reward": score.reward})
        return obs, float(score.reward), self.done, info

    def speedup(self) -> float:
        """The cost model's speedup of the current program over the source."""
        if self.source is None or self.program is None:
            return 1.0
        t1 = _native.predicted_seconds(self.program)
        return _native.predicted_seconds(self.source) / t1 if t1 > 0 else 1.0

    # -- internals -----------------------------------------------------------------
    def _measured(self) -> Optional[float]:
        from ..run import bench

        assert self.source is not None and self.program is not None
        t = bench([self.source, self.program], backend=self.rewarder.timing_backend, **self.rewarder.timing_options)
        return float(t[1].speedup)

    def _observe(self) -> str:
        assert self.program is not None
        self.record = program_record(self.program, self.name)
        return str(self.record["messages"][0]["content"])

    def _program(self, target: Target) -> Tuple[Program, str]:
        if isinstance(target, Program):
            p = target.copy()
            if not p.signature:
                p.infer_signature()
            return p, p.name or "Model"
        if isinstance(target, Mapping):
            p = program_of(str(target.get("original_IR", "")), target.get("known") or [])
            if p is None:
                raise ValueError("the record's original_IR does not check with its known variables")
            name = str(target.get("name") or "Model")
            p.name = name
            return p, name
        if isinstance(target, str):
            if "[" not in target and "=" not in target:
                p = _native.emit_workload(
                    target, shape=self.shape, seed=self._rng.randrange(1 << 31), directory=self.workloads_dir
                )
                return p, p.name or target.rsplit("/", 1)[-1]
            p = Program.parse(target)
            p.infer_signature()
            return p, "Model"
        raise TypeError(f"cannot start an episode from {type(target).__name__}")


# -- Gymnasium -------------------------------------------------------------------

#: The characters of prompts and answers in the Text spaces.
CHARSET = string.printable
_GYM_CLASS: Any = None


def gym_env(workloads: Optional[Sequence[str]] = None, **options: Any) -> Any:
    """A ``gymnasium.Env`` over :class:`StepEnv` (options as StepEnv's, and
    ``render_mode="ansi"``). Observations and actions are text
    (``gymnasium.spaces.Text``); ``reset(seed=, options={"target": ...})``
    takes the episode's workload, program or record; ``step`` returns
    (obs, reward, terminated, truncated, info). Needs gymnasium."""
    global _GYM_CLASS
    if _GYM_CLASS is None:
        _GYM_CLASS = _make_gym_class()
    return _GYM_CLASS(workloads, **options)


def _make_gym_class() -> Any:
    import gymnasium
    from gymnasium import spaces

    class LeirStepEnv(gymnasium.Env):  # type: ignore[misc]
        """Gymnasium form of leir.rl.StepEnv (docs/rl.md)."""

        metadata = {"render_modes": ["ansi"]}

        def __init__(self, workloads: Optional[Sequence[str]] = None, render_mode: Optional[str] = None, **options: Any):
            self.env = StepEnv(workloads, **options)
            self.render_mode = render_mode
            limit = self.env.rewarder.max_answer_bytes
            self.observation_space = spaces.Text(max_length=1 << 20, charset=CHARSET)
            self.action_space = spaces.Text(max_length=limit, charset=CHARSET)
            self._obs = ""

        def reset(self, *, seed: Optional[int] = None, options: Optional[Mapping[str, Any]] = None) -> Tuple[str, Dict[str, Any]]:
            super().reset(seed=seed)
            target = (options or {}).get("target")
            if target is None and seed is None:
                # drawn from gymnasium's generator, itself seeded by reset(seed=)
                target = self.env.workloads[int(self.np_random.integers(len(self.env.workloads)))]
            obs, info = self.env.reset(target, seed=seed)
            self._obs = obs
            return obs, info

        def step(self, action: Any) -> Tuple[str, float, bool, bool, Dict[str, Any]]:
            obs, reward, _done, info = self.env.step(action)
            self._obs = obs
            return obs, reward, bool(info["terminated"]), bool(info["truncated"]), info

        def render(self) -> Optional[str]:
            return self._obs if self.render_mode == "ansi" else None

    return LeirStepEnv


def register_gym(id: str = "leir/StepTP-v0") -> str:
    """Registers :func:`gym_env` with gymnasium (``gymnasium.make(id)``)."""
    import gymnasium

    if id not in gymnasium.registry:
        gymnasium.register(id=id, entry_point="leir.rl.env:gym_env")
    return id


# -- OpenEnv ---------------------------------------------------------------------

_OPENENV: Dict[str, Any] = {}


def openenv_types() -> Tuple[Any, Any, Any]:
    """(Action, Observation, State) classes of the OpenEnv form: the action
    carries the model's ``answer``; the observation the ``prompt`` and the
    judgement (``verdict``, ``reason``, ``accepted``, ``speedup``, plus
    OpenEnv's ``done``, ``reward``, ``metadata``). Needs openenv-core."""
    if not _OPENENV:
        from openenv.core.env_server.interfaces import Environment
        from openenv.core.env_server.types import Action, Observation, State

        class LeirAction(Action):  # type: ignore[misc]
            answer: str = ""

        class LeirObservation(Observation):  # type: ignore[misc]
            prompt: str = ""
            verdict: str = ""
            reason: str = ""
            accepted: bool = False
            speedup: float = 1.0

        class LeirState(State):  # type: ignore[misc]
            program: str = ""
            name: str = ""

        class LeirEnvironment(Environment):  # type: ignore[misc]
            """OpenEnv form of leir.rl.StepEnv (docs/rl.md)."""

            SUPPORTS_CONCURRENT_SESSIONS = True  # each instance owns its state

            def __init__(self, workloads: Optional[Sequence[str]] = None, **options: Any) -> None:
                super().__init__()
                self.env = StepEnv(workloads, **options)
                self._episode: Optional[str] = None

            def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None, **kwargs: Any) -> Any:
                obs, info = self.env.reset(kwargs.get("target"), seed=seed)
                self._episode = episode_id
                return LeirObservation(prompt=obs, done=False, reward=None, metadata=info)

            def step(self, action: Any, timeout_s: Optional[float] = None, **kwargs: Any) -> Any:
                answer = action.answer if hasattr(action, "answer") else str(action)
                obs, reward, done, info = self.env.step(answer)
                return LeirObservation(
                    prompt=obs,
                    verdict=info["verdict"],
                    reason=info["reason"],
                    accepted=info["accepted"],
                    speedup=info["speedup"],
                    done=done,
                    reward=reward,
                    metadata={k: v for k, v in info.items() if k not in ("verdict", "reason", "accepted", "speedup")},
                )

            @property
            def state(self) -> Any:
                return LeirState(
                    episode_id=self._episode,
                    step_count=self.env.steps,
                    program=str(self.env.program or ""),
                    name=self.env.name,
                )

        _OPENENV.update(action=LeirAction, observation=LeirObservation, state=LeirState, env=LeirEnvironment)
    return _OPENENV["action"], _OPENENV["observation"], _OPENENV["state"]


def openenv_environment(workloads: Optional[Sequence[str]] = None, **options: Any) -> Any:
    """An OpenEnv ``Environment`` over :class:`StepEnv`; serve it with
    ``openenv.core.env_server.create_app(lambda: openenv_environment(),
    *openenv_types()[:2])``. Needs openenv-core."""
    openenv_types()
    return _OPENENV["env"](workloads, **options)
