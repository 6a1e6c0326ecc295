//! Our log: one line per event worth knowing, in the private state folder.
//! Hooks never print errors into the user's session; they land here.

use std::path::PathBuf;
use std::sync::OnceLock;

const MAX_LOG_BYTES: u64 = 1024 * 1024;
const FILE_NAME: &str = "memory-save.log";

/// Set once the roots are known; before that (no HOME, say) nothing is logged.
static STATE_DIR: OnceLock<PathBuf> = OnceLock::new();

pub fn init(state_dir: &std::path::Path) {
    let _ = STATE_DIR.set(state_dir.to_path_buf());
}

pub fn path(state_dir: &std::path::Path) -> PathBuf {
    state_dir.join(FILE_NAME)
}

/// A message may quote what it failed on, so it passes the secret scanner first.
pub fn error(message: &str) {
    let Some(state) = STATE_DIR.get() else { return };
    if crate::store::fsutil::create_private_dir(state).is_err() {
        return;
    }
    let stamp = crate::env::timestamp(crate::env::now_unix());
    let message = crate::memory::secrets::redact(message).replace('\n', " ");
    let line = format!("{stamp} error [{}] {message}", std::process::id());
    crate::store::fsutil::append_line(&path(state), &line, MAX_LOG_BYTES);
}
