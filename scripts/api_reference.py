#!/usr/bin/env python3
"""Doxygen XML of include/leir/ -> docs/api-reference/*.md, one page per header.

    api_reference.py XML_DIR OUT_DIR [--symbols FILE]

Pages follow the header: its sections (the /* ==== Title ==== */ banners),
then in each section the types, macros and functions in header order, each
with its doc comment (ownership and errors are written there). With
--symbols (one exported name per line, e.g. `nm -D --defined-only` output
reduced to names), every listed function must be declared in a header with
a non-empty doc comment; the missing ones are printed and the exit status
is 1. Run by scripts/api-reference.sh and tests/api_docs_test.sh.
"""
import os
import re
import sys
import xml.etree.ElementTree as ET


def text_of(node):
    """Plain text of an XML node (types, initializers)."""
    if node is None:
        return ""
    return re.sub(r"\s+", " ", "".join(node.itertext())).strip()


def inline(node):
    """Markdown of the inline content of a doc node."""
    out = [node.text or ""]
    for child in node:
        tag = child.tag
        if tag == "computeroutput":
            out.append("`" + "".join(child.itertext()) + "`")
        elif tag in ("emphasis",):
            out.append("*" + inline(child) + "*")
        elif tag == "bold":
            out.append("**" + inline(child) + "**")
        elif tag == "linebreak":
            out.append("\n")
        elif tag == "sp":
            out.append(" ")
        elif tag in ("programlisting", "verbatim", "itemizedlist", "orderedlist", "simplesect",
                     "parameterlist"):
            out.append("\n\n" + block(child) + "\n\n")
        else:
            out.append(inline(child))
        out.append(child.tail or "")
    return "".join(out)


def code_lines(node):
    lines = []
    for line in node.iter("codeline"):
        parts = []

        def walk(n):
            parts.append(n.text or "")
            for c in n:
                if c.tag == "sp":
                    parts.append(" ")
                else:
                    walk(c)
                parts.append(c.tail or "")
        walk(line)
        lines.append("".join(parts).rstrip())
    return lines


def block(node):
    """Markdown of a block-level doc node."""
    tag = node.tag
    if tag == "programlisting":
        return "```c\n" + "\n".join(code_lines(node)) + "\n```"
    if tag == "verbatim":
        return "```\n" + (node.text or "").strip("\n") + "\n```"
    if tag in ("itemizedlist", "orderedlist"):
        items = []
        for i, li in enumerate(node.findall("listitem"), 1):
            body = " ".join(block(p) for p in li).strip()
            items.append(("- " if tag == "itemizedlist" else f"{i}. ") + body)
        return "\n".join(items)
    if tag == "para":
        return normalize(inline(node))
    if tag == "simplesect":
        return " ".join(block(p) for p in node)
    return normalize(inline(node))


def normalize(s):
    # keep code blocks and lists intact, collapse other whitespace
    pieces = re.split(r"(\n\n```.*?```\n\n|\n\n(?:- |\d+\. ).*?\n\n)", s, flags=re.S)
    out = []
    for p in pieces:
        if p.startswith("\n\n```"):
            out.append("\n\n" + p.strip("\n") + "\n\n")
        elif re.match(r"\n\n(- |\d+\. )", p):
            out.append("\n\n" + escape(p.strip("\n")) + "\n\n")
        else:
            out.append(escape(re.sub(r"[ \t\n]+", " ", p)))
    return "".join(out).strip()


def escape(s):
    """Escapes Markdown emphasis marks outside `code` spans (C's *out)."""
    parts = s.split("`")
    for i in range(0, len(parts), 2):
        parts[i] = re.sub(r"(?<!\\)\*", r"\\*", parts[i])
    return "`".join(parts)


def description(m):
    paras = []
    for part in ("briefdescription", "detaileddescription"):
        node = m.find(part)
        if node is None:
            continue
        for p in node:
            b = block(p)
            if b:
                paras.append(b)
    # the brief is the first sentence of the same paragraph: join them
    if len(paras) >= 2 and not paras[1].startswith(("```", "- ")):
        sep = "" if paras[1][:1] in ";,:)" else " "
        paras[0:2] = [paras[0] + sep + paras[1]]
    return "\n\n".join(paras).strip()


