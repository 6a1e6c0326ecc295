//! Claude Code's settings files: reading and writing one as install does,
//! and what the fork carries over from them.

use std::path::{Path, PathBuf};

use anyhow::{Result, bail};
use serde_json::{Map, Value};

use crate::env::FORK_MARKER as FORK_MARKER_ENV;

/// The `--settings` JSON: hooks off, plus what the session's settings carry
/// that the fork needs to authenticate and reach the API the same way
/// (`--setting-sources ""` drops them). Never the allow rules or hooks.
pub fn fork_settings(settings_files: &[PathBuf]) -> String {
    const CARRIED: [&str; 4] = ["apiKeyHelper", "awsAuthRefresh", "awsCredentialExport", "gcpAuthRefresh"];
    let mut out = Map::new();
    out.insert("disableAllHooks".into(), Value::Bool(true));
    let mut env = Map::new();
    for path in settings_files {
        // Followed when a link, as Claude Code follows it (a dotfiles
        // manager's): else the save is paid otherwise than the session.
        let Ok(Some(bytes)) = crate::store::fsutil::read_regular_followed(path, 1024 * 1024) else {
            continue;
        };
        let Ok(Value::Object(settings)) = serde_json::from_slice::<Value>(&bytes) else {
            continue;
        };
        if let Some(Value::Object(vars)) = settings.get("env") {
            env.extend(vars.clone());
        }
        for key in CARRIED {
            if let Some(value) = settings.get(key) {
                out.insert(key.into(), value.clone());
            }
        }
    }
    env.insert(FORK_MARKER_ENV.into(), Value::String("1".into()));
    out.insert("env".into(), Value::Object(env));
    Value::Object(out).to_string()
}

/// The settings files a session reads, lowest precedence first: the user's,
/// then the project's. `project_dir` is the session's project folder, never
/// one it moved into (a cloned dependency's settings, docs/security.md).
pub fn settings_files(project_dir: &Path) -> Vec<PathBuf> {
    let user = crate::env::claude_config_dir().ok().map(|d| d.join("settings.json"));
    let project = ["settings.json", "settings.local.json"].map(|f| project_dir.join(".claude").join(f));
    user.into_iter().chain(project).collect()
}

/// Far past any real settings file: a larger one is refused, not read.
const MAX_SETTINGS_BYTES: u64 = 16 * 1024 * 1024;

/// `None` when the file does not exist yet.
pub fn read_settings(path: &Path) -> Result<Option<String>> {
    let Some(bytes) = crate::store::fsutil::read_regular_followed(path, MAX_SETTINGS_BYTES)? else {
        return Ok(None);
    };
    String::from_utf8(bytes).map(Some).map_err(|_| {
        anyhow::anyhow!(
            "{} is not valid JSON (not UTF-8 text); fix it or move it away, then run this again",
            path.display()
        )
    })
}

/// The file's settings, empty for a missing or blank file; an error (not JSON,
/// not an object) names the file, and what to do is the caller's to say.
pub fn parse_settings(path: &Path, text: Option<&str>) -> Result<Map<String, Value>> {
    // A byte-order mark (Windows editors write one) is read past; `jsonedit` keeps it.
    let text = text.unwrap_or("");
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    if text.trim().is_empty() {
        return Ok(Map::new());
    }
    let value: Value = serde_json::from_str(text).map_err(|e| {
        anyhow::anyhow!(
            "settings file {} is not valid JSON ({e}); Claude Code cannot read its hooks either",
            path.display()
        )
    })?;
    let Value::Object(settings) = value else {
        bail!("settings file {} does not hold a JSON object at the top level", path.display());
    };
    if settings.get("hooks").is_some_and(|h| !h.is_object()) {
        bail!("\"hooks\" in settings file {} is not a JSON object", path.display());
    }
    Ok(settings)
}

/// The settings files memory-save can be registered in, in the order
/// Claude Code reads them: a later one outranks an earlier.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Scope {
    /// `~/.claude/settings.json` (or under `CLAUDE_CONFIG_DIR`).
    User,
    /// `<project>/.claude/settings.json`: committed, shared with the team.
    Shared,
    /// `<project>/.claude/settings.local.json`: this machine only.
    Local,
}

impl Scope {
    pub fn label(self) -> &'static str {
        match self {
            Scope::User => "user settings",
            Scope::Shared => "project settings",
            Scope::Local => "project-local settings",
        }
    }

    /// The command that takes our hooks out of this scope's file.
    pub fn uninstall_command(self) -> &'static str {
        if self == Scope::User { "memory-save uninstall" } else { "memory-save uninstall --project" }
    }

    /// The flag that installs into this scope's file.
    pub fn install_flag(self) -> &'static str {
        match self {
            Scope::User => "",
            Scope::Shared => " --shared",
            Scope::Local => " --project",
        }
    }

    /// The file of this scope for `cwd`: project files sit at its work tree's top.
    pub fn path(self, cwd: &Path) -> Result<PathBuf> {
        let file = match self {
            Scope::User => return Ok(crate::env::claude_config_dir()?.join("settings.json")),
            Scope::Shared => "settings.json",
            Scope::Local => "settings.local.json",
        };
        Ok(crate::project::work_tree_top(cwd).join(".claude").join(file))
    }
}

impl std::fmt::Display for Scope {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.label())
    }
}

