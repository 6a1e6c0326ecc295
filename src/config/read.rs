//! Reading memory-save.toml key by key: an unknown key is named with the
//! nearest known one and ignored, a bad ordinary value falls back alone,
//! and a bad budget or review value stops saves (`closed`).

use super::*;

/// Every key: its name, whether a bad value stops saves, and how it is read
/// into its field (`Err`: what it takes instead).
struct Key {
    name: &'static str,
    closed: bool,
    set: fn(&mut Config, &toml::Value) -> Result<(), String>,
}

const KEYS: &[Key] = &[
    Key {
        name: "save_every_turns",
        closed: false,
        set: |c, v| whole(v, 0, 1000).map(|n| c.save_every_turns = Some(n)),
    },
    Key {
        name: "idle_flush_seconds",
        closed: false,
        set: |c, v| whole(v, 1, 86_400).map(|n| c.idle_flush_seconds = Some(n)),
    },
    Key {
        name: "unattended_min_tools",
        closed: false,
        set: |c, v| whole(v, 0, 1_000_000).map(|n| c.unattended_min_tools = Some(n)),
    },
    Key {
        name: "fork_timeout_seconds",
        closed: false,
        set: |c, v| whole(v, 1, 3600).map(|n| c.fork_timeout_seconds = Some(n)),
    },
    Key { name: "model", closed: false, set: |c, v| text(v).map(|t| c.model = Some(t)) },
    Key { name: "effort", closed: false, set: |c, v| text(v).map(|t| c.effort = Some(t)) },
    Key { name: "disabled_projects", closed: false, set: |c, v| texts(v).map(|t| c.disabled_projects = t) },
    Key { name: "review", closed: true, set: |c, v| review(v).map(|r| c.review = r) },
    Key { name: "max_cost_per_save_usd", closed: true, set: |c, v| budget(v).map(|b| c.max_cost_per_save_usd = b) },
    Key { name: "max_cost_per_month_usd", closed: true, set: |c, v| budget(v).map(|b| c.max_cost_per_month_usd = b) },
    Key {
        name: "wait_at_plan_percent",
        closed: true,
        set: |c, v| number(v, 1.0, 100.0).map(|n| c.wait_at_plan_percent = Some(n)),
    },
    Key { name: "names", closed: false, set: names },
    Key { name: "prices", closed: true, set: |c, v| prices(v).map(|p| c.prices = p) },
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
            let problem = match KEYS.iter().find(|k| k.name == name) {
                Some(key) => match (key.set)(&mut config, value) {
                    Ok(()) => continue,
                    Err(why) if key.closed => {
                        Problem { text: format!("{file}: {name} {why}; saves stop until it is fixed"), closed: true }
                    }
                    Err(why) => Problem { text: format!("{file}: {name} {why}; using its default"), closed: false },
                },
                None => unknown_key(file, name),
            };
            config.problems.push(problem);
        }
        config
    }
}

fn text(value: &toml::Value) -> Result<String, String> {
    value.as_str().map(str::to_string).ok_or_else(|| format!("must be text in quotes, not {}", shown(value)))
}

fn texts(value: &toml::Value) -> Result<Vec<String>, String> {
    let names = value.as_array().and_then(|list| list.iter().map(|v| v.as_str().map(str::to_string)).collect());
    names.ok_or_else(|| "must be a list of names in quotes, such as [\"app\"]".to_string())
}

fn review(value: &toml::Value) -> Result<Review, String> {
    match value.as_str() {
        Some("rules") => Ok(Review::Rules),
        Some("off") => Ok(Review::Off),
        _ => Err(format!("must be \"rules\" or \"off\", not {}", shown(value))),
    }
}

/// A bad entry is left out and named; the others still name their folders,
/// since dropping them all would move those repositories' memories.
fn names(config: &mut Config, value: &toml::Value) -> Result<(), String> {
    let table = value.as_table().ok_or("must be a table of \"identity\" = \"folder\"")?;
    let mut bad = Vec::new();
    for (identity, folder) in table {
        match folder.as_str() {
            Some(folder) => _ = config.names.insert(identity.clone(), folder.to_string()),
            None => bad.push(format!("{identity:?}")),
        }
    }
    match bad.as_slice() {
        [] => Ok(()),
        [one] => Err(format!("entry {one} must be a folder name in quotes")),
        many => Err(format!("entries {} must be folder names in quotes", many.join(", "))),
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
