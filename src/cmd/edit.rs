//! `memory-save edit`: MEMORY.md in your editor, on a private copy with no
//! lock held (saves and SessionStart never wait on it); checked as a save's
//! result and written under the lock, merged by line with a save in between.

use std::io::{BufRead, IsTerminal, Write};
use std::path::Path;
use std::process::Command;

use anyhow::{Context, Result, bail, ensure};

use crate::memory::apply::{self, Outcome};
use crate::memory::edit::check_edit;
use crate::memory::reply::{Op, Reply};
use crate::store::folder::Folder;
use crate::store::history::Origin;

/// Open this project's MEMORY.md in $VISUAL or $EDITOR; what you change is
/// checked as a save's result is (template, caps, secrets) and recorded in
/// the history.
#[derive(Debug, clap::Args)]
pub struct EditArgs {}

impl super::Run for EditArgs {
    fn run(&self) -> Result<()> {
        let super::Here { roots, project, folder, .. } = super::here_to_write()?;
        let base = {
            let _lock = folder.lock()?;
            crate::save::current_under_lock(&folder)?
        };
        crate::store::fsutil::create_private_dir(&roots.state)?;
        let copy = roots.state.join(format!("edit-{}.{}.md", project.name, std::process::id()));
        crate::store::fsutil::create_new_private(&copy)
            .and_then(|mut f| f.write_all(base.as_bytes()))
            .with_context(|| format!("cannot write the copy to edit, {}", copy.display()))?;
        let result = edit_loop(&folder, &base, &copy);
        // Kept only when it holds text of yours that was not written (an
        // editor that could not start, or no change, leaves nothing).
        let yours = crate::store::fsutil::read_regular(&copy, 4 * 1024 * 1024).ok().flatten().filter(|bytes| {
            result.is_err() && !bytes.iter().all(u8::is_ascii_whitespace) && bytes.as_slice() != base.as_bytes()
        });
        let Some(bytes) = yours else {
            let _ = std::fs::remove_file(&copy);
            return result;
        };
        // Kept with every line that holds a secret masked: a refused key
        // must not stay on disk in the clear.
        let text = String::from_utf8_lossy(&bytes);
        let masked: String = text.split_inclusive('\n').map(crate::memory::secrets::redact_line).collect();
        if masked != text {
            crate::store::fsutil::write_atomic(&copy, masked.as_bytes(), true)?;
        }
        super::eprint(&format!("memory-save: your text is kept in {} (secrets in it masked)\n", copy.display()));
        result
    }
}

fn edit_loop(folder: &Folder, base: &str, copy: &Path) -> Result<()> {
    loop {
        run_editor(copy)?;
        let edited = crate::store::fsutil::read_regular(copy, 4 * 1024 * 1024)?
            .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
            .unwrap_or_default();
        if edited == base {
            return super::println("memory-save: no change; nothing written");
        }
        let reasons = match check_edit(base, &edited) {
            Ok(ops) if !piped_kept(&ops)? => {
                vec!["a line pipes a download into a shell; edit keeps one only when you say yes on a terminal".into()]
            }
            Ok(ops) => match write(folder, base, &edited, ops)? {
                Ok(message) => return super::println(&format!("memory-save: {message}")),
                Err(reasons) => reasons,
            },
            Err(reasons) => reasons,
        };
        let listed: String = reasons.iter().map(|r| format!("\n  - {r}")).collect();
        // On a terminal: open the editor again on the refused text?
        let question = format!("the edit was refused:{listed}\nopen the editor again to fix it? [Y/n]");
        if answer(&question)?.is_none_or(|a| a == "n") {
            bail!("the edit was refused; MEMORY.md is unchanged:{listed}");
        }
    }
}

/// `$VISUAL`, `$EDITOR` (split as a shell would), else `vi`.
fn run_editor(copy: &Path) -> Result<()> {
    let line = crate::env::editor().unwrap_or_else(|| "vi".to_string());
    let words = shlex::split(&line)
        .filter(|w| !w.is_empty())
        .with_context(|| format!("cannot read the editor command {line:?} (VISUAL or EDITOR): fix its quoting"))?;
    let status = crate::process::run_in_foreground(Command::new(&words[0]).args(&words[1..]).arg(copy))
        .with_context(|| format!("cannot start the editor {:?} (set VISUAL or EDITOR)", words[0]))?;
    ensure!(status.success(), "the editor {:?} exited with {status}; MEMORY.md is unchanged", words[0]);
    Ok(())
}

/// A line piping a download into a shell (`curl … | sh`), which no save
/// writes, is kept by hand only when you say so on a terminal.
fn piped_kept(ops: &[Op]) -> Result<bool> {
    let piped: Vec<&str> = ops
        .iter()
        .filter_map(|op| match op {
            Op::Add { text, .. } | Op::Replace { text, .. } => Some(text.as_str()),
            Op::Remove { .. } => None,
        })
        .filter(|text| crate::memory::gate::pipes_into_shell(text))
        .collect();
    if piped.is_empty() {
        return Ok(true);
    }
    let listed: String = piped.iter().map(|l| format!("\n  {l}")).collect();
    let question = format!(
        "every later session reads these as instructions, and they pipe a download into a shell:{listed}\nkeep them? [y/N]"
    );
    Ok(answer(&question)?.is_some_and(|a| a == "y"))
}

/// The answer to `question` typed on the terminal, trimmed and in lower
/// case; `None` when stdin is no terminal (nobody to ask).
fn answer(question: &str) -> Result<Option<String>> {
    let stdin = std::io::stdin();
    if !stdin.is_terminal() {
        return Ok(None);
    }
    super::eprint(&format!("memory-save: {question} "));
    let mut answer = String::new();
    stdin.lock().read_line(&mut answer)?;
    Ok(Some(answer.trim().to_ascii_lowercase()))
}

/// Writes the edit under the lock, merged by line with a change meanwhile;
/// `Err` with the reasons when the merge cannot take all of it.
fn write(folder: &Folder, base: &str, edited: &str, ops: Vec<Op>) -> Result<Result<String, Vec<String>>> {
    let _lock = folder.lock()?;
    let current = crate::save::current_under_lock(folder)?;
    let memory = if current == base {
        crate::memory::template::tidy_placeholders(edited)
    } else {
        let reply = Reply { ops, ..Reply::default() };
        let outcome = apply::apply(&current, &reply, &folder.project, &folder.topic_files());
        let mut reasons: Vec<String> = outcome
            .skipped
            .iter()
            .map(|line| format!("a save changed MEMORY.md meanwhile, and {line:?} is no longer there"))
            .collect();
        reasons.extend(outcome.refused.iter().map(|r| format!("{}: {}", r.entry, r.why)));
        if !reasons.is_empty() {
            return Ok(Err(reasons));
        }
        outcome.memory
    };
    let added = crate::store::history::added_lines(&current, &memory).len();
    let message = format!(
        "edit by hand: {} added or changed{}",
        crate::memory::report::plural(added as u64, "line"),
        if current == base { "" } else { " (merged with a save made meanwhile)" }
    );
    let outcome = Outcome { memory, ..Outcome::default() };
    let origin = Origin { by: Some("memory-save edit".into()), ..Origin::default() };
    crate::save::commit(folder, &current, &outcome, &message, &origin)?;
    Ok(Ok(format!("{message}; written to {}", folder.memory_path().display())))
}
