//! context-restore at the edge (docs/design.md §2): for a Skill tool call or a
//! typed `/name` prompt, the file the text comes from and the engine's last
//! copy of it in the transcript, which `restore::compare` compares.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;

use crate::restore::compare::{self, Kind};

/// Past this, the engine has noticed a change and hands the new text.
pub const NOTICE_WINDOW: Duration = Duration::from_secs(5);
/// The transcript's tail searched for the engine's last copy.
const TAIL_BYTES: u64 = 4 * 1024 * 1024;
/// A skill or command file read, at most; a larger one goes as its path.
const MAX_FILE_BYTES: u64 = 256 * 1024;

/// What one call gets: the model's text and the user's line.
pub struct Restored {
    pub context: String,
    pub notice: String,
}

/// The engine's last copy in the transcript: its text, the skill's folder when
/// it names one, and when it was written (milliseconds).
struct EngineCopy {
    text: String,
    dir: Option<String>,
    at: Option<i64>,
}

/// For a call of `name`: the current text, when the engine's copy is old.
pub fn restore(kind: Kind, name: &str, transcript: &Path, project_dir: &Path, now: i64) -> Option<Restored> {
    if !compare::valid_name(name) {
        return None;
    }
    let copy = last_copy(transcript, kind, name);
    let file = match copy.as_ref().and_then(|c| c.dir.as_deref()) {
        Some(dir) => Some(PathBuf::from(dir).join("SKILL.md")),
        None => find_file(kind, name, project_dir),
    }?;
    let (text, modified) = read_file(&file)?;
    let changed_ms = modified.duration_since(std::time::UNIX_EPOCH).ok()?.as_millis() as i64;
    // Noticed by the engine by now, handed by it since the write, or
    // written before the session loaded it. The transcript is written
    // behind the engine (at a `-p` run's first tool call it may not exist
    // yet, measured): a session whose start it cannot tell gets nothing.
    let handed_since = match &copy {
        Some(copy) => copy.at.is_some_and(|at| at > changed_ms),
        None => session_start(transcript).is_none_or(|start| start > changed_ms),
    };
    if now * 1000 - changed_ms > NOTICE_WINDOW.as_millis() as i64 || handed_since {
        return None;
    }
    let body = text.as_deref().map(compare::body);
    if let (Some(copy), Some(body)) = (&copy, body)
        && compare::same_text(body, &copy.text)
    {
        return None;
    }
    let kind_seen = if copy.as_ref().is_some_and(|c| c.dir.is_some()) { Kind::Skill } else { kind };
    let context = compare::context(kind_seen, name, &file.display().to_string(), body);
    Some(Restored { context, notice: compare::notice(name) })
}

/// When the session began: its transcript's first timestamp.
fn session_start(transcript: &Path) -> Option<i64> {
    use std::io::Read;
    let file = crate::store::fsutil::open_regular(transcript).ok()??;
    let mut head = Vec::new();
    file.take(64 * 1024).read_to_end(&mut head).ok()?;
    String::from_utf8_lossy(&head).lines().find_map(|line| {
        let entry: Value = serde_json::from_str(line).ok()?;
        entry.get("timestamp")?.as_str().and_then(crate::claude::transcript::unix_time_ms)
    })
}

/// The file, bounded: a link, a FIFO or a device is refused; a file over
/// `MAX_FILE_BYTES` is not read (`None` text: its path goes instead).
fn read_file(path: &Path) -> Option<(Option<String>, std::time::SystemTime)> {
    if std::fs::symlink_metadata(path.parent()?).ok()?.is_symlink() {
        return None;
    }
    let meta = std::fs::symlink_metadata(path).ok().filter(std::fs::Metadata::is_file)?;
    let modified = meta.modified().ok()?;
    if meta.len() > MAX_FILE_BYTES {
        return Some((None, modified));
    }
    let bytes = crate::store::fsutil::read_regular(path, MAX_FILE_BYTES).ok()??;
    Some((Some(String::from_utf8_lossy(&bytes).into_owned()), modified))
}

