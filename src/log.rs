//! Our log: one line per event worth knowing, in the private state folder.
//! Hooks never print errors into the user's session; they land here.

use crate::paths::Roots;

const MAX_LOG_BYTES: u64 = 1024 * 1024;

pub fn error(message: &str) {
    line("error", message);
}

fn line(level: &str, message: &str) {
    let Ok(roots) = Roots::from_env() else { return };
    let path = roots.log_file();
    if crate::fsutil::create_private_dir(&roots.state).is_err() {
        return;
    }
    let stamp = crate::env::timestamp(crate::env::now_unix());
    let line = format!("{stamp} {level} [{}] {}", std::process::id(), message.replace('\n', " "));
    crate::fsutil::append_line(&path, &line, MAX_LOG_BYTES);
}
