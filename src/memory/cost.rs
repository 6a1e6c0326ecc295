//! What a save costs, worked out before it runs: the price table (the one
//! place prices live), a save's estimate, and the calendar month. Pure: the
//! caller brings the transcript's figures, the clock and the settings.

/// Prices in dollars per million tokens.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Price {
    pub base: Rates,
    /// Over `LONG_CONTEXT_TOKENS` of input, where the model has them.
    pub long: Option<Rates>,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rates {
    pub input: f64,
    pub output: f64,
    pub cache_read: f64,
    pub cache_write_5m: f64,
    pub cache_write_1h: f64,
}

impl Rates {
    /// The public ratios: cache reads 0.1×, 5-minute writes 1.25×, 1-hour
    /// writes 2× the input price.
    const fn of(input: f64, output: f64) -> Rates {
        Rates { input, output, cache_read: input * 0.1, cache_write_5m: input * 1.25, cache_write_1h: input * 2.0 }
    }
}

impl Price {
    /// One set of rates, the same at every length.
    pub const fn flat(input: f64, output: f64, cache_read: f64, cache_write_5m: f64, cache_write_1h: f64) -> Price {
        Price { base: Rates { input, output, cache_read, cache_write_5m, cache_write_1h }, long: None }
    }

    const fn of(input: f64, output: f64) -> Price {
        Price { base: Rates::of(input, output), long: None }
    }

    const fn with_long(self, input: f64, output: f64) -> Price {
        Price { long: Some(Rates::of(input, output)), ..self }
    }

    /// The rates for a request of `input_tokens` in all.
    pub fn rates(&self, input_tokens: u64) -> Rates {
        match self.long {
            Some(long) if input_tokens > LONG_CONTEXT_TOKENS => long,
            _ => self.base,
        }
    }
}

/// Over this many input tokens, the long-context rates apply.
pub const LONG_CONTEXT_TOKENS: u64 = 200_000;

/// Keyed by model-id prefix; the longest match wins, so `claude-opus-4-1`
/// and `claude-opus-4-5` differ. From Anthropic's pricing page
/// (claude.com/pricing#api), read 2026-12-01; the 5.x families at their
/// class's price (docs/cost.md).
pub const TABLE: &[(&str, Price)] = &[
    // Opus-class
    ("claude-opus-5", Price::of(5.0, 25.0)),
    ("claude-opus-4-6", Price::of(5.0, 25.0)),
    ("claude-opus-4-5", Price::of(5.0, 25.0)),
    ("claude-opus-4-1", Price::of(15.0, 75.0)),
    ("claude-opus-4-0", Price::of(15.0, 75.0)),
    ("claude-opus-4-2", Price::of(15.0, 75.0)),
    ("claude-3-opus", Price::of(15.0, 75.0)),
    // Sonnet-class: over 200K tokens of input, $6/$22.50.
    ("claude-sonnet-5", Price::of(3.0, 15.0).with_long(6.0, 22.5)),
    ("claude-sonnet-4-6", Price::of(3.0, 15.0).with_long(6.0, 22.5)),
    ("claude-sonnet-4-5", Price::of(3.0, 15.0).with_long(6.0, 22.5)),
    ("claude-sonnet-4-0", Price::of(3.0, 15.0).with_long(6.0, 22.5)),
    ("claude-sonnet-4-2", Price::of(3.0, 15.0).with_long(6.0, 22.5)),
    ("claude-3-7-sonnet", Price::of(3.0, 15.0)),
    // Haiku-class
    ("claude-haiku-5", Price::of(1.0, 5.0)),
    ("claude-haiku-4-5", Price::of(1.0, 5.0)),
    ("claude-3-5-haiku", Price::of(0.8, 4.0)),
    ("claude-3-haiku", Price::of(0.25, 1.25)),
];

/// The table with the user's entries, which win over the built-in ones.
pub struct PriceList<'a> {
    pub overrides: &'a [(String, Price)],
}

