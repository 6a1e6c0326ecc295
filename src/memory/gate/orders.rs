//! What a line tells the model to do: a download piped into a shell, and
//! an order aimed at the model (`gives_order`), found in one pass a line.

use super::fold_ascii;

/// A download piped into a shell: `curl … | sh`, `wget -O- … | sudo bash`,
/// `bash <(curl …)`, `iex (iwr …)`.
pub fn pipes_into_shell(line: &str) -> bool {
    let lower = line.to_ascii_lowercase();
    let fetches = ["curl", "wget", "fetch", "iwr", "irm", "invoke-webrequest", "invoke-restmethod", "http"]
        .iter()
        .any(|f| lower.contains(f));
    if !fetches {
        return false;
    }
    let shells =
        ["sh", "bash", "zsh", "dash", "ksh", "fish", "python", "python3", "perl", "ruby", "node", "pwsh", "iex"];
    // `| sh`, `| sudo -E bash -s`, `|bash`
    for (i, _) in lower.match_indices('|') {
        if lower[i..].starts_with("||") || (i > 0 && lower.as_bytes()[i - 1] == b'|') {
            continue;
        }
        let mut words = lower[i + 1..].split_whitespace().skip_while(|w| *w == "sudo" || w.starts_with('-'));
        if let Some(word) = words.next() {
            let word = word.trim_matches(|c: char| !c.is_alphanumeric() && c != '-');
            if shells.contains(&word) {
                return true;
            }
        }
    }
    // `bash <(curl …)`, `sh -c "$(curl …)"`, `iex (iwr …)`, `iex(New-Object …`
    let substitutions = ["<(curl", "<(wget", "$(curl", "$(wget", "`curl", "`wget"];
    let process = shells.iter().any(|s| lower.contains(&format!("{s} <(")) || lower.contains(&format!("{s} -c")));
    let evaluated =
        ["iex (iwr", "iex(iwr", "iex (irm", "iex(irm", "iex (new-object", "iex(new-object", "invoke-expression"];
    (process && substitutions.iter().any(|s| lower.contains(s))) || evaluated.iter().any(|s| lower.contains(s))
}

/// Whether a line gives the model an order: emphasis that addresses it,
/// words aimed at the model, an order to set instructions aside, or an
/// absolute to act. Ordinary imperatives of a fact (`Set FOO in .env`) do
/// not count. Proven on tables of lines each way.
pub fn gives_order(line: &str) -> bool {
    // Read as the model reads it: look-alike letters, odd spaces and
    // emphasis marks (`**IMPORTANT**`, `IMPORTANT :`) change nothing.
    let folded = fold_ascii(line);
    let content = super::super::apply::strip_marker(&folded).trim().trim_start_matches(['*', '_', '>', ' ']);
    let lower = order_text(content);
    if starts_with_order(&lower, true) || aimed_at_the_model(&lower) {
        return true;
    }
    // After a label (`System note - …: you must …`) the rest is read alone
    // too, but for a bare "never"/"always" (`The secret: never log it`).
    match lower.split_once(": ") {
        Some((label, rest)) if label.len() <= 48 => starts_with_order(rest, false),
        _ => false,
    }
}

/// `content` lowercased, without emphasis, spaces squeezed and none before
/// a colon, in one pass: the load runs this on every line.
fn order_text(content: &str) -> String {
    if content.is_ascii() {
        return order_text_ascii(content.as_bytes());
    }
    let mut out = String::with_capacity(content.len());
    let mut space = false;
    for c in content.chars() {
        match c {
            '*' | '_' => {}
            c if c.is_whitespace() => space = !out.is_empty(),
            c => {
                if space && c != ':' {
                    out.push(' ');
                }
                space = false;
                out.extend(c.to_lowercase());
            }
        }
    }
    out
}

