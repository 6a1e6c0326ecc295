#!/usr/bin/env bash
# Install the real Claude Code CLI (npm package @anthropic-ai/claude-code) into a
# cache folder for the end-to-end tests, and print the absolute path of the
# runnable `claude` executable as the last line of stdout.
#
#   CLAUDE_CODE_VERSION      version to install (default: the first listed in
#                            tests/e2e/versions.txt)
#   MEMORY_SAVE_E2E_CACHE    cache root (default $PWD/target/e2e)
#
# Idempotent: a folder that already holds a working CLI of that version is reused.
# Only the npm registry is contacted.
set -euo pipefail

versions="$(dirname "${BASH_SOURCE[0]}")/../tests/e2e/versions.txt"
version="${CLAUDE_CODE_VERSION:-$(grep -v '^#' "$versions" | head -n 1)}"
cache="${MEMORY_SAVE_E2E_CACHE:-$PWD/target/e2e}"
dir="$cache/claude-code-$version"

# The npm package ships `bin/claude.exe` as a placeholder; its postinstall swaps
# in the native binary from the matching optional dependency
# (@anthropic-ai/claude-code-<os>-<arch>[-musl]). We look at both places and
# take the first one that answers `--version` with the version we want.
find_claude() {
    local c
    for c in "$dir/node_modules/.bin/claude" \
             "$dir/node_modules/@anthropic-ai/claude-code/bin/claude.exe" \
             "$dir"/node_modules/@anthropic-ai/claude-code-*/claude \
             "$dir"/node_modules/@anthropic-ai/claude-code-*/bin/claude*; do
        [ -x "$c" ] || continue
        if "$c" --version 2>/dev/null | grep -q "^$version"; then
            # Resolve symlinks so callers get a stable absolute path.
            readlink -f "$c"
            return 0
        fi
    done
    return 1
}

if claude_path="$(find_claude)"; then
    echo "claude-code $version already installed in $dir" >&2
    echo "$claude_path"
    exit 0
fi

command -v npm >/dev/null || { echo "install-claude-code: npm not found" >&2; exit 1; }
mkdir -p "$dir"
echo "installing @anthropic-ai/claude-code@$version into $dir" >&2
# npm output goes to stderr: stdout's last line must be the path.
npm install --prefix "$dir" --no-audit --no-fund --no-save \
    "@anthropic-ai/claude-code@$version" >&2

if claude_path="$(find_claude)"; then
    echo "$claude_path"
else
    echo "install-claude-code: no runnable claude $version under $dir" >&2
    exit 1
fi
