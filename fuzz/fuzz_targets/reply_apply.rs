//! Any bytes as a fork's reply: the finder and apply must not panic, and
//! what apply would write must hold every rule of SPEC section 4.5, on a
//! file under the caps and on one over them.
#![no_main]

use std::collections::HashSet;
use std::sync::LazyLock;

use libfuzzer_sys::fuzz_target;
use memory_save::memory::apply::{self, check_topic_name, HISTORY_FILE};
use memory_save::memory::reply::{self, MAX_OPS, MAX_TOPICS};
use memory_save::memory::secrets::find_secret;
use memory_save::memory::template::{is_in_template, SECTIONS};
use memory_save::memory::{Size, MAX_BULLET_CHARS};

const FILE: &str = "\
# app

## CRITICAL RULES
- Run tests with cargo test -j1
- **Never** push to main

## Architecture & Config Facts
- Rust 2024 edition; one binary run by Claude Code hooks
Plain paragraph line
```sh
## not a heading inside a fence
cargo build --release
```
### Build
- cargo build --release

## Active Warnings
- None yet.

## Topic Files
- history.md
";

/// The same file grown past the line cap: a save may only shrink it.
static OVER_CAP: LazyLock<String> = LazyLock::new(|| {
    let bullets: String = (0..200).map(|i| format!("- fact {i} {}\n", "z".repeat(30))).collect();
    FILE.replace("### Build\n", &format!("{bullets}### Build\n"))
});

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let Ok(reply) = reply::parse(&text) else { return };
    assert!(reply.ops.len() <= MAX_OPS && reply.topics.len() <= MAX_TOPICS);
    assert!(reply.malformed.len() <= MAX_OPS + MAX_TOPICS + 4);
    for file in [FILE, OVER_CAP.as_str()] {
        check(file, &reply);
    }
});

fn check(file: &str, reply: &reply::Reply) {
    let out = apply::apply(file, reply, "app", &[HISTORY_FILE.to_string()]);
    // The template and its headings are held.
    assert!(is_in_template(&out.memory), "{}", out.memory);
    for section in SECTIONS {
        assert_eq!(out.memory.lines().filter(|l| *l == format!("## {section}")).count(), 1);
    }
    // Caps held, or a file over them only shrinks.
    let (before, after) = (Size::of(file), Size::of(&out.memory));
    if before.under_caps() {
        assert!(after.under_caps(), "{after:?}");
    } else {
        assert!(after.lines <= before.lines && after.chars <= before.chars, "{before:?} -> {after:?}");
    }
    // New lines: short, and no secret.
    let old: HashSet<&str> = file.lines().collect();
    for line in out.memory.lines().filter(|l| !old.contains(l)) {
        assert!(line.chars().count() <= MAX_BULLET_CHARS, "{line}");
        assert!(find_secret(line).is_none(), "{line}");
        assert!(line.starts_with("- "), "{line:?}");
    }
    // Topic files: only names that stay in the memory folder, no secrets.
    for topic in &out.topics {
        assert!(check_topic_name(&topic.file).is_ok(), "{}", topic.file);
        let name = topic.file.as_str();
        // A plain file name in the folder: no separator, not `.`/`..` or
        // hidden, not MEMORY.md under any case folding.
        assert!(!name.contains(['/', '\\', '\0']) && !name.starts_with('.') && !name.eq_ignore_ascii_case("memory.md"));
        assert!(name.is_ascii() && name.len() <= 64, "{name}");
        assert!(find_secret(&topic.append).is_none());
    }
    // What is shown again (refusals, skipped lines) never repeats a secret.
    for r in &out.refused {
        assert!(find_secret(&r.entry).is_none(), "{}", r.entry);
    }
    for s in &out.skipped {
        assert!(find_secret(s).is_none(), "{s}");
    }
}
