//! The pure core: text in, text out. No I/O, no clock, nothing from `hook/`,
//! `save/` or `state`, so every rule is testable with strings alone.

pub mod apply;
pub mod block;
pub mod cost;
pub mod duplicates;
pub mod edit;
pub mod gate;
pub mod guard;
pub mod import;
pub mod merge;
pub mod prompt;
pub mod refs;
pub mod reply;
pub mod report;
pub mod route;
pub mod secrets;
pub mod template;
pub mod text;

/// 8 hex digits of FNV-1a, the same on every machine. Not for security.
pub fn stable_id(text: &str) -> String {
    format!("{:08x}", stable_hash(text) >> 32)
}

/// A 64-bit FNV-1a hash, the same on every machine. Not for security.
pub fn stable_hash(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3))
}

/// Characters are Unicode scalar values (docs/design.md §5).
pub fn char_count(text: &str) -> usize {
    text.chars().count()
}

pub fn line_count(text: &str) -> usize {
    text.lines().count()
}

/// The caps a written MEMORY.md must stay under.
pub const MAX_LINES: usize = 200;
pub const MAX_CHARS: usize = 50_000;
/// From here on the fork is told how much to offload.
pub const OFFLOAD_LINES: usize = 160;
pub const OFFLOAD_CHARS: usize = 42_000;
/// A new bullet may be at most this long.
pub const MAX_BULLET_CHARS: usize = 600;

/// Where a file stands against the caps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Size {
    pub lines: usize,
    pub chars: usize,
}

impl Size {
    pub fn of(text: &str) -> Size {
        Size { lines: line_count(text), chars: char_count(text) }
    }

    pub fn under_caps(self) -> bool {
        self.lines < MAX_LINES && self.chars < MAX_CHARS
    }

    /// At or over the offload mark: the fork must move entries out.
    pub fn needs_offload(self) -> bool {
        self.lines >= OFFLOAD_LINES || self.chars >= OFFLOAD_CHARS
    }
}