/// As `status --json` names it: its label.
impl serde::Serialize for Scope {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.label())
    }
}

pub const SCOPES: [Scope; 3] = [Scope::User, Scope::Shared, Scope::Local];

/// The settings of `path`, `None` if missing or broken: for reports that must not fail.
pub fn read_map(path: &Path) -> Option<Map<String, Value>> {
    parse_settings(path, read_settings(path).ok()?.as_deref()).ok()
}

/// Whether Claude Code's auto memory is on for a session in `cwd`, what
/// decides it in words, and the settings file that does (`None`: the
/// default, or `CLAUDE_CODE_DISABLE_AUTO_MEMORY`): the last that sets
/// `autoMemoryEnabled`, as the 2.1.332 binary reads it.
pub fn auto_memory(cwd: &Path) -> (bool, String, Option<Scope>) {
    if let Some(value) = crate::env::disable_auto_memory()
        && matches!(value.to_ascii_lowercase().as_str(), "1" | "true" | "yes" | "on")
    {
        return (false, format!("CLAUDE_CODE_DISABLE_AUTO_MEMORY={value}"), None);
    }
    let mut decided = (true, "Claude Code's default".to_string(), None);
    for scope in SCOPES {
        let Ok(path) = scope.path(cwd) else { continue };
        if let Some(Value::Bool(on)) = read_map(&path).and_then(|mut s| s.remove("autoMemoryEnabled")) {
            decided = (on, format!("autoMemoryEnabled: {on} in {}", path.display()), Some(scope));
        }
    }
    decided
}

/// What turns auto memory off, decided by the file of `decided` (`None`:
/// Claude Code's default), for a user whose hooks are in the file of
/// `hooks` (`None`: the plugin, which an install would register a second
/// time). It names a file the deciding one does not outrank; a team's
/// committed file is outranked on this machine by its project-local one.
pub fn auto_memory_fix(cwd: &Path, hooks: Option<Scope>, decided: Option<Scope>) -> String {
    let needed = match decided {
        Some(Scope::Shared) => Scope::Local,
        Some(scope) => scope,
        None => Scope::User,
    };
    match (hooks, needed.path(cwd)) {
        (Some(hooks), _) if hooks >= needed => format!(
            "memory-save install{} --disable-auto-memory turns it off (uninstall puts it back)",
            hooks.install_flag()
        ),
        (_, Ok(path)) => format!("set \"autoMemoryEnabled\": false in {}", path.display()),
        (_, Err(_)) => format!("set \"autoMemoryEnabled\": false in Claude Code's {}", needed.label()),
    }
}

/// A login this process has only in `CLAUDE_CODE_OAUTH_TOKEN`, which no
/// hook and so no fork gets [measured: 2.1.328 and 2.1.332, `-p` and
/// interactive]: what to do. `None` when the variable is unset, or the
/// fork has a login of its own (`/login`'s credentials file, or the
/// variable in the `env` of `settings`, the user's settings file). The
/// advice is `/login`, never a token pasted into a settings file.
pub fn token_only_login(settings: &Path) -> Option<String> {
    let token = crate::env::OAUTH_TOKEN;
    let in_settings = read_map(settings).and_then(|s| s.get("env")?.get(token).cloned()).is_some();
    if !crate::env::oauth_token_set() || in_settings || stored_login() {
        return None;
    }
    Some(format!(
        "{token} is set here, but Claude Code passes it to no hook, so a save's fork cannot log in with it (\"fork failed: Not logged in\"). \
         Log in once with claude /login (nothing to do if you did): Claude Code keeps that login where every claude run finds it, a save's fork too"
    ))
}

/// Claude Code keeps a `/login` where every `claude` run finds it: on
/// Linux its config folder's `.credentials.json` (macOS keeps it in the
/// Keychain, which this does not read).
pub fn stored_login() -> bool {
    crate::env::claude_config_dir().is_ok_and(|dir| dir.join(".credentials.json").exists())
}

/// Claude Code's own formatting: two-space indent and a final newline, so a
/// file we wrote comes back byte for byte after a parse/serialize round trip.
pub fn render(settings: &Map<String, Value>) -> String {
    serde_json::to_string_pretty(settings).expect("a JSON map always serializes") + "\n"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_carry_auth_but_never_permissions_or_hooks() {
        let dir = tempfile::tempdir().unwrap();
        let user = dir.path().join("user.json");
        std::fs::write(&user, r#"{"env":{"ANTHROPIC_BASE_URL":"http://x","A":"1"},"apiKeyHelper":"/bin/key","permissions":{"allow":["Bash"]},"hooks":{"Stop":[]},"model":"opus"}"#).unwrap();
        let local = dir.path().join("local.json");
        std::fs::write(&local, r#"{"env":{"A":"2"}}"#).unwrap();
        let settings: Value =
            serde_json::from_str(&fork_settings(&[user, local, dir.path().join("missing.json")])).unwrap();
        assert_eq!(settings["disableAllHooks"], true);
        assert_eq!(settings["apiKeyHelper"], "/bin/key");
        assert_eq!(settings["env"]["A"], "2");
        assert_eq!(settings["env"]["ANTHROPIC_BASE_URL"], "http://x");
        assert_eq!(settings["env"][FORK_MARKER_ENV], "1");
        assert!(settings.get("permissions").is_none() && settings.get("hooks").is_none());
    }
}
