//! The one gate for text that reaches memory or a session: every door asks
//! it, and the load withholds any line no door could have admitted
//! (docs/design.md §5). Pure: text in, verdicts out.

use super::secrets;
use super::text;

mod orders;
pub use orders::{gives_order, pipes_into_shell};

/// Raised whenever the gate refuses more: a text an older gate found clean
/// is checked again at its next load.
pub const VERSION: u32 = 5;

/// Tags of the frames the model reads: Claude Code's own and the API's.
/// Only a whole tag name counts: `<user_query>` in a project's facts passes.
pub const FRAMING_TAGS: &[&str] = &[
    "system-reminder",
    "system",
    "user",
    "assistant",
    "human",
    "function_calls",
    "function_results",
    "function_call",
    "invoke",
    "parameter",
    "tool_use",
    "tool_result",
    "tool_use_error",
    "thinking",
    "command-name",
    "command-message",
    "command-args",
    "command-contents",
    "local-command-stdout",
    "local-command-stderr",
    "local-command-caveat",
    "bash-input",
    "bash-stdout",
    "bash-stderr",
    "user-prompt-submit-hook",
    "task-notification",
    "persisted-output",
    "session-start-hook",
    "new-diagnostics",
    "ide_selection",
    "ide_opened_file",
    "document",
    "documents",
    "document_content",
    "search_results",
    "instructions",
];

/// Why `line` may not stand in memory, at any door; `None` when it may.
pub fn refusal(line: &str) -> Option<String> {
    if let Some(kind) = secrets::find_secret(line) {
        return Some(secrets::refusal(kind));
    }
    refusal_without_secrets(line)
}

/// `refusal` but for secrets, which `load` scans for once in the whole text.
fn refusal_without_secrets(line: &str) -> Option<String> {
    if let Err(why) = text::check(line) {
        return Some(why);
    }
    // A merge's conflict markers: arrived by a fast-forward, one breaks
    // every later merge of the file.
    let bare = line.trim_end();
    if bare.starts_with("<<<<<<<") || bare.starts_with(">>>>>>>") || bare.starts_with("|||||||") || bare == "=======" {
        return Some("it is a merge conflict marker, not memory".to_string());
    }
    if let Some(tag) = framing_tag(line) {
        return Some(format!(
            "it holds <{tag}> markup, which opens or closes a frame the model reads; write the tag's name without brackets"
        ));
    }
    if let Some(what) = imitates_at_start(line) {
        return Some(format!("it begins like {what}, which a later session would take for a frame of its own"));
    }
    None
}

/// Why a guard may not stand (`guard::Spec::refusal`): every door a guard
/// comes by, a reply or a synced file, asks this.
pub fn guard_refusal(spec: &super::guard::Spec, rule: &str) -> Option<String> {
    spec.refusal(rule)
}

/// What a fork may not write, on top of `refusal`.
pub fn fork_refusal(line: &str) -> Option<String> {
    refusal(line).or_else(|| {
        pipes_into_shell(line).then(|| {
            "it pipes a download into a shell; a save never writes such a line (write it yourself with memory-save edit)"
                .to_string()
        })
    })
}

/// The first framing tag in `line`: `<name …>`, `</name>`, `<name/>`.
pub fn framing_tag(line: &str) -> Option<&'static str> {
    // Read as the model reads it: `＜/system-reminder＞`, a Cyrillic `ѕ`
    // or a no-break space inside the tag are the tag.
    let folded = if line.is_ascii() { std::borrow::Cow::Borrowed(line) } else { fold_ascii(line).into() };
    let line = folded.as_ref();
    let bytes = line.as_bytes();
    let name_byte = |b: &u8| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b':');
    let mut at = 0;
    while let Some(found) = line[at..].find('<') {
        let start = at + found + 1;
        at = start;
        let mut i = start;
        let closing = bytes.get(i) == Some(&b'/');
        // `Vec<User>`, `Option<System>`: a type's parameter, not an opening
        // tag. A closing one ends a frame wherever it stands.
        if !closing
            && line[..start - 1].chars().next_back().is_some_and(|c| c.is_alphanumeric() || matches!(c, '_' | ':'))
        {
            continue;
        }
        if closing {
            i += 1;
        }
        while bytes.get(i).is_some_and(|b| *b == b' ') {
            i += 1;
        }
        let name_start = i;
        while bytes.get(i).is_some_and(name_byte) {
            i += 1;
        }
        let name = &line[name_start..i];
        if name.is_empty() {
            continue;
        }
        let name = name.to_ascii_lowercase();
        if let Some(tag) = FRAMING_TAGS.iter().find(|t| **t == name) {
            return Some(tag);
        }
    }
    None
}

