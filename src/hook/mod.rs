//! The hook events. Each reads its input, touches the session's state and
//! returns; none runs the fork. Errors go to the log, never to the exit code.

mod post_tool_use;
mod pre_compact;
mod pre_tool_use;
mod restore;
mod session_end;
mod session_start;
mod stop;
mod user_prompt_submit;
pub mod wire;
pub mod words;

use std::io::Read;

use anyhow::{Context, Result};

use crate::config::SaveLimits;
use crate::save::machine::Facts;
use crate::store::paths::Roots;
use crate::store::session::BoundGuards;
use crate::store::state::{SessionId, SessionStore};
use wire::{HookInput, HookOutput};
use words::HookEvent;

/// Hook input larger than this is not a hook input.
const MAX_STDIN: u64 = 16 * 1024 * 1024;
/// Every hook ends by then, whatever it waits on: below Claude Code's own
/// limit for our hooks (hooks.json: 10 s), so a hook never shows as an error.
const DEADLINE: std::time::Duration = std::time::Duration::from_secs(5);
/// SessionEnd hooks share a budget of about 1.5 s (measured).
const SESSION_END_DEADLINE: std::time::Duration = std::time::Duration::from_millis(1000);

pub struct Ctx {
    pub roots: Roots,
    pub input: HookInput,
    /// The input's session id, checked: it names files.
    pub session: SessionId,
}

impl Ctx {
    pub fn sessions(&self) -> SessionStore {
        SessionStore::new(self.roots.sessions_dir())
    }
}

pub fn run((event, part): (HookEvent, usize)) -> Result<()> {
    if crate::env::inside_fork() || crate::env::disabled() {
        return Ok(());
    }
    let deadline = if event == HookEvent::SessionEnd { SESSION_END_DEADLINE } else { DEADLINE };
    crate::sys::arm_deadline(crate::env::deadline_override().map_or(deadline, |shorter| shorter.min(deadline)));
    let input: HookInput = read_input(std::io::stdin().lock())?;
    let session = SessionId::parse(&input.session_id)?;
    // Every event carries the session's folder (measured); the save runs
    // there, so an input without it is not one to act on.
    if !std::path::Path::new(&input.cwd).is_absolute() {
        anyhow::bail!("hook input has no absolute \"cwd\"; ignoring this hook call");
    }
    let ctx = Ctx { roots: crate::config::roots()?, input, session };
    let output = match event {
        HookEvent::SessionStart => session_start::run(&ctx, part)?,
        HookEvent::UserPromptSubmit => user_prompt_submit::run(&ctx)?,
        HookEvent::PreToolUse => pre_tool_use::run(&ctx)?,
        HookEvent::PostToolUse => post_tool_use::run(&ctx)?,
        HookEvent::Skill => restore::skill(&ctx)?,
        HookEvent::Stop => stop::run(&ctx)?,
        HookEvent::SessionEnd => session_end::run(&ctx)?,
        HookEvent::PreCompact => pre_compact::run(&ctx)?,
    };
    if let Some(output) = output {
        print(event, &output)?;
    }
    Ok(())
}

/// Writes the hook's answer to Claude Code. Not println!: with stdout
/// closed it panics, and panic = "abort" exits 134, an error in the
/// user's session.
fn print(event: HookEvent, output: &HookOutput) -> Result<()> {
    use std::io::Write;
    let line = format!("{}\n", serde_json::to_string(output)?);
    let mut stdout = std::io::stdout().lock();
    if let Err(e) = stdout.write_all(line.as_bytes()).and_then(|()| stdout.flush()) {
        crate::store::log::error(&format!("hook {event:?}: cannot write its output: {e}"));
    }
    Ok(())
}

/// Reads the hook's JSON object and stops as soon as it is whole, so a writer
/// that never closes the pipe does not hold the hook until its deadline.
pub fn read_input(mut stdin: impl Read) -> Result<HookInput> {
    let mut raw = Vec::with_capacity(8192);
    let mut chunk = [0u8; 8192];
    let mut end = ObjectEnd::default();
    loop {
        let n = match stdin.read(&mut chunk) {
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e).context("cannot read the hook input"),
        };
        let whole = end.feed(&chunk[..n]);
        raw.extend_from_slice(&chunk[..n]);
        if n == 0 || whole || raw.len() as u64 >= MAX_STDIN {
            return serde_json::from_slice::<HookInput>(&raw)
                .context("hook input is not the JSON object Claude Code sends");
        }
    }
}

/// Finds where a JSON object's text ends, a byte at a time, however it arrives.
#[derive(Default)]
struct ObjectEnd {
    depth: u32,
    in_string: bool,
    escaped: bool,
}