/// A model's price, and whether it was known.
#[derive(Debug, Clone, PartialEq)]
pub struct Priced {
    pub price: Price,
    /// The prefix that matched; `None`: unknown, priced at the dearest entry.
    pub prefix: Option<String>,
}

impl PriceList<'_> {
    /// The longest matching prefix of the user's entries, then the table's;
    /// an unknown id (a Bedrock ARN, a future name) at the dearest entry, so
    /// a budget is never spent faster than it says.
    pub fn price(&self, model: &str) -> Priced {
        let id = model.strip_suffix("[1m]").unwrap_or(model);
        let user = self.overrides.iter().map(|(p, price)| (p.as_str(), *price));
        let table = TABLE.iter().map(|(p, price)| (*p, *price));
        let matching = |(prefix, _): &(&str, Price)| !prefix.is_empty() && id.starts_with(prefix);
        let best = user.clone().filter(matching).max_by_key(|(p, _)| p.len());
        if let Some((prefix, price)) = best.or_else(|| table.clone().filter(matching).max_by_key(|(p, _)| p.len())) {
            return Priced { price, prefix: Some(prefix.to_string()) };
        }
        let dearest = user.chain(table).max_by(|a, b| a.1.base.output.total_cmp(&b.1.base.output)).map(|(_, p)| p);
        Priced { price: dearest.unwrap_or(TABLE[0].1), prefix: None }
    }
}

/// Output tokens a save's reply takes, typically: a few ops.
pub const TYPICAL_REPLY_TOKENS: u64 = 400;
pub const CACHE_5M_SECONDS: i64 = 5 * 60;
pub const CACHE_1H_SECONDS: i64 = 60 * 60;

/// What a save's estimate starts from: the session's last request.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct SaveShape {
    /// All input of the parent's last request: the prefix the fork resends.
    pub prefix_tokens: u64,
    /// The parent's last reply: part of the fork's request, never cached.
    pub parent_output_tokens: u64,
    /// The session writes one-hour cache entries.
    pub one_hour: bool,
    /// Seconds since the parent's last request or a save's cache read; `None`: cold.
    pub idle_seconds: Option<i64>,
    /// The fork's message, in bytes.
    pub message_bytes: usize,
}

impl SaveShape {
    pub fn warm(&self) -> bool {
        let lifetime = if self.one_hour { CACHE_1H_SECONDS } else { CACHE_5M_SECONDS };
        self.idle_seconds.is_some_and(|idle| (0..lifetime).contains(&idle))
    }
}

/// A save's price before it runs.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Estimate {
    pub usd: f64,
    pub warm: bool,
}

/// A message's tokens, on the high side: a byte a third of a token.
pub fn message_tokens(bytes: usize) -> u64 {
    bytes as u64 / 3 + 1
}

/// A warm cache serves the prefix at the read rate and writes the parent's
/// last reply and our message; a cold one writes all of it again.
pub fn estimate(shape: &SaveShape, price: &Price) -> Estimate {
    let tail = shape.parent_output_tokens + message_tokens(shape.message_bytes);
    let warm = shape.warm();
    let (read, write) = if warm { (shape.prefix_tokens, tail) } else { (0, shape.prefix_tokens + tail) };
    let usd = priced((0, read, write, TYPICAL_REPLY_TOKENS), shape.one_hour, price);
    Estimate { usd, warm }
}

/// What Claude Code adds to a fresh run's request besides our message:
/// about 400 tokens measured (tests/e2e/spend.rs s21), rounded up.
pub const FRESH_OVERHEAD_TOKENS: u64 = 600;

/// What a fresh save costs: it resumes nothing, so only its own request is
/// written to the cache (docs/cost.md, "A save after the cache expired").
pub fn estimate_fresh(message_bytes: usize, price: &Price) -> Estimate {
    let write = FRESH_OVERHEAD_TOKENS + message_tokens(message_bytes);
    let usd = priced((0, 0, write, TYPICAL_REPLY_TOKENS), false, price);
    Estimate { usd, warm: false }
}

