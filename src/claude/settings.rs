//! Claude Code's settings files, as the fork needs them.

use std::path::{Path, PathBuf};

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
        let Ok(Some(bytes)) = crate::store::fsutil::read_regular(path, 1024 * 1024) else {
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
/// then the project's. `project_dir` is where Claude Code itself reads
/// project settings (the session's project folder), never a folder the
/// session moved into: a `.claude/settings.json` in a cloned dependency
/// must not hand the fork an `apiKeyHelper` or `env` of its own.
pub fn settings_files(project_dir: &Path) -> Vec<PathBuf> {
    let cwd = project_dir;
    let config_dir = crate::env::claude_config_dir().ok();
    let mut files: Vec<PathBuf> = config_dir.into_iter().map(|d| d.join("settings.json")).collect();
    files.push(cwd.join(".claude").join("settings.json"));
    files.push(cwd.join(".claude").join("settings.local.json"));
    files
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
