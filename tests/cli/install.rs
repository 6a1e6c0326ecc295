//! `memory-save install` / `uninstall` against a settings file in a temp HOME.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::support::{Env, Output};

const EVENTS: [&str; 6] = ["SessionStart", "UserPromptSubmit", "PostToolUse", "Stop", "PreCompact", "SessionEnd"];

/// The shared bench's HOME, with the settings file install writes.
struct Home {
    env: Env,
}

impl Home {
    fn new() -> Home {
        Home { env: Env::new() }
    }

    fn path(&self) -> &Path {
        &self.env.home
    }

    fn settings(&self) -> PathBuf {
        self.path().join(".claude").join("settings.json")
    }

    fn backup(&self) -> PathBuf {
        self.path().join(".claude").join("settings.json.memory-save.bak")
    }

    fn write_settings(&self, text: &str) {
        std::fs::create_dir_all(self.path().join(".claude")).unwrap();
        std::fs::write(self.settings(), text).unwrap();
    }

    fn read_settings(&self) -> String {
        std::fs::read_to_string(self.settings()).expect("settings.json exists")
    }

    fn run(&self, args: &[&str]) -> Output {
        self.run_in(self.path(), args)
    }

    fn run_in(&self, cwd: &Path, args: &[&str]) -> Output {
        self.env.cmd(args).in_dir(cwd).run()
    }

    /// Runs and insists on exit 0 and a quiet stderr; returns stdout.
    fn ok(&self, args: &[&str]) -> String {
        let out = self.run(args).ok();
        assert_eq!(out.stderr, "", "{args:?}");
        out.stdout
    }
}

/// The first word of every command we write: the binary's real path.
fn exe() -> String {
    let path = std::fs::canonicalize(env!("CARGO_BIN_EXE_memory-save")).unwrap();
    path.to_str().unwrap().to_owned()
}

fn parse(text: &str) -> Value {
    serde_json::from_str(text).expect("valid JSON")
}

/// How Claude Code's own files look: two-space JSON and a final newline.
fn pretty(value: &Value) -> String {
    serde_json::to_string_pretty(value).unwrap() + "\n"
}

fn commands(settings: &Value, event: &str) -> Vec<String> {
    settings["hooks"][event]
        .as_array()
        .unwrap_or(&Vec::new())
        .iter()
        .flat_map(|group| group["hooks"].as_array().cloned().unwrap_or_default())
        .map(|entry| entry["command"].as_str().unwrap_or_default().to_owned())
        .collect()
}

fn user_settings() -> Value {
    json!({
        "model": "opus",
        "env": {"FOO": "bar"},
        "permissions": {"allow": ["Bash(ls:*)"]},
        "hooks": {
            "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "~/guard.sh", "timeout": 5}]}],
            "Stop": [{"hooks": [{"type": "command", "command": "notify-send 'done'"}]}]
        }
    })
}

#[test]
fn fresh_install_creates_settings_with_every_event() {
    let home = Home::new();
    let stdout = home.ok(&["install"]);
    assert!(stdout.contains(&home.settings().display().to_string()), "{stdout}");
    let settings = parse(&home.read_settings());
    let events: Vec<&str> = settings["hooks"].as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(events, EVENTS);
    let start = commands(&settings, "SessionStart");
    let expected: Vec<String> = (1..=6).map(|n| format!("{} hook session-start --part {n}", exe())).collect();
    assert_eq!(start, expected);
    assert_eq!(commands(&settings, "Stop"), [format!("{} hook stop", exe())]);
    assert_eq!(commands(&settings, "PostToolUse"), [format!("{} hook post-tool-use", exe())]);
    assert_eq!(settings["hooks"]["PostToolUse"][0]["matcher"], "*");
    assert!(settings.get("statusLine").is_none());
    assert!(!home.backup().exists(), "no backup of a file that did not exist");
}

