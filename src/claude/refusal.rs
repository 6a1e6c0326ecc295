//! A fork the API refused, read from `claude -p`'s `api_error_status` and
//! `result` (docs/design.md §4, Refusals). A refused request costs nothing:
//! what matters is not to ask again before it can succeed.

#[derive(Debug, Clone, PartialEq)]
pub enum ApiRefusal {
    /// A used-up allowance (a plan's window, usage credits, a prepaid
    /// balance): no fork here until `reset`, or without one, one try an hour.
    Allowance { text: String, reset: Option<i64> },
    /// The plan cannot use this model without usage credits (a `[1m]`
    /// model on Pro): only sessions on that model wait.
    Model { text: String },
    /// A short, temporary rate limit or overload: the next save tries again.
    Brief { text: String },
}

/// Reads a failed fork's status and text; `None` for any other failure.
/// `local_offset` (seconds east of UTC) places a reset printed in local time.
pub fn classify(api_error_status: Option<u16>, result: &str, now: i64, local_offset: i64) -> Option<ApiRefusal> {
    let text = result.trim().chars().take(300).collect::<String>();
    let lower = text.to_lowercase();
    // "Usage credits required for 1M context", "… are required for long
    // context requests": the plan refuses the model, not the account.
    let model = ["long context", "1m context"];
    if lower.contains("usage credits") && model.iter().any(|m| lower.contains(m)) {
        return Some(ApiRefusal::Model { text });
    }
    // What 2.1.328 and 2.1.332 print for a used-up allowance (tests/e2e/billing.rs).
    let allowance = [
        "you've hit your",
        "you're out of usage credits",
        "out of extra usage",
        "usage credits required",
        "usage credits are required",
        "credit balance is too low",
        "usage allocation has been disabled",
        "doesn't include usage credits",
        "service is disabled for your org",
        "spend limit",
    ];
    if allowance.iter().any(|a| lower.contains(a)) {
        return Some(ApiRefusal::Allowance { reset: reset_time(&text, now, local_offset), text });
    }
    // "Server is temporarily limiting requests (not your usage limit)":
    // overloaded (529) and server errors are failures, not the account's.
    let brief =
        api_error_status == Some(429) || lower.contains("temporarily limiting") || lower.contains("rate_limit_error");
    brief.then_some(ApiRefusal::Brief { text })
}

/// The next moment after `now` of the reset the CLI names (`resets 5:05pm (UTC)`,
/// `resets Dec 3, 5pm (Europe/Istanbul)`, `resets Dec 3 at 5:05pm`); a zone
/// other than UTC is the machine's own, since the CLI prints local time.
pub fn reset_time(text: &str, now: i64, local_offset: i64) -> Option<i64> {
    let lower = text.to_lowercase();
    let rest = &lower[lower.find("resets")? + "resets".len()..];
    let rest = rest.trim_start().trim_start_matches("at ").trim_start();
    let offset = if rest.contains("(utc)") { 0 } else { local_offset };
    let (date, clock) = split_date(rest);
    let minutes = clock_minutes(clock)?;
    let Some((month, day)) = date else {
        let at = (now + offset).div_euclid(86_400) * 86_400 - offset + minutes * 60;
        return Some(if at <= now { at + 86_400 } else { at });
    };
    // That date this year, or next year once it has passed.
    let local_now = time::OffsetDateTime::from_unix_timestamp(now + offset).ok()?;
    let mut at = None;
    for year in [local_now.year(), local_now.year() + 1] {
        let date = time::Date::from_calendar_date(year, time::Month::try_from(month).ok()?, day).ok()?;
        at = Some(date.midnight().assume_utc().unix_timestamp() - offset + minutes * 60);
        if at > Some(now - 3600) {
            break;
        }
    }
    at
}

const MONTHS: [&str; 12] = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"];

/// `dec 3, 5pm (utc)` → (Some((12, 3)), `5pm (utc)`).
fn split_date(text: &str) -> (Option<(u8, u8)>, &str) {
    let Some(month) = MONTHS.iter().position(|m| text.starts_with(m)) else {
        return (None, text);
    };
    let after = text.split_once(' ').map_or("", |(_, rest)| rest);
    let digits: String = after.chars().take_while(char::is_ascii_digit).collect();
    let Ok(day) = digits.parse::<u8>() else {
        return (None, text);
    };
    let rest = after[digits.len()..].trim_start_matches(',').trim_start();
    let rest = rest.strip_prefix("at ").unwrap_or(rest);
    (Some((month as u8 + 1, day)), rest)
}

