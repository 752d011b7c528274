"""leir.rl: training against libleir (docs/rl.md).

- :class:`Rewarder` / :func:`reward_function`: reward functions in TRL's
  convention (``reward(completions, **columns) -> list[float]``) and
  ms-swift's (:class:`SwiftReward`, :func:`swift_plugin`), over the
  library's own judgement (``leir eval``): format, valid IR, grounded,
  verified, predicted and measured speedup, weighted, per sample.
- :class:`StepEnv`: a multi-turn step environment (``reset`` / ``step``),
  with a Gymnasium class (:func:`gym_env`), an OpenEnv environment
  (:func:`openenv_environment`) and a verifiers MultiTurnEnv
  (:func:`leir.rl.verifiers_env.load_environment`); each imports its
  library only when asked.
- :func:`preference_pairs`, :func:`process_rows`: DPO and stepwise
  process-reward data from a dataset's rejections and walks and from search
  trajectories and measurement databases, with the dataset's splits
  (:mod:`leir.rl.prefdata`).
"""

from __future__ import annotations

from .env import DEFAULT_WORKLOADS, StepEnv, gym_env, openenv_environment, openenv_types, register_gym
from .prefdata import DatasetSteps, db_trajectories, preference_pairs, process_rows, write_splits
from .rewards import (
    COMPONENTS,
    DEFAULT_WEIGHTS,
    DatasetIndex,
    Rewarder,
    Score,
    SwiftReward,
    components_table,
    program_record,
    prompt_record,
    reward_function,
    swift_plugin,
)

__all__ = [
    "COMPONENTS",
    "DEFAULT_WEIGHTS",
    "DEFAULT_WORKLOADS",
    "DatasetIndex",
    "DatasetSteps",
    "Rewarder",
    "Score",
    "StepEnv",
    "SwiftReward",
    "components_table",
    "db_trajectories",
    "gym_env",
    "openenv_environment",
    "openenv_types",
    "preference_pairs",
    "process_rows",
    "program_record",
    "prompt_record",
    "register_gym",
    "reward_function",
    "swift_plugin",
    "write_splits",
]
