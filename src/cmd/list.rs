//! `memory-save list [--json]`: every project's memory on this machine.

use anyhow::Result;
use serde::Serialize;

/// Every project's memory on this machine: its folder, whose it is, its
/// size, its last save and what that save drew on.
#[derive(Debug, clap::Args)]
pub struct ListArgs {
    /// Print it as JSON, for scripts.
    #[arg(long)]
    json: bool,
}

#[derive(Serialize)]
struct Listed {
    folder: String,
    /// The repository it belongs to; `None` for a folder nobody recorded.
    identity: Option<String>,
    /// MEMORY.md's lines; `None` when it is not written yet.
    lines: Option<usize>,
    last_save_at: Option<i64>,
    last_save: Option<String>,
    /// What its last save drew on (`subscription`, `api_key`, …).
    pays: Option<String>,
}

impl super::Run for ListArgs {
    fn run(&self) -> Result<()> {
        let roots = crate::config::roots()?;
        let saves = crate::store::saves::all(&roots);
        let listed: Vec<Listed> = crate::store::owner::folder_names(&roots)
            .into_iter()
            .map(|folder| {
                let memory = crate::store::folder::Folder::new(&roots, &folder).read_memory().ok().flatten();
                let last = saves.iter().rev().find(|r| r.project.as_deref() == Some(folder.as_str()));
                Listed {
                    identity: crate::store::owner::read(&roots, &folder).map(|r| r.shown_identity()),
                    lines: memory.map(|text| text.lines().count()),
                    last_save_at: last.map(|r| r.at),
                    last_save: last.map(|r| r.status.clone()),
                    pays: last.and_then(|r| r.route.clone()),
                    folder,
                }
            })
            .collect();
        if self.json {
            return super::print_json(&listed);
        }
        if listed.is_empty() {
            return super::println(&format!("no memory on this machine yet ({})", roots.memory.display()));
        }
        let mut out = String::new();
        for l in &listed {
            let lines =
                l.lines.map_or("not written yet".to_string(), |n| crate::memory::report::plural(n as u64, "line"));
            let last = match (l.last_save_at, &l.last_save) {
                (Some(at), Some(status)) => format!("last save {} ({status})", crate::env::timestamp(at)),
                _ => "no save on this machine".to_string(),
            };
            let pays =
                l.pays.as_deref().map(|p| format!(" · {}", crate::memory::route::in_brief(p))).unwrap_or_default();
            let identity = l.identity.as_deref().unwrap_or("no repository recorded");
            let (folder, identity) = (super::one_line(&l.folder), super::one_line(identity));
            out.push_str(&format!("{folder}  {identity}\n  {lines} · {last}{}\n", super::one_line(&pays)));
        }
        super::print(&out)
    }
}
