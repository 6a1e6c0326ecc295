//! `saves.jsonl`: one record per save, what `status` and the budgets read.
//! `save::budget` holds the lock it is written under.

use serde::{Deserialize, Serialize};

use crate::store::paths::Roots;
use crate::store::state::Usage;

/// Rotated past this size (one old file is kept).
const MAX_BYTES: u64 = 4 * 1024 * 1024;
/// `recent` reads this much of the file's end.
const TAIL: u64 = 256 * 1024;

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SaveRecord {
    /// Unix time.
    pub at: i64,
    pub session_id: String,
    /// The memory's key (`Folder::key`); `None` when the project could not be named.
    pub project: Option<String>,
    pub cwd: String,
    pub status: String,
    pub report: Option<String>,
    pub usage: Option<Usage>,
    /// Who paid (`Route::key`); `None` in older records, which every
    /// route's budget counts.
    pub route: Option<String>,
    /// What the save was estimated to cost before its fork ran.
    pub estimate_usd: Option<f64>,
    /// The larger of the estimate and the CLI's figure (0 or wrong for a
    /// model it does not know); the CLI's alone for a fork never billed.
    pub counted_usd: Option<f64>,
    /// The model, when the price table did not know it (priced at the dearest entry).
    pub unknown_model: Option<String>,
    /// The save resumed nothing and read the turns instead (a fresh save).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub fresh: bool,
    /// What to do about a failed save (`doctor` gives it as the fix).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub advice: Option<String>,
}

impl SaveRecord {
    pub fn counted(&self) -> f64 {
        self.counted_usd.unwrap_or_else(|| self.usage.as_ref().map_or(0.0, |u| u.total_cost_usd))
    }

    /// A record dated in the future (a clock set back) counts as now.
    pub fn counted_at(&self, now: i64) -> i64 {
        self.at.min(now)
    }

    /// Whether a budget for `route` (all routes when `None`) counts it; a
    /// record without a route counts for every one.
    pub fn billed_to(&self, route: Option<&str>) -> bool {
        route.is_none_or(|route| self.route.as_deref().is_none_or(|r| r == route))
    }
}

/// Appends one save's record; `ledger::settle` is the one caller, under
/// the ledger's lock, so a record and its reservation change together.
/// Only the holder of that lock, which the file is, rotates it: a rotation
/// replaces the file, and with it the lock (a record written when the lock
/// timed out only appends).
pub fn append(roots: &Roots, record: &SaveRecord) {
    let path = roots.saves_log();
    let max = if crate::store::lock::held_here(&path) { MAX_BYTES } else { u64::MAX };
    if let Ok(line) = serde_json::to_string(record) {
        crate::store::fsutil::append_line(&path, &line, max);
    }
}

/// Every record of the file and the one rotated before it, oldest first.
pub fn all(roots: &Roots) -> Vec<SaveRecord> {
    let current = roots.saves_log();
    [crate::store::fsutil::rotated(&current), current]
        .iter()
        .filter_map(|path| crate::store::fsutil::read_tail(path, 2 * MAX_BYTES))
        .flat_map(|bytes| {
            String::from_utf8_lossy(&bytes)
                .lines()
                .filter_map(|l| serde_json::from_str::<SaveRecord>(l).ok())
                .collect::<Vec<_>>()
        })
        .collect()
}

/// What every save since `since` (Unix time) counted, all projects; with
/// `route`, only saves billed that way (and older records without one).
pub fn spent_since(roots: &Roots, since: i64, route: Option<&str>) -> f64 {
    let now = crate::env::now_unix();
    all(roots)
        .iter()
        .filter(|r| r.counted_at(now) >= since)
        .filter(|r| r.billed_to(route))
        .map(SaveRecord::counted)
        .sum()
}

/// The newest `count` saves of the memory `key`, newest first.
pub fn recent(roots: &Roots, key: &str, count: usize) -> Vec<SaveRecord> {
    let bytes = crate::store::fsutil::read_tail(&roots.saves_log(), TAIL).unwrap_or_default();
    String::from_utf8_lossy(&bytes)
        .lines()
        .rev()
        .filter_map(|l| serde_json::from_str::<SaveRecord>(l).ok())
        .filter(|r| r.project.as_deref() == Some(key))
        .take(count)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(at: i64, usd: f64) -> SaveRecord {
        SaveRecord { at, counted_usd: Some(usd), ..SaveRecord::default() }
    }

    /// A ledger past the size `all` reads (a rotation that could not run)
    /// still counts its newest saves: budgets read its end, never nothing.
    #[test]
    fn a_ledger_past_its_bound_still_counts_its_newest_saves() {
        let dir = tempfile::tempdir().unwrap();
        let roots = Roots::at(dir.path().to_path_buf());
        std::fs::create_dir_all(&roots.state).unwrap();
        let old = serde_json::to_string(&record(1, 100.0)).unwrap() + "\n";
        let mut text = old.repeat((2 * MAX_BYTES as usize) / old.len() + 10);
        text.push_str(&(serde_json::to_string(&record(crate::env::now_unix(), 0.5)).unwrap() + "\n"));
        std::fs::write(roots.saves_log(), text).unwrap();
        assert_eq!(spent_since(&roots, 2, None), 0.5);
        assert!(all(&roots).len() > 1000, "the end of the file is read");
    }

    /// Only the ledger's holder rotates the file, which is the ledger's
    /// lock: a record written without it (the lock timed out) appends.
    #[test]
    fn a_record_written_without_the_ledger_never_rotates_it() {
        let dir = tempfile::tempdir().unwrap();
        let roots = Roots::at(dir.path().to_path_buf());
        std::fs::create_dir_all(&roots.state).unwrap();
        std::fs::write(roots.saves_log(), vec![b'\n'; MAX_BYTES as usize + 1]).unwrap();
        append(&roots, &record(5, 1.0));
        let mut rotated = roots.saves_log().into_os_string();
        rotated.push(".1");
        assert!(!std::path::Path::new(&rotated).exists());
        let _ledger = crate::store::lock::Lock::acquire(&roots.saves_log(), std::time::Duration::from_secs(1)).unwrap();
        append(&roots, &record(6, 1.0));
        assert!(std::path::Path::new(&rotated).exists(), "the holder rotates");
        assert_eq!(all(&roots).iter().map(|r| r.at).collect::<Vec<_>>(), [5, 6]);
    }
}
