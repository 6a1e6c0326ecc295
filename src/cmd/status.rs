//! `memory-save status [--json]`: this project's memory, saves and spend.

use anyhow::Result;
use serde::Serialize;

use crate::env::timestamp;
use crate::memory::cost::usd;
use crate::memory::{MAX_CHARS, MAX_LINES, Size};
use crate::save::money::month::Totals;
use crate::store::folder::{FAILED_REPLY_FILE, read_if_exists};
use crate::store::guards::{self, Standing};
use crate::store::paths::Roots;
use crate::store::saves::SaveRecord;
use crate::store::state::{SessionId, SessionState, SessionStore};

use super::row;

const RECENT: usize = 5;

#[derive(Serialize)]
struct Status {
    project: String,
    /// The repository the memory belongs to (`github.com/me/app`, or
    /// `path:/…` without a remote), and why this folder.
    identity: String,
    folder_reason: String,
    /// A moved repository's folder the worker has not yet confirmed.
    provisional: Option<String>,
    /// Folders that could be this repository's memory (`adopt`).
    adoptable: Vec<Adoptable>,
    /// Lines naming a path the repository no longer has, and
    /// near-duplicate pairs (`show --check` lists them).
    memory_check: Option<String>,
    restore: crate::restore::state::RestoreState,
    /// With sync on: the remote, the last pull and push, the last error.
    sync: Option<crate::sync::SyncState>,
    memory_dir: String,
    memory_exists: bool,
    lines: usize,
    max_lines: usize,
    chars: usize,
    max_chars: usize,
    topic_files: Vec<String>,
    /// The guards that bind, and those waiting for review (`memory-save guards`).
    guards: usize,
    guards_waiting: usize,
    /// Why `guards.json` cannot be read, when it cannot.
    guards_unreadable: Option<String>,
    /// `None` when on; else why it is off.
    off: Option<String>,
    hooks: Vec<crate::claude::registrations::Registration>,
    hooks_summary: String,
    config_file: String,
    /// What is wrong in memory-save.toml, each named; see `saves_stopped`.
    config_problems: Vec<String>,
    /// Why no save runs on this machine: a setting, a budget, an allowance.
    saves_stopped: Option<String>,
    /// A Claude plan's usage windows as memory-save last read them, and
    /// whether saves wait for one (`None` for another route).
    plan: Option<String>,
    saving: usize,
    queued: usize,
    last_failed_reply: Option<FailedReply>,
    recent_saves: Vec<SaveRecord>,
    /// What saves cost today (the local day, every project).
    today: Totals,
    month: crate::save::money::month::Month,
    /// Sessions on models the plan refused without usage credits.
    paused_models: Vec<String>,
    /// This project's sessions' saves, beside each session's own cost.
    sessions: Vec<SessionCost>,
}

/// A session's own cost under this is too small to set a save's against.
const MIN_SHARED_SESSION_USD: f64 = 0.05;

#[derive(Serialize)]
struct SessionCost {
    session_id: String,
    saves: Totals,
    /// The session's own cost so far, from its transcript.
    session_cost_usd: f64,
    /// The saves' cost as a share of the session's own.
    share: Option<f64>,
}

#[derive(Serialize)]
struct Adoptable {
    folder: String,
    recorded_for: String,
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
        let status = gather(super::here()?)?;
        if self.json {
            return super::print_json(&status);
        }
        super::print_painted(&painted(&render(&status), super::colour::Colour::for_stdout()))
    }
}

