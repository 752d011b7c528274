#!/usr/bin/env python3
"""Writes a C file defining `const char NAME[]` with the text of a file.

Used at build time to paste backends/prelude.h into generated C sources.
Usage: embed_text.py INPUT OUTPUT NAME
"""
import os
import sys


def main():
    src, dst, name = sys.argv[1:4]
    with open(src, encoding="utf-8") as f:
        text = f.read()
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
