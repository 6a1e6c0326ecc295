#!/usr/bin/env bash
# Build and install memory-save with cargo, then register its hooks in
# ~/.claude/settings.json. Arguments go to `memory-save install`:
#   ./install.sh                 user settings (~/.claude/settings.json)
#   ./install.sh --statusline    also show the save state in the status line
#   ./install.sh --project       this project's .claude/settings.local.json (this machine)
#   ./install.sh --shared        this project's .claude/settings.json (the team, committed)
#   ./install.sh --dry-run       show what would change in settings, write nothing there
# Safe to run again: it rebuilds and rewrites our entries in place.
set -euo pipefail

# --project means the folder the user ran this from, not this repository.
caller_dir=$PWD
cd "$(dirname "${BASH_SOURCE[0]}")"

if ! command -v cargo >/dev/null 2>&1; then
    echo "install.sh: cargo not found. Install Rust from https://rustup.rs (then open a new shell, or run: . \"\$HOME/.cargo/env\") and run ./install.sh again." >&2
    exit 1
fi

# On Linux the binary is linked statically (glibc's crt-static) at a fixed
# address, so it starts without the dynamic loader's work, or a static
# PIE's relocations, on every hook (docs/install.md); the flags reach
# only our target through an explicit --target, so proc-macro crates still
# build. macOS links its system library dynamically by rule.
host=$(rustc -vV | sed -n 's/^host: //p')
case "$host" in
    *-linux-gnu*)
        RUSTFLAGS="${RUSTFLAGS:-} -C target-feature=+crt-static -C relocation-model=static" \
            cargo install --locked --path . --target "$host"
        ;;
    *)
        cargo install --locked --path .
        ;;
esac

bin_dir="${CARGO_INSTALL_ROOT:-${CARGO_HOME:-$HOME/.cargo}}/bin"
memory_save="$bin_dir/memory-save"
if [ ! -x "$memory_save" ]; then
    echo "install.sh: cargo install finished, but $memory_save is missing; check CARGO_INSTALL_ROOT and CARGO_HOME." >&2
    exit 1
fi

(cd "$caller_dir" && "$memory_save" install "$@")

uninstall="$memory_save uninstall"
for arg in "$@"; do
    if [ "$arg" = --project ] || [ "$arg" = --shared ]; then
        uninstall="cd $(printf %q "$caller_dir") && $uninstall --project"
    fi
done

cat <<EOF

Next:
  - Memory lives in ~/.cli-tweaks/memory/<project>/MEMORY.md; it fills itself after your turns.
  - Remove the hooks again with: $uninstall
EOF
