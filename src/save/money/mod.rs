//! What saves cost the user: the ledger (`ledger`), the budgets' verdict
//! before a fork (`budget`), a Claude plan's usage windows (`plan`) and
//! the month `status` and `cost` show (`month`). Prices are `memory::cost`'s.

pub mod budget;
pub mod ledger;
pub mod month;
pub mod plan;