/// A plan's usage windows, how full, and whether saves wait; or that
/// memory-save cannot see them, and how to change that.
pub fn plan_line(roots: &Roots, config: &crate::config::Config, cwd: &std::path::Path, plan: bool) -> Option<String> {
    use crate::env::clock;
    if !plan {
        return None;
    }
    let now = crate::env::now_unix();
    let threshold = config.wait_at_plan_percent();
    let Some(windows) = crate::save::money::ledger::load(roots).windows else {
        return Some(if crate::claude::registrations::statusline_registered(cwd) {
            "no reading of your plan's usage windows yet (the status line gives one after a session's first answer)"
                .to_string()
        } else {
            "memory-save cannot see your plan's usage windows, so saves run until the plan refuses one: memory-save install --statusline".to_string()
        });
    };
    let named = [("5-hour", windows.five_hour), ("weekly", windows.seven_day)];
    let read: Vec<String> = named
        .iter()
        .filter_map(|(name, w)| w.filter(|w| now < w.resets_at).map(|w| (name, w)))
        .map(|(name, w)| format!("{name} {:.0}% used, resets {}", w.used_percentage, clock(w.resets_at)))
        .collect();
    let read =
        if read.is_empty() { "both windows reset since the last reading".to_string() } else { read.join(" · ") };
    let wait = match windows.full(threshold, now) {
        Some(full) => format!("saves wait until {} ({}% or more used)", clock(full.until), threshold),
        None => format!("saves wait at {threshold}% used"),
    };
    Some(format!("{read}; {wait}"))
}

fn gather(super::Here { roots, cwd, config, project, folder }: super::Here) -> Result<Status> {
    let (roots, cwd) = (&roots, cwd.as_path());
    let memory = read_if_exists(&folder.memory_path())?;
    let size = Size::of(memory.as_deref().unwrap_or(""));
    let stops = crate::save::money::ledger::stops(roots, &config);
    let allowance = stops.allowance.map(|h| format!("{} ({})", h.status(), h.text));
    let saves_stopped = stops.config.or(allowance).or_else(|| stops.budget.map(|s| s.status()));
    let sessions = project_sessions(roots, &folder.key());
    let (today, per_session) = costs(roots, &sessions);
    let failed = folder.dir.join(FAILED_REPLY_FILE);
    let last_failed_reply = std::fs::metadata(&failed).ok().map(|m| FailedReply {
        path: failed.display().to_string(),
        at: m.modified().map_or(0, |t| t.duration_since(std::time::UNIX_EPOCH).unwrap_or_default().as_secs() as i64),
        bytes: m.len(),
    });
    let hooks = crate::claude::registrations::registrations(cwd);
    let month = crate::save::money::month::gather(roots, &config, crate::env::now_unix());
    let review = config.review_rules();
    let standings = guards::standings(&folder, || guards::rules_loaded_now(&folder, review), review);
    let standing = |wanted: Standing| standings.iter().filter(|(_, s)| *s == wanted).count();
    Ok(Status {
        guards: standing(Standing::Binds),
        guards_waiting: standing(Standing::WaitsForReview),
        guards_unreadable: guards::load(&folder).err().map(|e| e.0),
        hooks_summary: crate::claude::registrations::describe_registrations(&hooks),
        hooks,
        memory_dir: folder.dir.display().to_string(),
        memory_exists: memory.is_some(),
        lines: size.lines,
        max_lines: MAX_LINES,
        chars: size.chars,
        max_chars: MAX_CHARS,
        topic_files: folder.topic_files(),
        off: project.off_reason(&config),
        config_file: crate::config::file(roots).display().to_string(),
        config_problems: config.problems.iter().map(|p| p.text.clone()).collect(),
        saves_stopped,
        plan: plan_line(roots, &config, cwd, month.on_plan_windows),
        month,
        paused_models: stops.models.iter().map(|(model, h)| format!("{model}: {}", h.text)).collect(),
        saving: sessions.iter().filter(|(_, s)| s.protocol.job.claimed_since().is_some()).count(),
        queued: sessions.iter().filter(|(_, s)| s.protocol.job.is_pending()).count(),
        last_failed_reply,
        recent_saves: crate::store::saves::recent(roots, &folder.key(), RECENT),
        today,
        sessions: per_session,
        adoptable: crate::project::adoptable(roots, &project)
            .into_iter()
            .map(|(folder, record)| Adoptable { folder, recorded_for: record.seen_at() })
            .collect(),
        // The last walk's answer when there was one: status does not wait on git's log.
        memory_check: memory
            .as_deref()
            .and_then(|text| crate::project::check::findings(&project, &folder, text, cwd, false).count()),
        sync: crate::sync::state(roots),
        restore: crate::restore::state::read(roots),
        identity: project.identity,
        provisional: project.provisional,
        folder_reason: project.why,
        project: project.name,
    })
}