/// What tokens (fresh, cache read, cache written, output) cost at `price`:
/// an estimate, or the figure a budget counts when the CLI's own is 0 (a
/// model it does not know).
pub fn priced(usage: (u64, u64, u64, u64), one_hour: bool, price: &Price) -> f64 {
    let (fresh, read, write, output) = usage;
    let rates = price.rates(fresh + read + write);
    let write_rate = if one_hour { rates.cache_write_1h } else { rates.cache_write_5m };
    (fresh as f64 * rates.input
        + read as f64 * rates.cache_read
        + write as f64 * write_rate
        + output as f64 * rates.output)
        / 1_000_000.0
}

/// The first day of the month after the one holding `date`: a calendar
/// month, as API usage bills.
pub fn next_month((year, month, _): (i32, u8, u8)) -> (i32, u8, u8) {
    if month == 12 { (year + 1, 1, 1) } else { (year, month + 1, 1) }
}

/// Dollars with at least two significant digits: `$0.0010`, `$0.41`, `$12.30`.
pub fn usd(amount: f64) -> String {
    if !amount.is_finite() {
        return "$?".into();
    }
    let magnitude = amount.abs();
    if magnitude >= 0.1 || magnitude == 0.0 {
        return format!("${amount:.2}");
    }
    // Enough decimals for two significant digits, at most eight.
    let decimals = ((-magnitude.log10()).ceil() as usize + 1).min(8);
    format!("${amount:.decimals$}")
}

