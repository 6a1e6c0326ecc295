//! Hooks never break the session: whatever arrives, exit 0 and write nothing
//! they should not (docs/design.md §2).

use serde_json::json;

use crate::support::*;

/// Lines in our log.
fn log_lines(env: &Env) -> usize {
    env.log().lines().count()
}

/// Session files in the state folder.
fn session_files(env: &Env) -> Vec<String> {
    std::fs::read_dir(env.sessions_dir())
        .map(|d| d.flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect())
        .unwrap_or_default()
}

#[test]
fn garbage_input_exits_zero_and_writes_nothing() {
    let env = Env::new();
    env.write_memory(&template_with("proj", &["- Fact."]));
    let before = env.memory_tree();
    let cwd = env.proj.to_str().unwrap().to_string();
    // Over the 16 MiB the hooks read: cut off, so not JSON.
    let mut huge = format!("{{\"session_id\": \"{SID}\", \"cwd\": \"{cwd}\", \"prompt\": \"").into_bytes();
    huge.resize(17 * 1024 * 1024, b'a');
    huge.extend_from_slice(b"\"}");
    let inputs: Vec<(&str, Vec<u8>)> = vec![
        ("empty", b"".to_vec()),
        ("not JSON", b"not json".to_vec()),
        ("a list", b"[1,2]".to_vec()),
        ("cut off", b"{".to_vec()),
        ("no fields", b"{}".to_vec()),
        ("session_id a number", b"{\"session_id\": 5}".to_vec()),
        ("no cwd", format!("{{\"session_id\": \"{SID}\"}}").into_bytes()),
        ("cwd a number", format!("{{\"session_id\": \"{SID}\", \"cwd\": 5}}").into_bytes()),
        ("relative cwd", format!("{{\"session_id\": \"{SID}\", \"cwd\": \"proj\"}}").into_bytes()),
        ("prompt a list", format!("{{\"session_id\": \"{SID}\", \"cwd\": \"{cwd}\", \"prompt\": []}}").into_bytes()),
        (
            "non-UTF-8 bytes",
            [b"{\"session_id\": \"".as_slice(), &[0xff, 0xfe, 0x80], b"\", \"cwd\": \"/tmp\"}"].concat(),
        ),
        ("non-UTF-8 alone", vec![0xc3, 0x28, 0xff, 0x00, 0x80]),
        ("very large", huge),
    ];
    for event in hook_events() {
        let event = event.as_str();
        for (what, stdin) in &inputs {
            let lines = log_lines(&env);
            let out = env.hook(event).stdin_bytes(stdin).status(0).run();
            out.assert_silent();
            assert_eq!(out.stderr, "", "{event} with {what}: {out:#?}");
            assert_eq!(log_lines(&env), lines + 1, "{event} with {what}: not one log line:\n{}", env.log());
        }
    }
    assert_eq!(env.memory_tree(), before);
    assert_eq!(session_files(&env), Vec::<String>::new(), "state written");
    assert_eq!(env.call_count(), 0);
}

#[test]
fn an_unknown_hook_event_name_in_the_input_changes_nothing() {
    // The command says which event runs; a payload that names another (or
    // one we do not know) is still read as that command's event.
    let env = Env::new();
    for name in ["Notification", "PreCompact", "NoSuchEvent"] {
        env.hook("post-tool-use")
            .fixture("PostToolUse-main.json")
            .set("hook_event_name", json!(name))
            .run()
            .ok()
            .assert_silent();
    }
    assert_eq!(env.memory_tree(), Vec::<String>::new());
    assert_eq!(env.log(), "");
    env.assert_no_save(SID_OTHER);
}

#[test]
fn a_session_id_with_a_path_is_refused() {
    let env = Env::new();
    for event in hook_events() {
        let event = event.as_str();
        for id in ["../../escape", "../sessions/x", "a/b", ""] {
            let fixture = fixture_for(event);
            let lines = log_lines(&env);
            let out = env.hook(event).fixture(fixture).set("session_id", json!(id)).status(0).run();
            out.assert_silent();
            assert_eq!(log_lines(&env), lines + 1, "{event} with {id:?}: not one log line:\n{}", env.log());
        }
    }
    assert_eq!(env.memory_tree(), Vec::<String>::new());
    assert!(!env.mem.join("escape.json").exists() && !env.mem.join("state/escape.json").exists());
    let sessions: Vec<_> = std::fs::read_dir(env.sessions_dir()).map(|d| d.flatten().collect()).unwrap_or_default();
    assert!(sessions.is_empty(), "state written: {sessions:?}");
    assert_eq!(env.call_count(), 0);
}

#[test]
fn an_unusable_state_folder_still_exits_zero() {
    let env = Env::new();
    let blocker = env.root().join("a-file");
    std::fs::write(&blocker, "not a folder").unwrap();
    let env = env.with_var("MEMORY_SAVE_HOME", blocker.to_str().unwrap());
    for event in hook_events() {
        let event = event.as_str();
        env.hook(event).fixture("UserPromptSubmit.json").status(0).run();
    }
}

