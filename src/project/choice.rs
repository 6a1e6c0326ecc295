//! Which memory folder a repository uses: the lookup a hook makes from
//! what is recorded, and what the worker (`settle`) and `status` (`adoptable`)
//! add with git, which a hook never runs.

use anyhow::{Result, bail};

use super::{Project, check_name, nfc};
use crate::store::folder_record::shares_state;
use crate::store::owner::{self, Whose};
use crate::store::paths::Roots;

pub(super) struct Choice {
    pub name: String,
    pub why: String,
    pub provisional: Option<String>,
}

/// The folder from what is recorded (a hook runs no git): the first repository
/// to record a name keeps it, another gets `<name>-<hash of its identity>`; a
/// moved repository's folder loads provisionally until `settle` confirms it
/// (docs/design.md §7).
pub(super) fn choose_folder(
    roots: &Roots,
    base: &str,
    identities: &[String],
    explicit: Option<(&str, &str)>,
    in_git: bool,
) -> Result<Choice> {
    let identity = &identities[0];
    let plain = |name: &str, why: String| Choice { name: name.to_string(), why, provisional: None };
    // A record found by a claim alone (`Record::whose`) loads
    // provisionally, also one with no root commit to confirm it by (then
    // it never loads here).
    let ours = |name: &str, record: owner::Record, why: String| {
        let provisional = (record.whose(identities) != Whose::Proven).then(|| {
            format!(
                "provisional: recorded for {} elsewhere; the next save confirms it by the repository's first commit",
                record.shown_identity()
            )
        });
        Choice { name: name.to_string(), why, provisional }
    };
    // The second name of any of its identities, recorded for it: a sync
    // moves a folder aside under its first identity's, which is a path
    // when the repository gained its origin later.
    let own = || {
        identities.iter().map(|id| hashed_name(base, id)).find_map(|name| {
            let record = owner::read(roots, &name).filter(|r| r.holds_any(identities))?;
            Some((name, record))
        })
    };
    // Unless a save already found another root commit there and gave this
    // repository a folder of its own.
    let or_own = |choice: Choice| match own().filter(|_| choice.provisional.is_some()) {
        Some((name, mine)) => ours(&name, mine, format!("{} belongs to another repository", choice.name)),
        None => choice,
    };
    // A name keyed by an origin is claimed by that line of the config too.
    if let Some((key, name)) = explicit {
        let name = checked_explicit(key, name)?;
        let why = format!("named for {key} in {}", crate::config::FILE_NAME);
        return Ok(match owner::read(roots, &name).filter(|_| !key.starts_with(owner::PATH)) {
            Some(record) => or_own(ours(&name, record, why)),
            None => plain(&name, why),
        });
    }
    // The user's choice on this machine, honoured while `.identity` holds
    // the path `adopt` wrote there (an origin is any config's to name), so
    // undoing the adoption takes it back.
    let adopted_for = |keys: &[String]| {
        let name = owner::adopted(roots, keys)?;
        let paths = keys.iter().filter(|id| id.starts_with(owner::PATH));
        let record = owner::read(roots, &name).filter(|r| paths.clone().any(|p| r.synced_names().any(|n| n == p)))?;
        Some((name, record))
    };
    if let Some((name, _)) = adopted_for(identities) {
        return Ok(plain(&name, format!("{name}, adopted for {identity}")));
    }
    // A repository that adopted a folder, then moved: the identities of the
    // folder it left (found by its name, proven by no path here now) lead to
    // the one it adopted, which loads provisionally for its root to confirm.
    let left_for = |left: &owner::Record| {
        let (name, record) = adopted_for(&left.names().map(str::to_string).collect::<Vec<_>>())?;
        let why = format!("{name}, adopted at {}, which is gone", left.seen_at());
        Some(ours(&name, record, why))
    };
    let found = match owner::read(roots, base) {
        // A folder written before identities existed keeps its name: it is
        // the first user's memory, whatever the name.
        None if !shares_state(base) || roots.project_dir(base).exists() => {
            return Ok(plain(base, format!("{base}, the project folder's name")));
        }
        Some(record) if record.holds_any(identities) => {
            if record.whose(identities) != Whose::Proven
                && let Some(adopted) = left_for(&record)
            {
                return Ok(adopted);
            }
            return Ok(or_own(ours(base, record.clone(), format!("{base}, recorded for {identity}"))));
        }
        found => found,
    };
    let taken = match &found {
        Some(found) => format!("{base} belongs to {}", found.shown_identity()),
        None => format!("{base} ends like another folder's state files"),
    };
    if let Some((name, record)) = own() {
        return Ok(ours(&name, record, taken));
    }
    let name = hashed_name(base, identity);
    if let Some(other) = owner::read(roots, &name) {
        bail!(
            "memory folders {base} and {name} are not this repository's ({taken}; {name} belongs to {}); name this one in the config ([names])",
            other.shown_identity()
        );
    }
    let moved = found.as_ref().filter(|found| in_git && found.root.is_some() && found.orphaned());
    if let Some(adopted) = moved.and_then(left_for) {
        return Ok(adopted);
    }
    if let Some(found) = moved {
        return Ok(Choice {
            name: base.to_string(),
            why: format!("{base}, recorded for {}, which is gone", found.seen_at()),
            provisional: Some(format!(
                "provisional: recorded for {}, which is gone; the next save confirms it by the repository's first commit",
                found.seen_at()
            )),
        });
    }
    Ok(plain(&name, taken))
}

