//! `memory-save cost [--json]`: the calendar month, day by day.

use std::io::IsTerminal;

use anyhow::Result;

use crate::memory::cost::usd;
use crate::save::money::month::{self, Month};

use super::row;

/// Bars are at most this wide.
const BAR_WIDTH: usize = 30;

/// This month's saves day by day: how many, the tokens by kind and what
/// they counted (for a Claude plan, at API prices), against the budget,
/// with the month's pace.
#[derive(Debug, clap::Args)]
pub struct CostArgs {
    /// Print it as JSON, for scripts.
    #[arg(long)]
    json: bool,
}

impl super::Run for CostArgs {
    fn run(&self) -> Result<()> {
        let roots = crate::config::roots()?;
        let config = crate::config::of(&roots);
        let month = month::gather(&roots, &config, crate::env::now_unix());
        if self.json {
            return super::print_json(&month);
        }
        super::print(&render(&month, std::io::stdout().is_terminal()))
    }
}

/// The month's summary lines, shared with `status`.
pub fn summary(month: &Month) -> String {
    let t = &month.totals;
    let mut out = format!("month {} to {}\n", month.start, month.end);
    if let Some(pays) = &month.pays {
        row(&mut out, "who pays", pays);
    }
    // A plan's saves cost no money: their dollars are its usage at API prices.
    let priced = if month.api_priced { " at API prices" } else { "" };
    row(&mut out, "month", format!("{}{priced}", t.line()));
    for b in &month.budgets {
        let spent =
            format!("{} {}: {} spent{priced} ({:.0}%)", b.budget, usd(b.limit_usd), usd(b.spent_usd), b.share * 100.0);
        row(&mut out, "budget", spent);
    }
    if let Some(average) = month.average_per_save_usd {
        let pace =
            format!("{} a save on average; {} by {} at this pace", usd(average), usd(month.projected_usd), month.end);
        row(&mut out, "pace", pace);
    }
    out
}

fn render(month: &Month, terminal: bool) -> String {
    let mut out = summary(month);
    let most = month.days.iter().map(|d| d.totals.cost_usd).fold(0.0, f64::max);
    for day in &month.days {
        let t = &day.totals;
        let width = if most > 0.0 { (t.cost_usd / most * BAR_WIDTH as f64).round() as usize } else { 0 };
        let bar = if terminal { "█".repeat(width) } else { "#".repeat(width) };
        out.push_str(&format!("{}  {bar:<BAR_WIDTH$}  {:>9}  {}\n", day.date, t.count(), usd(t.cost_usd)));
    }
    out
}
