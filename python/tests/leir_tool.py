"""What the torch-based workload tests share: where the `leir` tool is.

The tool is $LEIR_TOOL, else the one beside $LEIR_LIBRARY's build, else an
in-tree build/, else the one on PATH.
"""
import os
import shutil

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")


def find_leir() -> str:
    if os.environ.get("LEIR_TOOL"):
        return os.environ["LEIR_TOOL"]
    cands = []
    if os.environ.get("LEIR_LIBRARY"):
        cands.append(os.path.join(os.path.dirname(os.environ["LEIR_LIBRARY"]), "tools", "leir", "leir"))
    cands.append(os.path.join(ROOT, "build", "tools", "leir", "leir"))
    for c in cands:
        if os.access(c, os.X_OK):
            return c
    return shutil.which("leir") or cands[-1]