/// A team memory's name: the one set for it in the config, else its folder's.
pub(super) fn team_name(base: &str, explicit: Option<(&str, &str)>) -> Result<Choice> {
    let (name, why) = match explicit {
        Some((key, name)) => (checked_explicit(key, name)?, format!("named for {key} in {}", crate::config::FILE_NAME)),
        None => (base.to_string(), format!("{base}, the team memory in the repository")),
    };
    Ok(Choice { name, why, provisional: None })
}

/// A name set in the config, in NFC, when it can name a memory.
fn checked_explicit(key: &str, name: &str) -> Result<String> {
    let name = nfc(name);
    check_name(&name).map_err(|why| anyhow::anyhow!("the name set for {key} in the config: {why}"))?;
    if shares_state(&name) {
        let ending = name.rsplit_once('.').map_or("", |(_, ext)| ext);
        bail!(
            "the name set for {key} in the config, {name:?}: a name ending in \".{ending}\" could share another folder's state files; choose another name"
        );
    }
    Ok(name)
}

/// The folder of a second repository with `base`'s name.
pub fn hashed_name(base: &str, identity: &str) -> String {
    format!("{base}-{}", crate::memory::stable_id(identity))
}

/// Run by the worker before a save reads the folder (it may run git): confirms
/// a provisional folder by the root commit or gives the repository its own,
/// then records what the folder's record lacks (root, origin, this path).
pub fn settle(roots: &Roots, project: &mut Project) -> Result<()> {
    if project.team_dir.is_some() {
        return Ok(());
    }
    crate::store::folder_record::read_for_change(&project.folder(roots))?;
    let record = owner::read(roots, &project.name);
    let lacks = |r: &owner::Record| r.root.is_none() || !project.identities.iter().all(|id| r.names().any(|n| n == id));
    if project.provisional.is_none() && record.as_ref().is_some_and(|r| !lacks(r)) {
        return Ok(());
    }
    let root = project.root_commit(crate::git::ROOT_COMMIT_LIMIT);
    settle_with(roots, project, record, root)
}

/// A session start's confirmation of a provisional folder, with git given
/// `limit`: only a root commit read in time that is the folder's own
/// confirms it (and records this path, as `settle` does); anything else
/// leaves it provisional for the worker's `settle`, so a slow repository
/// loads as before and a stranger's folder never loads.
pub fn confirm_within(roots: &Roots, project: &mut Project, limit: std::time::Duration) -> Result<()> {
    if project.provisional.is_none() || project.team_dir.is_some() {
        return Ok(());
    }
    let record = owner::read(roots, &project.name);
    let Some(recorded) = record.as_ref().and_then(|r| r.root.clone()) else { return Ok(()) };
    match project.root_commit(limit) {
        Some(root) if root == recorded => settle_with(roots, project, record, Some(root)),
        _ => Ok(()),
    }
}

