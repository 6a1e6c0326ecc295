//! Guards: a CRITICAL RULE that forbids a command or a path, as a check
//! PreToolUse runs before the tool does, so Claude Code asks the user (or,
//! for a guard the user promoted, refuses) before the rule is broken.
//! Here: the reply's form, the gate's checks, and matching; no I/O.

use regex_automata::nfa::thompson::{self, WhichCaptures, pikevm::PikeVM};
use regex_automata::util::syntax;
use regex_automata::{Input, MatchKind, PatternSet};
use serde::{Deserialize, Serialize};

/// Longest pattern a guard may carry.
pub const MAX_PATTERN: usize = 200;
/// Most guards a project may hold.
pub const MAX_GUARDS: usize = 20;
/// A pattern's compiled size. The Pike VM's time is its states times the
/// subject's length: with 20 guards at this size and a subject at
/// `MAX_SUBJECT`, a check stays well inside the hook's deadline.
const SIZE_LIMIT: usize = 8 * 1024;
/// The longest command or path a hook checks; a longer one is asked about
/// whole rather than checked (`pre_tool_use`).
pub const MAX_SUBJECT: usize = 16 * 1024;

/// Commands a working session runs all the time: a guard matching one would
/// ask at every turn, so it is refused.
pub const ORDINARY_COMMANDS: [&str; 13] = [
    "ls",
    "cd src",
    "git status",
    "git diff",
    "cat README.md",
    "cargo build",
    "npm test",
    "make",
    "git log --oneline -5",
    "cargo test --workspace --quiet",
    "echo done",
    "cd src && ls -la",
    "grep -rn main src",
];
/// A guard's breadth is judged on realistic commands and paths of working
/// sessions, kept here as data (2,500 commands of git, cargo, npm, pnpm,
/// yarn, pytest, go, make, docker and the shell, pipelines, `$(…)`,
/// `xargs`, heredocs and home paths among them; 1,100 paths).
const COMMAND_CORPUS: &str = include_str!("guard_corpus/commands.txt");
const PATH_CORPUS: &str = include_str!("guard_corpus/paths.txt");
/// The share of the corpus a guard may match: a catch-all matches most of
/// it, a guard of one command or folder a few in a hundred.
const MAX_COMMAND_SHARE: f64 = 0.01;
const MAX_PATH_SHARE: f64 = 0.02;
/// A guard that follows its rule's own words (it spells out a word of the
/// rule: "never npm or yarn" and `\b(npm|yarn)\b`) may match this much:
/// the rule forbids exactly those ordinary commands.
const MAX_SHARE_IN_RULES_WORDS: f64 = 0.25;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Tool {
    /// Its match is a regular expression over the command.
    Bash,
    /// Edit, Write, MultiEdit and NotebookEdit: a glob over the file's path
    /// relative to the project's top.
    Edit,
}

impl Tool {
    /// The guard tool a Claude Code tool name falls under.
    pub fn of_tool_name(name: &str) -> Option<Tool> {
        match name {
            "Bash" => Some(Tool::Bash),
            "Edit" | "Write" | "MultiEdit" | "NotebookEdit" => Some(Tool::Edit),
            _ => None,
        }
    }
}

/// What a guard makes Claude Code do: ask the user, or refuse the call.
/// Never allow: a guard can only add a question.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Decision {
    #[default]
    Ask,
    Deny,
}

impl Decision {
    pub fn word(self) -> &'static str {
        match self {
            Decision::Ask => "ask",
            Decision::Deny => "deny",
        }
    }
}

/// A guard a session binds by, kept in its state: all PreToolUse reads.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Active {
    pub id: String,
    pub rule: String,
    pub tool: Tool,
    #[serde(rename = "match")]
    pub pattern: String,
    pub decision: Decision,
    /// Text every match holds; `None`: none known. Worked out when the guard
    /// binds, since parsing a pattern costs about what compiling it does: a
    /// call without it is not checked. One string, as every hook reads the
    /// session's state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub needle: Option<String>,
}

