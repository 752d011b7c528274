#!/usr/bin/env bash
# Runs the leir.rl pytest files (python/tests/test_rl_*.py) with the Python
# of a virtual environment that has scripts/packages-rl.txt installed (TRL,
# transformers, torch, ...), against one build's libleir.so.0 and `leir`:
#   rl_test.sh VENV [BUILD_DIR]       (BUILD_DIR: default build/ of this tree)
# e.g.  python3 -m venv /tmp/rl && /tmp/rl/bin/pip install -r scripts/packages-rl.txt
#       tests/rl_test.sh /tmp/rl build
# test_rl_grpo.py runs TRL's GRPOTrainer; in CI's python suite (no trl) it
# skips, so this is where it runs. A sanitizer build's library cannot be
# loaded by a plain interpreter: give a release build.
set -uo pipefail
src=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
venv=${1:?usage: rl_test.sh VENV [BUILD_DIR]}
build=$(cd "${2:-$src/build}" && pwd) || exit 1
python=$venv/bin/python
if [ ! -x "$python" ]; then
  echo "FAIL: $python does not exist (python3 -m venv $venv && $venv/bin/pip install -r scripts/packages-rl.txt)"
  exit 1
fi
if ! "$python" -c 'import numpy, pytest, trl, transformers, torch, tokenizers, datasets, gymnasium, verifiers' 2>/dev/null; then
  echo "FAIL: $venv lacks a package of scripts/packages-rl.txt ($venv/bin/pip install -r scripts/packages-rl.txt)"
  exit 1
fi
for f in "$build/libleir.so.0" "$build/tools/leir/leir"; do
  [ -e "$f" ] || { echo "FAIL: $f is missing (meson compile -C $build)"; exit 1; }
done
export LEIR_LIBRARY=$build/libleir.so.0
export LEIR_TOOL=$build/tools/leir/leir
export PYTHONPATH=$src/python${PYTHONPATH:+:$PYTHONPATH}
export PYTHONDONTWRITEBYTECODE=1
# the tiny model trains on CPU: no device, no telemetry, nothing downloaded
export CUDA_VISIBLE_DEVICES= HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 TRANSFORMERS_OFFLINE=1 \
  HF_HUB_DISABLE_TELEMETRY=1 TOKENIZERS_PARALLELISM=false
cd "$src/python" || exit 1
"$python" -m pytest -q -p no:cacheprovider tests/test_rl_*.py