#[test]
fn install_keeps_other_settings_and_hooks_and_writes_a_backup() {
    let home = Home::new();
    // Four-space indent: not our layout, so the backup must keep it as it was.
    let original = serde_json::to_string_pretty(&user_settings()).unwrap().replace("  ", "    ");
    home.write_settings(&original);
    home.ok(&["install"]);
    let settings = parse(&home.read_settings());
    for key in ["model", "env", "permissions"] {
        assert_eq!(settings[key], user_settings()[key], "{key}");
    }
    let keys: Vec<&str> = settings.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(keys, ["model", "env", "permissions", "hooks"]);
    assert_eq!(settings["hooks"]["PreToolUse"], user_settings()["hooks"]["PreToolUse"]);
    assert_eq!(commands(&settings, "Stop"), ["notify-send 'done'".to_owned(), format!("{} hook stop", exe())]);
    assert_eq!(std::fs::read_to_string(home.backup()).unwrap(), original);
}

#[test]
fn second_install_leaves_the_file_byte_identical() {
    let home = Home::new();
    home.write_settings(&pretty(&user_settings()));
    home.ok(&["install", "--statusline"]);
    let once = home.read_settings();
    let stdout = home.ok(&["install", "--statusline"]);
    assert_eq!(home.read_settings(), once);
    assert!(stdout.contains("nothing changed"), "{stdout}");
    // The backup still holds the file from before the first install.
    assert_eq!(std::fs::read_to_string(home.backup()).unwrap(), pretty(&user_settings()));
}

#[test]
fn uninstall_restores_the_original_file() {
    // Written in Claude Code's layout: back byte for byte.
    let home = Home::new();
    let original = pretty(&user_settings());
    home.write_settings(&original);
    home.ok(&["install"]);
    home.ok(&["uninstall"]);
    assert_eq!(home.read_settings(), original);

    // Any other layout: back as equal JSON.
    let home = Home::new();
    let compact = serde_json::to_string(&user_settings()).unwrap();
    home.write_settings(&compact);
    home.ok(&["install"]);
    home.ok(&["uninstall"]);
    assert_eq!(parse(&home.read_settings()), user_settings());

    // A file install created loses the hooks key again.
    let home = Home::new();
    home.ok(&["install", "--statusline"]);
    home.ok(&["uninstall"]);
    assert_eq!(parse(&home.read_settings()), json!({}));
}

#[test]
fn uninstall_without_our_entries_changes_nothing() {
    let home = Home::new();
    let compact = serde_json::to_string(&user_settings()).unwrap();
    home.write_settings(&compact);
    let stdout = home.ok(&["uninstall"]);
    assert!(stdout.contains("nothing changed"), "{stdout}");
    assert_eq!(home.read_settings(), compact);
    assert!(!home.backup().exists());
}

#[test]
fn invalid_json_is_refused_and_left_untouched() {
    for text in ["{ \"model\": \"opus\", }", "[]", "{\"hooks\": [1]}"] {
        let home = Home::new();
        home.write_settings(text);
        for args in [&["install"][..], &["uninstall"][..]] {
            let out = home.run(args);
            assert_eq!(out.code, Some(1), "{args:?} on {text}");
            let stderr = out.stderr.clone();
            assert!(stderr.contains(&home.settings().display().to_string()), "{stderr}");
            assert!(stderr.contains("nothing was changed"), "{stderr}");
            assert_eq!(home.read_settings(), text);
            assert!(!home.backup().exists());
        }
    }
}

#[test]
fn dry_run_writes_nothing() {
    let home = Home::new();
    let stdout = home.ok(&["install", "--dry-run", "--statusline"]);
    assert!(stdout.contains("dry run"), "{stdout}");
    let our_stop = format!("\"command\": \"{} hook stop\"", exe());
    assert!(stdout.lines().any(|l| l.starts_with("+ ") && l.contains(&our_stop)), "{stdout}");
    assert!(!home.path().join(".claude").exists());

    let original = pretty(&user_settings());
    home.write_settings(&original);
    home.ok(&["install", "--dry-run"]);
    assert_eq!(home.read_settings(), original);
    assert!(!home.backup().exists());

    home.ok(&["install"]);
    let installed = home.read_settings();
    let stdout = home.ok(&["uninstall", "--dry-run"]);
    assert!(stdout.contains("- "), "{stdout}");
    assert_eq!(home.read_settings(), installed);
}