impl Active {
    pub fn new(id: String, rule: String, spec: Spec, decision: Decision) -> Active {
        let needle = needle(&spec.source());
        Active { id, rule, tool: spec.tool, pattern: spec.pattern, decision, needle }
    }

    /// Whether the guard may match `subject`: false only when `subject`
    /// lacks the text its every match holds.
    fn may_match(&self, subject: &str) -> bool {
        self.needle.as_ref().is_none_or(|needle| subject.contains(needle.as_str()))
    }
}

/// The common start of the literals every match of `source` begins with
/// (regex-syntax's prefix extraction, the regex crate's own prefilter), when
/// it is plain text.
fn needle(source: &str) -> Option<String> {
    let hir = regex_syntax::ParserBuilder::new().unicode(false).utf8(false).build().parse(source).ok()?;
    let found = regex_syntax::hir::literal::Extractor::new().extract(&hir);
    let literals = found.literals()?;
    let first = literals.first()?.as_bytes();
    let common = literals.iter().map(|lit| first.iter().zip(lit.as_bytes()).take_while(|(a, b)| a == b).count());
    let common = common.min().unwrap_or(0);
    String::from_utf8(first[..common].to_vec()).ok().filter(|needle| !needle.is_empty())
}

/// A guard as the reply gives it: `{"tool": "Bash", "match": "…"}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Spec {
    pub tool: Tool,
    #[serde(rename = "match")]
    pub pattern: String,
}

impl Spec {
    /// Reads a reply's `guard` value; `Err` says what is wrong with it.
    pub fn read(value: &serde_json::Value) -> Result<Spec, String> {
        let field = |name: &str| value.get(name).and_then(serde_json::Value::as_str);
        let tool = match field("tool") {
            Some("Bash") => Tool::Bash,
            Some("Edit") => Tool::Edit,
            Some(other) => return Err(format!("a guard's tool is \"Bash\" or \"Edit\", not {other:?}")),
            None => return Err("a guard needs \"tool\" and \"match\" strings".into()),
        };
        let Some(pattern) = field("match") else { return Err("a guard needs \"tool\" and \"match\" strings".into()) };
        Ok(Spec { tool, pattern: pattern.to_string() })
    }

    /// The regular expression it stands for: a Bash guard's own, an edit
    /// guard's glob turned into one.
    fn source(&self) -> String {
        match self.tool {
            Tool::Bash => self.pattern.clone(),
            Tool::Edit => glob_regex(&self.pattern),
        }
    }

    /// The compiled check, or why the pattern is not one.
    pub fn compile(&self) -> Result<PikeVM, String> {
        compile(&[self.source()])
    }

    /// Whether `text` matches, for a pattern that compiles.
    pub fn is_match(&self, text: &str) -> bool {
        self.compile().is_ok_and(|vm| vm.is_match(&mut vm.create_cache(), text.as_bytes()))
    }

    /// Whether the pattern spells out a word of `rule` (outside character
    /// classes and escapes): a guard that follows its rule. A catch-all
    /// with a rule's word tacked on is still held to the looser share.
    fn follows_words_of(&self, rule: &str) -> bool {
        let words_of = |text: &str| -> Vec<String> {
            text.split(|c: char| !c.is_alphanumeric())
                .filter(|w| w.chars().filter(|c| c.is_alphabetic()).count() >= 2)
                .map(str::to_lowercase)
                .collect()
        };
        let mut spelled = String::new();
        let (mut class, mut escaped) = (false, false);
        for c in self.pattern.chars() {
            match (escaped, class, c) {
                (true, _, _) => escaped = false,
                (false, _, '\\') if self.tool == Tool::Bash => escaped = true,
                (false, false, '[') => class = true,
                (false, true, ']') => class = false,
                (false, true, _) => {}
                (false, false, c) => spelled.push(c),
            }
            if escaped || class {
                spelled.push(' ');
            }
        }
        let rule = words_of(rule);
        words_of(&spelled).iter().any(|w| rule.contains(w))
    }

    /// The gate's verdict on a guard of `rule` (`gate::guard_refusal`): why
    /// it is refused, or `None`: its shape, then its breadth.
    pub fn refusal(&self, rule: &str) -> Option<String> {
        self.shape_refusal().or_else(|| self.breadth_refusal(rule))
    }

