//! `cargo bench --bench hooks`: each hook's wall time, run as Claude Code
//! runs it (a new process, the payload on stdin), beside a no-op Rust binary
//! that reads the same stdin. Prints a table; asserts no time, because
//! timing belongs in a benchmark, not a test, only that a row's setup holds.
//!
//! `MEMORY_SAVE_BENCH_RUNS` sets the runs per row (default 300). With
//! `MEMORY_SAVE_BENCH_STATIC=1` it measures the static build that
//! `./install.sh` installs on Linux (`scripts/build-static.sh`) beside a
//! statically linked no-op, instead of cargo's dynamic release build.
//!
//! Both binaries are timed as copies, as `cargo install` leaves them: the
//! file the linker wrote sits in the page cache in small pieces, each a
//! fault when mapped, and the matching guard call took 1.085 ms in place
//! against 0.884 ms as a copy (160 faults against 142).

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/claude-code-2.1.328");
const NOOP_SOURCE: &str =
    "use std::io::Read;\nfn main() { let mut s = Vec::new(); let _ = std::io::stdin().read_to_end(&mut s); }\n";

struct Bench {
    dir: tempfile::TempDir,
    exe: PathBuf,
    noop: PathBuf,
    runs: usize,
}

impl Bench {
    fn project(&self) -> PathBuf {
        self.dir.path().join("app")
    }

    /// A fixture with its cwd pointed at our project, written to a file.
    fn payload(&self, fixture: &str) -> PathBuf {
        let text = std::fs::read_to_string(fixture_dir().join(fixture)).expect("fixture");
        let text = text.replace("/home/dev/src/app", self.project().to_str().unwrap());
        let path = self.dir.path().join(fixture);
        std::fs::write(&path, text).unwrap();
        path
    }

    fn command(&self, program: &Path, args: &[&str], stdin: &Path) -> Command {
        let mut cmd = Command::new(program);
        cmd.args(args)
            .env("MEMORY_SAVE_HOME", self.dir.path().join("home"))
            .env("MEMORY_SAVE_CLAUDE", self.dir.path().join("no-claude"))
            .stdin(Stdio::from(File::open(stdin).unwrap()))
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        cmd
    }

    /// What the hook prints, untimed: to check that a row's setup holds.
    fn answer(&self, args: &[&str], stdin: &Path) -> String {
        let out = self.command(&self.exe, args, stdin).stdout(Stdio::piped()).output().expect("run");
        assert!(out.status.success());
        String::from_utf8(out.stdout).unwrap()
    }

    fn time(&self, program: &Path, args: &[&str], stdin: &Path) -> Duration {
        let mut cmd = self.command(program, args, stdin);
        let started = Instant::now();
        let status = cmd.status().expect("run");
        let took = started.elapsed();
        assert!(status.success());
        took
    }

    /// Waits until no background worker runs (its lock is free): a worker
    /// that an earlier, untimed step started would otherwise share the two
    /// cores with the run being timed, and that is the worker's cost, not
    /// the hook's.
    fn settle(&self) {
        let dir = self.dir.path().join("home/state/memory-save/sessions");
        let deadline = Instant::now() + Duration::from_secs(5);
        let Ok(entries) = std::fs::read_dir(&dir) else { return };
        for entry in entries.flatten().filter(|e| e.file_name().to_string_lossy().ends_with(".worker.lock")) {
            let Ok(file) = File::open(entry.path()) else { continue };
            while matches!(file.try_lock(), Err(std::fs::TryLockError::WouldBlock)) && Instant::now() < deadline {
                std::thread::sleep(Duration::from_micros(200));
            }
        }
    }

    /// Runs `before` (untimed) then the hook, interleaved with the no-op so
    /// that drift in machine load hits both columns alike.
    fn row(&self, name: &str, args: &[&str], fixture: &str, before: Option<(&[&str], &str)>) {
        let before = before.map(|(args, fixture)| (args, self.payload(fixture)));
        self.row_of(name, args, &self.payload(fixture), before);
    }

