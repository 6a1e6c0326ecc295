//! The background save: read the memory, ask the fork, check and apply its
//! reply to the file as it is now, write.

pub mod fork;
pub mod queue;

use std::path::Path;
use std::time::Duration;

use anyhow::Result;
use serde::{Deserialize, Serialize};

use crate::folder::{FAILED_REPLY_FILE, Folder, REPAIR_REPORT};
use crate::memory::apply::{self, Refusal};
use crate::memory::{prompt, reply, template};
use crate::paths::Roots;
use crate::report;
use crate::state::{Usage, now_unix};

/// Seconds the fork may run before it is killed.
pub const TIMEOUT_ENV: &str = "MEMORY_SAVE_FORK_TIMEOUT";
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(300);
/// A reply larger than this is not a list of line edits.
const MAX_REPLY_BYTES: usize = 1024 * 1024;

pub struct Job {
    pub session_id: String,
    pub cwd: String,
    pub transcript_path: String,
    pub effort: Option<String>,
}

pub struct SaveResult {
    pub status: String,
    pub report: Option<String>,
    pub usage: Option<Usage>,
}

impl SaveResult {
    fn error(status: impl Into<String>) -> SaveResult {
        SaveResult { status: format!("error: {}", status.into()), report: None, usage: None }
    }
}

/// What the last save of a project leaves for the next one's notes.
#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(default)]
struct ProjectNotes {
    skipped: Vec<String>,
    refused: Vec<(String, String)>,
}

pub fn run_save(roots: &Roots, job: &Job) -> SaveResult {
    let result = match save(roots, job) {
        Ok(result) => result,
        Err(e) => {
            crate::log::error(&format!("save of session {} failed: {e:#}", job.session_id));
            SaveResult::error(format!("{e:#}"))
        }
    };
    record(roots, job, &result);
    result
}

fn save(roots: &Roots, job: &Job) -> Result<SaveResult> {
    let cwd = Path::new(&job.cwd);
    let project = crate::project::name_for(cwd)?;
    let folder = Folder::new(roots, &project);
    let notes_path = roots.projects_state_dir().join(format!("{project}.json"));

    let (snapshot, repaired) = {
        let _lock = folder.lock()?;
        folder.read_repaired()?.map_or((None, false), |(text, repaired)| (Some(text), repaired))
    };
    let notes: ProjectNotes = crate::folder::read_if_exists(&notes_path)?
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_default();
    let last_refused: Vec<Refusal> =
        notes.refused.iter().map(|(entry, why)| Refusal { entry: entry.clone(), why: why.clone() }).collect();
    let message = prompt::fork_message(&prompt::PromptInput {
        project: &project,
        memory: snapshot.as_deref(),
        topic_files: &folder.topic_files(),
        last_skipped: &notes.skipped,
        last_refused: &last_refused,
    });

    let repair_note = repaired.then_some(REPAIR_REPORT);
    let facts = fork::transcript_facts(Path::new(&job.transcript_path));
    let fork_reply = match fork::find_claude().and_then(|claude| {
        fork::run(&fork::ForkRequest {
            claude,
            session_id: &job.session_id,
            cwd,
            model: facts.model.clone(),
            parent_cost_usd: facts.cost_usd,
            effort: job.effort.clone(),
            message: &message,
            settings: fork::fork_settings(&fork::settings_files(cwd)),
            timeout: timeout(),
            scratch: &roots.state,
        })
    }) {
        Ok(reply) => reply,
        Err(e) => {
            return Ok(SaveResult {
                status: format!("error: {}", e.status),
                report: Some(report::join(repair_note, Some(&format!("memory-save: MEMORY.md: not saved ({})", e.status)))),
                usage: Some(e.usage),
            });
        }
    };

    let parsed = if fork_reply.text.len() > MAX_REPLY_BYTES {
        Err(format!("reply is larger than {} KiB", MAX_REPLY_BYTES / 1024))
    } else {
        reply::parse(&fork_reply.text)
    };
    let parsed = match parsed {
        Ok(parsed) => parsed,
        Err(why) => {
            folder.keep_failed_reply(&fork_reply.text)?;
            let line = format!(
                "memory-save: MEMORY.md: this turn's reply was not read ({why}); {} output tokens, kept in {FAILED_REPLY_FILE}",
                fork_reply.usage.output_tokens
            );
            return Ok(SaveResult {
                status: format!("error: {why}"),
                report: Some(report::join(repair_note, Some(&line))),
                usage: Some(fork_reply.usage),
            });
        }
    };

    // Apply to the file as it is now, not as the fork saw it: ops name lines
    // by content, so another writer's lines stay and ops that no longer fit
    // are reported as skipped.
    let _lock = folder.lock()?;
    let now = folder.read_repaired()?;
    let existed = now.is_some();
    let current = now.map_or_else(|| template::skeleton(&project), |(text, _)| text);
    let changed_meanwhile = existed && snapshot.as_deref() != Some(current.as_str());
    let outcome = apply::apply(&current, &parsed, &project, &folder.topic_files());
    folder.append_topics(&outcome.topics)?;
    if outcome.memory != current {
        folder.write_memory(&outcome.memory)?;
    }
    let notes = ProjectNotes {
        skipped: outcome.skipped.clone(),
        refused: outcome.refused.iter().map(|r| (r.entry.clone(), r.why.clone())).collect(),
    };
    crate::fsutil::create_private_dir(&roots.projects_state_dir())?;
    crate::fsutil::write_atomic(&notes_path, serde_json::to_string(&notes)?.as_bytes(), false)?;

    let summary = report::Summary::of(&outcome, changed_meanwhile);
    Ok(SaveResult {
        status: summary.status(),
        report: summary.report_line().map(|line| report::join(repair_note, Some(&line))).or(repair_note.map(str::to_string)),
        usage: Some(fork_reply.usage),
    })
}

fn timeout() -> Duration {
    std::env::var(TIMEOUT_ENV)
        .ok()
        .and_then(|s| s.parse::<u64>().ok())
        .filter(|&s| s > 0)
        .map_or(DEFAULT_TIMEOUT, Duration::from_secs)
}

/// One line per save in `saves.jsonl`: what `status` and the benchmarks read
/// to show what saves cost.
fn record(roots: &Roots, job: &Job, result: &SaveResult) {
    let entry = serde_json::json!({
        "at": now_unix(),
        "session_id": job.session_id,
        "cwd": job.cwd,
        "status": result.status,
        "report": result.report,
        "usage": result.usage,
    });
    let path = roots.saves_log();
    let mut options = std::fs::OpenOptions::new();
    options.create(true).append(true);
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    if let Ok(mut file) = options.open(&path) {
        use std::io::Write;
        let _ = writeln!(file, "{entry}");
    }
}
