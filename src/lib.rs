//! The pure core as a library, so fuzz targets and property tests outside
//! the binary can reach it. It has no I/O and no dependency on the rest of
//! the crate; the binary uses it as `memory_save::memory`.

pub mod memory;
