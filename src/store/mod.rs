//! All disk I/O of memory-save's own files (docs/design.md §1). No command
//! line and no environment reads (the debug-only fault hooks aside).

pub mod approvals;
pub mod changes;
pub mod folder;
pub mod folder_record;
pub mod fsutil;
pub mod guard_counts;
pub mod guards;
pub mod history;
pub mod installs;
pub mod lock;
pub mod log;
pub mod notes;
pub mod owner;
pub mod paths;
pub mod record;
pub mod review;
pub mod saves;
pub mod session;
pub mod state;
