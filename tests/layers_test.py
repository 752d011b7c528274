#!/usr/bin/env python3
"""The layers of the library hold (docs/architecture.md).

  layers_test.py SOURCE_ROOT NM PART=ARCHIVE...   check the tree and the parts' archives
  layers_test.py --self-test                     the checks find planted violations

Three checks, each a failure on its own:
  includes  every #include "..." of a file in a part names a header of the part
            itself, of a part it may use (USES), or a public header (include/);
  cycles    no header includes itself through other headers;
  symbols   every symbol a part's static library (nm) takes from another
            part's library is one of a part it may use.
meson gives each part's static library only the include directories of
USES (meson.build), so the compiler refuses most violations already; this
test also catches a header reached by a relative path, an include directory
widened in meson.build, and calls into a part above that need no header.
"""
import os
import re
import subprocess
import sys
import tempfile

# What each part may use besides itself and include/ (public headers). Keep
# in step with meson.build (the parts' include_directories) and
# docs/architecture.md.
USES = {
    'lib': [],
    'strategies': ['lib'],
    'backends': ['lib'],
    'formats': ['lib'],
    'catalog': ['lib'],
    'ground': ['lib', 'strategies', 'backends'],
    'llm': ['lib', 'strategies', 'backends', 'formats', 'ground'],
    'dataset': ['lib', 'strategies', 'backends', 'formats', 'catalog', 'ground', 'llm'],
    'search': ['lib', 'strategies', 'backends', 'formats', 'ground', 'llm'],
    # the tool links libleir.so: public headers and its own only
    'tools': [],
}
PUBLIC = 'include'
SOURCE_EXT = ('.c', '.h', '.def', '.inc')
INCLUDE_RE = re.compile(r'^\s*#\s*include\s*"([^"]+)"')


def check_uses_is_a_dag(uses):
    """The relation itself has no cycle (a part may not use itself through others)."""
    errors, state = [], {}

    def visit(p, path):
        if state.get(p) == 'done':
            return
        if state.get(p) == 'open':
            errors.append('USES has a cycle: ' + ' -> '.join(path + [p]))
            return
        state[p] = 'open'
        for q in uses.get(p, []):
            visit(q, path + [p])
        state[p] = 'done'

    for p in uses:
        visit(p, [])
    return errors


def part_of(rel):
    top = rel.split('/', 1)[0]
    return top if top in USES or top == PUBLIC else None


def source_files(root):
    for part in list(USES) + [PUBLIC]:
        base = os.path.join(root, part)
        for dirpath, dirnames, filenames in os.walk(base):
            dirnames.sort()
            for f in sorted(filenames):
                if f.endswith(SOURCE_EXT):
                    yield os.path.relpath(os.path.join(dirpath, f), root)


def resolve(root, rel, name, index):
    """Where `#include "name"` in file rel can come from: the including
    file's directory first (as the compiler looks), else every file of the
    tree with that relative path."""
    here = os.path.normpath(os.path.join(os.path.dirname(rel), name))
    if not here.startswith('..') and os.path.isfile(os.path.join(root, here)):
        return [here]
    return index.get(os.path.normpath(name), [])


def build_index(root, files):
    """relative include name -> files: "kit.h" -> strategies/kit.h, and for
    public headers "leir/run.h" -> include/leir/run.h; a name below a part's
    directory (backends/c/lower_c.h) is also found as c/lower_c.h and
    lower_c.h, as an include directory there would make it."""
    index = {}
    for rel in files:
        parts = rel.split('/')
        for k in range(1, len(parts)):
            index.setdefault('/'.join(parts[k:]), []).append(rel)
    return index


def check_includes(root):
    files = list(source_files(root))
    index = build_index(root, files)
    errors, graph = [], {}
    for rel in files:
        part = part_of(rel)
        allowed = {part, PUBLIC} | set(USES.get(part, []))
        with open(os.path.join(root, rel), encoding='utf-8', errors='replace') as fh:
            for lineno, line in enumerate(fh, 1):
                m = INCLUDE_RE.match(line)
                if not m:
                    continue
                where = resolve(root, rel, m.group(1), index)
                if not where:
                    continue  # generated in the build tree, or not a header of the tree
                graph.setdefault(rel, set()).update(where)
                if not any(part_of(w) in allowed for w in where):
                    errors.append('%s:%d: includes "%s" (%s), a header of %s, which %s may not use '
                                  '(it may use: %s)' % (rel, lineno, m.group(1), where[0],
                                                        part_of(where[0]), part,
                                                        ', '.join(sorted(allowed))))
    return errors, graph


def check_cycles(graph):
    errors, state, found = [], {}, set()

    def visit(f, path):
        if state.get(f) == 'done':
            return
        if state.get(f) == 'open':
            cyc = path[path.index(f):] + [f]
            key = frozenset(cyc)
            if key not in found:
                found.add(key)
                errors.append('include cycle: ' + ' -> '.join(cyc))
            return
        state[f] = 'open'
        for g in sorted(graph.get(f, ())):
            visit(g, path + [f])
        state[f] = 'done'

    for f in sorted(graph):
        visit(f, [])
    return errors


