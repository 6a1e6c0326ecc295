//! Writing a save's reply: applied to the files as they are now, under the
//! project's lock, with a history entry first, all or nothing.

use anyhow::Result;

use crate::memory::{apply, reply, report, template};
use crate::store::folder::{Folder, MEMORY_FILE};
use crate::store::history::{Change, Origin};

use super::repair;

/// Applies the reply to the files as they are now, not as the fork saw them:
/// ops name lines by content, so another writer's lines stay and ops that
/// no longer fit are reported as skipped. Returns the outcome, and whether
/// another writer changed MEMORY.md while the fork ran.
pub(super) fn write_reply(
    folder: &Folder,
    snapshot: Option<&str>,
    parsed: &reply::Reply,
    options: apply::Options,
    origin: &Origin,
) -> Result<(apply::Outcome, bool)> {
    let _lock = folder.lock()?;
    let current = current_under_lock(folder)?;
    let changed_meanwhile = snapshot.is_some_and(|s| s != current)
        || (snapshot.is_none() && current != template::skeleton(&folder.project));
    let guarded = crate::store::guards::read(folder).into_iter().map(|g| g.rule).collect();
    let options = apply::Options { guarded, ..options };
    let outcome = apply::apply_with(&current, parsed, &folder.project, &folder.topic_files(), options);
    let summary = report::Summary::of(&outcome, changed_meanwhile);
    commit(folder, &current, &outcome, &summary.report_line().unwrap_or_else(|| summary.status()), origin)?;
    crate::store::review::hold(folder, &outcome.held, origin)?;
    Ok((outcome, changed_meanwhile))
}

/// The guards after a write: those of rules it took away go, the reply's
/// stand; open sessions get them. A failure is logged: the write stands.
fn keep_guards(folder: &Folder, current: &str, outcome: &apply::Outcome) {
    if let Err(e) = crate::store::guards::after_write(folder, current, &outcome.memory, &outcome.guards) {
        crate::store::log::error(&format!("cannot keep the guards of {}: {e:#}", folder.dir.display()));
    }
    publish_guards(folder);
}

/// Gives the folder's open sessions the guards that bind now, with the
/// review gate as configured (on when the config cannot be read).
pub fn publish_guards(folder: &Folder) {
    let review = crate::config::roots().map_or(true, |roots| crate::config::of(&roots).review_rules());
    crate::store::guards::publish(folder, review);
}

/// MEMORY.md as it is now, repaired (the skeleton when there is none). Call
/// with the project lock held.
pub fn current_under_lock(folder: &Folder) -> Result<String> {
    // A worker killed mid-write leaves its temp file; every writer of these
    // files holds this lock, so such a temp file is no one's now.
    crate::store::fsutil::remove_stale_temps(&folder.dir, |name| name.ends_with(".md"));
    Ok(repair::read_repaired(folder)?.map_or_else(|| template::skeleton(&folder.project), |(text, _)| text))
}

/// Writes what applying a reply to `current` gave, history entry first. All
/// or nothing: topic files go first, so a MEMORY.md that cannot be written
/// (a full disk) must not leave their appends behind. The result is checked
/// against the template once more. Call with the project lock held.
pub fn commit(folder: &Folder, current: &str, outcome: &apply::Outcome, message: &str, origin: &Origin) -> Result<()> {
    let memory_changes = outcome.memory != current;
    if memory_changes && !template::is_in_template(&outcome.memory) {
        anyhow::bail!("the result is not in the four-section template; nothing was written (please report this)");
    }
    let rewrite = memory_changes.then_some(Change::Rewrite(MEMORY_FILE));
    let changed: Vec<Change> = outcome.topic_files().into_iter().map(Change::Append).chain(rewrite).collect();
    if changed.is_empty() {
        // A guard on a rule held for review waits beside it.
        keep_guards(folder, current, outcome);
        return Ok(());
    }
    let added = crate::store::history::added_lines(current, &outcome.memory);
    // The rules this machine writes are its own, not foreign; but a
    // look-alike of a rule still held as foreign stays foreign, so a reply
    // cannot launder one.
    let before = crate::memory::gate::instruction_lines(current);
    let foreign = crate::store::approvals::foreign(folder, current);
    let own: Vec<String> = crate::memory::gate::instruction_lines(&outcome.memory)
        .into_iter()
        .filter(|r| !before.contains(r))
        .filter(|r| !foreign.iter().any(|f| crate::memory::gate::same_when_folded(f, r)))
        .collect();
    // A clean file plus lines checked as a save's are stays clean.
    let was_clean = folder.is_checked(current);
    let recorded = crate::store::history::record(folder, message, &changed, origin, added)?;
    let written = folder
        .append_topics(&outcome.topics)
        .and_then(|()| if memory_changes { folder.write_memory(&outcome.memory) } else { Ok(()) });
    if let Err(e) = written {
        if let Err(undo) = recorded.roll_back(folder) {
            crate::store::log::error(&format!("cannot put back the files of a failed save: {undo:#}"));
        }
        return Err(e);
    }
    recorded.seal(folder)?;
    if let Err(e) = crate::store::approvals::add_own(folder, &own) {
        crate::store::log::error(&format!("cannot record this machine's rules: {e:#}"));
    }
    keep_guards(folder, current, outcome);
    if was_clean && memory_changes {
        folder.mark_checked(&outcome.memory);
    }
    // With sync on, the change is also a commit; a failing git never fails
    // the write that already happened.
    if let Err(e) = crate::sync::commit_change(&folder.dir, message, origin.session_id.as_deref(), origin.cost_usd) {
        crate::store::log::error(&format!("cannot commit the change of {} for sync: {e:#}", folder.dir.display()));
    }
    Ok(())
}
