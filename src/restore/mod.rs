//! context-restore: a skill or command file changed on disk reaches the model
//! as it is now, not as the engine last loaded it (docs/design.md §2). Its own
//! tree, so it could be its own crate.

pub mod compare;
pub mod state;
pub mod transcript;