/// Small capitals read as the capitals they imitate.
fn small_capital(c: char) -> char {
    match c {
        'ᴀ' => 'A',
        'ʙ' => 'B',
        'ᴄ' => 'C',
        'ᴅ' => 'D',
        'ᴇ' => 'E',
        'ꜰ' | 'ғ' => 'F',
        'ɢ' => 'G',
        'ʜ' => 'H',
        'ɪ' => 'I',
        'ᴊ' => 'J',
        'ᴋ' => 'K',
        'ʟ' => 'L',
        'ᴍ' => 'M',
        'ɴ' => 'N',
        'ᴏ' => 'O',
        'ᴘ' => 'P',
        'ǫ' => 'Q',
        'ʀ' => 'R',
        'ꜱ' => 'S',
        'ᴛ' => 'T',
        'ᴜ' => 'U',
        'ᴠ' => 'V',
        'ᴡ' => 'W',
        'ʏ' => 'Y',
        'ᴢ' => 'Z',
        _ => c,
    }
}

/// Text as the model reads it, for comparing with our own words: NFKC,
/// small capitals and UTS #39 confusables folded (build.rs's table),
/// combining marks dropped. Our words are folded the same way, so the
/// skeleton's own choices (`I` as `l`) cancel out.
pub(super) fn fold(text: &str) -> String {
    use unicode_normalization::UnicodeNormalization;
    text.nfkc()
        .map(small_capital)
        .flat_map(char::to_uppercase)
        .filter(|c| !unicode_normalization::char::is_combining_mark(*c))
        .map(unconfuse)
        .collect()
}

include!(concat!(env!("OUT_DIR"), "/confusables.rs"));

/// The character UTS #39 says `c` is confused with, or `c` itself.
fn unconfuse(c: char) -> char {
    CONFUSABLES.binary_search_by_key(&(c as u32), |(code, _)| *code).map_or(c, |at| char::from(CONFUSABLES[at].1))
}

/// Whether two lines read the same to the model once folded: a save that
/// writes a look-alike of a held foreign rule writes that rule.
pub fn same_when_folded(a: &str, b: &str) -> bool {
    let squeeze = |t: &str| fold(t).chars().filter(|c| c.is_alphanumeric()).collect::<String>();
    squeeze(a) == squeeze(b)
}

/// `text` as the model reads it, in ASCII where it can be: full-width forms
/// and look-alikes folded, every space a plain one. ASCII itself is kept,
/// so patterns still read it as written.
pub fn fold_ascii(text: &str) -> String {
    use unicode_normalization::UnicodeNormalization;
    if text.is_ascii() {
        return text.to_string();
    }
    text.nfkc()
        .filter(|c| !unicode_normalization::char::is_combining_mark(*c))
        .map(|c| {
            if c.is_ascii() {
                c
            } else if c.is_whitespace() {
                ' '
            } else {
                unconfuse(small_capital(c))
            }
        })
        .collect()
}

/// What the line's start imitates, after any list, table or quote markers:
/// our block header (any brackets or spacing) or the fork's first line.
pub fn imitates_at_start(line: &str) -> Option<&'static str> {
    let mut content = line.trim_start();
    loop {
        let numbered = content.split_once(['.', ')']).filter(|(n, rest)| {
            !n.is_empty() && n.len() <= 3 && n.bytes().all(|b| b.is_ascii_digit()) && rest.starts_with(' ')
        });
        let rest = ["- ", "* ", "+ ", "| ", "> "]
            .iter()
            .find_map(|m| content.strip_prefix(m))
            .or(numbered.map(|(_, rest)| rest));
        match rest {
            Some(rest) => content = rest.trim_start(),
            None => break,
        }
    }
    if content.starts_with('`') {
        return None; // code
    }
    // Most lines are plain ASCII whose first letter rules them out: spare
    // them the folding.
    let first = content.chars().find(|c| c.is_alphanumeric());
    if content.is_ascii() && !matches!(first, Some('p' | 'P' | 'm' | 'M')) {
        return None;
    }
    let folded = fold(&content.chars().take(160).collect::<String>());
    let letters = |text: &str| text.chars().filter(|c| c.is_alphanumeric()).collect::<String>();
    let header = letters(&fold("PROJECT MEMORY"));
    // The header's letters first, then a separator or the end: `Project
    // memory lives in …` is prose.
    let mut taken = String::new();
    let mut after = folded.len();
    for (i, c) in folded.char_indices() {
        if c.is_alphanumeric() {
            taken.push(c);
            if taken.len() == header.len() {
                after = i + c.len_utf8();
                break;
            }
        }
    }
    if taken == header && folded[after..].trim_start().chars().next().is_none_or(|c| !c.is_alphanumeric()) {
        return Some("memory-save's block header (PROJECT MEMORY: …)");
    }
    if letters(&folded).starts_with(&letters(&fold("[memory-save] This is not a user request"))) {
        return Some("the first line of memory-save's own request to the fork");
    }
    None
}