def nm_symbols(nm, archive):
    """(defined, undefined) global symbols of a static library."""
    out = subprocess.run([nm, '-g', archive], capture_output=True, text=True, check=True).stdout
    defined, undefined = set(), set()
    for line in out.splitlines():
        f = line.split()
        if len(f) == 2 and f[0] in ('U', 'w', 'v'):
            undefined.add(f[1])
        elif len(f) == 3 and f[1] in 'TDBRCG':  # not weak (W, V: an inline copy may repeat)
            defined.add(f[2])
    return defined, undefined


def check_symbols(tables):
    """tables: part -> (defined, undefined)."""
    errors = []
    owner = {}
    for part, (defined, _) in tables.items():
        for s in defined:
            if s in owner and owner[s] != part:
                errors.append('%s is defined in both %s and %s' % (s, owner[s], part))
            owner[s] = part
    for part, (_, undefined) in sorted(tables.items()):
        allowed = set(USES.get(part, []))
        for s in sorted(undefined):
            o = owner.get(s)
            if o and o != part and o not in allowed:
                errors.append('the %s part uses %s, defined in %s, which it may not use' % (part, s, o))
    return errors


def self_test():
    """The checks report planted violations, and nothing on a clean tree."""
    failures = []
    with tempfile.TemporaryDirectory() as root:
        def write(rel, text):
            os.makedirs(os.path.dirname(os.path.join(root, rel)), exist_ok=True)
            with open(os.path.join(root, rel), 'w') as fh:
                fh.write(text)
        write('include/leir/run.h', '')
        write('lib/error.h', '#include "leir/run.h"\n')
        write('backends/backend.h', '#include "error.h"\n')
        write('strategies/kit.h', '#include "error.h"\n')
        write('search/search.c', '#include "backend.h"\n#include "kit.h"\n')
        errors, graph = check_includes(root)
        if errors or check_cycles(graph):
            failures.append('a clean tree reports %s' % errors)
        write('lib/cost.c', '#include "backend.h"\n')                   # up a layer
        write('strategies/ground.c', '#include "../backends/backend.h"\n')  # a sibling, by path
        write('tools/leir/tool.c', '#include "kit.h"\n')                # an internal header
        write('lib/a.h', '#include "b.h"\n')
        write('lib/b.h', '#include "a.h"\n')
        errors, graph = check_includes(root)
        for rel in ('lib/cost.c', 'strategies/ground.c', 'tools/leir/tool.c'):
            if not any(e.startswith(rel + ':') for e in errors):
                failures.append('%s: its include is not reported (%s)' % (rel, errors))
        if len(errors) != 3:
            failures.append('expected 3 include errors, got %s' % errors)
        if len(check_cycles(graph)) != 1:
            failures.append('the cycle lib/a.h <-> lib/b.h is not reported once')
    tables = {'lib': ({'leir__error'}, {'leir__c_storage_hosts'}),
              'backends': ({'leir__c_storage_hosts', 'leir_verifier_new'}, {'leir__error'}),
              'strategies': ({'leir__ground'}, {'leir_verifier_new', 'leir__error', 'memcpy'}),
              'ground': ({'leir_ground'}, {'leir__ground', 'leir_verifier_new'})}
    errors = check_symbols(tables)
    want = ['the lib part uses leir__c_storage_hosts, defined in backends, which it may not use',
            'the strategies part uses leir_verifier_new, defined in backends, which it may not use']
    if errors != want:
        failures.append('symbols: expected %s, got %s' % (want, errors))
    if not check_uses_is_a_dag({'a': ['b'], 'b': ['a']}) or check_uses_is_a_dag(USES):
        failures.append('the USES cycle check is wrong')
    for f in failures:
        print('self-test: ' + f)
    return 1 if failures else 0


def main(argv):
    if argv[1:] == ['--self-test']:
        return self_test()
    if len(argv) < 3:
        print(__doc__)
        return 2
    root, nm = argv[1], argv[2]
    errors = check_uses_is_a_dag(USES)
    inc_errors, graph = check_includes(root)
    errors += inc_errors + check_cycles(graph)
    tables = {}
    for arg in argv[3:]:
        part, archive = arg.split('=', 1)
        if part not in USES:
            errors.append('%s: not a part (USES)' % part)
            continue
        tables[part] = nm_symbols(nm, archive)
    errors += check_symbols(tables)
    for e in errors:
        print(e)
    nincludes = sum(len(v) for v in graph.values())
    print('%d include edges between %d files, %d part libraries: %s' %
          (nincludes, len(graph), len(tables), 'FAIL' if errors else 'ok'))
    return 1 if errors else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
