#!/bin/sh
# Installs the Debian packages libleir needs, from scripts/packages.txt:
#   scripts/setup.sh            the "build" group (library, tool, main job)
#   scripts/setup.sh GROUP...   those groups (build, test, bench; "all")
# Runs apt-get as root, or through sudo. LEIR_SETUP_DRY_RUN=1 only prints
# the package names. Already installed packages are left alone.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
list=$here/packages.txt
[ $# -gt 0 ] || set -- build
groups=" $* "
case $groups in *" all "*) groups=" build test bench " ;; esac
pkgs=$(sed -e 's/#.*//' "$list" | awk -v g="$groups" 'NF >= 2 && index(g, " " $2 " ") { print $1 }')
[ -n "$pkgs" ] || { echo "setup.sh: no packages in groups:$groups" >&2; exit 2; }
if [ "${LEIR_SETUP_DRY_RUN:-0}" = 1 ]; then
  echo "$pkgs"
  exit 0
fi
missing=
for p in $pkgs; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q '^install ok installed$' ||
    missing="$missing $p"
done
if [ -z "$missing" ]; then
  echo "setup.sh: every package of groups$groups is installed"
  exit 0
fi
command -v apt-get >/dev/null || {
  echo "setup.sh: apt-get not found; install these by hand:$missing" >&2
  exit 1
}
sudo=
[ "$(id -u)" = 0 ] || sudo=sudo
echo "setup.sh: apt-get install$missing"
$sudo apt-get update -qq
# shellcheck disable=SC2086 # a word list
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends $missing