def documented(m):
    return bool(description(m))


def location(m):
    loc = m.find("location")
    return loc.get("file"), int(loc.get("line", "0"))


def banners(path):
    """(line, title) of the section banners of a header."""
    found = []
    try:
        lines = open(path, encoding="utf-8").read().split("\n")
    except OSError:
        return found
    for i, line in enumerate(lines):
        m = re.match(r"/\* =+\s*$", line)
        if m and i + 1 < len(lines):
            t = re.match(r"\s*\*\s+(\S.*)$", lines[i + 1])
            if t:
                found.append((i + 1, t.group(1).strip()))
        m = re.match(r"/\* -+ (.+?) -+ \*/", line)
        if m:
            found.append((i + 1, m.group(1).strip().capitalize()))
    return found


TABLE_MESSAGES = {}


def read_tables(members):
    """NAME -> message of the X(NAME, ..., "message") rows of *_TABLE macros."""
    for m in members:
        if m.get("kind") == "define" and m.findtext("name").endswith("_TABLE"):
            init = "".join(m.find("initializer").itertext())
            for name, msg in re.findall(r'X\((\w+),[^"]*"([^"]*)"\)', init):
                TABLE_MESSAGES[name] = msg


def render_member(m, structs):
    kind = m.get("kind")
    name = m.findtext("name")
    desc = description(m)
    out = []
    if kind == "function":
        sig = f"{text_of(m.find('type'))} {name}{text_of(m.find('argsstring'))};"
        out += [f"### `{name}`", "", "```c", sig.replace("char * ", "char *"), "```"]
    elif kind == "define":
        params = [text_of(p) for p in m.findall("param")]
        head = name + (f"({', '.join(params)})" if m.find("param") is not None else "")
        init = text_of(m.find("initializer"))
        out += [f"### `{head}`", ""]
        if init and len(init) <= 100:
            out += ["```c", f"#define {head} {init}", "```"]
        elif init:
            raw = "".join(m.find("initializer").itertext()).split("\n")
            body = [l.rstrip().rstrip("\\").rstrip() for l in raw]
            out += ["```c", f"#define {head} \\"]
            out += ["  " + l.strip() + (" \\" if i < len(body) - 1 else "")
                    for i, l in enumerate(body)]
            out += ["```"]
    elif kind == "enum":
        out += [f"### `enum {name}`", ""]
        rows = []
        for v in m.findall("enumvalue"):
            init = text_of(v.find("initializer")).lstrip("= ").strip()
            vname = v.findtext("name")
            d = description(v)
            if not d:  # generated by an X-macro table: its message
                for prefix in ("LEIR_VERDICT_", "LEIR_"):
                    if vname.startswith(prefix) and vname[len(prefix):] in TABLE_MESSAGES:
                        d = TABLE_MESSAGES[vname[len(prefix):]]
                        break
            rows.append((vname, init, d))
        if desc:
            out += [desc, ""]
            desc = ""
        out += ["| value | | meaning |", "|---|---|---|"]
        out += [f"| `{n}` | {i} | {d.replace('|', '&#124;')} |" for n, i, d in rows]
    elif kind == "typedef":
        out += [f"### `{name}`", "", "```c", f"{text_of(m.find('definition'))};", "```"]
    elif kind == "struct":
        out += [f"### `struct {name}`", ""]
        if desc:
            out += [desc, ""]
            desc = ""
        out += ["| field | type | meaning |", "|---|---|---|"]
        for f in structs[name]:
            ftype = text_of(f.find("type")) + text_of(f.find("argsstring"))
            out.append(f"| `{f.findtext('name')}` | `{ftype}` | "
                       f"{description(f).replace('|', '&#124;').replace(chr(10), ' ')} |")
    if desc:
        out += ["", desc]
    return "\n".join(out).rstrip() + "\n"