/// Where the text of `name` comes from, in the seed's order: a plugin's, the
/// project's, the user's; a command's file, else a skill's (typed as a command).
fn find_file(kind: Kind, name: &str, project_dir: &Path) -> Option<PathBuf> {
    let config = crate::env::claude_config_dir().ok()?;
    let (plugin, short) = match name.split_once(':') {
        Some((plugin, short)) => (Some(plugin), short),
        None => (None, name),
    };
    let roots = match plugin {
        Some(plugin) => plugin_dirs(&config, plugin),
        None => vec![project_dir.join(".claude"), config],
    };
    let command = |root: &PathBuf| (kind == Kind::Command).then(|| root.join("commands").join(format!("{short}.md")));
    let skill = |root: &PathBuf| root.join("skills").join(short).join("SKILL.md");
    roots
        .iter()
        .flat_map(|root| command(root).into_iter().chain([skill(root)]))
        .find(|p| std::fs::symlink_metadata(p).is_ok())
}

/// The install folders of `plugin` in Claude Code's `installed_plugins.json`
/// (its shapes of 2.1.328 and 2.1.332: a list of installs, or one).
fn plugin_dirs(config: &Path, plugin: &str) -> Vec<PathBuf> {
    let path = config.join("plugins").join("installed_plugins.json");
    let value = crate::store::record::read_bounded::<Value>(&path, 4 * 1024 * 1024);
    let plugins = value.as_ref().and_then(|v| v.get("plugins")?.as_object());
    plugins
        .into_iter()
        .flatten()
        .filter(|(id, _)| id.split('@').next() == Some(plugin))
        .flat_map(|(_, installs)| match installs {
            Value::Array(list) => list.clone(),
            other => vec![other.clone()],
        })
        .filter_map(|install| install.get("installPath")?.as_str().map(PathBuf::from))
        .collect()
}

/// The engine's last copy of `name` in the transcript's tail. Only its own
/// `isMeta` user entries count (a tool's result never is one): the skill's
/// `Base directory for this skill:` block, or for a typed command the entry
/// right after its `<command-name>/name</command-name>`.
fn last_copy(transcript: &Path, kind: Kind, name: &str) -> Option<EngineCopy> {
    let tail = crate::claude::transcript::tail(transcript, TAIL_BYTES)?;
    let short = name.rsplit(':').next().unwrap_or(name);
    let command_tag = format!("<command-name>/{name}</command-name>");
    let mut later_meta: Option<(String, Option<i64>)> = None;
    for line in tail.lines().rev() {
        if !line.contains("\"user\"") {
            continue;
        }
        let Ok(entry) = serde_json::from_str::<Value>(line) else { continue };
        if entry.get("type").and_then(Value::as_str) != Some("user") {
            continue;
        }
        let at = entry.get("timestamp").and_then(Value::as_str).and_then(crate::claude::transcript::unix_time_ms);
        let content = entry.pointer("/message/content");
        if entry.get("isMeta").and_then(Value::as_bool) == Some(true) {
            let text = content.and_then(Value::as_array).and_then(|blocks| {
                blocks.iter().find(|b| b.get("type").and_then(Value::as_str) == Some("text"))?.get("text")?.as_str()
            });
            let Some(text) = text else { continue };
            if let Some((dir, body)) = compare::skill_block(text)
                && Path::new(dir).file_name().and_then(|n| n.to_str()) == Some(short)
            {
                return Some(EngineCopy { text: body.to_string(), dir: Some(dir.to_string()), at });
            }
            later_meta = Some((text.to_string(), at));
            continue;
        }
        if kind == Kind::Command
            && content.and_then(Value::as_str).is_some_and(|c| c.contains(&command_tag))
            && let Some((text, at)) = later_meta.take()
        {
            return Some(EngineCopy { text, dir: None, at });
        }
        later_meta = None;
    }
    None
}
