//! The subcommands, one file each.

pub mod doctor;
pub mod history;
pub mod install;
pub mod review;
pub mod status;
pub mod statusline;
