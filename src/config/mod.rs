//! `~/.cli-tweaks/memory-save.toml`; every key optional, each read on its own
//! so one typo never resets the whole file (docs/configuration.md). What
//! guards money or review fails closed (`Config::stopped`): saves stop until
//! the file is fixed; the memory still loads.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Result;

use crate::memory::cost::Price;
use crate::store::paths::Roots;

mod read;

/// What of the configuration the save protocol reads (`save::machine`).
#[derive(Debug, Clone, Copy, Default)]
pub struct SaveLimits {
    /// Save after this many turns (0 or 1: every turn).
    pub every_turns: u64,
    pub idle_flush: Duration,
    /// A session no person attends (`claude -p`) is saved only after this
    /// many main-loop tool calls.
    pub unattended_min_tools: u64,
}

pub const FILE_NAME: &str = "memory-save.toml";
const DEFAULT_FORK_TIMEOUT_SECONDS: u64 = 300;
/// Quiet seconds before gathered turns are saved: only for a session that
/// never sends SessionEnd, so not within the cache's five minutes (docs/cost.md).
const DEFAULT_IDLE_FLUSH_SECONDS: u64 = 3600;
/// Turns gathered before a save: a fifth of every-turn saving's cost (docs/cost.md).
pub const DEFAULT_SAVE_EVERY_TURNS: u64 = 5;
/// Tool calls that make a `claude -p` run worth a save: a one-shot question
/// or a script's small task makes a few, a long headless task many; each
/// save draws on the same plan limits or key as the run (docs/cost.md).
pub const DEFAULT_UNATTENDED_MIN_TOOLS: u64 = 10;
/// The most one save may cost, priced before it runs: a save that reads a
/// warm cache costs cents, one that rewrites an expired cache of a long
/// session dollars (docs/cost.md).
pub const DEFAULT_MAX_COST_PER_SAVE_USD: f64 = 0.25;
/// A Claude plan's 5-hour or weekly window this full makes saves wait: a
/// save draws on the same windows as the user's own prompts, and the last
/// tenth of a window is the user's (docs/cost.md).
pub const DEFAULT_WAIT_AT_PLAN_PERCENT: f64 = 90.0;
/// No budget is larger than this: a bigger number is a typo.
const MAX_BUDGET_USD: f64 = 100_000.0;

/// A budget as the file sets it.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub enum Budget {
    /// Not in the file: the default applies.
    #[default]
    Unset,
    /// `"none"`: no limit, on purpose.
    Off,
    Usd(f64),
}

impl Budget {
    /// The limit in dollars, with `default` for an unset key.
    pub fn or(self, default: Option<f64>) -> Option<f64> {
        match self {
            Budget::Unset => default,
            Budget::Off => None,
            Budget::Usd(usd) => Some(usd),
        }
    }
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Review {
    #[default]
    Off,
    Rules,
}

/// One thing wrong in the file; `closed` ones stop saves until fixed.
#[derive(Debug, Clone, PartialEq)]
pub struct Problem {
    pub text: String,
    pub closed: bool,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Config {
    pub fork_timeout_seconds: Option<u64>,
    /// The fork's model; absent: the session's own, which the prompt cache needs.
    pub model: Option<String>,
    /// The fork's effort; absent: the session's own.
    pub effort: Option<String>,
    /// Projects (by folder name or identity) where memory-save does nothing.
    pub disabled_projects: Vec<String>,
    /// `"rules"`: CRITICAL RULES changes wait for `memory-save review`.
    pub review: Review,
    /// 0 or 1: every turn.
    pub save_every_turns: Option<u64>,
    pub idle_flush_seconds: Option<u64>,
    /// `claude -p` runs are saved from this many main-loop tool calls on.
    pub unattended_min_tools: Option<u64>,
    /// A save whose estimate is over this never runs.
    pub max_cost_per_save_usd: Budget,
    /// All saves of the calendar month by one route stop at this: dollars
    /// for a key, cloud or gateway; for a plan, its saves' API-priced worth.
    pub max_cost_per_month_usd: Budget,
    /// A plan's usage window this full (percent) makes saves wait.
    pub wait_at_plan_percent: Option<f64>,
    /// Memory folder names chosen by hand, by identity.
    pub names: BTreeMap<String, String>,
    /// `[prices."<model prefix>"]`: added to or overriding the price table.
    pub prices: Vec<(String, Price)>,
    /// What was wrong in the file, in its order.
    pub problems: Vec<Problem>,
}

impl Config {
    /// The config at `path`, defaults when missing. Only an unreadable file is
    /// an error; everything wrong inside it is in `problems`.
    pub fn load(path: &Path) -> Result<Config> {
        let Some(bytes) = crate::store::fsutil::read_regular(path, 1024 * 1024)? else {
            return Ok(Config::default());
        };
        let Ok(text) = String::from_utf8(bytes) else {
            return Ok(Config::closed(format!("{} is not UTF-8 text; saves stop until it is fixed", path.display())));
        };
        Ok(Config::parse(&text, &path.display().to_string()))
    }

