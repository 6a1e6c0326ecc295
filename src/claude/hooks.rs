//! Our entries in a Claude Code settings file: merge `hooks.json` in, and take
//! exactly ours out again. Ours are known by their command alone (a first word
//! whose file name is `memory-save`, then `hook` or `statusline`), so entries of
//! any version are cleaned up alike and rewritten in place. A user's own status
//! line is wrapped as `<us> statusline -- sh -c '<theirs>'`: the settings file
//! itself says what uninstall restores, with no side file to lose.

use std::path::Path;

use anyhow::{Context, Result, bail};
use serde_json::{Map, Value, json};

use crate::claude::settings;

/// The block install merges in, `memory-save` standing for the binary's path.
pub const HOOKS_JSON: &str = include_str!("../../hooks.json");

/// The file name that marks a command as ours.
pub const BINARY_NAME: &str = "memory-save";

/// What install or uninstall did, for the summary line.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct InstallChange {
    removed_commands: usize,
    added_commands: usize,
    /// What happened to the status line: `(verb, object)`, e.g. `("wrap", "your status line")`.
    statusline: Option<(&'static str, &'static str)>,
    /// Install added our `refreshInterval` to the user's statusLine.
    pub refresh_added: bool,
}

/// Seconds for `statusLine.refreshInterval` (read by 2.1.328 and 2.1.332), so
/// a save ending between messages leaves `saving…` without waiting for a turn.
pub const REFRESH_SECONDS: u64 = 2;
const REFRESH_KEY: &str = "refreshInterval";

impl InstallChange {
    /// "installed 11 hook commands …", or with `dry_run` "would install …".
    pub fn describe(&self, dry_run: bool) -> String {
        let verb = |base: &str| match (dry_run, base) {
            (true, _) => format!("would {base}"),
            (false, "set") => "set".to_owned(),
            (false, "wrap") => "wrapped".to_owned(),
            (false, base) if base.ends_with('e') => format!("{base}d"),
            (false, base) => format!("{base}ed"),
        };
        let mut parts = Vec::new();
        if self.added_commands > 0 {
            let mut part = format!("{} {} hook commands", verb("install"), self.added_commands);
            if self.removed_commands > 0 {
                part += &format!(" (replacing {} of ours)", self.removed_commands);
            }
            parts.push(part);
        } else if self.removed_commands > 0 {
            parts.push(format!("{} {} hook commands", verb("remove"), self.removed_commands));
        }
        if let Some((base, object)) = self.statusline {
            parts.push(format!("{} {object}", verb(base)));
        }
        if parts.is_empty() {
            // Only the layout changes (e.g. a file not yet in two-space JSON).
            parts.push(format!("{} the file's layout", verb("normalize")));
        }
        parts.join(", ")
    }
}

/// How a shared install (`.claude/settings.json`) runs us: by name from PATH,
/// and for a teammate without memory-save, silently nothing, exit 0.
const SHARED_GUARD: &str = "command -v memory-save >/dev/null 2>&1 && ";
const SHARED_TAIL: &str = " || true";

/// How our commands are written: by the binary's path, or guarded, by name.
#[derive(Debug, Clone)]
pub enum Program {
    Path(String),
    Shared,
}

impl Program {
    fn command(&self, rest: &str) -> String {
        match self {
            Program::Path(exe) => format!("{exe}{rest}"),
            Program::Shared => format!("{SHARED_GUARD}{BINARY_NAME}{rest}{SHARED_TAIL}"),
        }
    }
}

/// The words of a command, without the guard a shared install adds.
pub(super) fn unguarded(mut words: Vec<String>) -> Vec<String> {
    let guard: Vec<String> = shell_words(SHARED_GUARD.trim_end()).unwrap_or_default();
    let tail: Vec<String> = shell_words(SHARED_TAIL.trim()).unwrap_or_default();
    if words.len() > guard.len() + tail.len() && words.starts_with(&guard) && words.ends_with(&tail) {
        words.truncate(words.len() - tail.len());
        words.drain(..guard.len());
    }
    words
}

/// The hook block a user adds by hand where install cannot write.
pub fn hand_block(program: &Program) -> String {
    settings::render(&Map::from_iter([("hooks".into(), Value::Object(our_hooks(program)))]))
}

/// Our hook block with `program` in place of the leading `memory-save`.
fn our_hooks(program: &Program) -> Map<String, Value> {
    let mut block: Value = serde_json::from_str(HOOKS_JSON).expect("hooks.json is valid JSON");
    let Some(Value::Object(mut hooks)) = block.get_mut("hooks").map(Value::take) else {
        panic!("hooks.json has no hooks object");
    };
    for groups in hooks.values_mut() {
        for group in groups.as_array_mut().into_iter().flatten() {
            for entry in group.get_mut("hooks").and_then(Value::as_array_mut).into_iter().flatten() {
                if let Some(Value::String(command)) = entry.get_mut("command") {
                    let rest =
                        command.strip_prefix(BINARY_NAME).expect("every hooks.json command starts with memory-save");
                    *command = program.command(rest);
                }
            }
        }
    }
    hooks
}

