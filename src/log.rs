//! Our log: one line per event worth knowing, in the private state folder.
//! Hooks never print errors into the user's session; they land here.

use std::io::Write;

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
    // Keep one old log beside the current one, so the log never grows
    // without bound.
    if std::fs::metadata(&path).is_ok_and(|m| m.len() > MAX_LOG_BYTES) {
        let _ = std::fs::rename(&path, path.with_extension("log.1"));
    }
    let stamp = crate::report::timestamp(crate::state::now_unix());
    let mut options = std::fs::OpenOptions::new();
    options.create(true).append(true);
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    if let Ok(mut file) = options.open(&path) {
        let _ = writeln!(file, "{stamp} {level} [{}] {}", std::process::id(), message.replace('\n', " "));
    }
}