    /// A config whose file could not be used at all: saves stop.
    fn closed(text: String) -> Config {
        Config { problems: vec![Problem { text, closed: true }], ..Config::default() }
    }

    /// The first problem that stops saves, if any.
    pub fn stopped(&self) -> Option<&str> {
        self.problems.iter().find(|p| p.closed).map(|p| p.text.as_str())
    }

    /// `MEMORY_SAVE_FORK_TIMEOUT` wins over the file, for a one-off run.
    pub fn fork_timeout(&self) -> Duration {
        let from_env = crate::env::fork_timeout_override();
        let seconds = from_env.or(self.fork_timeout_seconds).filter(|&s| s > 0).unwrap_or(DEFAULT_FORK_TIMEOUT_SECONDS);
        Duration::from_secs(seconds)
    }

    /// What decides whether a turn's save is due.
    pub fn limits(&self) -> SaveLimits {
        SaveLimits {
            every_turns: self.save_every_turns.unwrap_or(DEFAULT_SAVE_EVERY_TURNS),
            idle_flush: Duration::from_secs(self.idle_flush_seconds.unwrap_or(DEFAULT_IDLE_FLUSH_SECONDS)),
            unattended_min_tools: self.unattended_min_tools.unwrap_or(DEFAULT_UNATTENDED_MIN_TOOLS),
        }
    }

    pub fn model(&self) -> Option<&str> {
        self.model.as_deref().filter(|m| !m.trim().is_empty())
    }

    /// The review gate; a file that stops saves keeps it on, so a broken
    /// `review` line never lets a rule through.
    pub fn review_rules(&self) -> bool {
        self.review == Review::Rules || self.stopped().is_some()
    }

    pub fn effort(&self) -> Option<&str> {
        self.effort.as_deref().filter(|m| !m.trim().is_empty())
    }

    /// The one per-save cap; `"none"` lifts it.
    pub fn max_cost_per_save(&self) -> Option<f64> {
        self.max_cost_per_save_usd.or(Some(DEFAULT_MAX_COST_PER_SAVE_USD))
    }

