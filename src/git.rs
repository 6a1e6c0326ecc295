//! git, the program (gitoxide cannot push): the one runner every git
//! command of memory-save goes through, and the edits of a repository's
//! `info/exclude`. Hooks never run git. A repository's config is its
//! author's, so every command starts `SEALED` (docs/security.md, "git runs
//! nothing of the repository's").

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use anyhow::{Context, Result, bail};

/// One git command of a background sync takes at most this long.
pub const LIMIT: Duration = Duration::from_secs(30);
/// Reading one setting is quick, or git is stuck.
const CONFIG_LIMIT: Duration = Duration::from_secs(5);
/// What a command or the worker gives git to find a root commit.
pub const ROOT_COMMIT_LIMIT: Duration = CONFIG_LIMIT;
/// Memory files are at most 50,000 characters; far more is not git answering us.
const OUTPUT_MAX: usize = 64 * 1024 * 1024;

/// The user's own ssh command with batch mode and a connect timeout added;
/// `None` with `GIT_SSH` set: that program may take no ssh options.
fn ssh_command(root: &Path) -> Option<String> {
    const OPTIONS: &str = "-o BatchMode=yes -o ConnectTimeout=10";
    if let Some(theirs) = crate::env::passed_to_fork("GIT_SSH_COMMAND").filter(|c| !c.trim().is_empty()) {
        return Some(format!("{theirs} {OPTIONS}"));
    }
    if crate::env::passed_to_fork("GIT_SSH").is_some() {
        return None;
    }
    let configured = crate::process::run_captured(
        &mut git(root, &["config", "--get", "core.sshCommand"], Reach::Remote),
        b"",
        CONFIG_LIMIT,
        64 * 1024,
    )
    .ok()
    .filter(|run| matches!(run.ended, crate::process::Ended::Exited(status) if status.success()))
    .map(|run| String::from_utf8_lossy(&run.stdout).trim().to_string())
    .filter(|c| !c.is_empty());
    Some(format!("{} {OPTIONS}", configured.as_deref().unwrap_or("ssh")))
}

/// Who a sync runs for: the worker, where nothing may ask and everything is
/// bounded; or a person at a terminal, where ssh may ask for a passphrase.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Caller {
    Background,
    Person,
}

impl Caller {
    /// A person, when the command's input and error output are a terminal.
    pub fn of_terminal() -> Caller {
        use std::io::IsTerminal;
        if std::io::stdin().is_terminal() && std::io::stderr().is_terminal() {
            Caller::Person
        } else {
            Caller::Background
        }
    }
}

/// `git fetch` and `git push`: for a person in the foreground, else bounded
/// and asking nothing (`run`).
pub fn remote(root: &Path, args: &[&str], caller: Caller) -> Result<()> {
    if caller == Caller::Background {
        return run(root, args, LIMIT).map(drop);
    }
    let status = crate::process::run_in_foreground(git(root, args, Reach::Remote).env("GIT_MERGE_AUTOEDIT", "no"))
        .context("cannot run git; install git to sync memory")?;
    if !status.success() {
        bail!("git {} failed (what git said is above)", args.first().unwrap_or(&""));
    }
    Ok(())
}

/// The subcommands that reach a remote.
const REMOTE: &[&str] = &["fetch", "push", "ls-remote", "clone"];

/// Runs `git -C root …` bounded, in its own process group (a hung ssh dies
/// with it), never asking for anything.
pub fn run(root: &Path, args: &[&str], limit: Duration) -> Result<String> {
    let reach = if args.first().is_some_and(|sub| REMOTE.contains(sub)) { Reach::Remote } else { Reach::Local };
    let mut command = git(root, args, reach);
    if reach == Reach::Remote {
        // In the background nothing may ask: no askpass program either.
        command.envs(ssh_command(root).map(|c| ("GIT_SSH_COMMAND", c))).env("GIT_ASKPASS", "");
    }
    command.env("GIT_MERGE_AUTOEDIT", "no");
    let run = crate::process::run_captured(&mut command, b"", limit, OUTPUT_MAX)
        .context("cannot run git; install git to sync memory")?;
    match run.ended {
        crate::process::Ended::TimedOut => {
            bail!("git {} took over {} s and was stopped", args.first().unwrap_or(&""), limit.as_secs())
        }
        crate::process::Ended::Exited(status) if !status.success() => Err(failed(args, &run.stderr)),
        crate::process::Ended::Exited(_) => Ok(String::from_utf8_lossy(&run.stdout).into_owned()),
    }
}

