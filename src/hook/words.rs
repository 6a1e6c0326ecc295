//! The words after `hook`, read by hand: a hook runs on every tool call,
//! and a newer hooks.json, an unknown event or a bad flag must be logged
//! and exit 0, never fail as a parser would (exit 2 blocks the prompt).

use std::ffi::OsString;

use anyhow::{Result, bail};

pub use crate::claude::events::HookEvent;

/// The words after `hook`: the event, and `--part N` for session-start.
pub fn hook_args(words: &[impl AsRef<str>]) -> Result<(HookEvent, usize)> {
    let words: Vec<&str> = words.iter().map(AsRef::as_ref).collect();
    let Some(event) = words.first().and_then(|e| HookEvent::from_word(e)) else {
        bail!("hook needs an event: {}", HookEvent::words());
    };
    let part = match words.get(1..).unwrap_or_default() {
        [] => 1,
        ["--part", n] => match n.parse::<usize>() {
            Ok(n) if n >= 1 => n,
            _ => bail!("--part takes a number from 1 up"),
        },
        other => bail!("unknown hook arguments {other:?}"),
    };
    Ok((event, part))
}

/// The words after `hook`, when this is a hook run and not a request for help.
pub fn hook_words(args: &[OsString]) -> Option<Vec<String>> {
    let (first, rest) = args.split_first()?;
    if first != "hook" || rest.iter().any(|a| a == "--help" || a == "-h") {
        return None;
    }
    Some(rest.iter().map(|a| a.to_string_lossy().into_owned()).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hook_words_are_read_by_hand() {
        assert_eq!(hook_args(&["stop"]).unwrap(), (HookEvent::Stop, 1));
        assert_eq!(hook_args(&["session-start", "--part", "3"]).unwrap(), (HookEvent::SessionStart, 3));
        for bad in [&["post-compact"][..], &[], &["stop", "--part"], &["session-start", "--part", "0"], &["stop", "-x"]]
        {
            assert!(hook_args(bad).is_err(), "{bad:?}");
        }
        let args = |words: &[&str]| words.iter().map(OsString::from).collect::<Vec<_>>();
        assert_eq!(hook_words(&args(&["hook", "stop"])), Some(vec!["stop".to_string()]));
        assert_eq!(hook_words(&args(&["hook", "stop", "--help"])), None);
        assert_eq!(hook_words(&args(&["status"])), None);
    }
}
