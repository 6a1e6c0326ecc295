//! Everything memory-save reads from its environment, one function each,
//! so every variable it honours is listed here; and the clock and local
//! time zone.

use std::ffi::OsString;
use std::path::PathBuf;

use anyhow::{Context, Result};

/// Set in the fork's environment: a hook that fires there anyway does
/// nothing, so a save can never start another save.
pub const FORK_MARKER: &str = "MEMORY_SAVE_FORK";
pub const DISABLE: &str = "MEMORY_SAVE_DISABLE";

fn var(name: &str) -> Option<OsString> {
    std::env::var_os(name).filter(|v| !v.is_empty())
}

pub fn home() -> Result<PathBuf> {
    var("HOME").map(PathBuf::from).context("HOME is not set; set HOME or MEMORY_SAVE_HOME")
}

/// `MEMORY_SAVE_HOME`, else `~/.cli-tweaks` (the original mod's folder).
pub fn base_dir() -> Result<PathBuf> {
    var("MEMORY_SAVE_HOME").map_or_else(|| Ok(home()?.join(".cli-tweaks")), |dir| Ok(dir.into()))
}

/// `MEMORY_SAVE_CLAUDE`: the Claude Code executable, instead of `claude` on `PATH`.
pub fn claude_override() -> Option<PathBuf> {
    var("MEMORY_SAVE_CLAUDE").map(PathBuf::from)
}

/// Claude Code's switch for its own auto memory.
pub fn disable_auto_memory() -> Option<String> {
    var("CLAUDE_CODE_DISABLE_AUTO_MEMORY").map(|v| v.to_string_lossy().into_owned())
}

/// `CLAUDE_CODE_OAUTH_TOKEN` (`claude setup-token`), which Claude Code
/// passes to no hook (measured), so a save's fork never has it.
pub const OAUTH_TOKEN: &str = "CLAUDE_CODE_OAUTH_TOKEN";

pub fn oauth_token_set() -> bool {
    var(OAUTH_TOKEN).is_some()
}

/// `VISUAL`, else `EDITOR`: the command `memory-save edit` opens.
pub fn editor() -> Option<String> {
    var("VISUAL").or_else(|| var("EDITOR")).map(|v| v.to_string_lossy().into_owned())
}

/// Unless `NO_COLOR` is set (to anything) or `CLICOLOR=0`.
pub fn colour_allowed() -> bool {
    var("NO_COLOR").is_none() && var("CLICOLOR").is_none_or(|v| v != "0")
}

/// `COLUMNS`: the terminal's width, when the shell exports it.
pub fn columns() -> Option<usize> {
    var("COLUMNS")?.to_str()?.trim().parse().ok().filter(|c| *c > 0)
}

/// `MEMORY_SAVE_FORK_TIMEOUT`: seconds, for a one-off run.
pub fn fork_timeout_override() -> Option<u64> {
    var("MEMORY_SAVE_FORK_TIMEOUT")?.to_str()?.parse().ok()
}

/// `MEMORY_SAVE_DISABLE=1` turns every hook into a no-op.
pub fn disabled() -> bool {
    var(DISABLE).is_some_and(|v| v == "1")
}

/// A session no person attends: a `claude -p` run (or an SDK's), where
/// Claude Code gives its hooks `CLAUDE_CODE_SESSION_ATTENDED=0` (an
/// interactive session, `1`) and an `sdk-…` entrypoint [measured: 2.1.328
/// and 2.1.332].
pub fn unattended() -> bool {
    match var("CLAUDE_CODE_SESSION_ATTENDED") {
        Some(attended) => attended == "0",
        None => var("CLAUDE_CODE_ENTRYPOINT").is_some_and(|e| e.to_string_lossy().starts_with("sdk")),
    }
}

pub fn inside_fork() -> bool {
    var(FORK_MARKER).is_some()
}

/// The session's project folder Claude Code gives its hooks, when absolute.
pub fn claude_project_dir() -> Option<String> {
    var("CLAUDE_PROJECT_DIR")?.into_string().ok().filter(|d| std::path::Path::new(d).is_absolute())
}

/// Claude Code's config folder: `CLAUDE_CONFIG_DIR`, else `~/.claude`.
pub fn claude_config_dir() -> Result<PathBuf> {
    var("CLAUDE_CONFIG_DIR").map_or_else(|| Ok(home()?.join(".claude")), |dir| Ok(dir.into()))
}

/// A variable as the fork inherits it (the billing route asks only whether it is set).
pub fn passed_to_fork(name: &str) -> Option<String> {
    var(name)?.into_string().ok()
}

/// The names of every variable set, for dropping some from a child's environment.
pub fn variable_names() -> Vec<String> {
    std::env::vars_os().map(|(name, _)| name.to_string_lossy().into_owned()).collect()
}

/// A debug build's fault hook (`MEMORY_SAVE_FAULT_*`) for the crash tests.
#[cfg(debug_assertions)]
pub fn fault(name: &str) -> Option<String> {
    var(name)?.into_string().ok()
}

