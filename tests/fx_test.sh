#!/bin/sh
# Runs python/tests/test_fx.py (leir.fx against PyTorch) with the first
# python3 that has torch, numpy and pytest (Debian: python3-torch,
# python3-numpy, python3-pytest); skipped (77) when there is none. A torch
# built against numpy 1.x imports beside numpy 2 (a venv with apache-tvm has
# it) but cannot exchange arrays: the probe converts one.
#   fx_test.sh SANITIZE TEST.py...
# Importing leir.fx imports the leir package, which loads libleir.so.0: a
# sanitizer build's library cannot be loaded into an interpreter that was
# not started with the sanitizer runtime, so those builds skip (the other
# builds run this test).
sanitize=$1
shift
if [ "$sanitize" != none ]; then
  echo "SKIP: libleir is built with -Db_sanitize=$sanitize; a Python interpreter cannot load it"
  exit 77
fi
for py in python3 /usr/bin/python3; do
  if "$py" -c 'import torch, numpy, pytest; torch.from_numpy(numpy.ones(1))' >/dev/null 2>&1; then
    exec "$py" -m pytest -q -p no:cacheprovider "$@"
  fi
done
echo "no python3 with torch, numpy and pytest: skipped"
exit 77
