#!/usr/bin/env bash
# Fuzz the reply finder and apply (fuzz/fuzz_targets/reply_apply.rs) for a
# fixed time and print how many inputs ran.
#
#   scripts/fuzz.sh [seconds]     default 60
#
# Needs cargo-fuzz (`cargo install cargo-fuzz`) and a C++ compiler; the
# first run builds for a few minutes. cargo-fuzz
# needs nightly Rust for -Zsanitizer: the nightly toolchain when rustup has
# one, else the stable one with RUSTC_BOOTSTRAP=1 (which unlocks nightly
# flags on stable). The corpus grows in fuzz/corpus/reply_apply (ignored by
# git), seeded from fuzz/seeds/reply_apply; a crash lands in fuzz/artifacts.
set -euo pipefail

seconds="${1:-60}"
case "$seconds" in '' | *[!0-9]*) echo "usage: $0 [seconds]" >&2; exit 2 ;; esac
cd "$(dirname "$0")/.."

if rustup toolchain list 2>/dev/null | grep -q '^nightly'; then
    cargo_fuzz=(cargo +nightly fuzz)
else
    export RUSTC_BOOTSTRAP=1
    cargo_fuzz=(cargo fuzz)
fi

corpus=fuzz/corpus/reply_apply
mkdir -p "$corpus"
log="$(mktemp)"
trap 'rm -f "$log"' EXIT

set +e
# The core is safe Rust: AddressSanitizer would only slow the runs, so it is
# off (-s none). Debug assertions stay on (cargo-fuzz's default).
"${cargo_fuzz[@]}" run -s none reply_apply "$corpus" fuzz/seeds/reply_apply -- \
    -max_total_time="$seconds" -max_len=16384 -timeout=10 \
    -dict=fuzz/reply_apply.dict -print_final_stats=1 2>&1 | tee "$log" | grep -E '^(INFO: Seed|#[0-9]+ +(INITED|DONE)|==[0-9]+==|SUMMARY|Done )'
status="${PIPESTATUS[0]}"
set -e

runs="$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)"
echo "fuzz reply_apply: ${runs:-?} runs in ${seconds} s (exit ${status})"
exit "$status"