def main(argv):
    args = [a for a in argv[1:] if not a.startswith("--")]
    symbols_file = None
    if "--symbols" in argv:
        symbols_file = argv[argv.index("--symbols") + 1]
        args.remove(symbols_file)
    xml_dir, out_dir = args[0], args[1]
    index = ET.parse(os.path.join(xml_dir, "index.xml")).getroot()
    files, structs, struct_defs = {}, {}, {}
    functions = {}
    for comp in index.findall("compound"):
        root = ET.parse(os.path.join(xml_dir, comp.get("refid") + ".xml")).getroot()
        cdef = root.find("compounddef")
        kind = cdef.get("kind")
        if kind == "file":
            path = cdef.find("location").get("file")
            members = list(cdef.iter("memberdef"))
            files[path] = (cdef, members)
            read_tables(members)
            for m in members:
                if m.get("kind") == "function":
                    functions[m.findtext("name")] = m
        elif kind == "struct":
            name = cdef.findtext("compoundname")
            structs[name] = [m for m in cdef.iter("memberdef") if m.get("kind") == "variable"]
            struct_defs[name] = cdef

    if symbols_file:
        names = [l.split()[-1] for l in open(symbols_file) if l.strip() and not l.startswith("#")]
        missing = [n for n in names if n not in functions or not documented(functions[n])]
        for n in missing:
            where = "declared without a doc comment" if n in functions else "not declared in include/leir/"
            print(f"{n}: {where}")
        if missing:
            print(f"{len(missing)} exported function(s) without documentation: write a /** ... */ "
                  "comment (what it does, ownership, errors) above the declaration")
            return 1
        print(f"{len(names)} exported functions, each documented")

    os.makedirs(out_dir, exist_ok=True)
    pages = []
    for path in sorted(files):
        cdef, members = files[path]
        items = [m for m in members if m.get("kind") in ("function", "define", "enum", "typedef")]
        for name, s in struct_defs.items():
            loc = s.find("location")
            if loc is not None and loc.get("file") == path:
                items.append(s)
        for s in items:
            if s.tag == "compounddef":
                s.set("kind", "struct")
                if s.find("name") is None:
                    ET.SubElement(s, "name").text = s.findtext("compoundname")
        items.sort(key=lambda m: location(m)[1])
        rel = path[len("include/leir/"):] if path.startswith("include/leir/") else path
        page = rel[:-2].replace("/", "-") + ".md"
        heads = banners(os.environ.get("LEIR_SOURCE_ROOT", ".") + "/" + path)
        lines = [f"# `leir/{rel}`", ""]
        intro = description(cdef)
        if intro:
            lines += [intro, ""]
        lines += ["Generated from the header by `scripts/api-reference.sh`; do not edit.", ""]
        hi = 0
        count = 0
        for m in items:
            line = location(m)[1]
            while hi < len(heads) and heads[hi][0] <= line:
                lines += [f"## {heads[hi][1]}", ""]
                hi += 1
            lines.append(render_member(m, structs))
            count += m.get("kind") == "function"
        open(os.path.join(out_dir, page), "w", encoding="utf-8").write(
            "\n".join(lines).rstrip() + "\n")
        brief = description(cdef).split("\n")[0]
        brief = re.sub(r"^libleir — ", "", brief)
        brief = brief.split(". ")[0].rstrip(".")
        pages.append((rel, page, brief, count))
    idx = ["# libleir API reference", "",
           "One page per public header, generated from the headers' doc comments by",
           "`scripts/api-reference.sh` (Doxygen XML, then `scripts/api_reference.py`). Every",
           "exported function is documented with its ownership and errors; `meson test`",
           "(`api-docs`) fails otherwise, and when these pages are out of date.",
           "The ABI promise is in [docs/abi.md](../abi.md).", "",
           "| header | functions | contents |", "|---|---|---|"]
    for rel, page, brief, count in pages:
        idx.append(f"| [`leir/{rel}`]({page}) | {count} | {brief} |")
    open(os.path.join(out_dir, "README.md"), "w", encoding="utf-8").write("\n".join(idx) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