/// Registers our hooks in a settings object, keeping the rest; idempotent.
pub fn install_into(settings: &mut Map<String, Value>, program: &Program, statusline: bool) -> Result<InstallChange> {
    let ours = our_hooks(program);
    let mut change =
        InstallChange { added_commands: ours.values().flat_map(entries).count(), ..InstallChange::default() };
    let hooks = settings
        .entry("hooks")
        .or_insert_with(|| Value::Object(Map::new()))
        .as_object_mut()
        .context("\"hooks\" is not a JSON object")?;
    change.removed_commands = replace_our_hooks(hooks, &ours)?;
    match program {
        Program::Path(exe) => {
            (change.statusline, change.refresh_added) = install_statusline(settings, exe, statusline)?
        }
        Program::Shared if statusline => {
            bail!("a status line is personal: install it into your own settings (memory-save install --statusline)")
        }
        Program::Shared => {}
    }
    Ok(change)
}

pub fn uninstall_from(settings: &mut Map<String, Value>) -> Result<InstallChange> {
    let mut change = InstallChange::default();
    if let Some(Value::Object(hooks)) = settings.get_mut("hooks") {
        change.removed_commands = replace_our_hooks(hooks, &Map::new())?;
        if change.removed_commands > 0 && hooks.is_empty() {
            settings.shift_remove("hooks");
        }
    }
    change.statusline = uninstall_statusline(settings);
    Ok(change)
}

/// The command entries of one event's groups.
pub(super) fn entries(groups: &Value) -> impl Iterator<Item = &Value> {
    groups.as_array().into_iter().flatten().filter_map(|g| g.get("hooks")?.as_array()).flatten()
}

/// Takes our commands out of every event's groups and puts `ours` back where
/// the first of ours stood (else at the end), so install rewrites in place; a
/// group or event left empty goes. Returns how many of ours were removed.
fn replace_our_hooks(hooks: &mut Map<String, Value>, ours: &Map<String, Value>) -> Result<usize> {
    let mut removed = 0;
    let mut emptied = Vec::new();
    for (event, groups) in hooks.iter_mut() {
        let Some(list) = groups.as_array_mut() else {
            if ours.contains_key(event) {
                bail!("\"hooks.{event}\" is not a list; fix it by hand, then run this again");
            }
            continue; // not ours to judge
        };
        let (mut kept, first_ours, count) = remove_ours_from_groups(std::mem::take(list));
        removed += count;
        if let Some(Value::Array(our_groups)) = ours.get(event) {
            let at = first_ours.unwrap_or(kept.len());
            kept.splice(at..at, our_groups.iter().cloned());
        }
        if count > 0 && kept.is_empty() {
            emptied.push(event.clone());
        }
        *list = kept;
    }
    for event in emptied {
        hooks.shift_remove(&event);
    }
    for (event, our_groups) in ours {
        hooks.entry(event.clone()).or_insert_with(|| our_groups.clone());
    }
    Ok(removed)
}

/// The groups without ours, the index where ours first stood, and how many.
fn remove_ours_from_groups(groups: Vec<Value>) -> (Vec<Value>, Option<usize>, usize) {
    let mut kept = Vec::with_capacity(groups.len());
    let mut first_ours = None;
    let mut removed = 0;
    for mut group in groups {
        if let Some(entries) = group.get_mut("hooks").and_then(Value::as_array_mut) {
            let before = entries.len();
            entries.retain(|entry| !entry_is_ours(entry));
            let count = before - entries.len();
            if count > 0 {
                removed += count;
                first_ours.get_or_insert(kept.len());
                if entries.is_empty() {
                    continue; // the group held only ours
                }
            }
        }
        kept.push(group);
    }
    (kept, first_ours, removed)
}

fn entry_is_ours(entry: &Value) -> bool {
    let command = entry.get("command").and_then(Value::as_str).unwrap_or("");
    matches!(our_subcommand(command).as_deref(), Some([first, ..]) if first == "hook")
}

/// The words after our binary when `command` runs memory-save's `hook` or
/// `statusline`; `None` for anybody else's command.
pub(super) fn our_subcommand(command: &str) -> Option<Vec<String>> {
    let mut words = unguarded(shell_words(command)?);
    let ours = Path::new(words.first()?).file_name()? == BINARY_NAME;
    (ours && matches!(words.get(1).map(String::as_str), Some("hook" | "statusline"))).then(|| words.split_off(1))
}

