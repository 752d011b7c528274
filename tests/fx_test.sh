#!/bin/sh
# Runs python/tests/test_fx.py (leir.fx against PyTorch) with the first
# python3 that has torch, numpy and pytest (Debian: python3-torch,
# python3-numpy, python3-pytest); skipped (77) when there is none. A torch
# built against numpy 1.x imports beside numpy 2 (a venv with apache-tvm has
# it) but cannot exchange arrays: the probe converts one.
for py in python3 /usr/bin/python3; do
  if "$py" -c 'import torch, numpy, pytest; torch.from_numpy(numpy.ones(1))' >/dev/null 2>&1; then
    exec "$py" -m pytest -q -p no:cacheprovider "$@"
  fi
done
echo "no python3 with torch, numpy and pytest: skipped"
exit 77
