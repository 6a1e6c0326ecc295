//! Reading memory-save.toml key by key: an unknown key is named with the
//! nearest known one and ignored, a bad ordinary value falls back alone,
//! and a bad budget or review value stops saves (`closed`).

use super::*;

/// Every key: its name, what it takes, and whether a bad value stops saves.
struct Key {
    name: &'static str,
    kind: Kind,
    closed: bool,
}

#[derive(Clone, Copy)]
enum Kind {
    Whole {
        min: u64,
        max: u64,
    },
    /// A key an earlier version read: accepted, does nothing, and says so.
    Retired(&'static str),
    Budget,
    Text,
    Texts,
    Review,
    Names,
    Prices,
}

const KEYS: &[Key] = &[
    Key { name: "save_every_turns", kind: Kind::Whole { min: 0, max: 1000 }, closed: false },
    Key { name: "idle_flush_seconds", kind: Kind::Whole { min: 1, max: 86_400 }, closed: false },
    Key { name: "save_every_minutes", kind: Kind::Whole { min: 0, max: 1440 }, closed: false },
    Key { name: "fork_timeout_seconds", kind: Kind::Whole { min: 1, max: 3600 }, closed: false },
    Key { name: "model", kind: Kind::Text, closed: false },
    Key { name: "effort", kind: Kind::Text, closed: false },
    Key { name: "disabled_projects", kind: Kind::Texts, closed: false },
    Key { name: "review", kind: Kind::Review, closed: true },
    Key { name: "max_cost_per_save_usd", kind: Kind::Budget, closed: true },
    Key { name: "max_cost_per_day_usd", kind: Kind::Budget, closed: true },
    Key { name: "max_cost_per_month_usd", kind: Kind::Budget, closed: true },
    Key { name: "cold_save_max_usd", kind: Kind::Budget, closed: true },
    Key { name: "billing_day", kind: Kind::Whole { min: 1, max: 28 }, closed: true },
    Key {
        name: "pause_at_quota_percent",
        kind: Kind::Retired(
            "saves no longer pause by the 5-hour quota, since forks draw on the Agent SDK credit, which max_cost_per_month_usd guards; remove the line",
        ),
        closed: false,
    },
    Key { name: "names", kind: Kind::Names, closed: false },
    Key { name: "prices", kind: Kind::Prices, closed: true },
];

/// The keys a `[prices."…"]` entry takes, per million tokens.
pub const PRICE_KEYS: [&str; 5] = ["input", "output", "cache_read", "cache_write_5m", "cache_write_1h"];

impl Config {
    /// Reads the keys of `text` one by one; `file` names it in messages.
    pub fn parse(text: &str, file: &str) -> Config {
        let table = match parse_table(text) {
            Ok(table) => table,
            Err(e) => {
                let why = e.to_string();
                return Config::closed(format!(
                    "{file} is not valid TOML; saves stop until it is fixed: {}",
                    why.trim_end()
                ));
            }
        };
        let mut config = Config::default();
        for (name, value) in &table {
            match KEYS.iter().find(|k| k.name == name) {
                Some(Key { kind: Kind::Retired(why), .. }) => {
                    config
                        .problems
                        .push(Problem { text: format!("{file}: {name} is no longer read: {why}"), closed: false });
                }
                Some(key) => {
                    if let Err(why) = config.set(key, value) {
                        let text = if key.closed {
                            format!("{file}: {name} {why}; saves stop until it is fixed")
                        } else {
                            format!("{file}: {name} {why}; using its default")
                        };
                        config.problems.push(Problem { text, closed: key.closed });
                    }
                }
                None => config.problems.push(unknown_key(file, name)),
            }
        }
        config
    }

