//! Integration tests: the built `memory-save` binary, run as Claude Code runs
//! its hooks, with a temporary HOME, real hook payloads on stdin and a fake
//! `claude`. See support.rs for the bench.

mod helpers;
#[path = "../common/session.rs"]
mod session;
mod support;

mod attacks;
mod attacks_doors;
mod commands;
mod cost;
mod everyday;
mod faults;
mod fork;
mod gate;
mod git_sealed;
mod guards;
mod install;
mod memory_cmds;
// The month-long run needs the debug build's virtual clock.
#[cfg(debug_assertions)]
mod month;
mod moved;
mod names;
mod perms;
mod project;
mod queue;
mod restore;
mod robust;
mod save;
mod sealed;
mod session_start;
mod skip;
mod spend;
mod statusline;
mod stress;
mod sync;
mod team;
mod trust;
mod truth;
