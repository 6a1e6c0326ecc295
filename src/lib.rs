//! The pure core as a library, so fuzz targets and property tests can reach
//! it: no I/O, no dependency on the rest of the crate (`memory_save::memory`).

pub mod memory;
