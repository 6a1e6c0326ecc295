//! `memory-save merge-driver %O %A %B %P`: the merge goes into %A, exit 0;
//! exit 1 (a version cannot be read) leaves git's conflict. MEMORY.md merges
//! by meaning (`memory::merge`), guards.json by guard (`store::guards`), any
//! other file as appends.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

use crate::memory::merge::{merge_memory, merge_topic};
use crate::store::folder::MEMORY_FILE;
use crate::store::guards::GUARDS_FILE;
use crate::store::owner::IDENTITY_FILE;

/// Merge two versions of a memory file for git (registered by `sync --init`
/// and `team init`; git runs it, you do not).
#[derive(Debug, clap::Args)]
pub struct MergeDriverArgs {
    /// The common ancestor's version (%O).
    base: PathBuf,
    /// Ours (%A): the result is written here.
    ours: PathBuf,
    /// Theirs (%B).
    theirs: PathBuf,
    /// The file's path in the repository (%P).
    path: Option<String>,
}

const MAX_MERGE_BYTES: u64 = 16 * 1024 * 1024;

fn read(path: &Path) -> Result<Option<String>> {
    let bytes = crate::store::fsutil::read_regular(path, MAX_MERGE_BYTES)?;
    bytes.map(|b| String::from_utf8(b).with_context(|| format!("{} is not UTF-8 text", path.display()))).transpose()
}

/// Only our files come this far: another file a `.gitattributes` line routes
/// here gets git's own conflict, not a merge blind to its format. Memory
/// files are small: anything far larger is not one.
const MAX_MEMORY_FILE_BYTES: usize = 4 * 1024 * 1024;

fn is_memory_file(name: &str) -> bool {
    name == MEMORY_FILE
        || name == GUARDS_FILE
        || name == IDENTITY_FILE
        || crate::memory::apply::check_topic_name(name).is_ok()
}

impl super::Run for MergeDriverArgs {
    fn run(&self) -> Result<()> {
        let name = self.path.as_deref().unwrap_or(MEMORY_FILE);
        let file = Path::new(name).file_name().and_then(|n| n.to_str()).unwrap_or(name);
        if !is_memory_file(file) {
            bail!("{name} is not a memory file; git keeps its own conflict (check .gitattributes)");
        }
        // git gives an empty file as the base when there is none.
        let base = read(&self.base)?.filter(|t| !t.is_empty());
        let ours = read(&self.ours)?.with_context(|| format!("cannot read ours, {}", self.ours.display()))?;
        let theirs = read(&self.theirs)?.with_context(|| format!("cannot read theirs, {}", self.theirs.display()))?;
        if [base.as_deref().unwrap_or(""), &ours, &theirs].iter().any(|t| t.len() > MAX_MEMORY_FILE_BYTES) {
            bail!("{name} is larger than a memory file; git keeps its own conflict");
        }
        if file == IDENTITY_FILE {
            // Sync merges only one repository's records (`Record::same_repository`).
            let merged =
                crate::store::owner::merge(base.as_deref().map(str::as_bytes), ours.as_bytes(), theirs.as_bytes())
                    .with_context(|| format!("{name}: the two versions are not one repository's record"))?;
            return fs_err::write(&self.ours, merged).context("cannot write the merge into %A");
        }
        if file == GUARDS_FILE {
            let merged = crate::store::guards::merge(base.as_deref(), &ours, &theirs)?;
            return fs_err::write(&self.ours, merged).context("cannot write the merge into %A");
        }
        let merged = if file == MEMORY_FILE {
            // The project's folder names it, as in the file's own title.
            let project = Path::new(name)
                .parent()
                .and_then(|p| p.file_name())
                .map_or_else(|| "project".to_string(), |n| n.to_string_lossy().into_owned());
            merge_memory(base.as_deref(), &ours, &theirs, &project)
        } else {
            merge_topic(base.as_deref(), &ours, &theirs)
        };
        // Nothing is dropped silently: each line left out is named.
        for refused in &merged.refused {
            super::eprint(&format!("memory-save: {name}: a merged line was left out: {refused}\n"));
        }
        if merged.text.contains("\n<<<<<<< ") {
            bail!("the merge of {name} holds conflict markers; resolve it by hand");
        }
        // %A is git's own temp file: git reads it back once we exit.
        fs_err::write(&self.ours, merged.text).context("cannot write the merge into %A")
    }
}
