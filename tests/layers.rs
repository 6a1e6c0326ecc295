//! The layers import only downward: every `crate::` import between
//! top-level modules is one that docs/design.md's layer table allows, the
//! table lists every module, and no two modules import each other, directly
//! or through others. A scan of the `crate::` paths in `src/` is enough,
//! since every import names its module so.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The top-level module a file belongs to: `src/store/fsutil.rs` → `store`.
fn module_of(src: &Path, file: &Path) -> Option<String> {
    let rel = file.strip_prefix(src).ok()?;
    let first = rel.components().next()?.as_os_str().to_str()?;
    let name = first.strip_suffix(".rs").unwrap_or(first);
    (!matches!(name, "main" | "lib")).then(|| name.to_string())
}

fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// Each module and the modules it names as `crate::<name>` (also inside
/// `use crate::{a, b}`), tests included.
fn imports() -> BTreeMap<String, BTreeSet<String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let modules: BTreeSet<String> = files.iter().filter_map(|f| module_of(&src, f)).collect();
    let mut graph: BTreeMap<String, BTreeSet<String>> = modules.iter().map(|m| (m.clone(), BTreeSet::new())).collect();
    for file in &files {
        let Some(from) = module_of(&src, file) else { continue };
        let text = std::fs::read_to_string(file).unwrap();
        let mut named = Vec::new();
        for (at, _) in text.match_indices("crate::") {
            let rest = &text[at + "crate::".len()..];
            if let Some(group) = rest.strip_prefix('{') {
                let group = &group[..group.find('}').unwrap_or(group.len())];
                named.extend(group.split(',').map(|item| item.trim().split("::").next().unwrap_or("").to_string()));
            } else {
                named.push(rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect());
            }
        }
        for to in named {
            if to != from && modules.contains(&to) {
                graph.get_mut(&from).unwrap().insert(to);
            }
        }
    }
    graph
}

/// A cycle through `start`, as the path that closes it.
fn cycle(graph: &BTreeMap<String, BTreeSet<String>>, start: &str) -> Option<Vec<String>> {
    let mut stack = vec![(start.to_string(), vec![start.to_string()])];
    let mut seen = BTreeSet::new();
    while let Some((node, path)) = stack.pop() {
        for next in &graph[&node] {
            if next == start {
                let mut closed = path.clone();
                closed.push(start.to_string());
                return Some(closed);
            }
            if seen.insert(next.clone()) {
                let mut longer = path.clone();
                longer.push(next.clone());
                stack.push((next.clone(), longer));
            }
        }
    }
    None
}

#[test]
fn no_cycle_between_top_level_modules() {
    let graph = imports();
    assert!(graph.len() >= 8, "the scan found too few modules: {graph:?}");
    let cycles: Vec<String> = graph.keys().filter_map(|m| cycle(&graph, m)).map(|c| c.join(" → ")).collect();
    let layers: Vec<String> =
        graph.iter().map(|(m, to)| format!("{m} → {}", to.iter().cloned().collect::<Vec<_>>().join(", "))).collect();
    assert!(cycles.is_empty(), "import cycles:\n{}\n\nimports:\n{}", cycles.join("\n"), layers.join("\n"));
}

/// docs/design.md's layer table: each module and what it may use (`None`:
/// everything).
fn allowed() -> BTreeMap<String, Option<BTreeSet<String>>> {
    let design = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/design.md")).unwrap();
    let table = design.split("| layer | what it is | may use |").nth(1).expect("the layer table in docs/design.md");
    let names = |cell: &str| -> BTreeSet<String> { cell.split('`').skip(1).step_by(2).map(str::to_string).collect() };
    let mut layers = BTreeMap::new();
    for row in table.lines().skip(2).take_while(|l| l.starts_with('|')) {
        let cells: Vec<&str> = row.split(" | ").collect();
        let module = names(cells[0]).into_iter().next().expect("a module in backticks");
        let may = cells.last().unwrap().trim_end_matches('|').trim();
        layers
            .insert(module, (may != "everything").then(|| if may == "nothing" { BTreeSet::new() } else { names(may) }));
    }
    layers
}

/// The imports the table does not allow.
fn forbidden(
    graph: &BTreeMap<String, BTreeSet<String>>,
    allowed: &BTreeMap<String, Option<BTreeSet<String>>>,
) -> Vec<String> {
    let mut wrong = Vec::new();
    for (from, imports) in graph {
        match allowed.get(from) {
            None => wrong.push(format!("{from}: not in the layer table")),
            Some(None) => {}
            Some(Some(may)) => {
                wrong.extend(imports.iter().filter(|to| !may.contains(*to)).map(|to| format!("{from} → {to}")))
            }
        }
    }
    wrong
}

#[test]
fn every_import_is_one_the_layer_table_allows() {
    let graph = imports();
    let allowed = allowed();
    assert!(allowed.len() >= 11, "the table parsed to {allowed:?}");
    let wrong = forbidden(&graph, &allowed);
    assert!(wrong.is_empty(), "imports docs/design.md's layer table does not allow:\n{}", wrong.join("\n"));
    let listed_but_gone: Vec<&String> = allowed.keys().filter(|m| !graph.contains_key(*m)).collect();
    assert!(listed_but_gone.is_empty(), "the table lists modules that do not exist: {listed_but_gone:?}");
}

#[test]
fn the_table_check_refuses_an_upward_import() {
    let graph: BTreeMap<String, BTreeSet<String>> =
        [("store".to_string(), BTreeSet::from(["save".to_string(), "env".to_string()]))].into();
    let allowed = allowed();
    assert_eq!(forbidden(&graph, &allowed), vec!["store → save".to_string()]);
    let unknown: BTreeMap<String, BTreeSet<String>> = [("extra".to_string(), BTreeSet::new())].into();
    assert_eq!(forbidden(&unknown, &allowed), vec!["extra: not in the layer table".to_string()]);
}

#[test]
fn the_scan_sees_an_import_and_a_cycle() {
    let graph: BTreeMap<String, BTreeSet<String>> = [
        ("a".to_string(), BTreeSet::from(["b".to_string()])),
        ("b".to_string(), BTreeSet::from(["c".to_string()])),
        ("c".to_string(), BTreeSet::from(["a".to_string()])),
        ("d".to_string(), BTreeSet::new()),
    ]
    .into();
    assert_eq!(cycle(&graph, "a"), Some(vec!["a".into(), "b".into(), "c".into(), "a".into()]));
    assert_eq!(cycle(&graph, "d"), None);
    // The real scan finds the imports it must: save uses the store.
    assert!(imports()["save"].contains("store"));
}

/// No file under src/ is over 400 lines before its first `#[cfg(test)]`:
/// a file that grows past that holds more than one job. A module's tests
/// in a file of their own (`tests.rs`) are all tests.
#[test]
fn no_source_file_is_over_400_lines_before_its_tests() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    assert!(files.len() > 50, "the scan found too few files: {}", files.len());
    let long: Vec<String> = files
        .iter()
        .filter(|file| !file.ends_with("tests.rs"))
        .filter_map(|file| {
            let text = std::fs::read_to_string(file).unwrap();
            let code = text.lines().take_while(|l| !l.starts_with("#[cfg(test)]")).count();
            (code > 400).then(|| format!("{} ({code} lines)", file.strip_prefix(&src).unwrap().display()))
        })
        .collect();
    assert!(long.is_empty(), "files over 400 lines before their tests: {long:?}");
}
