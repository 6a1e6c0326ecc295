//! Who pays for this session's saves (`memory::route`, docs/design.md §4).

pub use crate::memory::route::Route;
use crate::memory::route::Source;

/// The route of a session whose hooks run in this process: its
/// environment, under the `env` of the settings the fork carries over.
pub fn of_session(project_dir: &std::path::Path) -> Route {
    let settings = super::settings::fork_settings(&super::settings::settings_files(project_dir));
    let settings: serde_json::Value = serde_json::from_str(&settings).unwrap_or_default();
    Route::of(&SessionSource { settings })
}

struct SessionSource {
    settings: serde_json::Value,
}

impl Source for SessionSource {
    fn var(&self, name: &str) -> Option<String> {
        match self.settings.get("env").and_then(|env| env.get(name)) {
            Some(serde_json::Value::String(value)) => Some(value.clone()),
            Some(other) if !other.is_null() => Some(other.to_string()),
            _ => crate::env::passed_to_fork(name),
        }
    }

    fn api_key_helper(&self) -> bool {
        self.settings.get("apiKeyHelper").and_then(|v| v.as_str()).is_some_and(|v| !v.trim().is_empty())
    }
}