    /// Why the pattern cannot stand whatever it matches: empty, too long, a
    /// control character, text the gate refuses, or it does not compile.
    pub fn shape_refusal(&self) -> Option<String> {
        let chars = self.pattern.chars().count();
        if self.pattern.trim().is_empty() {
            return Some("its match is empty".into());
        }
        if chars > MAX_PATTERN {
            return Some(format!("its match is {chars} characters, over {MAX_PATTERN}"));
        }
        if self.pattern.chars().any(char::is_control) {
            return Some("its match holds a control character".into());
        }
        // A listing names the pattern: it is text a person reads.
        if let Some(why) = super::gate::refusal(&self.pattern) {
            return Some(format!("its match: {why}"));
        }
        self.compile().err()
    }

    /// Why it matches too much of what sessions ordinarily run or edit.
    fn breadth_refusal(&self, rule: &str) -> Option<String> {
        let vm = self.compile().ok()?;
        let mut cache = vm.create_cache();
        let mut matches = |text: &str| vm.is_match(&mut cache, text.as_bytes());
        let (corpus, strict) = match self.tool {
            Tool::Bash => (COMMAND_CORPUS, MAX_COMMAND_SHARE),
            Tool::Edit => (PATH_CORPUS, MAX_PATH_SHARE),
        };
        let total = corpus.lines().count().max(1);
        let hits = corpus.lines().filter(|line| matches(line)).count();
        let limit = if self.follows_words_of(rule) { MAX_SHARE_IN_RULES_WORDS } else { strict };
        if (hits as f64) <= limit * total as f64 {
            return None;
        }
        let share = format!("{:.0}% of {total}", hits as f64 * 100.0 / total as f64);
        match self.tool {
            Tool::Bash => {
                let named = ORDINARY_COMMANDS.iter().copied().find(|c| matches(c));
                let example = named.or_else(|| corpus.lines().find(|line| matches(line))).unwrap_or("");
                Some(format!(
                    "it matches the ordinary command `{example}` and {share} ordinary commands, so it would ask all the time"
                ))
            }
            Tool::Edit => {
                Some(format!("its glob matches paths of every kind ({share} ordinary paths), not one file or folder"))
            }
        }
    }
}

/// The text a tool call is matched on: the command, or the file's path
/// relative to `root` (the path as given when it lies outside).
pub fn subject(tool: Tool, command: Option<&str>, path: Option<&str>, root: &str) -> Option<String> {
    match tool {
        // As the shell reads it: a continued line (`git push origin main \`
        // then `--force`) joined; any other line break ends a command, so
        // it reads as `; `, which `.` spans and `[;&|]` anchors on.
        Tool::Bash => command
            .map(|c| c.replace("\\\r\n", "").replace("\\\n", "").replace("\r\n", "; ").replace(['\r', '\n'], "; ")),
        Tool::Edit => {
            let path = lexical(path?);
            let root = lexical(root);
            let relative = path.strip_prefix(root.trim_end_matches('/')).and_then(|rest| rest.strip_prefix('/'));
            Some(relative.map_or_else(|| path.clone(), str::to_string))
        }
    }
}

/// Compiles regular expressions into one Pike VM: ASCII classes (`\s`,
/// `\w` without Unicode), no captures, and a size limit for each; a hook
/// compiles its guards at every call, and this is the cheapest engine to
/// build that still matches in linear time.
fn compile(sources: &[String]) -> Result<PikeVM, String> {
    PikeVM::builder()
        .syntax(syntax::Config::new().unicode(false).utf8(false))
        .thompson(
            thompson::Config::new()
                .which_captures(WhichCaptures::None)
                .nfa_size_limit(Some(SIZE_LIMIT * sources.len().max(1))),
        )
        .configure(PikeVM::config().match_kind(MatchKind::All))
        .build_many(sources)
        .map_err(|e| format!("its match does not compile within the size limit ({})", first_line(&e.to_string())))
}

