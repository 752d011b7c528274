"""What a researcher does with the leir package: build a small Step-TP
dataset, score a model's answers on its test split, and run a seeded search
whose trajectory replays from its step texts (python/tests/test_examples.py
runs this).

    LEIR_LIBRARY=.../libleir.so.0 PYTHONPATH=python python3 examples/research.py [OUT_DIR]
"""

import json
import pathlib
import sys
import tempfile

import leir

out = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else tempfile.mkdtemp())
out.mkdir(parents=True, exist_ok=True)
(out / "programs.jsonl").write_text(
    '{"name": "relu", "leir": "L^{4}_{a=0}L^{8}_{c=0}[C^{f64,g}_{a,c}=max(A^{f64,g}_{a,c},0);];"}\n'
    '{"name": "rowsum", "leir": "L^{4}_{a=0}L^{8}_{c=0}[C^{f64,g}_{a}=C^{f64,g}_{a}+A^{f64,g}_{a,c};];"}\n')

# 1. a dataset: one-step walks, one sample per strategy, half the units held out
config = {"name": "tiny", "seed": 1, "sources": {"programs": str(out / "programs.jsonl")},
          "walks": {"count": 1, "depth": 1}, "sampling": {"per_strategy": 1},
          "split": {"test": 0.5, "validation": 0}}
built = leir.dataset.build(config, out / "tiny")
ds = built.dataset()
tests = [p for p in ds.test() if p.kind == "single"]
print(f"dataset: complete {built.complete}, {built.summary.records['train_single']} training "
      f"records, {len(tests)} single-step test prompts, leakage-free {built.summary.leakage.clean}")


# 2. an evaluation: a "model" that answers every other prompt with its label
def answer(prompt):
    label = prompt.labels[0]
    return "<answer>" + json.dumps({"transformed_IR": label.transformed_ir,
                                    "applied_strategy": label.strategy}) + "</answer>"


answers = [(t.id, answer(t) if i % 2 == 0 else "I do not know") for i, t in enumerate(tests)]
report = leir.eval.score(answers, ds, backend="interp", k=[1])
print(f"eval: {len(report.answers)} answers, {sum(a.parsed for a in report.answers)} parsed, "
      f"pass_equal {report.overall.pass_equal:.2f}, pass@1 {report.overall.pass_at(1):.2f}")

# 3. a seeded search on the interpreter, then its trajectory replayed from text
p = leir.parse("L^{16}_{a=0}L^{32}_{c=0}L^{16}_{d=0}"
               "[D^{f32,g}_{a,c}=D^{f32,g}_{a,c}+A^{f32,g}_{a,d}*C^{f32,g}_{d,c};];")
r = leir.optimize(p, backend="interp", policy="random", seed=7, samples=6, depth=3,
                  rounds=3, compare_time=0.3, final_compare=False)
q = p
for step in r.steps:
    q = leir.apply(q, leir.Step(str(step)))
print(f"search: {r.summary['samples']} samples, {len(r.steps)} steps kept, stopped by "
      f"{r.summary['stopped_by']}; replayed from text: "
      f"{'same alpha hash' if q.hash(alpha=True) == r.best.hash(alpha=True) else 'DIFFERENT'}")
sys.exit(0 if q.hash(alpha=True) == r.best.hash(alpha=True) else 1)