    pub fn wait_at_plan_percent(&self) -> f64 {
        self.wait_at_plan_percent.unwrap_or(DEFAULT_WAIT_AT_PLAN_PERCENT)
    }
}

/// The roots from the environment, with the log pointed into their state folder.
pub fn roots() -> Result<Roots> {
    let roots = Roots::at(crate::env::base_dir()?);
    crate::store::log::init(&roots.state);
    Ok(roots)
}

pub fn file(roots: &Roots) -> PathBuf {
    roots.base.join(FILE_NAME)
}

/// The config of `roots`; a file that cannot be read at all stops saves.
pub fn of(roots: &Roots) -> Config {
    Config::load(&file(roots)).unwrap_or_else(|e| {
        crate::store::log::error(&format!("{e:#}"));
        Config::closed(format!("{e:#}; saves stop until it is fixed"))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Config {
        Config::parse(text, "memory-save.toml")
    }

    #[test]
    fn keys_and_defaults() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join(FILE_NAME);
        assert_eq!(Config::load(&file).unwrap(), Config::default());
        std::fs::write(
            &file,
            "fork_timeout_seconds = 60\nmodel = \"claude-haiku\"\neffort = \"low\"\ndisabled_projects = [\"secret\"]\n",
        )
        .unwrap();
        let config = Config::load(&file).unwrap();
        assert_eq!(config.model(), Some("claude-haiku"));
        assert_eq!(config.effort(), Some("low"));
        assert_eq!(config.disabled_projects, vec!["secret".to_string()]);
        assert!(config.problems.is_empty());
        let defaults = Config::default().limits();
        assert_eq!(defaults.every_turns, DEFAULT_SAVE_EVERY_TURNS);
        assert_eq!(defaults.idle_flush, Duration::from_secs(3600));
        assert_eq!(Config::default().max_cost_per_save(), Some(0.25));
        assert_eq!(Config::default().wait_at_plan_percent(), 90.0);
        assert_eq!(parse("max_cost_per_save_usd = \"none\"").max_cost_per_save(), None);
        assert_eq!(parse("wait_at_plan_percent = 75").wait_at_plan_percent(), 75.0);
    }

    /// Every ordinary key's bad value: named, that key alone at its default.
    #[test]
    fn a_bad_ordinary_value_is_named_and_that_key_alone_takes_its_default() {
        let cases: &[(&str, &str)] = &[
            ("save_every_turns = \"five\"", "save_every_turns must be a whole number from 0 to 1000, not \"five\""),
            ("save_every_turns = -1", "save_every_turns must be a whole number from 0 to 1000, not -1"),
            ("idle_flush_seconds = 0", "idle_flush_seconds must be a whole number from 1 to 86400, not 0"),
            (
                "fork_timeout_seconds = 18446744073709551615",
                "fork_timeout_seconds must be a whole number from 1 to 3600, not \"18446744073709551615\"",
            ),
            (
                "fork_timeout_seconds = 9999999",
                "fork_timeout_seconds must be a whole number from 1 to 3600, not 9999999",
            ),
            ("fork_timeout_seconds = 0", "fork_timeout_seconds must be a whole number from 1 to 3600, not 0"),
            ("model = 5", "model must be text in quotes, not 5"),
            ("effort = true", "effort must be text in quotes, not true"),
            ("disabled_projects = \"app\"", "disabled_projects must be a list of names in quotes"),
            ("disabled_projects = [1]", "disabled_projects must be a list of names in quotes"),
            ("names = 3", "names must be a table of \"identity\" = \"folder\""),
        ];
        for (line, want) in cases {
            let config = parse(&format!("{line}\nwait_at_plan_percent = 70\n"));
            let problem = config.problems.first().unwrap_or_else(|| panic!("{line}: no problem"));
            assert!(problem.text.contains(want), "{line}: {}", problem.text);
            if want.contains("not valid TOML") {
                assert!(problem.closed, "{line}");
                continue;
            }
            assert!(!problem.closed && problem.text.ends_with("using its default"), "{line}: {problem:?}");
            assert_eq!(config.wait_at_plan_percent, Some(70.0), "{line}: the other keys still apply");
            assert_eq!(config.stopped(), None, "{line}");
        }
    }

    /// A bad `[names]` entry is named and left out; every other entry, on
    /// either side of it, still names its folder.
    #[test]
    fn a_bad_names_entry_leaves_out_that_entry_alone() {
        let config = parse("[names]\n\"a\" = \"first\"\n\"b\" = 3\n\"c\" = \"third\"\n");
        assert_eq!(config.problems.len(), 1, "{:?}", config.problems);
        let problem = &config.problems[0];
        assert!(problem.text.contains("names entry \"b\" must be a folder name in quotes"), "{}", problem.text);
        assert!(!problem.closed && problem.text.ends_with("using its default"), "{problem:?}");
        let names: Vec<_> = config.names.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        assert_eq!(names, [("a", "first"), ("c", "third")]);
    }

    /// Every key that guards money or review fails closed.
    #[test]
    fn a_bad_budget_price_threshold_or_review_stops_saves() {
        let cases: &[(&str, &str)] = &[
            (
                "max_cost_per_save_usd = -1",
                "max_cost_per_save_usd must be dollars from 0 to 100000 (or \"none\"), not -1",
            ),
            ("max_cost_per_save_usd = nan", "not nan"),
            ("max_cost_per_month_usd = inf", "not inf"),
            ("max_cost_per_month_usd = 1e9", "not 1000000000"),
            ("max_cost_per_month_usd = \"10\"", "not \"10\""),
            ("max_cost_per_save_usd = \"cheap\"", "max_cost_per_save_usd must be dollars"),
            ("wait_at_plan_percent = 0", "wait_at_plan_percent must be a number from 1 to 100, not 0"),
            ("wait_at_plan_percent = 140", "wait_at_plan_percent must be a number from 1 to 100, not 140"),
            ("max_cost_per_day_usd = 1", "unknown key \"max_cost_per_day_usd\""),
            ("review = \"rule\"", "review must be \"rules\" or \"off\", not \"rule\""),
            ("review = true", "review must be \"rules\" or \"off\""),
            ("[prices.\"claude-x\"]\ninput = 1", "entry \"claude-x\" lacks output"),
            (
                "[prices.\"claude-x\"]\ninput = -1\noutput = 1\ncache_read = 1\ncache_write_5m = 1\ncache_write_1h = 1",
                "input must be a number",
            ),
            (
                "max_cost_per_sav_usd = 0.01",
                "unknown key \"max_cost_per_sav_usd\" (did you mean \"max_cost_per_save_usd\"?)",
            ),
            ("max_cost_per_month = 5", "did you mean \"max_cost_per_month_usd\"?"),
            ("reveiw = \"rules\"", "unknown key \"reveiw\" (did you mean \"review\"?)"),
            ("wait_at_plan_precent = 80", "did you mean \"wait_at_plan_percent\"?"),
            ("this is not toml", "is not valid TOML"),
        ];
        for (text, want) in cases {
            let config = parse(text);
            let stopped = config.stopped().unwrap_or_else(|| panic!("{text}: saves do not stop: {config:?}"));
            assert!(stopped.contains(want), "{text}: {stopped}");
            assert!(
                stopped.ends_with("saves stop until it is fixed") || stopped.contains("not valid TOML"),
                "{stopped}"
            );
        }
    }

    #[test]
    fn an_unknown_key_is_named_with_the_nearest_and_ignored() {
        let config = parse("save_every_turn = 3\nmodell = \"x\"\nfavourite_colour = \"blue\"\n");
        let texts: Vec<&str> = config.problems.iter().map(|p| p.text.as_str()).collect();
        assert_eq!(
            texts,
            [
                "memory-save.toml: unknown key \"favourite_colour\"; ignored",
                "memory-save.toml: unknown key \"modell\" (did you mean \"model\"?); ignored",
                "memory-save.toml: unknown key \"save_every_turn\" (did you mean \"save_every_turns\"?); ignored",
            ]
        );
        assert_eq!(config.stopped(), None);
        assert_eq!(config.limits().every_turns, DEFAULT_SAVE_EVERY_TURNS);
    }

    #[test]
    fn budgets_take_dollars_or_none() {
        let config = parse("max_cost_per_month_usd = \"none\"\nmax_cost_per_save_usd = 0.001\n");
        assert_eq!(config.max_cost_per_month_usd.or(Some(10.0)), None);
        assert_eq!(config.max_cost_per_save(), Some(0.001));
        assert_eq!(Config::default().max_cost_per_month_usd.or(Some(10.0)), Some(10.0));
        let config = parse(
            "[prices.\"claude-opus-4-1\"]\ninput = 15\noutput = 75\ncache_read = 1.5\ncache_write_5m = 18.75\ncache_write_1h = 30\n",
        );
        assert!(config.problems.is_empty(), "{:?}", config.problems);
        assert_eq!(config.prices.len(), 1);
        assert_eq!(config.prices[0].1.base.input, 15.0);
    }
}
