#!/usr/bin/env bash
# Each hot hook, and SessionStart on a 49,000-character MEMORY.md, counted
# in instructions (valgrind's callgrind: steady where wall time on a
# shared machine is not), each on a fresh state with a warm session.
#   scripts/callgrind-hooks.sh target/release/memory-save [another binary …]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
command -v valgrind >/dev/null || { echo "needs valgrind (apt-get install valgrind)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
proj=$work/proj
mkdir -p "$proj" "$work/home"
git -C "$proj" init -q
for f in ptu ups stop ss; do sed "s|@PROJ@|$proj|" "$here/callgrind/$f.json" > "$work/$f.json"; done
{
  printf '# proj\n\n## CRITICAL RULES\n- Run tests with cargo test\n\n## Architecture & Config Facts\n'
  for i in $(seq -w 0 190); do printf -- '- fact %s: %s\n' "$i" "$(printf 'lorem ipsum dolor sit amet %.0s' $(seq 1 8))"; done
  printf '\n## Active Warnings\n- None yet.\n\n## Topic Files\n- None yet.\n'
} | head -c 49000 > "$work/mem.md"
count() { valgrind --tool=callgrind --callgrind-out-file="$1" "${@:2}" 2>&1 >/dev/null | grep -o "Collected : [0-9]*" | grep -o "[0-9]*"; }
for bin in "$@"; do
  bin=$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")
  echo "== $bin"
  for hook in post-tool-use:ptu user-prompt-submit:ups stop:stop; do
    home=$(mktemp -d -p "$work")
    printf 'save_every_turns = 5\n' > "$home/memory-save.toml"
    export MEMORY_SAVE_HOME=$home HOME=$work/home MEMORY_SAVE_CLAUDE=/nonexistent
    cd "$proj"
    for h in user-prompt-submit:ups post-tool-use:ptu stop:stop; do "$bin" hook "${h%%:*}" < "$work/${h##*:}.json"; done
    "$bin" hook user-prompt-submit < "$work/ups.json"
    echo "${hook%%:*}: $(count "$home/cg.out" "$bin" hook "${hook%%:*}" < "$work/${hook##*:}.json")"
  done
  home=$(mktemp -d -p "$work")
  printf 'save_every_turns = 5\n' > "$home/memory-save.toml"
  export MEMORY_SAVE_HOME=$home
  mkdir -p "$home/memory/proj" && cp "$work/mem.md" "$home/memory/proj/MEMORY.md"
  "$bin" hook session-start --part 1 < "$work/ss.json" > /dev/null
  for p in 1 6; do echo "session-start part $p: $(count "$home/cg.out" "$bin" hook session-start --part $p < "$work/ss.json")"; done
done
