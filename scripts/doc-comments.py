#!/usr/bin/env python3
"""Turns plain C comments in public headers into Doxygen doc comments.

    scripts/doc-comments.py include/leir/*.h include/leir/experimental/*.h

For merging headers written with plain comments: a file's opening comment
becomes `/** @file`, a comment block directly above a declaration becomes
`/** ...`, and a comment after a struct field or enumerator becomes `/**< ...`.
Section banners (`/* ====`, `/* ----`) and one-word labels stay plain. Doc comments already in
Doxygen form are left alone, so running it twice changes nothing. Then run
scripts/api-reference.sh: Doxygen names whatever is still undocumented.
"""
import re
import sys


def convert(path):
    lines = open(path).read().split('\n')
    out = []
    i = 0
    n = len(lines)
    first = True
    while i < n:
        line = lines[i]
        s = line.lstrip()
        indent = line[:len(line)-len(s)]
        # file header
        if first and line.strip() == '/*':
            out.append('/**'); out.append(' * @file')
            i += 1; first = False; continue
        first = False
        # banners and one-word labels (/* BINARY */ inside an enum) stay plain
        if s.startswith('/*') and not s.startswith('/**') and not re.match(r'/\* ?(=|-{3})', s) \
           and not re.match(r'/\* [A-Z_]+ \*/$', s):
            # collect block
            j = i
            while '*/' not in lines[j]: j += 1
            nxt = lines[j+1] if j+1 < n else ''
            if nxt.strip() and not nxt.lstrip().startswith('/*') and not nxt.lstrip().startswith('#endif') \
               and not nxt.lstrip().startswith('#ifdef __cplusplus'):
                out.append(indent + '/**' + s[2:])
                out.extend(lines[i+1:j+1]); i = j+1; continue
            out.extend(lines[i:j+1]); i = j+1; continue
        # trailing comment after code
        m = re.match(r'^(\s*\S.*?[;,{]\s*|\s*[A-Z_0-9]+(?: = [^,/]+)?,?\s*|\s*\}\s*\w*;\s*)/\* (.*)$', line)
        if m and not s.startswith('/*') and not s.startswith('#') and not s.startswith('*'):
            out.append(m.group(1) + '/**< ' + m.group(2)); i += 1; continue
        out.append(line); i += 1
    open(path, 'w').write('\n'.join(out))


if __name__ == "__main__":
    for p in sys.argv[1:]:
        convert(p)