/// The lines of `memory` every later session takes as instructions: the
/// CRITICAL RULES bullets, and any line elsewhere that gives an order.
pub fn instruction_lines(memory: &str) -> Vec<String> {
    let mut lines = super::template::critical_rules(memory);
    let sections = super::template::sections_of_lines(memory);
    for (line, section) in memory.lines().zip(sections) {
        let line = line.trim();
        if section != Some(0) && !line.starts_with('#') && gives_order(line) && !lines.iter().any(|l| l == line) {
            lines.push(line.to_string());
        }
    }
    lines
}

/// The lines `after` gains over `before` that no door may admit, with their
/// numbers (from 1): for a door that brings in a whole text (an undo, a pull).
pub fn refused_additions(before: &str, after: &str) -> Vec<Withheld> {
    let had: std::collections::HashSet<&str> = before.lines().collect();
    after
        .lines()
        .enumerate()
        .filter(|(_, line)| !had.contains(line))
        .filter_map(|(i, line)| refusal(line).map(|why| Withheld { line: i + 1, why }))
        .collect()
}

/// A memory text as a session may load it, and the lines withheld.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Loaded {
    pub text: String,
    pub withheld: Vec<Withheld>,
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Withheld {
    pub line: usize,
    pub why: String,
}

/// The load gate. The secret scan runs over the whole text once, and line
/// by line only on a hit, so a clean file costs one pass.
pub fn load(text: &str) -> Loaded {
    let secret_somewhere = secrets::find_secret(text).is_some();
    let mut out = Loaded { text: String::with_capacity(text.len()), withheld: Vec::new() };
    for (i, line) in text.split_inclusive('\n').enumerate() {
        let bare = line.trim_end_matches(['\n', '\r']);
        let why = refusal_without_secrets(bare)
            .or_else(|| secret_somewhere.then(|| secrets::find_secret(bare).map(secrets::refusal)).flatten());
        match why {
            Some(why) => out.withheld.push(Withheld { line: i + 1, why }),
            None => out.text.push_str(line),
        }
    }
    out
}

/// The line the loaded block carries when it leaves lines out.
pub fn block_note(withheld: usize) -> Option<String> {
    (withheld > 0).then(|| {
        let lines = super::report::plural(withheld as u64, "line");
        format!(
            "(memory-save left out {lines} of MEMORY.md that no save may write: hidden or control characters, framing markup, a look-alike of this block's header, or a secret; the user was told which.)"
        )
    })
}

/// The line the loaded block carries when rules wait for the user's review.
pub fn held_note(held: usize) -> Option<String> {
    (held > 0).then(|| {
        let rules = super::report::plural(held as u64, "CRITICAL RULES line");
        format!(
            "(memory-save left out {rules} that did not come from the user's own saves and wait for the user's review.)"
        )
    })
}

/// The report line that names what the load withheld.
pub fn withheld_report(withheld: &[Withheld]) -> Option<String> {
    let first = withheld.first()?;
    let more = match withheld.len() {
        1 => String::new(),
        n => format!(
            " ({} more: lines {})",
            n - 1,
            withheld[1..].iter().map(|w| w.line.to_string()).collect::<Vec<_>>().join(", ")
        ),
    };
    Some(format!(
        "memory-save: MEMORY.md line {} was not loaded: {}{more}; fix it with memory-save edit (memory-save doctor lists them)",
        first.line, first.why
    ))
}

#[cfg(test)]
mod tests;
