#!/usr/bin/env python3
"""Writes a C file defining `const char NAME[]` with the text of a file.

Used at build time to paste backends/prelude.h into generated C sources.
A line `#include "FILE"` (quotes: a header next to INPUT, such as
leir_math.h) is replaced by that file's text, so the pasted text needs no
include path; `#include <...>` lines stay.
Usage: embed_text.py INPUT OUTPUT NAME
"""
import os
import sys


def read_inlined(path):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    out = []
    for line in text.splitlines(True):
        s = line.strip()
        if s.startswith("#include \"") and s.endswith("\""):
            out.append(read_inlined(os.path.join(os.path.dirname(path), s[10:-1])))
        else:
            out.append(line)
    return "".join(out)


def main():
    src, dst, name = sys.argv[1:4]
    text = read_inlined(src)
    lines = ["/* Generated from %s by embed_text.py; do not edit. */" % os.path.basename(src),
             "const char %s[] =" % name]
    for line in text.splitlines(True):
        esc = line.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
        lines.append('    "%s"' % esc)
    lines.append("    ;")
    with open(dst, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