/// Each a way a repository's config makes git run a program. An empty value
/// resets or turns off; `false` is a program that does nothing and fails.
const SEALED: &[&str] = &[
    "core.fsmonitor=false",
    "core.hooksPath=/dev/null",
    "core.pager=cat",
    "core.editor=false",
    "sequence.editor=false",
    "log.showSignature=false",
    "commit.gpgSign=false",
    "tag.gpgSign=false",
    "merge.verifySignatures=false",
    "gpg.program=false",
    "gpg.ssh.program=false",
    "gpg.x509.program=false",
    "protocol.ext.allow=never",
];

/// What a local command also turns off: the programs git runs to reach a
/// remote. `protocol.allow=never` stops a lazy fetch on git before 2.44,
/// which ignores `GIT_NO_LAZY_FETCH`.
const SEALED_LOCAL: &[&str] =
    &["core.askPass=", "credential.helper=", "core.sshCommand=false", "core.gitProxy=", "protocol.allow=never"];

/// Only a sync's `REMOTE` commands, in the memory root we made, may reach a
/// remote, with the user's own credentials and ssh.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reach {
    Local,
    Remote,
}

/// The subcommands that can run `diff.external` or a diff driver: given
/// `--no-ext-diff --no-textconv`, since git 2.39 runs an empty
/// `-c diff.external=` as a command.
const DIFFING: &[&str] = &["diff", "show", "log"];

/// `git -C root <args>` that never asks and runs no program of the repository's.
fn git(root: &Path, args: &[&str], reach: Reach) -> Command {
    let mut command = Command::new("git");
    command.arg("--no-pager").arg("-C").arg(root);
    let extra = if reach == Reach::Local { SEALED_LOCAL } else { &[] };
    for setting in SEALED.iter().chain(extra) {
        command.arg("-c").arg(setting);
    }
    // The subcommand stands after any `-c` pairs of the caller's own.
    let at = args.chunks(2).take_while(|pair| pair[0] == "-c" && pair.len() == 2).count() * 2;
    command.args(&args[..at]);
    if let Some((sub, rest)) = args[at..].split_first() {
        command.arg(sub);
        if DIFFING.contains(sub) {
            command.args(["--no-ext-diff", "--no-textconv"]);
        }
        command.args(rest);
    }
    command
        .env("GIT_TERMINAL_PROMPT", "0")
        // A missing object of a partial clone is not fetched behind our back.
        .env("GIT_NO_LAZY_FETCH", "1")
        // A repository's `refs/replace` could show another's root commit
        // as its own (§7): git reads the commits themselves.
        .env("GIT_NO_REPLACE_OBJECTS", "1")
        .env_remove("GIT_EXTERNAL_DIFF");
    if reach == Reach::Local {
        command.env("GIT_ASKPASS", "").env("GIT_SSH_COMMAND", "false");
    }
    command
}

/// git's message on one line, bounded.
fn failed(args: &[&str], stderr: &[u8]) -> anyhow::Error {
    let stderr = String::from_utf8_lossy(stderr);
    let said: Vec<&str> = stderr.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
    anyhow::anyhow!(
        "git {} failed: {}",
        args.first().unwrap_or(&""),
        crate::memory::text::shorten(&said.join(" "), 400)
    )
}

/// The repository's one root commit, which names it wherever it is moved
/// or copied. `None` for a shallow clone (its oldest commit is not its
/// root), no commit yet, or several roots.
/// `limit`: how long git may take (a hook's is short).
pub fn root_commit(work_dir: &Path, common_dir: &Path, limit: Duration) -> Option<String> {
    if std::fs::symlink_metadata(common_dir.join("shallow")).is_ok() {
        return None;
    }
    let (listed, false) = local(work_dir, &["rev-list", "--max-parents=0", "HEAD"], b"", limit).ok()? else {
        return None;
    };
    let [one] = listed.split_whitespace().collect::<Vec<_>>()[..] else { return None };
    Some(one.to_string())
}

