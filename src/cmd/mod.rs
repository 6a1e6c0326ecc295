//! The subcommands, one file each.

pub mod history;
pub mod review;
