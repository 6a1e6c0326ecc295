#!/usr/bin/env bash
# What the memory check costs the worker before a fork (issue 20): a
# 200-line memory with 200 references in a repository of 200 files, timed
# through `show --check` (the worker's check, the same function) against
# `show` (the same start and lookup, no check); the check's cache is
# cleared before each run. First every path exists (no git log walk),
# then every path was renamed in a commit of 200 renames (the walk runs).
#   scripts/bench-check.sh [path/to/memory-save]
set -euo pipefail
bin=${1:-target/release/memory-save}
bin=$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
repo=$work/app
mkdir -p "$repo/src"
git_() { git -C "$repo" -c user.name=t -c user.email=t@example.com "$@"; }
git_ init -q -b main
for i in $(seq -w 1 200); do echo "pub fn f$i() {}" > "$repo/src/mod_$i.rs"; done
# Some history to walk: 300 commits.
for i in $(seq 1 300); do echo "$i" > "$repo/CHANGES.txt"; git_ add -A; git_ commit -qm "change $i"; done
export MEMORY_SAVE_HOME=$work/home
mkdir -p "$MEMORY_SAVE_HOME/memory/app"
{
  printf '# app\n\n## CRITICAL RULES\n- None yet.\n\n## Architecture & Config Facts\n'
  for i in $(seq -w 1 188); do
    if [ "$((10#$i))" -le 12 ]; then
      j=$(printf '%03d' $((188 + 10#$i)))
      printf -- '- Function f%s is in `src/mod_%s.rs`, its twin in src/mod_%s.rs.\n' "$i" "$i" "$j"
    else
      printf -- '- Function f%s is defined in `src/mod_%s.rs` and used by the CLI.\n' "$i" "$i"
    fi
  done
  printf '\n## Active Warnings\n- None yet.\n\n## Topic Files\n- None yet.\n'
} > "$MEMORY_SAVE_HOME/memory/app/MEMORY.md"
time_it() { # median ms of 11 runs of: $bin $@, the cache cleared first
  python3 - "$bin" "$MEMORY_SAVE_HOME" "$repo" "$@" <<'PY'
import glob, os, statistics, subprocess, sys, time
bin, home, repo, args = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
runs = []
for _ in range(11):
    for f in glob.glob(os.path.join(home, "state/memory-save/projects/*.check.json")):
        os.remove(f)
    t = time.perf_counter()
    subprocess.run([bin, *args], cwd=repo, check=True, stdout=subprocess.DEVNULL)
    runs.append((time.perf_counter() - t) * 1000)
print(f"{statistics.median(runs):.1f}")
PY
}
lines=$(wc -l < "$MEMORY_SAVE_HOME/memory/app/MEMORY.md")
plain=$(time_it show)
exists=$(time_it show --check)
echo "memory: $lines lines, 200 references; repository: 200 files, 300 commits"
echo "every path exists (no walk): show $plain ms, show --check $exists ms"
for i in $(seq -w 1 200); do git_ mv "src/mod_$i.rs" "src/m_$i.rs"; done
git_ commit -qm "rename every module"
renamed=$(time_it show --check)
found=$(cd "$repo" && "$bin" show --check --json | python3 -c 'import json,sys; d=json.load(sys.stdin); print(sum(1 for s in d["stale"] if s["found"]["kind"]=="renamed"))')
echo "every path renamed (the walk runs): show --check $renamed ms; $found stale lines named with their new path"