/// What our status line wraps, read back from its command: `Ok(None)` when it
/// wraps nothing, `Err(())` when the command is not ours.
fn wrapped_statusline(command: &str) -> Result<Option<String>, ()> {
    let words = our_subcommand(command).ok_or(())?;
    match words.as_slice() {
        [sub, ..] if sub != "statusline" => Err(()),
        [_, dashes, sh, c, theirs] if dashes == "--" && sh == "sh" && c == "-c" => Ok(Some(theirs.clone())),
        // Someone wrapped a plain command by hand: give it back as one line.
        [_, dashes, rest @ ..] if dashes == "--" && !rest.is_empty() => {
            Ok(Some(rest.iter().map(|w| shell_quote(w)).collect::<Vec<_>>().join(" ")))
        }
        _ => Ok(None),
    }
}

fn statusline_command(exe: &str, theirs: Option<&str>) -> String {
    match theirs {
        Some(theirs) => format!("{exe} statusline -- sh -c {}", single_quote(theirs)),
        None => format!("{exe} statusline"),
    }
}

/// Sets, wraps or updates our status line (one already ours gets the new path
/// even without the flag); also whether it gave the user's own a refresh.
fn install_statusline(
    settings: &mut Map<String, Value>,
    exe: &str,
    wanted: bool,
) -> Result<(Option<(&'static str, &'static str)>, bool)> {
    let Some(current) = settings.get_mut("statusLine") else {
        if !wanted {
            return Ok((None, false));
        }
        let ours = json!({"type": "command", "command": statusline_command(exe, None), REFRESH_KEY: REFRESH_SECONDS});
        settings.insert("statusLine".into(), ours);
        return Ok((Some(("set", "the status line")), false));
    };
    let Some(text) = current.get("command").and_then(Value::as_str).map(str::to_owned) else {
        if !wanted {
            return Ok((None, false));
        }
        bail!(
            "its statusLine has no command that memory-save could wrap; remove the statusLine, or install without --statusline"
        );
    };
    let (command, what, theirs) = match wrapped_statusline(&text) {
        Ok(theirs) => (statusline_command(exe, theirs.as_deref()), None, theirs.is_some()),
        Err(()) if wanted => (statusline_command(exe, Some(&text)), Some(("wrap", "your status line")), true),
        Err(()) => return Ok((None, false)),
    };
    let Some(object) = current.as_object_mut() else { return Ok((what, false)) };
    object.insert("command".into(), command.into());
    // A refresh the user chose stays theirs.
    let refresh_added = !object.contains_key(REFRESH_KEY);
    if refresh_added {
        object.insert(REFRESH_KEY.into(), REFRESH_SECONDS.into());
    }
    Ok((what, refresh_added && theirs))
}

/// Takes back the `refreshInterval` install gave the user's statusLine, if unchanged.
pub fn remove_refresh(settings: &mut Map<String, Value>) {
    if let Some(object) = settings.get_mut("statusLine").and_then(Value::as_object_mut)
        && object.get(REFRESH_KEY).and_then(Value::as_u64) == Some(REFRESH_SECONDS)
    {
        object.shift_remove(REFRESH_KEY);
    }
}

/// Takes our status line out, giving the user's own command back.
fn uninstall_statusline(settings: &mut Map<String, Value>) -> Option<(&'static str, &'static str)> {
    let command = settings.get_mut("statusLine")?.get_mut("command")?;
    match wrapped_statusline(command.as_str()?) {
        Ok(Some(theirs)) => {
            *command = theirs.into();
            Some(("restore", "your status line"))
        }
        Ok(None) => {
            settings.shift_remove("statusLine");
            Some(("remove", "the status line"))
        }
        Err(()) => None,
    }
}

/// Quotes `word` for a POSIX shell only when needed, so plain paths stay readable.
pub fn shell_quote(word: &str) -> String {
    let plain = !word.is_empty() && word.chars().all(|c| c.is_ascii_alphanumeric() || "_@%+=:,./-".contains(c));
    if plain { word.to_owned() } else { single_quote(word) }
}

/// `'…'`, with each `'` written as `'\''`: the form every earlier install
/// wrote, which `shell_words` must keep reading back exactly.
fn single_quote(word: &str) -> String {
    format!("'{}'", word.replace('\'', r"'\''"))
}

// Splits a command line as a POSIX shell would (no expansion); `None` if unclosed.
pub(super) use shlex::split as shell_words;

#[cfg(test)]
mod tests;
#[cfg(test)]
mod plugin_tests {
    /// The plugin package registers the very hooks install merges in.
    #[test]
    fn plugin_hooks_equal_the_install_block() {
        assert_eq!(include_str!("../../plugin/hooks/hooks.json"), super::HOOKS_JSON);
    }
}