fn settle_with(
    roots: &Roots,
    project: &mut Project,
    record: Option<owner::Record>,
    root: Option<String>,
) -> Result<()> {
    if let Some(why) = project.provisional.take() {
        let recorded = record.as_ref().and_then(|r| r.root.as_ref());
        if root.is_none() || recorded != root.as_ref() {
            // A template clone or a fork: the same name, another memory.
            // When the folder of its name and origin is another repository's
            // too (a planted origin names a repository whose own folder is
            // that one), its root commit names its folder as well.
            let paths: Vec<String> =
                project.identities.iter().filter(|id| id.starts_with(owner::PATH)).cloned().collect();
            let mut name = hashed_name(&project.base, &project.identity);
            let taken = |n: &str| {
                owner::read(roots, n)
                    .is_some_and(|r| !(r.whose(&paths) == Whose::Proven || (root.is_some() && r.root == root)))
            };
            if name == project.name || taken(&name) {
                let own = root.clone().unwrap_or_else(|| paths.join(" "));
                name = hashed_name(&project.base, &format!("{} {own}", project.identity));
            }
            crate::store::log::error(&format!(
                "{}: {why}; its root commit is not this repository's, so this repository uses {name}",
                project.name
            ));
            project.why = format!("{} belongs to another repository", project.base);
            project.name = name;
            project.root = root;
            // Recorded now, whatever the save writes: the next session start
            // finds this repository's own folder, not the stranger's memory.
            let folder = project.folder(roots);
            fs_err::create_dir_all(&folder.dir)?;
            folder.claim()?;
            return owner::add_here(&folder, &paths);
        }
        project.why = format!("{}, confirmed by its root commit", project.name);
    }
    project.root.clone_from(&root);
    // A folder not written yet is recorded, root commit and all, by its
    // first write (`Folder::claim`): a save that fails leaves nothing in
    // it. This machine's path is recorded now, so the next session finds
    // the folder by its path, not by an origin anyone can name.
    let folder = project.folder(roots);
    let Some(mut record) = record else {
        let paths: Vec<String> = project.identities.iter().filter(|id| id.starts_with(owner::PATH)).cloned().collect();
        return owner::add_here(&folder, &paths);
    };
    let _lock = folder.lock()?;
    let before = record.clone();
    let (paths, others): (Vec<&String>, Vec<&String>) =
        project.identities.iter().partition(|id| id.starts_with(owner::PATH));
    record.gain(others, root);
    if record != before {
        folder.write_file(owner::IDENTITY_FILE, &record.text())?;
    }
    let missing: Vec<String> = paths.into_iter().filter(|id| !record.here.contains(id)).cloned().collect();
    owner::add_here(&folder, &missing)
}

/// Folder `name`'s record with this repository's identities gained, for
/// `adopt`, or `None` when it is already this repository's memory. Its
/// paths go into `.identity` too, unlike a save's: the alias holds while
/// `.identity` names this repository, so undo ends it, and another machine
/// takes a path there as a claim only (`Record::whose`).
pub fn adoption(roots: &Roots, project: &Project, name: &str) -> Option<owner::Record> {
    let mut record = owner::read(roots, name).unwrap_or_else(|| owner::Record::new(&project.identity));
    if project.name == name && project.provisional.is_none() && record.holds_any(&project.identities) {
        return None;
    }
    let root = record.root.is_none().then(|| project.root_commit(crate::git::ROOT_COMMIT_LIMIT)).flatten();
    record.gain(&project.identities, root);
    Some(record)
}

/// Folders that could be this repository's memory and are not: one of its root
/// commit, or of its name with every recorded path gone. For `status` and
/// `doctor`, which may run git; `adopt` takes one over.
pub fn adoptable(roots: &Roots, project: &Project) -> Vec<(String, owner::Record)> {
    if project.team_dir.is_some() {
        return Vec::new();
    }
    let root = project.root_commit(crate::git::ROOT_COMMIT_LIMIT);
    owner::all(roots)
        .into_iter()
        .filter(|(name, record)| *name != project.name && !record.holds_any(&project.identities))
        .filter(|(name, record)| {
            (root.is_some() && record.root == root) || (*name == project.base && record.orphaned())
        })
        .collect()
}
