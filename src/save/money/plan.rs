//! A Claude plan's usage windows: Claude Code hands a status-line command
//! `rate_limits.five_hour` and `rate_limits.seven_day` for a subscription
//! login (docs/design.md §4, measured); the status line keeps the latest
//! reading in the ledger, and while either window is at or over
//! `wait_at_plan_percent` a plan's saves wait, holding their turns back.

use serde::{Deserialize, Serialize};

use crate::store::paths::Roots;

/// One window as Claude Code gives it: the share used (0 to 100) and when
/// it resets (Unix seconds).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Window {
    pub used_percentage: f64,
    pub resets_at: i64,
}

/// The status line's `rate_limits`; a window Claude Code left out is `None`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Windows {
    pub five_hour: Option<Window>,
    pub seven_day: Option<Window>,
}

/// A window that makes saves wait: its name for a person, how full, until when.
#[derive(Debug, Clone, PartialEq)]
pub struct Full {
    pub name: &'static str,
    pub used: f64,
    pub until: i64,
}

impl Full {
    /// `waiting: plan's 5-hour window 97% used, until 17:05`.
    pub fn status(&self) -> String {
        format!("waiting: plan's {} window {:.0}% used, until {}", self.name, self.used, crate::env::clock(self.until))
    }
}

impl Windows {
    /// The window at or over `threshold` percent that frees last; a window
    /// whose reset has passed is empty again, whatever it read. A reset
    /// further ahead than the window is long is no reading of Claude
    /// Code's (anything can pipe JSON to the status line) and holds
    /// nothing back.
    pub fn full(&self, threshold: f64, now: i64) -> Option<Full> {
        const HOUR: i64 = 3600;
        [("5-hour", self.five_hour, 5 * HOUR), ("weekly", self.seven_day, 7 * 24 * HOUR)]
            .into_iter()
            .filter_map(|(name, w, span)| w.map(|w| (name, w, span)))
            .filter(|(_, w, span)| now < w.resets_at && w.resets_at <= now.saturating_add(span + HOUR))
            .map(|(name, w, _)| (name, w))
            .filter(|(_, w)| w.used_percentage >= threshold)
            .map(|(name, w)| Full { name, used: w.used_percentage, until: w.resets_at })
            .max_by_key(|full| full.until)
    }

    fn is_empty(&self) -> bool {
        self.five_hour.is_none() && self.seven_day.is_none()
    }
}

/// Keeps the status line's reading, written only when it changed: the
/// status line runs every few seconds. A reading with no window (an API
/// key's session, or before the first answer) keeps the last one, which
/// holds until its own resets.
pub fn record(roots: &Roots, windows: &Windows) {
    if windows.is_empty() || super::ledger::load(roots).windows.as_ref() == Some(windows) {
        return;
    }
    if let Err(e) = super::ledger::update(roots, |l| l.windows = Some(windows.clone())) {
        crate::store::log::error(&format!("cannot keep the plan's usage windows: {e:#}"));
    }
}

/// The window that makes a plan's saves wait now, if one does. Only a
/// route that draws on the windows waits (`Route::draws_on_plan_windows`).
pub fn wait(roots: &Roots, config: &crate::config::Config, on_plan: bool, now: i64) -> Option<Full> {
    if !on_plan {
        return None;
    }
    super::ledger::load(roots).windows?.full(config.wait_at_plan_percent(), now)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_window_at_or_over_the_threshold_makes_saves_wait_until_it_resets() {
        let now = 1_000;
        let w = |used, resets_at| Some(Window { used_percentage: used, resets_at });
        type Case = (Option<Window>, Option<Window>, Option<(&'static str, i64)>);
        let cases: &[Case] = &[
            (None, None, None),
            (w(97.0, 2_000), None, Some(("5-hour", 2_000))),
            (w(89.9, 2_000), w(20.0, 9_000), None),
            (w(90.0, 2_000), None, Some(("5-hour", 2_000))),
            (w(20.0, 2_000), w(98.0, 9_000), Some(("weekly", 9_000))),
            (w(97.0, 2_000), w(98.0, 9_000), Some(("weekly", 9_000))),
            // Reset since the reading: empty again.
            (w(100.0, 900), None, None),
            // Resets further ahead than the window is long: not a reading.
            (w(100.0, now + 7 * 3600), None, None),
            (None, w(100.0, now + 9 * 86_400), None),
            (w(97.0, i64::MAX), w(98.0, now + 6 * 86_400), Some(("weekly", now + 6 * 86_400))),
        ];
        for (five_hour, seven_day, want) in cases {
            let windows = Windows { five_hour: *five_hour, seven_day: *seven_day };
            let got = windows.full(90.0, now).map(|f| (f.name, f.until));
            assert_eq!(got, *want, "{windows:?}");
        }
    }

    #[test]
    fn the_status_lines_reading_parses_as_claude_code_sends_it() {
        // As 2.1.328 and 2.1.332 hand it to a status-line command (measured).
        let input = r#"{"five_hour":{"used_percentage":42,"resets_at":1796610498},"seven_day":{"used_percentage":17.5,"resets_at":1796693298}}"#;
        let windows: Windows = serde_json::from_str(input).unwrap();
        assert_eq!(windows.five_hour, Some(Window { used_percentage: 42.0, resets_at: 1_796_610_498 }));
        assert_eq!(windows.seven_day.unwrap().used_percentage, 17.5);
        let one: Windows = serde_json::from_str(r#"{"seven_day":{"used_percentage":100,"resets_at":5}}"#).unwrap();
        assert!(one.five_hour.is_none() && one.seven_day.is_some());
    }
}
