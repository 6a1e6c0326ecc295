#!/usr/bin/env bash
# Build the release binary for this machine's target, statically linked on
# Linux (glibc's crt-static) at a fixed address (no position-independent
# code: a static PIE applies some 8,000 relocations at every start, an
# eighth of each hook's time), and print its path as the last stdout line.
#
# The flag goes to the target through an explicit --target, so that
# proc-macro crates (built for the host) still link dynamically as rustc
# needs. macOS links its system library dynamically by rule: there this is
# the plain release build.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
host=$(rustc -vV | sed -n 's/^host: //p')
case "$host" in
    *-linux-gnu*)
        RUSTFLAGS="${RUSTFLAGS:-} -C target-feature=+crt-static -C relocation-model=static" \
            cargo build --release --locked --target "$host" --target-dir target/static >&2
        echo "$PWD/target/static/$host/release/memory-save"
        ;;
    *)
        cargo build --release --locked >&2
        echo "$PWD/target/release/memory-save"
        ;;
esac