    /// `row`, with the payload already written.
    fn row_of(&self, name: &str, args: &[&str], stdin: &Path, before: Option<(&[&str], PathBuf)>) {
        let stdin = stdin.to_path_buf();
        let mut hook = Vec::with_capacity(self.runs);
        let mut noop = Vec::with_capacity(self.runs);
        for _ in 0..self.runs {
            if let Some((args, stdin)) = &before {
                self.time(&self.exe, args, stdin);
            }
            self.settle();
            hook.push(self.time(&self.exe, args, &stdin));
            self.settle();
            noop.push(self.time(&self.noop, &[], &stdin));
        }
        let (h, n) = (median(&mut hook), median(&mut noop));
        println!(
            "| {name:<36} | {:>9.3} | {:>9.3} | {:>9.3} | {:>5.2}x |",
            ms(h),
            ms(percentile(&mut hook, 0.9)),
            ms(n),
            h.as_secs_f64() / n.as_secs_f64()
        );
    }
}

fn fixture_dir() -> PathBuf {
    std::env::var_os("MEMORY_SAVE_FIXTURES").map_or_else(|| PathBuf::from(FIXTURES), PathBuf::from)
}

fn median(v: &mut [Duration]) -> Duration {
    percentile(v, 0.5)
}

fn percentile(v: &mut [Duration], p: f64) -> Duration {
    v.sort();
    v[((v.len() - 1) as f64 * p).round() as usize]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// The static build, by the same script install.sh uses.
fn build_static() -> PathBuf {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/build-static.sh");
    let out = Command::new(script).stderr(Stdio::inherit()).output().expect("scripts/build-static.sh");
    assert!(out.status.success(), "scripts/build-static.sh failed");
    PathBuf::from(String::from_utf8(out.stdout).unwrap().lines().last().expect("a path").trim())
}

fn build_noop(dir: &Path, static_build: bool) -> PathBuf {
    let source = dir.join("noop.rs");
    std::fs::write(&source, NOOP_SOURCE).unwrap();
    let out = dir.join("noop");
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let mut rustc = Command::new(rustc);
    if static_build && cfg!(target_os = "linux") {
        rustc.args(["-C", "target-feature=+crt-static", "-C", "relocation-model=static"]);
    }
    let status = rustc
        .args(["-C", "opt-level=3", "-C", "strip=symbols", "-C", "panic=abort", "-o"])
        .arg(&out)
        .arg(&source)
        .status()
        .expect("rustc");
    assert!(status.success(), "cannot build the no-op binary");
    out
}

/// `binary` copied into `dir`, as `cargo install` copies it.
/// Under its own name, in a folder of its own: `install` refuses a binary
/// not named memory-save.
fn installed(binary: &Path, dir: &Path) -> PathBuf {
    let name = binary.file_name().unwrap();
    let folder = dir.join(format!("installed-{}", name.to_string_lossy()));
    std::fs::create_dir_all(&folder).unwrap();
    let copy = folder.join(name);
    std::fs::copy(binary, &copy).expect("copy the binary");
    copy
}

/// A MEMORY.md in the template of about `chars` characters.
fn memory_of(chars: usize) -> String {
    let mut text =
        String::from("# app\n\n## CRITICAL RULES\n- Run tests with cargo test\n\n## Architecture & Config Facts\n");
    let mut n = 0;
    while text.chars().count() < chars - 200 {
        text.push_str(&format!("- fact {n:03}: {}\n", "lorem ipsum dolor sit amet ".repeat(7)));
        n += 1;
    }
    text.push_str("\n## Active Warnings\n- None yet.\n\n## Topic Files\n- None yet.\n");
    text
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return; // `cargo test --benches` asks for a listing; we have no tests
    }
    let runs = std::env::var("MEMORY_SAVE_BENCH_RUNS").ok().and_then(|r| r.parse().ok()).unwrap_or(300);
    let dir = tempfile::tempdir().unwrap();
    let static_build = std::env::var_os("MEMORY_SAVE_BENCH_STATIC").is_some_and(|v| v == "1");
    let noop = installed(&build_noop(dir.path(), static_build), dir.path());
    let built = if static_build { build_static() } else { PathBuf::from(env!("CARGO_BIN_EXE_memory-save")) };
    let exe = installed(&built, dir.path());
    println!(
        "binary: {} ({}), each timed as a copy",
        built.display(),
        if static_build { "static, beside a static no-op" } else { "cargo's release build" }
    );
    let bench = Bench { exe, noop, runs, dir };
    std::fs::create_dir_all(bench.project()).unwrap();
    Command::new("git").args(["init", "-q"]).current_dir(bench.project()).status().unwrap();
    let memory_dir = bench.dir.path().join("home/memory/app");
    std::fs::create_dir_all(&memory_dir).unwrap();
    let memory = memory_of(49_000);
    std::fs::write(memory_dir.join("MEMORY.md"), &memory).unwrap();
    // A save a turn, as before batching became the default, so each row
    // measures the same work across versions (a batched Stop leaves a
    // worker waiting minutes for its idle flush, which `settle` would wait
    // out).
    std::fs::write(bench.dir.path().join("home/memory-save.toml"), "save_every_turns = 1\n").unwrap();

    println!("memory-save hook wall time, {runs} runs per row (MEMORY.md: {} characters)\n", memory.chars().count());
    println!("| {:<36} | {:>9} | {:>9} | {:>9} | {:>6} |", "hook", "median ms", "p90 ms", "no-op ms", "ratio");
    println!("|{}|{}|{}|{}|{}|", "-".repeat(38), "-".repeat(11), "-".repeat(11), "-".repeat(11), "-".repeat(8));
    let prompt: &[&str] = &["hook", "user-prompt-submit"];
    bench.row(
        "PostToolUse (first tool of a turn)",
        &["hook", "post-tool-use"],
        "PostToolUse-main.json",
        Some((prompt, "UserPromptSubmit.json")),
    );
    bench.row("PostToolUse (flag already set)", &["hook", "post-tool-use"], "PostToolUse-main.json", None);
    bench.row("PostToolUse (subagent)", &["hook", "post-tool-use"], "PostToolUse-subagent.json", None);
    let stop: &[&str] = &["hook", "stop"];
    bench.row("UserPromptSubmit (after a Stop)", prompt, "UserPromptSubmit.json", Some((stop, "Stop.json")));
    bench.row("UserPromptSubmit (interrupted turn)", prompt, "UserPromptSubmit.json", None);
    bench.row("Stop (save requested)", &["hook", "stop"], "Stop.json", Some((prompt, "UserPromptSubmit.json")));
    bench.row("Stop (nothing to save)", &["hook", "stop"], "Stop.json", None);
    bench.row(
        "SessionStart part 1 (49,000 chars)",
        &["hook", "session-start", "--part", "1"],
        "SessionStart-startup.json",
        None,
    );
    bench.row(
        "SessionStart part 6 (49,000 chars)",
        &["hook", "session-start", "--part", "6"],
        "SessionStart-startup.json",
        None,
    );
    guards(&bench, &memory_dir, &memory);
    everyday_commands(&bench);
    scans_and_merges();
}

