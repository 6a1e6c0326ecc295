//! context-restore, the seeds' second system: a skill or command file
//! changed on disk reaches the model as it is now, not as the engine last
//! loaded it (docs/using.md, "Skills and commands changed on disk"). Its
//! own tree, so it could be its own crate: the pure comparison and its
//! words (`compare`), the file and the engine's last copy of it in the
//! transcript (`transcript`), and its setting and last event (`state`).
//! The hook and the command reach it through `transcript::skill_call`,
//! `transcript::typed_command` and `state`.

pub mod compare;
pub mod state;
pub mod transcript;
