//! Doctor's check of the project's guards: one that binds nothing, one
//! that waits for review, one the user keeps letting through, one that
//! never matches.

use super::Report;
use crate::store::guards::{self, Standing};

/// A guard the user let through more often than this may be wrong.
const OVERRIDES_WRONG: u64 = 3;
/// A guard that matched nothing for this long may be stale.
const STALE_DAYS: i64 = 30;

/// The project's guards that do nothing, or that the user keeps overriding.
pub(super) fn check_guards(report: &mut Report) {
    let Ok(crate::cmd::Here { roots, config, folder, .. }) = crate::cmd::here() else { return };
    if let Err(unreadable) = guards::load(&folder) {
        report.problem(&unreadable.0, guards::UNREADABLE_FIX);
        return;
    }
    let review = config.review_rules();
    let standings = guards::standings(&folder, || guards::rules_loaded_now(&folder, review), review);
    let seen = crate::store::guard_counts::seen(&roots, &folder.key());
    let now = crate::env::now_unix();
    for (guard, standing) in standings {
        let named = format!(
            "guard {} ({}) of the rule {:?}",
            guard.id,
            crate::memory::guard::in_words(guard.spec.tool, &guard.spec.pattern, guard.decision),
            guard.rule.trim_start_matches("- ")
        );
        let remove = format!("remove it: memory-save guards --remove {}", guard.id);
        let seen = seen.get(&guard.id).cloned().unwrap_or_default();
        let quiet_since = seen.last_fired.unwrap_or(guard.since).max(guard.since);
        match standing {
            Standing::Refused(why) => report.warn(&format!("{named} is refused ({why}) and binds nothing"), &remove),
            Standing::WaitsForReview => report.warn(
                &format!("{named} came from elsewhere and waits for review"),
                &format!("if it is yours: memory-save guards --approve {}", guard.id),
            ),
            _ if seen.overridden > OVERRIDES_WRONG => report.warn(
                &format!("{named} was let through {} times after asking: possibly wrong", seen.overridden),
                &format!("{remove}; or sharpen its rule (memory-save edit)"),
            ),
            _ if guard.since > 0 && now - quiet_since > STALE_DAYS * 86_400 => {
                report.warn(&format!("{named} has not matched a call in {STALE_DAYS} days: possibly stale"), &remove)
            }
            _ => {}
        }
    }
}