/// A dollar figure as JSON keeps it: six decimals, no float noise.
pub fn round_usd(amount: f64) -> f64 {
    (amount * 1_000_000.0).round() / 1_000_000.0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table() -> PriceList<'static> {
        PriceList { overrides: &[] }
    }

    #[test]
    fn the_longest_prefix_prices_a_model() {
        let cases: &[(&str, Option<&str>, f64, f64)] = &[
            ("claude-opus-4-1-20250805", Some("claude-opus-4-1"), 15.0, 75.0),
            ("claude-opus-4-5-20251101", Some("claude-opus-4-5"), 5.0, 25.0),
            ("claude-opus-5-5", Some("claude-opus-5"), 5.0, 25.0),
            ("claude-sonnet-4-5[1m]", Some("claude-sonnet-4-5"), 3.0, 15.0),
            ("claude-sonnet-5-5", Some("claude-sonnet-5"), 3.0, 15.0),
            ("claude-haiku-4-5-20251001", Some("claude-haiku-4-5"), 1.0, 5.0),
            // Unknown: the dearest entry.
            ("arn:aws:bedrock:us-east-1:1:inference-profile/x", None, 15.0, 75.0),
            ("claude-opus-4-5@20251101", Some("claude-opus-4-5"), 5.0, 25.0),
            ("gpt-9", None, 15.0, 75.0),
            ("", None, 15.0, 75.0),
        ];
        for (model, prefix, input, output) in cases {
            let priced = table().price(model);
            assert_eq!(priced.prefix.as_deref(), *prefix, "{model}");
            assert_eq!((priced.price.base.input, priced.price.base.output), (*input, *output), "{model}");
        }
        let opus = table().price("claude-opus-4-5").price;
        assert_eq!((opus.base.cache_read, opus.base.cache_write_5m, opus.base.cache_write_1h), (0.5, 6.25, 10.0));
    }

    #[test]
    fn the_users_entries_win_and_count_as_known() {
        let mine = [("claude-opus-5".to_string(), Price::flat(1.0, 2.0, 0.1, 1.25, 2.0))];
        let list = PriceList { overrides: &mine };
        assert_eq!(list.price("claude-opus-5-5").price.base.output, 2.0);
        assert_eq!(list.price("claude-opus-4-1").price.base.output, 75.0, "others keep the table's");
        let dear = [("my-proxy-model".to_string(), Price::flat(100.0, 500.0, 10.0, 125.0, 200.0))];
        let list = PriceList { overrides: &dear };
        assert_eq!(list.price("unknown").price.base.output, 500.0, "the dearest counts the user's too");
    }

    /// The arithmetic: a 100k-token context on an Opus-class model.
    #[test]
    fn a_warm_save_costs_cache_reads_and_a_cold_one_writes_it_all_again() {
        let price = table().price("claude-opus-4-5").price;
        let shape = SaveShape {
            prefix_tokens: 100_000,
            parent_output_tokens: 1_000,
            one_hour: false,
            idle_seconds: Some(30),
            message_bytes: 9_000,
        };
        let warm = estimate(&shape, &price);
        assert!(warm.warm);
        // $0.05 of reads, $0.025 of writes, $0.01 of output.
        assert!((warm.usd - 0.085).abs() < 0.001, "{warm:?}");
        let cold = estimate(&SaveShape { idle_seconds: Some(3600), prefix_tokens: 150_000, ..shape }, &price);
        assert!(!cold.warm);
        // The "about $0.94" for 150k tokens re-written.
        assert!((cold.usd - 0.97).abs() < 0.01, "{cold:?}");
        let unknown = estimate(&SaveShape { idle_seconds: None, ..shape }, &price);
        assert!(!unknown.warm, "no timestamp: cold");
        let future = estimate(&SaveShape { idle_seconds: Some(-5), ..shape }, &price);
        assert!(!future.warm, "a timestamp in the future is not trusted");
    }

    /// A save that resumes nothing pays for its own request only: on a
    /// 150k-token session past its cache, a tenth of resuming it.
    #[test]
    fn a_fresh_save_costs_its_message_not_the_conversation() {
        let price = table().price("claude-opus-4-5").price;
        let fresh = estimate_fresh(30_000, &price);
        // 10,601 tokens written at $6.25/M and 400 out at $25/M.
        assert!((fresh.usd - 0.0763).abs() < 0.0001, "{fresh:?}");
        let cold = estimate(
            &SaveShape {
                prefix_tokens: 150_000,
                idle_seconds: Some(3600),
                message_bytes: 9_000,
                ..SaveShape::default()
            },
            &price,
        );
        assert!(fresh.usd * 10.0 < cold.usd, "{fresh:?} against {cold:?}");
    }

    #[test]
    fn one_hour_writes_keep_the_cache_for_an_hour_at_their_own_rate() {
        let price = table().price("claude-opus-4-5").price;
        let shape =
            SaveShape { prefix_tokens: 10_000, one_hour: true, idle_seconds: Some(1800), ..SaveShape::default() };
        let warm = estimate(&shape, &price);
        assert!(warm.warm);
        let five = SaveShape { one_hour: false, ..shape };
        assert!(!five.warm());
        assert!(estimate(&SaveShape { idle_seconds: Some(3700), ..shape }, &price).usd > warm.usd);
    }

    #[test]
    fn long_context_rates_apply_past_200k_tokens_of_input() {
        let price = table().price("claude-sonnet-4-5[1m]").price;
        assert_eq!(price.rates(150_000).input, 3.0);
        assert_eq!(price.rates(300_000).input, 6.0);
        assert_eq!(price.rates(300_000).output, 22.5);
        let usd = priced((0, 300_000, 0, 0), false, &price);
        assert!((usd - 0.18).abs() < 1e-9, "{usd}");
    }

    #[test]
    fn a_month_ends_on_the_first_of_the_next() {
        assert_eq!(next_month((2026, 12, 14)), (2027, 1, 1));
        assert_eq!(next_month((2026, 1, 1)), (2026, 2, 1));
    }

    #[test]
    fn money_shows_two_significant_digits() {
        let cases =
            [(0.001, "$0.0010"), (0.41, "$0.41"), (12.3, "$12.30"), (0.0, "$0.00"), (0.05, "$0.050"), (0.1, "$0.10")];
        for (amount, want) in cases {
            assert_eq!(usd(amount), want, "{amount}");
        }
        assert_eq!(round_usd(0.010119999999999997), 0.01012);
    }
}
