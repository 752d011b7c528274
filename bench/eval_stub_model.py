#!/usr/bin/env python3
"""A stand-in for a model behind `leir eval --llm-command` (docs/dataset.md,
"A model behind leir eval"): it speaks the command protocol (docs/llm.md:
one JSON request line in, one {"content": ...} line out) and answers every
prompt of a dataset from the prompt's own verified labels, wrongly at a set
rate.

    eval_stub_model.py DATASET_DIR [ERROR_RATE] [DECISIONS_LOG]

A right answer is a label of the prompt (for an "at least N" prompt, N
distinct labels); a wrong one is the prompt's own program, which scores
`ir.unchanged`. The choice is drawn from the request's seed and prompt, so
a rerun with the same seeds answers the same. With DECISIONS_LOG every
decision is appended to that file ("right" or "wrong" per request), so a
benchmark can compare the scored pass rate with what the stub did.
"""
import json
import random
import sys


def user_text(messages):
    return [m.get("content", "") for m in messages if m.get("role") == "user"][-1]


def main():
    dataset = sys.argv[1]
    rate = float(sys.argv[2]) if len(sys.argv) > 2 else 0.0
    log = open(sys.argv[3], "a") if len(sys.argv) > 3 else None
    prompts = []
    for name in ("eval.jsonl", "validation.jsonl"):
        try:
            with open(f"{dataset}/{name}") as f:
                prompts += [json.loads(line) for line in f if line.strip()]
        except FileNotFoundError:
            pass
    by_user = {user_text(r["messages"]): r for r in prompts}
    for line in sys.stdin:
        req = json.loads(line)
        user = user_text(req["messages"])
        if "**Target hardware**" in user:  # the prompt without its hardware block
            head, rest = user.split("**Target hardware**", 1)
            user = head + rest[rest.find("Please give me"):] if "Please give me" in rest else head.rstrip("\n")
        rec = by_user.get(user)
        if rec is None:
            print(json.dumps({"error": "no such prompt in " + dataset}), flush=True)
            continue
        rng = random.Random(f"{req.get('seed')}|{rec['id']}")
        labels = [l for l in rec["labels"] if l.get("verdict") in ("EQUAL", "CLOSE")]
        wrong = rng.random() < rate or not labels
        n = rec.get("n", 1)
        if wrong:
            items = [{"transformed_IR": rec["original_IR"], "applied_strategy": "loop_reorder"}]
        else:
            picked = rng.sample(labels, min(n, len(labels)))
            items = [{"transformed_IR": l["transformed_IR"], "applied_strategy": l["strategy"]} for l in picked]
        if n > 1:
            body = str([dict(idx=i, **it) for i, it in enumerate(items)])
        else:
            body = json.dumps(items[0])
        if log:
            log.write(("wrong" if wrong else "right") + "\n")
            log.flush()
        print(json.dumps({"content": f"<think>stub</think><answer>{body}</answer>"}), flush=True)


if __name__ == "__main__":
    main()
