//! `memory-save sessions [ID] [--json]`: every session this machine keeps
//! state for, or one, and where its saves stand.

use anyhow::Result;
use serde::Serialize;

use crate::store::state::{SessionId, SessionStore};

/// Every session memory-save keeps state for on this machine: its project,
/// its save running, queued or held, the turns not yet saved, the last
/// save's words and who pays.
#[derive(Debug, clap::Args)]
pub struct SessionsArgs {
    /// Only this session (its id, as the list or Claude Code shows it).
    #[arg(value_parser = session_id)]
    id: Option<SessionId>,
    /// Print it as JSON, for scripts.
    #[arg(long)]
    json: bool,
}

#[derive(Default, Serialize)]
struct Listed {
    session_id: String,
    /// Why its file cannot be read (not a regular file, a newer
    /// release's); nothing else is shown then.
    unreadable: Option<String>,
    /// The memory folder its saves write; `None` before a hook named one.
    project: Option<String>,
    /// A prompt was sent and its answer has not ended (no Stop yet).
    answering: bool,
    /// The session ended; a later prompt resumes it.
    ended: bool,
    /// When the save running now began.
    saving_since: Option<i64>,
    /// A save is asked for and waits for a worker, or for the running one,
    /// or a dead worker's save waits to be taken over.
    queued: bool,
    /// When turns held for a quiet session are saved (`idle_flush_seconds`).
    held_until: Option<i64>,
    /// Turns worth a save not yet asked for: those `save_every_turns`
    /// holds back, or the one going on.
    unsaved_turns: u64,
    /// Saves tried, each ending in a status, failed ones included.
    tried: u64,
    /// The last save's words, as the status line shows them, and when.
    last_status: Option<String>,
    last_status_at: Option<i64>,
    /// The line the session's next prompt shows the person.
    report: Option<String>,
    /// Who pays for its saves, as its start found (`route.payer`).
    route: Option<crate::memory::route::Route>,
}

impl super::Run for SessionsArgs {
    fn run(&self) -> Result<()> {
        let roots = crate::config::roots()?;
        let store = SessionStore::new(roots.sessions_dir());
        let mut ids = store.ids();
        if let Some(wanted) = &self.id {
            ids.retain(|id| id == wanted);
        }
        let mut listed: Vec<Listed> = ids
            .into_iter()
            .map(|id| {
                let mut state = match store.read(&id) {
                    Ok(state) => state,
                    Err(why) => {
                        return Listed {
                            session_id: id.to_string(),
                            unreadable: Some(format!("{why:#}")),
                            ..Default::default()
                        };
                    }
                };
                super::clear_dead_claim(&store, &id, &mut state);
                let (p, o) = (&state.protocol, &state.outcome);
                Listed {
                    session_id: id.to_string(),
                    unreadable: None,
                    project: state.input.project.clone(),
                    answering: p.turn.open,
                    ended: p.turn.ended,
                    saving_since: p.job.claimed_since(),
                    queued: p.job.is_pending(),
                    held_until: p.job.held_until(),
                    unsaved_turns: p.turn.unsaved.max(p.worth_saving().into()),
                    tried: o.saves,
                    last_status: o.status.as_ref().map(|s| s.text.clone()),
                    last_status_at: o.status.as_ref().map(|s| s.at),
                    report: o.report.clone(),
                    route: state.input.route.clone(),
                }
            })
            .collect();
        // Newest save first; sessions with none after, by id.
        listed.sort_by(|a, b| b.last_status_at.cmp(&a.last_status_at).then_with(|| a.session_id.cmp(&b.session_id)));
        if self.json {
            return super::print_json(&listed);
        }
        if listed.is_empty() {
            let none = match &self.id {
                Some(id) => format!("no session {id} on this machine (memory-save sessions lists them)"),
                None => format!("no session on this machine yet ({})", roots.sessions_dir().display()),
            };
            return super::println(&none);
        }
        let mut out = String::new();
        for s in &listed {
            super::row(
                &mut out,
                "session",
                format!("{} · {}", s.session_id, s.project.as_deref().unwrap_or("no project yet")),
            );
            super::row(&mut out, "save", line(s));
        }
        super::print(&out)
    }
}

/// Where the session's saves stand, in words.
fn line(s: &Listed) -> String {
    use crate::env::clock;
    if let Some(why) = &s.unreadable {
        return format!("unreadable: {why}");
    }
    let mut parts = Vec::new();
    if s.answering {
        parts.push("answering".to_string());
    }
    if s.ended {
        parts.push("ended".to_string());
    }
    if let Some(at) = s.saving_since {
        parts.push(format!("running since {}", clock(at)));
    }
    if s.queued {
        parts.push("one queued".to_string());
    }
    if let Some(at) = s.held_until {
        parts.push(format!("held until {}", clock(at)));
    }
    if s.unsaved_turns > 0 {
        parts.push(format!("{} not yet saved", crate::memory::report::plural(s.unsaved_turns, "turn")));
    }
    let last = match (&s.last_status, s.last_status_at) {
        (Some(status), Some(at)) => format!("last {} ({status})", crate::env::timestamp(at)),
        _ => "no save yet".to_string(),
    };
    parts.push(format!("{} tried, {last}", s.tried));
    if let Some(route) = &s.route {
        parts.push(crate::memory::route::in_brief(&route.key()));
    }
    parts.join(" · ")
}

fn session_id(id: &str) -> Result<SessionId, String> {
    SessionId::parse(id).map_err(|_| format!("{id:?} is not a session id (letters, digits, '-' and '_')"))
}
