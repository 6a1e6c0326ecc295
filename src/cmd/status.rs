//! `memory-save status [--json]`: where the current project's memory lives,
//! its size against the caps, its topic files, the last saves and what they
//! cost, any save queued or running, the last unreadable reply, and whether
//! memory-save is on.

use std::path::Path;

use anyhow::{Context, Result};
use serde::Serialize;

use crate::env::timestamp;
use crate::memory::{MAX_CHARS, MAX_LINES, Size};
use crate::store::folder::{FAILED_REPLY_FILE, read_if_exists};
use crate::store::paths::Roots;
use crate::store::saves::SaveRecord;
use crate::store::state::{SessionState, SessionStore};

/// How many recent saves to show.
const RECENT: usize = 5;

#[derive(Serialize)]
struct Status {
    project: String,
    /// The repository the memory belongs to (`github.com/me/app`, or
    /// `path:/…` without a remote), and why this folder.
    identity: String,
    folder_reason: String,
    memory_dir: String,
    memory_exists: bool,
    lines: usize,
    max_lines: usize,
    chars: usize,
    max_chars: usize,
    topic_files: Vec<String>,
    /// `None` when on; else why it is off.
    off: Option<String>,
    config_file: String,
    config_error: Option<String>,
    saving: usize,
    queued: usize,
    last_failed_reply: Option<FailedReply>,
    recent_saves: Vec<SaveRecord>,
}

#[derive(Serialize)]
struct FailedReply {
    path: String,
    at: i64,
    bytes: u64,
}

/// This project's memory: where it lives and why, its size against the
/// caps, saves running or queued, the last saves and what they cost.
#[derive(Debug, clap::Args)]
pub struct StatusArgs {
    /// Print it as JSON, for scripts.
    #[arg(long)]
    json: bool,
}

impl super::Run for StatusArgs {
    fn run(&self) -> Result<()> {
        run(self.json)
    }
}

fn run(json: bool) -> Result<()> {
    let roots = crate::config::roots()?;
    let cwd = std::env::current_dir().context("cannot read the current folder")?;
    let status = gather(&roots, &cwd)?;
    if json {
        super::println(&serde_json::to_string_pretty(&status)?)?;
    } else {
        super::print(&crate::memory::text::visible(&render(&status)))?;
    }
    Ok(())
}

fn gather(roots: &Roots, cwd: &Path) -> Result<Status> {
    let project = crate::project::locate(cwd, &roots.memory, &crate::config::of(roots))?;
    let folder = project.folder(roots);
    let memory = read_if_exists(&folder.memory_path())?;
    let size = Size::of(memory.as_deref().unwrap_or(""));
    let config = crate::config::Config::load(&crate::config::file(roots));
    let off = project.off_reason(config.as_ref().unwrap_or(&Default::default()));
    let sessions = project_sessions(roots, &project.name);
    let failed = folder.dir.join(FAILED_REPLY_FILE);
    let last_failed_reply = std::fs::metadata(&failed).ok().map(|m| FailedReply {
        path: failed.display().to_string(),
        at: m
            .modified()
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_secs() as i64),
        bytes: m.len(),
    });
    Ok(Status {
        memory_dir: folder.dir.display().to_string(),
        memory_exists: memory.is_some(),
        lines: size.lines,
        max_lines: MAX_LINES,
        chars: size.chars,
        max_chars: MAX_CHARS,
        topic_files: folder.topic_files(),
        off,
        config_file: crate::config::file(roots).display().to_string(),
        config_error: config.err().map(|e| format!("{e:#}")),
        saving: sessions.iter().filter(|s| s.saving_since.is_some()).count(),
        queued: sessions.iter().filter(|s| s.save_pending).count(),
        last_failed_reply,
        recent_saves: crate::store::saves::recent(roots, &project.name, RECENT),
        identity: project.identity,
        folder_reason: project.why,
        project: project.name,
    })
}

fn project_sessions(roots: &Roots, project: &str) -> Vec<SessionState> {
    let store = SessionStore::new(roots.sessions_dir());
    let Ok(entries) = std::fs::read_dir(roots.sessions_dir()) else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().into_string().ok()?;
            let id = name.strip_suffix(".json")?;
            let mut state = crate::store::state::parse_state(&crate::store::state::read_state_bytes(&e.path())?)?;
            // A worker killed mid-save left its mark; only a held lock
            // means a save is running.
            if state.saving_since.is_some() && !store.worker_running(id) {
                state.saving_since = None;
            }
            Some(state)
        })
        .filter(|s| s.project.as_deref() == Some(project))
        .collect()
}

fn render(s: &Status) -> String {
    let mut out = format!("memory-save · project {}\n", s.project);
    out.push_str(&format!("  state     {}\n", s.off.as_deref().unwrap_or("on")));
    let memory = if s.memory_exists { "MEMORY.md" } else { "MEMORY.md (not written yet)" };
    out.push_str(&format!("  memory    {}/{memory}\n", s.memory_dir));
    out.push_str(&format!("  identity  {} (folder: {})\n", s.identity, s.folder_reason));
    out.push_str(&format!(
        "  size      {} of {} lines, {} of {} characters\n",
        s.lines, s.max_lines, s.chars, s.max_chars
    ));
    let topics = if s.topic_files.is_empty() { "none".to_string() } else { s.topic_files.join(", ") };
    out.push_str(&format!("  topics    {topics}\n"));
    out.push_str(&format!("  saves     {} running, {} queued\n", s.saving, s.queued));
    if let Some(error) = &s.config_error {
        out.push_str(&format!("  config    {error}\n"));
    }
    if let Some(failed) = &s.last_failed_reply {
        out.push_str(&format!("  failed    {} ({}, {} bytes)\n", failed.path, timestamp(failed.at), failed.bytes));
    }
    if s.recent_saves.is_empty() {
        out.push_str("last saves: none yet\n");
        return out;
    }
    out.push_str("last saves:\n");
    for save in &s.recent_saves {
        let (at, status) = (save.at, &save.status);
        let usage = save.usage.clone().unwrap_or_default();
        out.push_str(&format!(
            "  {}  {status:<28} in {} · cache read {} · out {} · ${:.4}\n",
            timestamp(at),
            usage.input_tokens + usage.cache_creation_input_tokens,
            usage.cache_read_input_tokens,
            usage.output_tokens,
            usage.total_cost_usd
        ));
    }
    out
}