/// With stdout closed, a hook's output cannot be written: it still exits
/// 0 (before, `println!` panicked and `panic = "abort"` made it 134).
#[test]
fn a_hook_whose_stdout_is_closed_exits_zero_for_every_event() {
    let env = Env::new();
    env.write_memory(&template_with("proj", &["- Fact."]));
    for event in hook_events() {
        let event = event.as_str();
        // A report waiting, so UserPromptSubmit and Stop have output too.
        env.script_reply(1, &adds("- Another fact."));
        let out = env.hook(event).fixture(fixture_for(event)).session(SID).close_stdout().status(0).run();
        assert_eq!(out.stderr, "", "{event}");
    }
    env.hook("session-start").fixture("SessionStart-startup.json").close_stdout().status(0).run();
}

/// A worker started by a hook holds none of the hook's descriptors, even
/// one numbered past 256 or 1024: a pipe Claude Code passed would otherwise
/// stay open as long as the worker waits (a batched session's worker waits
/// for its idle flush).
#[test]
fn the_worker_holds_none_of_the_hooks_descriptors() {
    use std::io::Read;
    use std::os::fd::{AsRawFd, FromRawFd};
    use std::os::unix::process::CommandExt;
    let env = Env::new();
    env.config("save_every_turns = 5\nidle_flush_seconds = 600\n");
    env.hook("user-prompt-submit").fixture("UserPromptSubmit.json").run().ok();
    let mut fds = [0; 2];
    // SAFETY: pipe writes two descriptors into the array we own.
    assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
    // SAFETY: both are ours from now on.
    let (mut reader, writer) = unsafe { (std::fs::File::from_raw_fd(fds[0]), std::fs::File::from_raw_fd(fds[1])) };
    let write_fd = writer.as_raw_fd();
    let mut input = fixture("Stop.json");
    input["cwd"] = json!(env.proj.to_str().unwrap());
    input["transcript_path"] = json!(env.transcript_path().to_str().unwrap());
    let mut cmd = std::process::Command::new(BIN);
    cmd.args(["hook", "stop"])
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", &env.home)
        .env("MEMORY_SAVE_HOME", &env.mem)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null());
    for high in [300, 2000] {
        // SAFETY: dup2 in the child before exec; no allocation.
        unsafe {
            cmd.pre_exec(move || {
                if libc::dup2(write_fd, high) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            })
        };
    }
    let mut child = cmd.spawn().unwrap();
    use std::io::Write;
    child.stdin.take().unwrap().write_all(input.to_string().as_bytes()).unwrap();
    assert!(child.wait().unwrap().success());
    drop(writer);
    // The worker waits for its idle flush: it must not hold the pipe open.
    wait_until("the worker to start", || env.state(SID).held_until().is_some());
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut rest = Vec::new();
        let _ = tx.send(reader.read_to_end(&mut rest).map(|_| ()));
    });
    let eof = rx.recv_timeout(std::time::Duration::from_secs(5));
    assert!(eof.is_ok(), "the worker kept the hook's descriptor open");
    // The worker is still there, waiting: the descriptor was not freed by its exit.
    assert!(env.sessions_dir().join(format!("{SID}.worker.lock")).exists());
    env.hook("session-end").fixture("SessionEnd-other.json").session(SID).run().ok();
    env.wait_saves(SID, 1);
}

/// A record a newer memory-save wrote (the folder's record in the state
/// folder; a `--shared` install's older binary on PATH is enough to meet
/// one) is never overwritten by this one: a save, a start, an approval and
/// an edit leave it byte for byte, and say which version wrote it and what
/// to do; the edit's memory is not half-written.
#[test]
fn a_newer_versions_folder_record_is_never_overwritten() {
    let env = Env::new();
    env.script_reply(1, &adds("- A fact."));
    env.saved_turn(SID, 1);
    let path = env.mem.join("state/memory-save/projects/proj.json");
    let newer = r#"{"version": 99, "approved_here": ["- Keep this."], "paths": ["path:/somewhere"]}"#;
    std::fs::write(&path, newer).unwrap();
    env.script_reply(2, &adds("- Another fact."));
    env.turn(SID);
    env.wait_idle(SID, 2);
    env.hook("session-start").fixture("SessionStart-startup.json").session(SID_OTHER).run().ok();
    env.cmd(&["review", "--approve-all"]).in_dir(&env.proj).run();
    env.cmd(&["guards"]).in_dir(&env.proj).run();
    assert_eq!(std::fs::read_to_string(&path).unwrap(), newer, "a newer record was overwritten");
    let status = env.state(SID).status().to_string();
    assert!(status.contains("newer memory-save (record version 99)"), "{status}");
    let edited = env.memory().unwrap().replace("- None yet.", "- Never push on Fridays.");
    let before = env.memory().unwrap();
    let out = env.cmd(&["edit"]).var("EDITOR", &env.editor(&edited, "")).in_dir(&env.proj).status(1).run();
    assert_eq!(
        out.stderr,
        format!(
            "memory-save: {} was written by a newer memory-save (record version 99); upgrade memory-save to change it\n",
            path.display()
        )
    );
    assert_eq!(std::fs::read_to_string(&path).unwrap(), newer);
    assert_eq!(env.memory().unwrap(), before, "nothing half-written");
}
