"""examples/research.py, the Python researcher's example (dataset, eval,
search), runs as a user would run it and says what it promises."""

import os
import pathlib
import subprocess
import sys

EXAMPLE = pathlib.Path(__file__).resolve().parents[2] / "examples" / "research.py"


def test_research_example_runs(tmp_path):
    env = dict(os.environ)
    env["PYTHONPATH"] = str(EXAMPLE.parents[1] / "python") + os.pathsep + env.get("PYTHONPATH", "")
    run = subprocess.run([sys.executable, str(EXAMPLE), str(tmp_path)], env=env,
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    lines = run.stdout.splitlines()
    assert lines[0].startswith("dataset: complete True, ")
    assert lines[1].startswith("eval: ") and " parsed, pass_equal " in lines[1]
    assert lines[2].startswith("search: ") and lines[2].endswith("replayed from text: same alpha hash")
    assert any((tmp_path / "tiny").iterdir())  # the dataset stays where the caller put it