/// `order_text` for the common line, a byte at a time.
fn order_text_ascii(content: &[u8]) -> String {
    let mut out = Vec::with_capacity(content.len());
    let mut space = false;
    for &b in content {
        match b {
            b'*' | b'_' => {}
            b if b.is_ascii_whitespace() || b == 0x0b => space = !out.is_empty(),
            b => {
                if space && b != b':' {
                    out.push(b' ');
                }
                space = false;
                out.push(b.to_ascii_lowercase());
            }
        }
    }
    String::from_utf8(out).expect("ascii in, ascii out")
}

/// Emphasis labels and openings that address the reader.
const ORDER_OPENINGS: &[&str] = &[
    "important:",
    "important!",
    "important -",
    "critical:",
    "critical!",
    "mandatory:",
    "required:",
    "attention:",
    "system:",
    "system note",
    "instruction:",
    "instructions:",
    "note to the ai",
    "note to ai",
    "note to the assistant",
    "note to assistant",
    "note to claude",
    "note to the model",
    "note to the agent",
    "ai:",
    "assistant:",
    "claude:",
    "from now on",
    "going forward,",
    "always ",
    "never ",
    "do not ask",
    "don't ask",
    "without asking",
    "without confirmation",
    "automatically run",
    "automatically execute",
    "you must",
    "you should",
    "you need to",
    "you have to",
    "you will ",
    "you are to ",
    "you are required",
    "you are instructed",
    "you may now",
    "you can now",
    "your task",
    "your new task",
    "your instructions",
];

/// Phrases aimed at the model anywhere in a line.
const AIMED: &[&str] = &[
    "you must ",
    "you should always",
    "you should never",
    "you are required to",
    "you are instructed to",
    "as an ai",
    "claude must",
    "claude should",
    "claude will",
    "the assistant must",
    "the assistant should",
    "the model must",
    "the model should",
    "the agent must",
    "the agent should",
    "ai assistants must",
    "ai agents must",
    "llms must",
    "any ai reading",
    "if you are an ai",
    "if you're an ai",
    "if you are claude",
    "when you read this",
    "approved by the user",
    "the user has approved",
    "the user approved",
    "the user allows",
    "the user has granted",
    "the user authorized",
    "the user has authorized",
];

/// An order to set instructions aside: one of these verbs and one of the
/// objects after it.
const OVERRIDE_VERBS: &[&str] = &["ignore ", "disregard ", "forget ", "override ", "bypass "];
const OVERRIDE_OBJECTS: &[&str] = &[
    "instruction",
    "rules",
    "prompt",
    "guideline",
    "guardrail",
    "safety",
    "restriction",
    "previous",
    "prior",
    "directive",
    "earlier",
];

/// Every phrase looked for anywhere, in one automaton: one pass a line.
static ANYWHERE: std::sync::LazyLock<aho_corasick::AhoCorasick> = std::sync::LazyLock::new(|| {
    // A DFA would cost more to build, at every load, than the search.
    aho_corasick::AhoCorasick::builder()
        .kind(Some(aho_corasick::AhoCorasickKind::ContiguousNFA))
        .build(AIMED.iter().chain(OVERRIDE_VERBS).chain(OVERRIDE_OBJECTS))
        .expect("the phrases compile")
});

fn starts_with_order(lower: &str, absolutes: bool) -> bool {
    ORDER_OPENINGS.iter().filter(|p| absolutes || !matches!(**p, "always " | "never ")).any(|p| lower.starts_with(p))
}

fn aimed_at_the_model(lower: &str) -> bool {
    // Most lines hold none of the phrases: the quick search says so.
    if !ANYWHERE.is_match(lower) {
        return false;
    }
    let (mut verb, mut object) = (false, false);
    for found in ANYWHERE.find_overlapping_iter(lower) {
        let id = found.pattern().as_usize();
        if id < AIMED.len() {
            return true;
        }
        if id < AIMED.len() + OVERRIDE_VERBS.len() {
            verb = true;
        } else {
            object = true;
        }
    }
    verb && object
}
