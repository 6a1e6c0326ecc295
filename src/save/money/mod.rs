//! What saves cost the user, in one place: the ledger every verdict reads
//! and writes under its lock (`ledger`: what was spent, reserved, stopped),
//! the budgets' verdict before a fork (`budget`), the cost guard that
//! pauses a session whose forks miss the prompt cache (`guard`), and the
//! billing month as `status` and `cost` show it (`month`). Prices come from
//! `memory::cost`, the payer from `memory::route`.

pub mod budget;
pub mod guard;
pub mod ledger;
pub mod month;