/// `5:05pm`, `5pm`, `17:05` → minutes after midnight.
fn clock_minutes(text: &str) -> Option<i64> {
    let word: String = text.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == ':').collect();
    let (digits, pm) = match (word.strip_suffix("pm"), word.strip_suffix("am")) {
        (Some(d), _) => (d, Some(true)),
        (_, Some(d)) => (d, Some(false)),
        _ => (word.as_str(), None),
    };
    let (hour, minute) = digits.split_once(':').unwrap_or((digits, "0"));
    let (mut hour, minute): (i64, i64) = (hour.parse().ok()?, minute.parse().ok()?);
    if !(0..60).contains(&minute) {
        return None;
    }
    match pm {
        Some(pm) if (1..=12).contains(&hour) => hour = hour % 12 + if pm { 12 } else { 0 },
        None if (0..24).contains(&hour) && digits.contains(':') => {}
        _ => return None,
    }
    Some(hour * 60 + minute)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 2026-12-01 14:00:00 UTC.
    const NOW: i64 = 1_796_133_600;

    #[test]
    fn what_the_cli_prints_for_each_refusal() {
        // The `result` strings measured on 2.1.328 and 2.1.332.
        let cases: &[(Option<u16>, &str, &str)] = &[
            (Some(429), "You've hit your 5-hour limit · resets 5:42pm (UTC)", "allowance"),
            (Some(429), "You've hit your weekly limit · resets Dec 4, 4:42pm (UTC)", "allowance"),
            (Some(429), "You're out of usage credits · resets 5:42pm (UTC)", "allowance"),
            (Some(429), "You're out of usage credits", "allowance"),
            // The shapes of used-up credits, should the paused Agent SDK
            // credit take effect (2.1.328 and 2.1.332, the stand-in's
            // overage headers and bodies; docs/design.md §4).
            (Some(429), "You're out of usage credits · resets 3:31am (UTC)", "allowance"),
            (Some(429), "You've hit your weekly limit · resets Dec 10, 1:32am (UTC)", "allowance"),
            (
                Some(429),
                "API Error: Server is temporarily limiting requests (not your usage limit) · Usage credits are required",
                "allowance",
            ),
            (Some(402), "API Error: 402 Usage credits are required", "allowance"),
            (Some(400), "Credit balance is too low", "allowance"),
            (Some(429), "You've hit your limit · resets 5:42pm (UTC)", "allowance"),
            (
                Some(429),
                "You've hit your individual spend limit · ask your admin to raise it at https://claude.ai/admin-settings/usage",
                "allowance",
            ),
            (
                Some(429),
                "Your usage allocation has been disabled by your admin · ask your admin for a higher limit",
                "allowance",
            ),
            (Some(429), "Your seat type doesn't include usage credits", "allowance"),
            (Some(429), "This service is disabled for your org", "allowance"),
            (
                Some(429),
                "API Error: Server is temporarily limiting requests (not your usage limit) · Usage credits required",
                "allowance",
            ),
            (
                Some(429),
                "API Error: Usage credits required for 1M context · turn on usage credits at https://claude.ai/settings/usage?from=cc_cli_limit_message (they take effect in a new session), or use --model to switch to standard context",
                "model",
            ),
            (Some(400), "API Error: 400 Usage credits are required for long context requests.", "model"),
            (
                Some(429),
                "API Error: Server is temporarily limiting requests (not your usage limit) · This request would exceed your account's rate limit. Please try again later.",
                "brief",
            ),
            (Some(529), "API Error: Repeated 529 Overloaded errors", "none"),
            (None, "API Error: 500 internal", "none"),
            (Some(400), "Prompt is too long", "none"),
        ];
        for (status, text, want) in cases {
            let got = match classify(*status, text, NOW, 0) {
                Some(ApiRefusal::Allowance { .. }) => "allowance",
                Some(ApiRefusal::Model { .. }) => "model",
                Some(ApiRefusal::Brief { .. }) => "brief",
                None => "none",
            };
            assert_eq!(got, *want, "{text}");
        }
    }

    #[test]
    fn resets_are_read_in_the_zone_printed() {
        let at = |text: &str, offset: i64| reset_time(text, NOW, offset);
        // 17:05 UTC today.
        assert_eq!(at("You've hit your 5-hour limit · resets 5:05pm (UTC)", 0), Some(NOW + 3 * 3600 + 300));
        // 1pm UTC has passed today: tomorrow.
        assert_eq!(at("resets 1pm (UTC)", 0), Some(NOW - 3600 + 86_400));
        // The machine's zone (UTC+3): 5pm local is 14:00 UTC, now: tomorrow.
        assert_eq!(at("resets 5pm (Europe/Istanbul)", 3 * 3600), Some(NOW + 86_400));
        assert_eq!(at("resets 6pm (Europe/Istanbul)", 3 * 3600), Some(NOW + 3600));
        // A date.
        assert_eq!(at("resets Dec 3, 5pm (UTC)", 0), Some(NOW + 2 * 86_400 + 3 * 3600));
        assert_eq!(at("resets Jan 2 at 9am (UTC)", 0).map(|t| t > NOW + 30 * 86_400), Some(true));
        assert_eq!(at("resets 17:30 (UTC)", 0), Some(NOW + 3 * 3600 + 1800));
        for none in ["You're out of usage credits", "resets soon", "resets 13pm", "resets 5:75pm"] {
            assert_eq!(at(none, 0), None, "{none}");
        }
    }
}