/// Runs a local git command with `input` on stdin, bounded: its output, and
/// whether it ran out of time (then the output is what came by then: a log
/// walk newest first is still true as far as it got).
pub fn local(root: &Path, args: &[&str], input: &[u8], limit: Duration) -> Result<(String, bool)> {
    let mut command = git(root, args, Reach::Local);
    command.env("GIT_OPTIONAL_LOCKS", "0");
    let run =
        crate::process::run_captured(&mut command, input, limit, OUTPUT_MAX).context("cannot run git; install git")?;
    let stdout = String::from_utf8_lossy(&run.stdout).into_owned();
    match run.ended {
        crate::process::Ended::TimedOut => Ok((stdout, true)),
        // `check-ignore` and `rev-parse --verify -q` say "none" with 1.
        crate::process::Ended::Exited(status) if status.success() || status.code() == Some(1) => Ok((stdout, false)),
        crate::process::Ended::Exited(_) => Err(failed(args, &run.stderr)),
    }
}

const EXCLUDE_LINE: &str = "/.claude/settings.local.json";
const EXCLUDE_NOTE: &str = "# added by memory-save install --project";

/// Keeps a project-local settings file out of git, unless git ignores it
/// already, by a line in `info/exclude` (never a committed file). Returns
/// that file.
pub fn exclude_local_settings(settings: &Path) -> Option<String> {
    let top = settings.parent()?.parent()?;
    if run(top, &["check-ignore", "-q", &EXCLUDE_LINE[1..]], CONFIG_LIMIT).is_ok() {
        return None;
    }
    let common = run(top, &["rev-parse", "--path-format=absolute", "--git-common-dir"], CONFIG_LIMIT).ok()?;
    let exclude = Path::new(common.trim()).join("info").join("exclude");
    let mut text = std::fs::read_to_string(&exclude).unwrap_or_default();
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    text.push_str(&format!("{EXCLUDE_NOTE}\n{EXCLUDE_LINE}\n"));
    if let Some(dir) = exclude.parent() {
        let _ = fs_err::create_dir_all(dir);
    }
    crate::store::fsutil::write_atomic_keeping_mode(&exclude, text.as_bytes(), 0o644).ok()?;
    Some(exclude.display().to_string())
}

/// Takes out the line `exclude_local_settings` added, and its comment.
pub fn unexclude_local_settings(exclude: &Path) {
    let Ok(text) = std::fs::read_to_string(exclude) else { return };
    let kept: String =
        text.split_inclusive('\n').filter(|l| ![EXCLUDE_LINE, EXCLUDE_NOTE].contains(&l.trim_end())).collect();
    if kept != text {
        let _ = crate::store::fsutil::write_atomic_keeping_mode(exclude, kept.as_bytes(), 0o644);
    }
}

/// The repository-local config at `git_dir`, read in-process (a hook never
/// runs git). We follow plain `include.path` ourselves, each opened as our
/// own files are and at most `CONFIG_FILES_MAX` three deep, so
/// `/proc/self/pagemap` or mutual includes stay bounded. `includeIf` is not
/// followed.
pub fn local_config(git_dir: &Path) -> Option<gix_config::File> {
    let path = git_dir.join("config");
    let mut config = config_file(&path)?;
    let mut queue: Vec<(std::path::PathBuf, usize)> = includes(&config, &path, 1);
    let mut read = 1;
    while let Some((included, depth)) = queue.pop() {
        if read >= CONFIG_FILES_MAX {
            break;
        }
        read += 1;
        let Some(file) = config_file(&included) else { continue };
        if depth < INCLUDE_DEPTH_MAX {
            queue.extend(includes(&file, &included, depth + 1));
        }
        config.append(file).ok()?;
    }
    Some(config)
}

/// Config files read for one repository, its own and what it includes.
const CONFIG_FILES_MAX: usize = 8;
const INCLUDE_DEPTH_MAX: usize = 3;

/// One config file, parsed, its includes not followed.
fn config_file(path: &Path) -> Option<gix_config::File> {
    let mut bytes = crate::store::fsutil::read_regular(path, CONFIG_MAX).ok()??;
    let meta = gix_config::file::Metadata::from(gix_config::Source::Local).at(path);
    gix_config::File::from_bytes_owned(&mut bytes, meta, Default::default()).ok()
}

