#!/usr/bin/env bash
# The memory check on a real repository (issue 20): a crate from cargo's
# cache, made a git repository, a 50-line memory about it, then files
# renamed and deleted in commits of their own. Prints the stale lines
# found against the five made stale, and any false alarm.
#   scripts/check-real-crate.sh [path/to/memory-save]
set -euo pipefail
bin=${1:-target/release/memory-save}
bin=$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")
crate=$(ls -d "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/clap_builder-4.* 2>/dev/null | head -1)
[ -n "$crate" ] || { echo "no clap_builder in cargo's cache: run cargo fetch first" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
repo=$work/clap_builder
cp -R "$crate" "$repo"
git_() { git -C "$repo" -c user.name=t -c user.email=t@example.com "$@"; }
git_ init -q -b main
printf '/target/\n' > "$repo/.gitignore"
git_ add -A && git_ commit -qm "the crate as published"
export MEMORY_SAVE_HOME=$work/home
mkdir -p "$MEMORY_SAVE_HOME/memory/clap_builder"
cat > "$MEMORY_SAVE_HOME/memory/clap_builder/MEMORY.md" <<'MEM'
# clap_builder

## CRITICAL RULES
- Run the tests with `cargo test --all-features` before a release.
- Never change the public API in `src/builder/command.rs` without a changelog entry.
- Keep `Cargo.toml` and Cargo.lock in step; run `cargo update -p clap_lex` only on purpose.
- Format with rustfmt; the CI (.github/workflows/ci.yml upstream) rejects drift.
- Do not edit src/output/textwrap/core.rs by hand: it tracks the textwrap crate.

## Architecture & Config Facts
- Command is built in `src/builder/command.rs`; arguments in `src/builder/arg.rs`.
- Argument groups live in src/builder/arg_group.rs.
- Value parsers: `src/builder/value_parser.rs` (typed) and src/builder/possible_value.rs.
- Settings flags: `src/builder/app_settings.rs` and `src/builder/arg_settings.rs`.
- Debug assertions run in `src/builder/debug_asserts.rs` at build time of a Command.
- Styling of help is in src/builder/styling.rs and styled strings in src/builder/styled_str.rs.
- The parser proper is `src/parser/parser.rs`; validation in src/parser/validator.rs.
- Matches are in src/parser/matches/arg_matches.rs with sources in `src/parser/matches/value_source.rs`.
- Suggestions for typos: src/parser/features/suggestions.rs (Jaro similarity).
- Errors: kinds in `src/error/kind.rs`, formatting in src/error/format.rs, context in src/error/context.rs.
- Help output: `src/output/help.rs` and the template engine in src/output/help_template.rs.
- Usage strings come from src/output/usage.rs.
- Text wrapping is vendored under `src/output/textwrap/`.
- Key map for lookups: src/mkeymap.rs.
- Macros exported from `src/macros.rs`; the crate root is src/lib.rs.
- Derive support types are in src/derive.rs.
- Utility maps: src/util/flat_map.rs and `src/util/flat_set.rs`; a tiny graph in src/util/graph.rs.
- Colour choice lives in `src/util/color.rs`.
- Any-value boxing: src/util/any_value.rs.
- The crate builds with Rust 1.74 or newer (rust-version in Cargo.toml).
- Features are declared in Cargo.toml: std, color, help, usage, error-context, suggestions.
- It depends on clap_lex for raw argument lexing, and anstyle for styles.
- The builder tests sit in `src/builder/tests.rs`.
- Ranges of values (num_args) are in src/builder/range.rs.
- Resettable builder values: src/builder/resettable.rs.
- OS strings and Str: src/builder/os_str.rs and src/builder/str.rs.
- The README.md points to the clap crate's docs.
- Licensed under LICENSE-MIT or LICENSE-APACHE.
- Output formatting helpers: src/output/fmt.rs.
- The ext mechanism for extensions: `src/builder/ext.rs`.
- Arg actions: src/builder/action.rs.
- Predicates for conditional requirements: src/builder/arg_predicate.rs.
- Value hints for shell completion: src/builder/value_hint.rs.
- Escape helpers: src/util/escape.rs.
- The arg matcher accumulates values: `src/parser/arg_matcher.rs`.
- Parser errors live in src/parser/error.rs.
- Docs at https://docs.rs/clap_builder and https://github.com/clap-rs/clap/blob/master/README.md.
- Works with Node.js-free toolchains; no build.rs is used.

## Active Warnings
- Matched args in src/parser/matches/matched_arg.rs grow with every occurrence; watch memory on huge argv.
- Word separators in src/output/textwrap/word_separators.rs miss some CJK breaks.
- The wrap algorithms in `src/output/textwrap/wrap_algorithms.rs` are greedy only.

## Topic Files
- None yet.
MEM
lines=$(wc -l < "$MEMORY_SAVE_HOME/memory/clap_builder/MEMORY.md")
# The repository moves on: three renames and two deletions, one a commit.
git_ mv src/mkeymap.rs src/keymap.rs && git_ commit -qm "rename mkeymap"
git_ mv src/util/graph.rs src/util/child_graph.rs && git_ commit -qm "rename graph"
git_ mv src/output/usage.rs src/output/usage_text.rs && git_ commit -qm "rename usage"
git_ rm -q src/util/escape.rs && git_ commit -qm "drop escape"
git_ rm -q src/builder/value_hint.rs && git_ commit -qm "drop value hints"
expected="src/mkeymap.rs src/util/graph.rs src/output/usage.rs src/util/escape.rs src/builder/value_hint.rs"
rm -f "$MEMORY_SAVE_HOME"/state/memory-save/projects/*.check.json
start=$(date +%s%N)
json=$(cd "$repo" && "$bin" show --check --json)
took=$(( ($(date +%s%N) - start) / 1000000 ))
python3 - "$expected" "$lines" "$took" <<PY
import json, sys
found = json.loads('''$json''')
expected = set(sys.argv[1].split())
stale = {s["path"]: s for s in found["stale"]}
hits = sorted(set(stale) & expected)
false = sorted(set(stale) - expected)
print(f"memory: {sys.argv[2]} lines; made stale: {len(expected)}; found: {len(hits)}; missed: {sorted(expected - set(stale))}; false alarms: {len(false)} {false}")
for path in hits:
    s = stale[path]
    f = s["found"]
    what = {"renamed": f"renamed to {f.get('to')}", "deleted": f"deleted in {f.get('commit')}"}.get(f["kind"], f["kind"])
    print(f"  line {s['line']}: {path}: {what}")
print(f"near-duplicate pairs: {len(found['duplicates'])}")
print(f"show --check with the log walk, cache cleared: {sys.argv[3]} ms")
PY
