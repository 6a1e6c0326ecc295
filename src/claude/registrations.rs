//! Where memory-save is registered for a session in some folder (our hook
//! commands, the plugin), for `status` and `doctor`.

use std::path::Path;

use serde_json::{Map, Value};

use super::hooks::{BINARY_NAME, entries, our_subcommand, shell_words, unguarded};
use super::settings::{self, Scope};

/// One settings file's hook commands of ours, and the plugin if it enables it.
#[derive(Debug, serde::Serialize)]
pub struct Registration {
    pub scope: Scope,
    pub path: String,
    /// How many of our hook commands it holds.
    pub commands: usize,
    /// The programs those commands run (by path, or `memory-save` by name).
    #[serde(skip)]
    pub programs: Vec<String>,
    /// Each command's event and the words after the program (`Stop`, `hook stop`).
    #[serde(skip)]
    pub words: Vec<(String, String)>,
    /// The plugin id (`memory-save@…`) this file enables.
    pub plugin: Option<String>,
    /// Its `statusLine` runs ours: a plan's usage windows reach memory-save.
    #[serde(skip)]
    pub statusline: bool,
    /// Why the file could not be read.
    pub error: Option<String>,
}

/// Every settings file a session in `cwd` reads, with what of ours it holds;
/// only the files that hold something (or cannot be read).
pub fn registrations(cwd: &Path) -> Vec<Registration> {
    let mut found = Vec::new();
    let mut seen = Vec::new();
    for scope in settings::SCOPES {
        let Ok(path) = scope.path(cwd) else { continue };
        // From the home folder the project's settings file is the user's:
        // one file is one registration.
        let same = std::fs::canonicalize(&path).unwrap_or_else(|_| path.clone());
        if seen.contains(&same) {
            continue;
        }
        seen.push(same);
        let (settings, error) =
            match settings::read_settings(&path).and_then(|t| settings::parse_settings(&path, t.as_deref())) {
                Ok(settings) => (settings, None),
                Err(e) => (Map::new(), Some(format!("{e:#}"))),
            };
        let (mut programs, mut words) = (Vec::new(), Vec::new());
        for (event, groups) in settings.get("hooks").and_then(Value::as_object).into_iter().flatten() {
            for entry in entries(groups) {
                let command = entry.get("command").and_then(Value::as_str).unwrap_or("");
                if let (Some(ours), Some(mut all)) = (our_subcommand(command), shell_words(command).map(unguarded))
                    && ours.first().map(String::as_str) == Some("hook")
                {
                    programs.push(all.remove(0));
                    words.push((event.clone(), ours.join(" ")));
                }
            }
        }
        // The plugin id (`memory-save@<marketplace>`) the file enables.
        let plugin = settings.get("enabledPlugins").and_then(Value::as_object).and_then(|plugins| {
            plugins.iter().find(|(id, on)| id.starts_with(&format!("{BINARY_NAME}@")) && on.as_bool() == Some(true))
        });
        let plugin = plugin.map(|(id, _)| id.clone());
        let status_command = settings.get("statusLine").and_then(|s| s.get("command")).and_then(Value::as_str);
        let statusline = status_command
            .and_then(our_subcommand)
            .is_some_and(|words| words.first().map(String::as_str) == Some("statusline"));
        if programs.is_empty() && plugin.is_none() && error.is_none() && !statusline {
            continue;
        }
        found.push(Registration {
            scope,
            path: path.display().to_string(),
            commands: programs.len(),
            programs,
            words,
            plugin,
            statusline,
            error,
        });
    }
    found
}

/// A status line of ours runs in sessions here: it can read a plan's usage windows.
pub fn statusline_registered(cwd: &Path) -> bool {
    registrations(cwd).iter().any(|r| r.statusline)
}

/// One line for `status`: where the hooks are registered, or that they are not.
pub fn describe_registrations(found: &[Registration]) -> String {
    let mut places: Vec<String> = Vec::new();
    for r in found {
        if r.commands > 0 {
            places.push(format!("{} ({})", r.scope, r.path));
        }
        if let Some(plugin) = &r.plugin {
            places.push(format!("plugin {plugin} (enabled in {})", r.scope));
        }
    }
    // A file Claude Code cannot parse may hold our hooks: say what is wrong
    // with it, not that nothing is registered.
    let broken: Vec<String> = found.iter().filter_map(|r| r.error.clone()).collect();
    if !broken.is_empty() {
        let rest = match places.len() {
            0 => String::new(),
            _ => format!("; registered in {}", places.join(" and ")),
        };
        return format!("{}{rest}", broken.join("; "));
    }
    match places.len() {
        0 => "not registered: run memory-save install".to_string(),
        1 => places.remove(0),
        _ => format!(
            "{}: registered more than once, every hook runs twice (see memory-save doctor)",
            places.join(" and ")
        ),
    }
}