/// Today's totals (every project) and this project's sessions' saves.
fn costs(roots: &Roots, sessions: &[(SessionId, SessionState)]) -> (Totals, Vec<SessionCost>) {
    let midnight = crate::env::local_midnight(crate::env::now_unix());
    let records = crate::store::saves::all(roots);
    let today = Totals::of(records.iter().filter(|r| r.at >= midnight));
    let per_session = sessions
        .iter()
        .filter_map(|(id, state)| {
            let saves = Totals::of(records.iter().filter(|r| r.session_id == id.as_str()));
            if saves.saves == 0 {
                return None;
            }
            let own = crate::claude::transcript::transcript_facts(std::path::Path::new(&state.input.transcript_path))
                .cost_usd;
            // A share of a few cents' session says nothing but alarms.
            let share = (own >= MIN_SHARED_SESSION_USD).then(|| saves.cost_usd / own);
            Some(SessionCost { session_id: id.to_string(), saves, session_cost_usd: own, share })
        })
        .collect();
    (today, per_session)
}

fn project_sessions(roots: &Roots, project: &str) -> Vec<(SessionId, SessionState)> {
    let store = SessionStore::new(roots.sessions_dir());
    let mut sessions = store.all();
    sessions.retain(|(_, s)| s.input.project.as_deref() == Some(project));
    for (id, state) in &mut sessions {
        super::clear_dead_claim(&store, id, state);
    }
    sessions
}

/// Colour by line: the heading bold, what needs the user red or yellow.
fn painted(text: &str, colour: super::colour::Colour) -> String {
    let mut out = String::new();
    for (n, line) in text.lines().enumerate() {
        let word = line.split_whitespace().next().unwrap_or_default();
        let line = match word {
            _ if n == 0 => colour.bold(line),
            "paused" | "failed" | "config" => colour.bad(line),
            "adopt" | "moved" | "check" => colour.warn(line),
            "guards" if line.contains("cannot be read") => colour.warn(line),
            "sync" if line.contains("not synced") => colour.warn(line),
            "state" if !line.trim_end().ends_with(" on") => colour.warn(line),
            "hooks" if line.contains("not registered") || line.contains("more than once") => colour.warn(line),
            _ => colour.plain(line),
        };
        out.push_str(&line);
        out.push('\n');
    }
    out
}

/// The remote, and the last pull and push, or since when not and why.
fn sync_line(sync: &crate::sync::SyncState) -> String {
    let remote = crate::memory::text::shorten(&sync.remote, 60);
    match (&sync.error, sync.synced_at) {
        (None, Some(at)) => format!("{remote} · last pull and push {}", timestamp(at)),
        (None, None) => format!("{remote} · not synced yet"),
        (Some(why), at) => {
            let since = at.map_or_else(|| "sync began".to_string(), timestamp);
            format!("{remote} · not synced since {since} ({})", crate::memory::text::shorten(why, 200))
        }
    }
}

