//! What saves cost the user: the ledger (`ledger`), the budgets' verdict
//! before a fork (`budget`), the cache-miss guard (`guard`) and the billing
//! month `status` and `cost` show (`month`). Prices are `memory::cost`'s.

pub mod budget;
pub mod guard;
pub mod ledger;
pub mod month;
