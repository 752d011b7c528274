#!/usr/bin/env bash
# Runs the examples of Markdown files and compares their output:
#   ```text file=NAME   -> the block is written to NAME
#   ```console          -> "$ CMD" lines run with bash (stdout and stderr together),
#                          the lines after each one are its expected output
# "$ cat NAME" of a file that does not exist yet creates NAME from the
# expected output instead. Commands run in a scratch directory with the
# built `leir` first on PATH, and pkg-config and the loader pointed at the
# build tree, so that C examples compile against it; `cc` gets the flags in
# $LEIR_DOCS_CFLAGS (sanitizer builds).
#   docs_test.sh TOOL_DIR BUILD_DIR FILE.md...
set -uo pipefail
tool_dir=$(cd "$1" && pwd)
build_dir=$(cd "$2" && pwd)
shift 2
export PATH="$tool_dir:$PATH"
export PKG_CONFIG_PATH="$build_dir/meson-uninstalled${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
export LD_LIBRARY_PATH="$build_dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
cc() { command "${LEIR_DOCS_CC:-cc}" ${LEIR_DOCS_CFLAGS:-} "$@"; }
export -f cc
work=$(mktemp -d "${TMPDIR:-/tmp}/leir-docs.XXXXXX")
trap 'rm -rf "$work"' EXIT
failures=0 commands=0

check() { # doc, line, command, expected
  local doc=$1 line=$2 cmd=$3 want=$4 got
  want=$(printf '%s' "$want" | sed -e :a -e '/^\n*$/{$d;N;ba' -e '}')
  if [[ $cmd =~ ^cat\ ([A-Za-z0-9_.-]+)$ ]] && [ ! -e "$work/${BASH_REMATCH[1]}" ]; then
    printf '%s\n' "$want" > "$work/${BASH_REMATCH[1]}"
    return
  fi
  commands=$((commands + 1))
  got=$(cd "$work" && bash -c "$cmd" 2>&1)
  got=$(printf '%s' "$got" | sed -e :a -e '/^\n*$/{$d;N;ba' -e '}')
  if [ "$got" != "$want" ]; then
    failures=$((failures + 1))
    printf '%s:%s: $ %s\n--- expected\n%s\n--- got\n%s\n\n' "$doc" "$line" "$cmd" "$want" "$got" >&2
  fi
}

for doc in "$@"; do
  mode= file= cmd= want= cmdline=0 n=0
  while IFS= read -r line || [ -n "$line" ]; do
    n=$((n + 1))
    case $mode in
      "")
        if [[ $line =~ ^\`\`\`[a-z]*\ file=([A-Za-z0-9_.-]+) ]]; then
          mode=file file=${BASH_REMATCH[1]}
          : > "$work/$file"
        elif [[ $line == '```console' ]]; then
          mode=console cmd= want=
        fi ;;
      file)
        if [[ $line == '```' ]]; then mode=; else printf '%s\n' "$line" >> "$work/$file"; fi ;;
      console)
        if [[ $line == '```' ]]; then
          [ -n "$cmd" ] && check "$doc" "$cmdline" "$cmd" "$want"
          mode=
        elif [[ $line == '$ '* ]]; then
          [ -n "$cmd" ] && check "$doc" "$cmdline" "$cmd" "$want"
          cmd=${line#\$ } want= cmdline=$n
        elif [ -n "$cmd" ]; then
          want+="$line"$'\n'
        fi ;;
    esac
  done < "$doc"
done
echo "$commands commands checked, $failures differ"
[ "$failures" = 0 ]