/// `~/` from HOME, a relative path from the including file's folder.
fn includes(file: &gix_config::File, path: &Path, depth: usize) -> Vec<(std::path::PathBuf, usize)> {
    let home = std::env::var_os("HOME").map(std::path::PathBuf::from);
    let base = path.parent().unwrap_or(Path::new("/"));
    file.strings("include.path")
        .unwrap_or_default()
        .into_iter()
        .filter_map(|value| {
            let value = value.to_string();
            let target = match value.strip_prefix("~/") {
                Some(rest) => home.as_ref()?.join(rest),
                None => base.join(&value),
            };
            Some((target, depth))
        })
        .collect()
}

/// A repository config is small; one this large is not one to read.
const CONFIG_MAX: u64 = 1024 * 1024;

pub fn origin_url(git_dir: &Path) -> Option<String> {
    local_config(git_dir)?.string("remote.origin.url").map(|url| url.to_string())
}

/// Our merge driver's name and command in a git config.
const DRIVER_SECTION: (&str, &str) = ("merge", "memory-save");
const DRIVER_NAME: &str = "memory-save: merge memory files by meaning";

pub fn has_merge_driver(git_dir: &Path) -> bool {
    local_config(git_dir).is_some_and(|c| c.string("merge.memory-save.driver").is_some())
}