#[test]
fn project_install_writes_the_current_folders_settings() {
    let home = Home::new();
    let project = home.path().join("app");
    std::fs::create_dir(&project).unwrap();
    let out = home.run_in(&project, &["install", "--project"]);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let written = project.join(".claude").join("settings.json");
    let settings = parse(&std::fs::read_to_string(&written).unwrap());
    assert_eq!(commands(&settings, "Stop"), [format!("{} hook stop", exe())]);
    assert!(!home.settings().exists(), "the user settings stay untouched");

    let out = home.run_in(&project, &["uninstall", "--project"]);
    assert_eq!(out.code, Some(0), "{out:#?}");
    assert_eq!(parse(&std::fs::read_to_string(&written).unwrap()), json!({}));
}

#[test]
fn statusline_wraps_theirs_and_uninstall_gives_it_back() {
    let home = Home::new();
    let theirs = r#"echo "$(basename "$PWD")" 'it'\''s' | cut -c1-40"#;
    let mut original = user_settings();
    original["statusLine"] = json!({"type": "command", "command": theirs, "padding": 0});
    let original = pretty(&original);
    home.write_settings(&original);

    home.ok(&["install", "--statusline"]);
    let settings = parse(&home.read_settings());
    let status = &settings["statusLine"];
    assert_eq!(status["padding"], 0);
    let command = status["command"].as_str().unwrap();
    let prefix = format!("{} statusline -- sh -c '", exe());
    assert!(command.starts_with(&prefix), "{command}");

    // What the shell hands our statusline subcommand: `sh`, `-c`, their
    // command exactly. Let a real shell parse it, with printf in our place.
    let probe = command.replacen(&exe(), "printf '[%s]\\n'", 1);
    let out = std::process::Command::new("sh").arg("-c").arg(&probe).output().unwrap();
    let expected = format!("[statusline]\n[--]\n[sh]\n[-c]\n[{theirs}]\n");
    assert_eq!(String::from_utf8(out.stdout).unwrap(), expected);

    home.ok(&["uninstall"]);
    assert_eq!(home.read_settings(), original);
}

#[test]
fn statusline_alone_when_there_was_none() {
    let home = Home::new();
    home.ok(&["install", "--statusline"]);
    let settings = parse(&home.read_settings());
    assert_eq!(settings["statusLine"], json!({"type": "command", "command": format!("{} statusline", exe())}));
    home.ok(&["uninstall"]);
    assert!(parse(&home.read_settings()).get("statusLine").is_none());
}

#[test]
fn a_symlinked_settings_file_stays_a_symlink() {
    // Dotfile managers link ~/.claude/settings.json into a repository.
    let home = Home::new();
    let real = home.path().join("dotfiles-settings.json");
    std::fs::write(&real, pretty(&user_settings())).unwrap();
    std::fs::create_dir_all(home.path().join(".claude")).unwrap();
    std::os::unix::fs::symlink(&real, home.settings()).unwrap();
    home.ok(&["install"]);
    assert!(home.settings().symlink_metadata().unwrap().file_type().is_symlink());
    let settings = parse(&std::fs::read_to_string(&real).unwrap());
    assert_eq!(commands(&settings, "Stop").len(), 2);
    assert_eq!(std::fs::read_to_string(home.backup()).unwrap(), pretty(&user_settings()));
}

#[test]
fn unknown_flags_are_refused() {
    let home = Home::new();
    for args in [&["install", "--force"][..], &["uninstall", "--statusline"][..]] {
        let out = home.run(args);
        assert_eq!(out.code, Some(2), "a usage error: {args:?}");
        let stderr = out.stderr.clone();
        assert!(stderr.contains("unexpected argument") && stderr.contains("try '--help'"), "{stderr}");
        assert!(!home.settings().exists());
    }
}