    fn set(&mut self, key: &Key, value: &toml::Value) -> Result<(), String> {
        match key.kind {
            Kind::Whole { min, max } => {
                let n = whole(value, min, max)?;
                match key.name {
                    "save_every_turns" => self.save_every_turns = Some(n),
                    "idle_flush_seconds" => self.idle_flush_seconds = Some(n),
                    "save_every_minutes" => self.save_every_minutes = n,
                    "fork_timeout_seconds" => self.fork_timeout_seconds = Some(n),
                    "billing_day" => self.billing_day = Some(n as u8),
                    _ => unreachable!("a whole-number key without a field: {}", key.name),
                }
            }
            Kind::Retired(_) => unreachable!("a retired key is never set"),
            Kind::Budget => {
                let budget = budget(value)?;
                match key.name {
                    "max_cost_per_save_usd" => self.max_cost_per_save_usd = budget,
                    "max_cost_per_day_usd" => self.max_cost_per_day_usd = budget,
                    "max_cost_per_month_usd" => self.max_cost_per_month_usd = budget,
                    "cold_save_max_usd" => self.cold_save_max_usd = budget,
                    _ => unreachable!("a budget key without a field: {}", key.name),
                }
            }
            Kind::Text => {
                let text = value.as_str().ok_or_else(|| format!("must be text in quotes, not {}", shown(value)))?;
                let text = Some(text.to_string());
                if key.name == "model" { self.model = text } else { self.effort = text }
            }
            Kind::Texts => {
                let list = value.as_array().ok_or("must be a list of names in quotes, such as [\"app\"]")?;
                let names: Option<Vec<String>> = list.iter().map(|v| v.as_str().map(str::to_string)).collect();
                self.disabled_projects = names.ok_or("must be a list of names in quotes, such as [\"app\"]")?;
            }
            Kind::Review => {
                self.review = match value.as_str() {
                    Some("rules") => Review::Rules,
                    Some("off") => Review::Off,
                    _ => return Err(format!("must be \"rules\" or \"off\", not {}", shown(value))),
                }
            }
            Kind::Names => {
                let table = value.as_table().ok_or("must be a table of \"identity\" = \"folder\"")?;
                for (identity, folder) in table {
                    let folder =
                        folder.as_str().ok_or(format!("entry {identity:?} must be a folder name in quotes"))?;
                    self.names.insert(identity.clone(), folder.to_string());
                }
            }
            Kind::Prices => self.prices = prices(value)?,
        }
        Ok(())
    }
}

/// The file as a TOML table; a whole number past 64 bits, which would fail the
/// whole document, is read as text so its key alone is named with its range.
fn parse_table(text: &str) -> Result<toml::Table, toml::de::Error> {
    let mut text = std::borrow::Cow::Borrowed(text);
    for _ in 0..16 {
        match text.parse::<toml::Table>() {
            Err(e) => {
                let digits = e.span().and_then(|span| Some((span.clone(), text.get(span)?)));
                match digits {
                    Some((span, number))
                        if !number.is_empty() && number.bytes().all(|b| b.is_ascii_digit() || b == b'_') =>
                    {
                        text = std::borrow::Cow::Owned(format!(
                            "{}\"{number}\"{}",
                            &text[..span.start],
                            &text[span.end..]
                        ));
                    }
                    _ => return Err(e),
                }
            }
            ok => return ok,
        }
    }
    text.parse::<toml::Table>()
}

/// An unknown key, with the nearest known one. A near-miss of a key that
/// guards money or review stops saves: `max_cost_per_sav_usd = 0.01` must
/// not quietly leave the budget unset.
fn unknown_key(file: &str, name: &str) -> Problem {
    let nearest = KEYS
        .iter()
        .map(|k| (strsim::damerau_levenshtein(name, k.name), k))
        .min_by_key(|(distance, _)| *distance)
        .filter(|(distance, k)| *distance <= 3.max(k.name.len() / 4));
    let Some((_, key)) = nearest else {
        return Problem { text: format!("{file}: unknown key {name:?}; ignored"), closed: false };
    };
    let then = if key.closed { "saves stop until it is fixed" } else { "ignored" };
    Problem { text: format!("{file}: unknown key {name:?} (did you mean {:?}?); {then}", key.name), closed: key.closed }
}

/// A value as the file wrote it, cut short, for a message.
fn shown(value: &toml::Value) -> String {
    let text = match value {
        toml::Value::String(s) => format!("{s:?}"),
        toml::Value::Integer(n) => n.to_string(),
        toml::Value::Float(f) if f.is_nan() => "nan".into(),
        toml::Value::Float(f) if f.is_infinite() => if *f > 0.0 { "inf" } else { "-inf" }.into(),
        toml::Value::Float(f) => f.to_string(),
        toml::Value::Boolean(b) => b.to_string(),
        toml::Value::Datetime(d) => format!("the date {d:?}"),
        toml::Value::Array(_) => "a list".into(),
        toml::Value::Table(_) => "a table".into(),
    };
    crate::memory::text::visible(&crate::memory::text::shorten(&text, 40))
}

fn whole(value: &toml::Value, min: u64, max: u64) -> Result<u64, String> {
    match value.as_integer() {
        Some(n) if n >= min as i64 && n <= max as i64 => Ok(n as u64),
        _ => Err(format!("must be a whole number from {min} to {max}, not {}", shown(value))),
    }
}

fn number(value: &toml::Value, min: f64, max: f64) -> Result<f64, String> {
    let n = value.as_float().or_else(|| value.as_integer().map(|i| i as f64));
    match n {
        Some(n) if n.is_finite() && n >= min && n <= max => Ok(n),
        _ => Err(format!("must be a number from {min} to {max}, not {}", shown(value))),
    }
}

fn budget(value: &toml::Value) -> Result<Budget, String> {
    if value.as_str() == Some("none") {
        return Ok(Budget::Off);
    }
    number(value, 0.0, MAX_BUDGET_USD)
        .map(Budget::Usd)
        .map_err(|_| format!("must be dollars from 0 to {MAX_BUDGET_USD} (or \"none\"), not {}", shown(value)))
}

fn prices(value: &toml::Value) -> Result<Vec<(String, Price)>, String> {
    let table = value.as_table().ok_or("must be tables such as [prices.\"claude-opus-4-5\"]")?;
    let mut out = Vec::new();
    for (prefix, entry) in table {
        let entry = entry.as_table().ok_or(format!("entry {prefix:?} must be a table of {}", PRICE_KEYS.join(", ")))?;
        if let Some(extra) = entry.keys().find(|k| !PRICE_KEYS.contains(&k.as_str())) {
            return Err(format!("entry {prefix:?} has an unknown key {extra:?} (it takes {})", PRICE_KEYS.join(", ")));
        }
        let mut per_million = [0.0; 5];
        for (slot, key) in per_million.iter_mut().zip(PRICE_KEYS) {
            let value = entry
                .get(key)
                .ok_or(format!("entry {prefix:?} lacks {key} (it needs all of {})", PRICE_KEYS.join(", ")))?;
            *slot = number(value, 0.0, 10_000.0).map_err(|why| format!("entry {prefix:?}: {key} {why}"))?;
        }
        let [input, output, cache_read, cache_write_5m, cache_write_1h] = per_million;
        out.push((prefix.clone(), Price::flat(input, output, cache_read, cache_write_5m, cache_write_1h)));
    }
    Ok(out)
}
