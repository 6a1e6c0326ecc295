//! Everything about Claude Code itself: running the fork, reading a
//! session's transcript, and its settings files.

pub mod events;
pub mod fork;
pub mod hooks;
pub mod install;
pub mod jsonedit;
pub mod refusal;
pub mod registrations;
pub mod route;
pub mod settings;
pub mod transcript;