/// The guards of `tool` that `subject` matches, a refusing one first: one
/// compiled machine for all of them, the cost a hook pays at every call.
/// `Err` when they cannot be checked (the caller asks rather than lets the
/// call through).
pub fn matching<'a>(guards: &'a [Active], tool: Tool, subject: &str) -> Result<Vec<&'a Active>, String> {
    let of_tool: Vec<&Active> = guards.iter().filter(|g| g.tool == tool).collect();
    if of_tool.is_empty() {
        return Ok(Vec::new());
    }
    if subject.len() > MAX_SUBJECT {
        return Err(format!("the call is over {} KiB, too long to check against the guards", MAX_SUBJECT / 1024));
    }
    // Most calls match no guard: one that cannot match is not compiled.
    let of_tool: Vec<&Active> = of_tool.into_iter().filter(|g| g.may_match(subject)).collect();
    if of_tool.is_empty() {
        return Ok(Vec::new());
    }
    let sources: Vec<String> = of_tool.iter().map(|g| Spec { tool, pattern: g.pattern.clone() }.source()).collect();
    let vm = compile(&sources).map_err(|why| format!("the guards cannot be checked: {why}"))?;
    let mut found = PatternSet::new(vm.pattern_len());
    vm.which_overlapping_matches(&mut vm.create_cache(), &Input::new(subject.as_bytes()), &mut found);
    let mut matched: Vec<&Active> = found.iter().map(|id| of_tool[id.as_usize()]).collect();
    matched.sort_by_key(|g| g.decision != Decision::Deny);
    Ok(matched)
}

/// `path` with `.`, `..` and doubled slashes worked out as text, so
/// `src/../migrations/x.sql` is the `migrations/x.sql` a glob names (no
/// link is followed: the file may not exist yet).
pub fn lexical(path: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            _ => parts.push(part),
        }
    }
    let joined = parts.join("/");
    if path.starts_with('/') { format!("/{joined}") } else { joined }
}

/// A glob as an anchored regular expression: `**/` any folders (or none),
/// `**` anything, `*` anything within one folder, `?` one character but
/// `/`; every other character stands for itself.
pub fn glob_regex(glob: &str) -> String {
    let mut out = String::from("^");
    let mut rest = glob;
    while let Some(c) = rest.chars().next() {
        let (piece, len) = if rest.starts_with("**/") {
            ("(?:.*/)?".to_string(), 3)
        } else if rest.starts_with("**") {
            (".*".to_string(), 2)
        } else if c == '*' {
            ("[^/]*".to_string(), 1)
        } else if c == '?' {
            ("[^/]".to_string(), 1)
        } else {
            (regex::escape(&c.to_string()), c.len_utf8())
        };
        out.push_str(&piece);
        rest = &rest[len..];
    }
    out.push('$');
    out
}

fn first_line(text: &str) -> &str {
    text.lines().find(|l| !l.trim().is_empty()).unwrap_or(text).trim()
}

/// A rule's guard in words, for the loaded block and the user: "asks
/// before: `pytest tests/integration`".
pub fn in_words(tool: Tool, pattern: &str, decision: Decision) -> String {
    let verb = match decision {
        Decision::Ask => "asks before",
        Decision::Deny => "refuses",
    };
    match tool {
        Tool::Bash => format!("{verb}: `{pattern}`"),
        Tool::Edit => format!("{verb} an edit of: `{pattern}`"),
    }
}

/// The loaded block's line naming the guarded rules, so the model knows
/// which calls will be asked about; `None` without guards.
pub fn loaded_line(guards: &[Active]) -> Option<String> {
    if guards.is_empty() {
        return None;
    }
    // The rule's words alone: a pattern from elsewhere is no text for the
    // model (a synced file can put anything in it), and the rule, which the
    // load gate passed, says what the guard stops.
    let each: Vec<String> = guards.iter().map(|g| format!("\"{}\"", g.rule.trim().trim_start_matches("- "))).collect();
    Some(format!(
        "Guarded CRITICAL RULES (Claude Code stops a tool call that breaks one, and asks the user or refuses it): {}",
        each.join("; ")
    ))
}

#[cfg(test)]
mod tests;
