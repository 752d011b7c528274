#!/usr/bin/env bash
# Runs the Python package's pytest suite against one libleir build.
#   python_test.sh PYTHON LIBRARY SOURCE_ROOT SANITIZE
# Exit 77 (meson: skipped) with the reason when it cannot run here.
set -uo pipefail
python=$1 library=$2 src=$3 sanitize=${4:-none}
if [ "$sanitize" != none ]; then
  echo "SKIP: libleir is built with -Db_sanitize=$sanitize; a Python interpreter cannot load it" \
       "without preloading the sanitizer runtime (the other builds run this test)"
  exit 77
fi
if [ -z "$python" ] || ! "$python" -c 'import numpy, pytest' 2>/dev/null; then
  echo "SKIP: no python3 with numpy and pytest (Debian: python3-numpy python3-pytest)"
  exit 77
fi
export LEIR_LIBRARY=$library
export PYTHONPATH=$src/python${PYTHONPATH:+:$PYTHONPATH}
export PYTHONDONTWRITEBYTECODE=1
cd "$src/python" || exit 1
# test_fx.py and test_workloads_{torch,attention,pytorch}.py need torch and
# run in the `fx` test
"$python" -m pytest -q -p no:cacheprovider --ignore=tests/test_fx.py \
  --ignore=tests/test_workloads_torch.py --ignore=tests/test_workloads_attention.py \
  --ignore=tests/test_workloads_pytorch.py tests
rc=$?
if [ "$rc" = 5 ]; then
  echo "FAIL: pytest collected no tests from $src/python/tests"
  exit 1
fi
exit "$rc"