/// Defines our merge driver in the repository-local config at `git_dir`
/// (git reads a driver only from config), keeping the file's other bytes.
pub fn define_merge_driver(git_dir: &Path, command: &str) -> Result<()> {
    let path = git_dir.join("config");
    let mut bytes = crate::store::fsutil::read_regular(&path, CONFIG_MAX)?.unwrap_or_default();
    let meta = gix_config::file::Metadata::from(gix_config::Source::Local).at(&path);
    let mut config = gix_config::File::from_bytes_owned(&mut bytes, meta, Default::default())
        .map_err(|e| anyhow::anyhow!("cannot read {}: {e}; fix it with git config --edit", path.display()))?;
    let (section, subsection) = DRIVER_SECTION;
    for (key, value) in [("name", DRIVER_NAME), ("driver", command)] {
        config
            .set_raw_value_by(section, Some(subsection.into()), key, value)
            .map_err(|e| anyhow::anyhow!("cannot set merge.{subsection}.{key} in {}: {e}", path.display()))?;
    }
    let mut out = Vec::new();
    config.write_to(&mut out).with_context(|| format!("cannot write {}", path.display()))?;
    // The file keeps its mode: a config kept 0600 for a token in a URL
    // stays closed, a shared repository's 0664 stays group-writable.
    let mode = std::fs::symlink_metadata(&path)
        .map_or(0o644, |m| std::os::unix::fs::PermissionsExt::mode(&m.permissions()) & 0o7777);
    crate::store::fsutil::write_atomic_keeping_mode(&path, &out, mode)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origin_and_driver_are_read_through_includes_and_the_driver_written_in_place() {
        let dir = tempfile::tempdir().unwrap();
        let git_dir = dir.path().join(".git");
        std::fs::create_dir_all(&git_dir).unwrap();
        // The origin lives in an included file, as a dotfile setup has it.
        std::fs::write(dir.path().join("remotes.inc"), "[remote \"origin\"]\n\turl = git@github.com:me/app.git\n")
            .unwrap();
        let config = "[core]\n\tbare = false # ours\n[include]\n\tpath = ../remotes.inc\n[remote \"upstream\"]\n\turl = git@x:up/app\n";
        std::fs::write(git_dir.join("config"), config).unwrap();
        assert_eq!(origin_url(&git_dir).as_deref(), Some("git@github.com:me/app.git"));
        assert!(!has_merge_driver(&git_dir));

        // A path with a space and quotes: escaped as git escapes it.
        let command = "'/opt/my tools/memory-save' merge-driver %O %A %B %P";
        define_merge_driver(&git_dir, command).unwrap();
        assert!(has_merge_driver(&git_dir));
        let written = std::fs::read_to_string(git_dir.join("config")).unwrap();
        assert!(written.starts_with(config), "the rest kept its bytes: {written}");
        let read = local_config(&git_dir).unwrap();
        assert_eq!(read.string("merge.memory-save.driver").unwrap(), command);
        assert_eq!(read.string("merge.memory-save.name").unwrap(), DRIVER_NAME);
        // The file kept its mode.
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(std::fs::metadata(git_dir.join("config")).unwrap().permissions().mode() & 0o777, 0o644);
        std::fs::set_permissions(git_dir.join("config"), std::fs::Permissions::from_mode(0o600)).unwrap();
        define_merge_driver(&git_dir, command).unwrap();
        assert_eq!(std::fs::metadata(git_dir.join("config")).unwrap().permissions().mode() & 0o777, 0o600);
        // Again: nothing added twice.
        define_merge_driver(&git_dir, command).unwrap();
        assert_eq!(std::fs::read_to_string(git_dir.join("config")).unwrap(), written);
        // And git itself reads what we wrote.
        let out = std::process::Command::new("git")
            .args(["config", "--file"])
            .arg(git_dir.join("config"))
            .args(["--get", "merge.memory-save.driver"])
            .output()
            .unwrap();
        assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), command);
    }

    /// A config that includes itself, a fan of files, a FIFO and a file
    /// without end is read within its bounds.
    #[test]
    fn includes_are_followed_within_bounds() {
        let dir = tempfile::tempdir().unwrap();
        let git_dir = dir.path().join(".git");
        std::fs::create_dir_all(&git_dir).unwrap();
        let fifo = dir.path().join("fifo");
        assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
        let mut config = String::from("[include]\n\tpath = config\n\tpath = ../fifo\n\tpath = /proc/self/pagemap\n");
        for n in 0..20 {
            config.push_str(&format!("\tpath = ../fan{n}\n"));
            std::fs::write(dir.path().join(format!("fan{n}")), format!("[remote \"origin\"]\n\turl = git@x:fan/{n}\n"))
                .unwrap();
        }
        std::fs::write(git_dir.join("config"), config).unwrap();
        let started = std::time::Instant::now();
        let url = origin_url(&git_dir);
        assert!(started.elapsed() < std::time::Duration::from_secs(2), "{:?}", started.elapsed());
        // The last includes are read first, and no more than the bound.
        let url = url.unwrap();
        let n: usize = url.rsplit('/').next().unwrap().parse().unwrap();
        assert!(n >= 20 - CONFIG_FILES_MAX, "{url}");
    }

    /// A repository whose config and attributes name a program for every
    /// setting git runs one for, each writing a marker of its own name.
    fn hostile_repository(dir: &Path) -> (std::path::PathBuf, std::path::PathBuf) {
        let repo = dir.join("repo");
        let markers = dir.join("markers");
        fs_err::create_dir_all(&markers).unwrap();
        let git = |args: &[&str]| {
            let out = Command::new("git").arg("-C").arg(&repo).args(args).output().unwrap();
            assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
        };
        fs_err::create_dir_all(&repo).unwrap();
        git(&["init", "-q", "-b", "main"]);
        git(&["config", "user.email", "a@b"]);
        git(&["config", "user.name", "a"]);
        fs_err::write(repo.join("notes.txt"), "one\n").unwrap();
        git(&["add", "-A"]);
        git(&["commit", "-q", "-m", "first"]);
        git(&["checkout", "-q", "-b", "side"]);
        fs_err::write(repo.join("side.txt"), "side\n").unwrap();
        git(&["add", "-A"]);
        git(&["commit", "-q", "-m", "side"]);
        git(&["checkout", "-q", "main"]);
        fs_err::write(repo.join("notes.txt"), "one\ntwo\n").unwrap();
        git(&["commit", "-q", "-am", "second"]);
        fs_err::write(repo.join(".gitattributes"), "* diff=evil merge=evil filter=evil\n").unwrap();
        let hooks = dir.join("hooks");
        fs_err::create_dir_all(&hooks).unwrap();
        for hook in [
            "pre-commit",
            "commit-msg",
            "post-commit",
            "post-checkout",
            "post-merge",
            "pre-merge-commit",
            "prepare-commit-msg",
            "reference-transaction",
            "post-index-change",
            "fsmonitor-watchman",
        ] {
            for folder in [&hooks, &repo.join(".git/hooks")] {
                let path = folder.join(hook);
                fs_err::write(&path, format!("#!/bin/sh\ntouch '{}/hook-{hook}'\n", markers.display())).unwrap();
                use std::os::unix::fs::PermissionsExt;
                std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
            }
        }
        // A script each, as git runs some of these through the shell and
        // some (gpg, askpass) as a program.
        let bin = dir.join("bin");
        fs_err::create_dir_all(&bin).unwrap();
        let mark = |name: &str| {
            let script = bin.join(name);
            fs_err::write(&script, format!("#!/bin/sh\ntouch '{}/{name}'\nexit 1\n", markers.display())).unwrap();
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
            script.display().to_string()
        };
        let settings = [
            ("core.fsmonitor", mark("fsmonitor")),
            ("core.hooksPath", hooks.display().to_string()),
            ("core.askPass", mark("askpass")),
            ("credential.helper", format!("!{}", mark("credential"))),
            ("core.sshCommand", mark("ssh")),
            ("core.pager", mark("pager")),
            ("core.editor", mark("editor")),
            ("sequence.editor", mark("sequence-editor")),
            ("diff.external", mark("diff-external")),
            ("diff.evil.command", mark("diff-driver")),
            ("diff.evil.textconv", mark("textconv")),
            ("merge.evil.driver", mark("merge-driver")),
            ("log.showSignature", "true".into()),
            ("commit.gpgSign", "true".into()),
            ("gpg.program", mark("gpg")),
            ("gpg.ssh.program", mark("gpg-ssh")),
            ("pager.log", mark("pager-log")),
            // A partial clone: a missing object is fetched over ssh.
            ("core.repositoryformatversion", "1".into()),
            ("extensions.partialClone", "origin".into()),
            ("remote.origin.url", "ssh://example.invalid/repo".into()),
            ("remote.origin.promisor", "true".into()),
        ];
        for (key, value) in &settings {
            git(&["config", key, value]);
        }
        (repo, markers)
    }

    /// Every kind of command memory-save runs, in a repository whose
    /// config names a program for each setting that runs one: none runs.
    #[test]
    fn a_repositorys_config_runs_no_program_of_its_own() {
        let dir = tempfile::tempdir().unwrap();
        let (repo, markers) = hostile_repository(dir.path());
        let missing = "0123456789abcdef0123456789abcdef01234567\nmain:notes.txt\nmain:gone.txt\n";
        let limit = Duration::from_secs(10);
        let locals: [(&[&str], &str); 7] = [
            (&["rev-parse", "-q", "--verify", "HEAD"], ""),
            (&["for-each-ref", "--format=%(refname)", "refs/heads"], ""),
            (&["cat-file", "--batch-check"], missing),
            (&["check-ignore", "-z", "--stdin"], "target\0target/\0"),
            (&["-c", "core.quotePath=false", "log", "--max-count=5", "-M", "--name-status", "-p"], ""),
            (&["status", "--porcelain"], ""),
            (&["rev-list", "--max-parents=0", "HEAD"], ""),
        ];
        for (args, input) in locals {
            let _ = local(&repo, args, input.as_bytes(), limit);
        }
        fs_err::write(repo.join("notes.txt"), "one\ntwo\nthree\n").unwrap();
        for args in [
            &["show", "HEAD"][..],
            &["log", "-p", "-1"],
            &["diff", "HEAD"],
            &["diff", "--cached", "--quiet"],
            &["add", "-A"],
            &["commit", "-q", "-m", "third"],
            &["merge", "-q", "--no-edit", "side"],
            &["checkout", "-q", "HEAD~1", "--", "notes.txt"],
            &["status", "--porcelain"],
        ] {
            let _ = run(&repo, args, limit);
        }
        let ran: Vec<String> = fs_err::read_dir(&markers)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert!(ran.is_empty(), "the repository ran {ran:?}");
        // The commands did their work all the same.
        let log = run(&repo, &["log", "--format=%s"], limit).unwrap();
        assert!(log.starts_with("Merge branch 'side'\nthird\n"), "{log}");
    }

    #[test]
    fn a_missing_or_planted_config_reads_as_none() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(origin_url(dir.path()), None);
        std::os::unix::fs::symlink("/etc/passwd", dir.path().join("config")).unwrap();
        assert_eq!(origin_url(dir.path()), None, "a link is not followed");
    }
}