fn render(s: &Status) -> String {
    let mut out = format!("memory-save · project {}\n", s.project);
    row(&mut out, "state", s.off.as_deref().unwrap_or("on"));
    row(&mut out, "hooks", &s.hooks_summary);
    let memory = if s.memory_exists { "MEMORY.md" } else { "MEMORY.md (not written yet)" };
    row(&mut out, "memory", format!("{}/{memory}", s.memory_dir));
    row(&mut out, "identity", format!("{} (folder: {})", s.identity, s.folder_reason));
    if let Some(why) = &s.provisional {
        row(&mut out, "moved", why);
    }
    for a in &s.adoptable {
        let found = format!("memory folder {}, recorded for {}, could be this repository's", a.folder, a.recorded_for);
        row(&mut out, "adopt", format!("{found}: memory-save adopt {}", a.folder));
    }
    row(&mut out, "size", format!("{} of {} lines, {} of {} characters", s.lines, s.max_lines, s.chars, s.max_chars));
    let topics = if s.topic_files.is_empty() { "none".to_string() } else { s.topic_files.join(", ") };
    row(&mut out, "topics", topics);
    if let Some(why) = &s.guards_unreadable {
        row(&mut out, "guards", why);
    } else if s.guards + s.guards_waiting > 0 {
        let waiting =
            if s.guards_waiting > 0 { format!(", {} waiting for review", s.guards_waiting) } else { String::new() };
        row(&mut out, "guards", format!("{} binding{waiting}: memory-save guards", s.guards));
    }
    row(&mut out, "saves", format!("{} running, {} queued", s.saving, s.queued));
    if let Some(count) = &s.memory_check {
        row(&mut out, "check", format!("{count}: memory-save show --check"));
    }
    row(&mut out, "restore", super::restore::line(&s.restore));
    if let Some(sync) = &s.sync {
        row(&mut out, "sync", sync_line(sync));
    }
    for problem in &s.config_problems {
        // A TOML error spans lines (the line, a caret under it): each on
        // its own line, indented under the label.
        let mut lines = problem.lines();
        row(&mut out, "config", lines.next().unwrap_or_default());
        for line in lines {
            row(&mut out, "", line);
        }
    }
    if let Some(plan) = &s.plan {
        row(&mut out, "plan", plan);
    }
    if let Some(why) = &s.saves_stopped {
        row(&mut out, "paused", format!("no save runs on this machine: {why}"));
    }
    if let Some(model) = s.recent_saves.iter().find_map(|r| r.unknown_model.as_deref()) {
        let priced = "its saves are priced at the dearest entry; add [prices.\"<prefix>\"] (docs/configuration.md)";
        row(&mut out, "prices", format!("{model:?} is not in the price table: {priced}"));
    }
    for model in &s.paused_models {
        row(&mut out, "paused", format!("sessions on {model}; tried again within the hour"));
    }
    if let Some(failed) = &s.last_failed_reply {
        row(&mut out, "failed", format!("{} ({}, {} bytes)", failed.path, timestamp(failed.at), failed.bytes));
    }
    out.push_str(&super::cost::summary(&s.month));
    out.push_str(&format!("today (all projects): {}\n", s.today.line()));
    for c in &s.sessions {
        let share = c.share.map_or(String::new(), |share| {
            format!(" · {:.1}% of the session's own {}", share * 100.0, usd(c.session_cost_usd))
        });
        out.push_str(&format!("  session {}: {}{share}\n", c.session_id, c.saves.line()));
    }
    if s.recent_saves.is_empty() {
        out.push_str("last saves: none yet\n");
        return out;
    }
    out.push_str("last saves:\n");
    for save in &s.recent_saves {
        // A long status is cut, so the columns after it keep their gap.
        let status = crate::memory::text::shorten(&save.status, 27);
        let usage = save.usage.clone().unwrap_or_default();
        // The figure budgets count, and the CLI's beside it where it differs.
        let cli = usd(usage.total_cost_usd);
        let counted = usd(save.counted());
        let cost = if cli == counted { counted } else { format!("{counted} (the CLI said {cli})") };
        out.push_str(&format!(
            "  {}  {status:<28} in {} · cache read {} · cache write {} · out {} · {cost}\n",
            timestamp(save.at),
            usage.input_tokens,
            usage.cache_read_input_tokens,
            usage.cache_creation_input_tokens,
            usage.output_tokens,
        ));
    }
    out
}