pub fn now_unix() -> i64 {
    #[cfg(debug_assertions)]
    if let Some(now) = debug_clock() {
        return now;
    }
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs() as i64).unwrap_or(0)
}

/// A debug build's virtual clock: `MEMORY_SAVE_DEBUG_CLOCK` names a file
/// holding the Unix time (tests/cli/month.rs, whose waits would not fit in
/// real time).
#[cfg(debug_assertions)]
fn debug_clock() -> Option<i64> {
    let path = var("MEMORY_SAVE_DEBUG_CLOCK")?;
    std::fs::read_to_string(path).ok()?.trim().parse().ok()
}

/// Whether a debug build runs on the virtual clock: waits poll it often.
pub fn virtual_clock() -> bool {
    #[cfg(debug_assertions)]
    return var("MEMORY_SAVE_DEBUG_CLOCK").is_some();
    #[cfg(not(debug_assertions))]
    false
}

/// A debug build's shorter hook deadline, so a test of a hook whose input
/// never closes need not wait five seconds. Release builds keep the real one.
pub fn deadline_override() -> Option<std::time::Duration> {
    #[cfg(debug_assertions)]
    return var("MEMORY_SAVE_DEBUG_DEADLINE_MS")?.to_str()?.parse().ok().map(std::time::Duration::from_millis);
    #[cfg(not(debug_assertions))]
    None
}

/// Local `HH:MM` today, `YYYY-MM-DD HH:MM` on another day, as the status
/// line shows a time: a pause until the first of next month is not "00:00".
pub fn clock(unix: i64) -> String {
    let (at, today) = (local(unix), local(now_unix()));
    let format = if at.date() == today.date() {
        time::macros::format_description!("[hour]:[minute]")
    } else {
        time::macros::format_description!("[year]-[month]-[day] [hour]:[minute]")
    };
    at.format(&format).unwrap_or_default()
}

/// Local date and time, for the log and listings.
pub fn timestamp(unix: i64) -> String {
    let format = time::macros::format_description!("[year]-[month]-[day] [hour]:[minute]:[second]");
    local(unix).format(&format).unwrap_or_default()
}

/// The Unix time of the local midnight that began `unix`'s day.
pub fn local_midnight(unix: i64) -> i64 {
    local(unix).replace_time(time::Time::MIDNIGHT).unix_timestamp()
}

/// The local date of `unix`: (year, month, day).
pub fn local_date(unix: i64) -> (i32, u8, u8) {
    let at = local(unix);
    (at.year(), at.month() as u8, at.day())
}

/// The Unix time of local midnight at the start of `date`.
pub fn local_date_start(date: (i32, u8, u8)) -> i64 {
    let (year, month, day) = date;
    let Ok(month) = time::Month::try_from(month) else { return 0 };
    let Ok(date) = time::Date::from_calendar_date(year, month, day) else { return 0 };
    let noon = date.with_hms(12, 0, 0).map_or(0, |t| t.assume_utc().unix_timestamp());
    // The zone's offset on that day (summer time moves it).
    local_midnight(noon)
}

/// Seconds east of UTC on this machine now.
pub fn local_offset_seconds() -> i64 {
    i64::from(local(now_unix()).offset().whole_seconds())
}

fn local(unix: i64) -> time::OffsetDateTime {
    let utc = time::OffsetDateTime::from_unix_timestamp(unix).unwrap_or(time::OffsetDateTime::UNIX_EPOCH);
    time::UtcOffset::local_offset_at(utc).map_or(utc, |offset| shifted(utc, offset))
}

/// `utc` at `offset`; itself where the shift would leave the calendar (a
/// record's year 9999 east of UTC).
fn shifted(utc: time::OffsetDateTime, offset: time::UtcOffset) -> time::OffsetDateTime {
    utc.checked_to_offset(offset).unwrap_or(utc)
}

#[cfg(test)]
mod tests {
    #[test]
    fn clock_is_hours_and_minutes_today_and_says_the_date_on_another_day() {
        let now = super::now_unix();
        let text = super::clock(now);
        assert_eq!(text.len(), 5);
        assert_eq!(&text[2..3], ":");
        let later = super::clock(now + 40 * 86_400);
        assert_eq!(later.len(), 16, "{later}");
        assert!(later.starts_with("20") && later.contains(' '), "{later}");
    }

    /// A time from a record (a planted state file, a synced save record)
    /// at the edge of the calendar stays in UTC rather than panic.
    #[test]
    fn a_time_at_the_edge_of_the_calendar_is_shown_in_utc() {
        let edge = time::OffsetDateTime::from_unix_timestamp(253_402_300_799).unwrap();
        let east = time::UtcOffset::from_hms(9, 0, 0).unwrap();
        assert_eq!(super::shifted(edge, east), edge);
        let noon = time::OffsetDateTime::from_unix_timestamp(1_796_140_800).unwrap();
        assert_eq!(super::shifted(noon, east).hour(), 1);
    }
}