impl ObjectEnd {
    /// Whether the object closed within `bytes`.
    fn feed(&mut self, bytes: &[u8]) -> bool {
        for &b in bytes {
            match (self.in_string, self.escaped, b) {
                (true, true, _) => self.escaped = false,
                (true, false, b'\\') => self.escaped = true,
                (true, false, b'"') => self.in_string = false,
                (true, false, _) => {}
                (false, _, b'"') => self.in_string = true,
                (false, _, b'{' | b'[') => self.depth += 1,
                (false, _, b'}' | b']') => {
                    self.depth = self.depth.saturating_sub(1);
                    if self.depth == 0 {
                        return true;
                    }
                }
                _ => {}
            }
        }
        false
    }
}

/// The pending report line, as output for a hook that can show it.
pub fn report_output(report: Option<String>) -> Option<HookOutput> {
    report.map(|line| HookOutput {
        system_message: Some(crate::memory::text::visible(&line)),
        hook_specific_output: None,
    })
}

/// A turn's event in the save protocol: the session remembered, `step` given
/// the facts and the limits (read only when asked), the worker started if wanted.
fn step<R>(
    ctx: &Ctx,
    step: impl FnOnce(&mut crate::store::state::SessionState, Facts, &dyn Fn() -> SaveLimits) -> (R, bool),
) -> Result<R> {
    let mut fired = (None, Default::default());
    let result = crate::save::queue::update_then_start(&ctx.sessions(), &ctx.session, |s| {
        // The guards PreToolUse saw fire, counted in the project's record
        // here, off the hot path of the call they answered.
        fired = (s.input.project.clone(), std::mem::take(&mut s.input.fired));
        remember_session(&mut s.input, ctx);
        let facts = Facts::of(&s.input, crate::env::now_unix());
        step(s, facts, &|| crate::config::of(&ctx.roots).limits())
    })?;
    if let (Some(project), false) = (&fired.0, fired.1.is_empty())
        && let Err(e) = crate::store::guard_counts::count_fired(&ctx.roots, project, &fired.1)
    {
        crate::store::log::error(&format!("cannot count the guards that fired in {project}: {e:#}"));
    }
    Ok(result)
}

/// What the worker needs to run the fork, refreshed at every event carrying it.
pub fn remember_session(s: &mut crate::store::state::SessionInput, ctx: &Ctx) {
    if !ctx.input.cwd.is_empty() {
        s.cwd.clone_from(&ctx.input.cwd);
    }
    match crate::env::claude_project_dir() {
        Some(dir) => s.project_dir = dir,
        None if s.project_dir.is_empty() => s.project_dir.clone_from(&s.cwd),
        None => {}
    }
    if !ctx.input.transcript_path.is_empty() {
        s.transcript_path.clone_from(&ctx.input.transcript_path);
    }
    if let Some(level) = ctx.input.effort_level() {
        s.effort = Some(level);
    }
    s.unattended = crate::env::unattended();
    if s.project_cwd != s.project_folder() {
        s.project_cwd = s.project_folder().to_string();
        let config = crate::config::of(&ctx.roots);
        match crate::project::locate(std::path::Path::new(&s.project_cwd), &ctx.roots, &config) {
            Ok(project) => {
                // Another memory's guards bind nothing here.
                let key = project.folder(&ctx.roots).key();
                if s.project.as_deref() != Some(key.as_str()) {
                    s.guards = BoundGuards::default();
                }
                s.off = project.off_reason(&config);
                s.guard_root = project.roots.first().map(|top| top.display().to_string()).unwrap_or_default();
                // A folder that may be a stranger's memory is not this
                // session's project until a save confirms it: its guards
                // and reports never reach the session.
                s.project = project.provisional.is_none().then_some(key);
            }
            // The worker reports a folder it cannot name, in the status line.
            Err(_) => {
                s.off = None;
                s.project = None;
                s.guards = BoundGuards::default();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Hands out its bytes in pieces of `size`, then blocks forever (as a
    /// writer that never closes would): a read past the object panics.
    struct Pieces<'a>(&'a [u8], usize);

    impl Read for Pieces<'_> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            assert!(!self.0.is_empty(), "read past the end of the object");
            let n = self.1.min(self.0.len()).min(buf.len());
            buf[..n].copy_from_slice(&self.0[..n]);
            self.0 = &self.0[n..];
            Ok(n)
        }
    }

    #[test]
    fn the_input_is_read_up_to_the_end_of_its_object_and_no_further() {
        let object = br#"{"session_id":"a","cwd":"/x","prompt":"quote \" brace } bracket ] {[","tool_response":{"a":[1,{"b":"}"}]}}"#;
        for size in [1, 2, 7, 64, object.len()] {
            let input = read_input(Pieces(object, size)).unwrap();
            assert_eq!(input.prompt.as_deref(), Some("quote \" brace } bracket ] {["), "pieces of {size}");
        }
    }
}