/// PreToolUse with no guards, then with 20 (a session that loaded them),
/// none matching and one matching: the guards' cost on every Bash call.
fn guards(bench: &Bench, memory_dir: &Path, memory: &str) {
    let pre: &[&str] = &["hook", "pre-tool-use"];
    bench.row("PreToolUse (no guards)", pre, "PreToolUse-bash.json", None);
    let rules: String = (0..20).map(|n| format!("- Never run the tool number {n} by hand.\n")).collect();
    let guarded = memory.replacen("## CRITICAL RULES\n", &format!("## CRITICAL RULES\n{rules}"), 1);
    std::fs::write(memory_dir.join("MEMORY.md"), &guarded).unwrap();
    let guards: Vec<String> = (0..20)
        .map(|n| {
            format!(
                r#"{{"id": "{:08x}", "rule": "- Never run the tool number {n} by hand.", "tool": "Bash", "match": "tool{n}\\s+--force", "decision": "ask"}}"#,
                0xa0 + n
            )
        })
        .collect();
    let file = format!(r#"{{"version": 1, "guards": [{}]}}"#, guards.join(", "));
    std::fs::write(memory_dir.join("guards.json"), file).unwrap();
    // The session of the PreToolUse payload loads them.
    let pre_payload: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(fixture_dir().join("PreToolUse-bash.json")).unwrap()).unwrap();
    let start = bench.payload("SessionStart-startup.json");
    let mut start_json: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&start).unwrap()).unwrap();
    start_json["session_id"] = pre_payload["session_id"].clone();
    std::fs::write(&start, start_json.to_string()).unwrap();
    bench.time(&bench.exe, &["hook", "session-start", "--part", "1"], &start);
    let plain = bench.payload("PreToolUse-bash.json");
    let matching = bench.dir.path().join("PreToolUse-matching.json");
    let text = std::fs::read_to_string(&plain).unwrap().replace("touch guarded-ran", "tool7 --force");
    std::fs::write(&matching, text).unwrap();
    // The rows time what they name only if the session bound the guards.
    assert_eq!(bench.answer(pre, &plain), "", "a guard matched the plain call");
    let asked = bench.answer(pre, &matching);
    assert!(asked.contains(r#""permissionDecision":"ask""#), "the guards did not bind: {asked:?}");
    bench.row_of("PreToolUse (20 guards, none match)", pre, &plain, None);
    bench.row_of("PreToolUse (20 guards, one matches)", pre, &matching, None);
    std::fs::write(memory_dir.join("MEMORY.md"), memory).unwrap();
    std::fs::remove_file(memory_dir.join("guards.json")).unwrap();
}

/// install, uninstall, show and status on a settings file with 50 hooks of
/// the user's, the median of `runs` (at most 50): the figures a test once
/// asserted, where two test threads made them fail.
fn everyday_commands(bench: &Bench) {
    let home = bench.dir.path().join("user");
    std::fs::create_dir_all(home.join(".claude")).unwrap();
    let groups: Vec<String> = (0..50)
        .map(|n| format!(r#"{{"matcher": "Tool{n}", "hooks": [{{"type": "command", "command": "~/hooks/h{n}.sh", "timeout": 5}}]}}"#))
        .collect();
    let settings = format!("{{\n  \"hooks\": {{\n    \"PreToolUse\": [{}]\n  }}\n}}\n", groups.join(", "));
    std::fs::write(home.join(".claude/settings.json"), settings).unwrap();
    let empty = bench.dir.path().join("empty-stdin");
    std::fs::write(&empty, "").unwrap();
    println!("\n| {:<36} | {:>9} |", "everyday command, 50 hooks of yours", "median ms");
    println!("|{}|{}|", "-".repeat(38), "-".repeat(11));
    let runs = bench.runs.min(50);
    let mut times: [Vec<Duration>; 4] = Default::default();
    for _ in 0..runs {
        for (n, args) in [&["install"][..], &["uninstall"][..], &["show"][..], &["status"][..]].iter().enumerate() {
            let mut cmd = bench.command(&bench.exe, args, &empty);
            cmd.env("HOME", &home).current_dir(bench.project());
            let started = Instant::now();
            let out = cmd.stderr(Stdio::piped()).output().expect("run");
            times[n].push(started.elapsed());
            assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
        }
    }
    for (name, mut runs) in ["install", "uninstall", "show", "status"].into_iter().zip(times) {
        println!("| {:<36} | {:>9.2} |", name, ms(median(&mut runs)));
    }
}

/// The scans and the merge that hostile text once made quadratic (issue
/// 17): their absolute figures, at two sizes each (the tests check growth).
fn scans_and_merges() {
    use memory_save::memory::{merge::merge_memory, secrets::find_secret};
    let time = |f: &dyn Fn()| {
        let started = Instant::now();
        f();
        started.elapsed()
    };
    println!("\n| {:<36} | {:>9} |", "scan or merge", "ms");
    println!("|{}|{}|", "-".repeat(38), "-".repeat(11));
    for bytes in [100_000, 1_000_000] {
        let text = "token=abc ".repeat(bytes / 10);
        let took = time(&|| {
            let _ = find_secret(&text);
        });
        println!("| {:<36} | {:>9.1} |", format!("secret scan, one line of {} KB", bytes / 1000), ms(took));
    }
    let lines = |seed: u64, n: usize| -> String {
        (0..n).map(|i| format!("- line {} {i}\n", (i as u64).wrapping_mul(seed) % 9973)).collect()
    };
    for n in [20_000, 40_000] {
        let (base, ours, theirs) = (lines(1, n), lines(7, n), lines(13, n));
        let took = time(&|| {
            let _ = merge_memory(Some(&base), &ours, &theirs, "p");
        });
        println!("| {:<36} | {:>9.1} |", format!("merge of {n} lines"), ms(took));
    }
}
