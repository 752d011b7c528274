"""A real client of leir.rl's reward function: TRL's GRPOTrainer, a few steps
on CPU (issue 31.5).

Nothing is downloaded: the model is a Qwen2 built from a config (hidden
size 32, 2 layers) with random weights, and the tokenizer is trained here on
the text of a dataset built in the test with `leir dataset build`. The
tokenizer is word-level over whole texts (no pre-tokenizer): each prompt and
each answer of the dataset is one token, so a random model's two-token
completions are answers of the dataset, alone or in pairs, and earn rewards
that differ (a verified step, a step of another state, an unparsable pair)
instead of all being 0. The test then checks that what GRPOTrainer logged
(each sample's reward, each step's mean, the components the rewarder
reported through ``log_metric``) is what the reward function gives when
called directly on the same prompts and completions.

Skipped when trl (with torch, transformers, tokenizers, datasets) is not
importable: tests/rl_test.sh VENV runs it with scripts/packages-rl.txt.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest

try:
    import datasets
    import torch
    from tokenizers import Tokenizer, models, trainers
    from transformers import PreTrainedTokenizerFast, Qwen2Config, Qwen2ForCausalLM, TrainerCallback
    from trl import GRPOConfig, GRPOTrainer
except ImportError as e:  # the system python of CI has none of these
    pytest.skip(f"trl, torch, transformers, tokenizers or datasets is not importable ({e}); "
                "tests/rl_test.sh VENV runs this with scripts/packages-rl.txt",
                allow_module_level=True)

import leir.rl as rl
from test_rl_helpers import answer, build_tiny, rows

#: The columns of eval.jsonl the reward function needs, as dataset columns.
COLUMNS = ("id", "original_IR", "known", "name", "kind", "n")
STEPS = 3


def dataset_texts(directory: Path):
    evals = rows(directory / "eval.jsonl")
    train = rows(directory / "train.jsonl")
    texts = [r["messages"][0]["content"] for r in evals]
    texts += [t["messages"][-1]["content"] for t in train]
    texts += [answer(l["transformed_IR"], l["strategy"]) for r in evals for l in r["labels"]]
    return evals, texts


def tokenizer_for(texts):
    tok = Tokenizer(models.WordLevel(unk_token="[UNK]"))
    tok.train_from_iterator(texts, trainers.WordLevelTrainer(special_tokens=["[UNK]", "[PAD]", "[EOS]"]))
    return PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="[UNK]", pad_token="[PAD]", eos_token="[EOS]")


def tiny_model(tokenizer) -> "Qwen2ForCausalLM":
    torch.manual_seed(0)
    cfg = Qwen2Config(vocab_size=len(tokenizer), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                      num_attention_heads=2, num_key_value_heads=1, max_position_embeddings=64,
                      pad_token_id=tokenizer.pad_token_id, eos_token_id=tokenizer.eos_token_id,
                      bos_token_id=None, tie_word_embeddings=True)
    return Qwen2ForCausalLM(cfg)


class Batches(TrainerCallback):
    """What the trainer logged for each step's generation batch."""

    def __init__(self) -> None:
        self.trainer = None
        self.seen = []

    def on_step_end(self, args, state, control, **kwargs):
        logs = self.trainer._logs
        self.seen.append((list(logs["prompt"]), list(logs["completion"]), list(logs["rewards"]["leir_reward"])))


def test_grpo_trainer_logs_the_reward_functions_rewards(tmp_path: Path) -> None:
    tiny = build_tiny(tmp_path / "data")
    evals, texts = dataset_texts(tiny)
    tokenizer = tokenizer_for(texts)
    train = datasets.Dataset.from_list(
        [{"prompt": r["messages"][0]["content"], **{k: r[k] for k in COLUMNS}} for r in evals])
    reward = rl.reward_function()
    args = GRPOConfig(output_dir=str(tmp_path / "out"), max_steps=STEPS, per_device_train_batch_size=4,
                      num_generations=2, max_completion_length=2, temperature=1.0, learning_rate=1e-3,
                      logging_steps=1, report_to="none", use_cpu=True, save_strategy="no", seed=0)
    trainer = GRPOTrainer(model=tiny_model(tokenizer), processing_class=tokenizer, reward_funcs=reward,
                          args=args, train_dataset=train)
    batches = Batches()
    batches.trainer = trainer
    trainer.add_callback(batches)
    trainer.train()

    steps = [h for h in trainer.state.log_history if "rewards/leir_reward/mean" in h]
    assert len(batches.seen) == STEPS and len(steps) == STEPS
    by_prompt = {r["messages"][0]["content"]: r for r in evals}
    direct = rl.Rewarder(cache_size=0)  # judged afresh, not from the trainer's cache
    everything = []
    for (prompts, completions, logged), logged_step in zip(batches.seen, steps):
        assert len(prompts) == len(completions) == len(logged) == 4
        recs = [by_prompt[p] for p in prompts]
        want = direct(completions, **{k: [r[k] for r in recs] for k in COLUMNS})
        assert logged == pytest.approx(want, rel=1e-6, abs=1e-6), list(zip(completions, logged, want))
        assert math.isclose(logged_step["rewards/leir_reward/mean"], sum(want) / len(want), rel_tol=1e-5, abs_tol=1e-6)
        for c in rl.COMPONENTS:  # the means the rewarder reported through log_metric
            got = logged_step[f"leir/{c}"]
            assert math.isclose(got, sum(s.components[c] for s in direct.last_scores) / 4, rel_tol=1e-5, abs_tol=1e-6), c
        everything += want
    # the comparison means something: the completions earned different rewards
    assert len({round(x, 6) for x in everything}) > 1, everything
