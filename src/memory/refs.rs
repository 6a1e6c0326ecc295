//! The references a memory makes to its repository's files, found in its
//! text alone: backticked paths, script paths in backticked commands, and
//! path-shaped words. Whether each exists is `project::check`'s question.
//! Not references: URLs, absolute and home paths, globs, placeholders,
//! versions, product names (`Node.js`), `and/or`-style words, module paths
//! (`github.com/me/app`), names given as an example (`like …`, `e.g. …`),
//! and the `## Topic Files` list, whose files are the memory's own.

/// Lines read, at most: a memory is under 200 lines by its cap.
pub const MAX_LINES: usize = 200;
/// References kept from one line, at most: each costs a few `stat` calls.
pub const MAX_PER_LINE: usize = 8;

/// One reference: the line it stands on (1-based, as an editor counts) and
/// the path as the repository names it (`/`-separated, no `./`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reference {
    pub line: usize,
    pub path: String,
}

/// Every reference in `memory`, in line order, each path once per line.
pub fn find(memory: &str) -> Vec<Reference> {
    let mut found = Vec::new();
    let mut in_topic_files = false;
    let kinds = super::template::classify(memory);
    for ((n, line), kind) in memory.lines().enumerate().zip(kinds).take(MAX_LINES) {
        if kind == super::template::LineKind::Section {
            in_topic_files = super::template::heading_name(line) == "Topic Files";
        }
        if line.trim_start().starts_with('#') || in_topic_files {
            continue;
        }
        let mut paths: Vec<String> = Vec::new();
        let mut push = |path: String| {
            if !paths.contains(&path) && paths.len() < MAX_PER_LINE {
                paths.push(path);
            }
        };
        let (quoted, plain) = split_backticks(line);
        for span in quoted {
            if span.split_whitespace().count() > 1 {
                // A command: the script paths it runs, and `--flag=path`.
                for word in span.split_whitespace().skip_while(|w| is_env_assignment(w)) {
                    let word = word.split_once('=').map_or(word, |(_, value)| value);
                    if let Some(path) = candidate(word, Quoting::Command) {
                        push(path);
                    }
                }
            } else if let Some(path) = candidate(span.trim(), Quoting::Quoted) {
                push(path);
            }
        }
        let (mut before, mut previous) = ("", "");
        for word in plain.split_whitespace() {
            // "no build.rs", "without a Makefile": a file said not to be
            // there is no reference to one.
            let is = |w: &str, set: &[&str]| set.contains(&w.to_lowercase().as_str());
            let negated = is(previous, NEGATIONS) || (is(previous, &["a", "an", "the"]) && is(before, NEGATIONS));
            (before, previous) = (previous, word);
            if negated {
                continue;
            }
            // Prose wraps a path in brackets and ends a sentence on it; a
            // leading dot stays (`.github/`, `.env.example`).
            let word = word
                .trim_start_matches(|c: char| "([{<\"'*".contains(c))
                .trim_end_matches(|c: char| ")]}>,;:!?\"'*.".contains(c));
            if let Some(path) = candidate(word, Quoting::Plain) {
                push(path);
            }
        }
        // A name after `like`, `e.g.` or `such as` is an example of a
        // name (a CRITICAL RULE's naming scheme), not a file it names.
        let lower = line.to_ascii_lowercase();
        let example_from = EXAMPLE_MARKERS.iter().filter_map(|m| lower.find(m)).min();
        paths.retain(|p| {
            let example = example_from.is_some_and(|at| line.find(p.as_str()).is_some_and(|i| i > at));
            !example && !names_a_pattern(p)
        });
        found.extend(paths.into_iter().map(|path| Reference { line: n + 1, path }));
    }
    found
}

/// A name with a run of one capital letter standing for digits or words
/// (`migrations/NNNN_name.sql`, `logs/YYYY-MM-DD.log`) names a pattern,
/// not a file.
fn names_a_pattern(path: &str) -> bool {
    path.as_bytes().windows(3).any(|w| w[0].is_ascii_uppercase() && w[0] == w[1] && w[1] == w[2])
}

const EXAMPLE_MARKERS: &[&str] = &[" like ", "e.g.", " eg ", " eg.", "such as", "for example", "for instance"];

/// The backticked spans of a line, and the rest of it.
fn split_backticks(line: &str) -> (Vec<&str>, String) {
    let mut quoted = Vec::new();
    let mut plain = String::new();
    let mut rest = line;
    while let Some(open) = rest.find('`') {
        plain.push_str(&rest[..open]);
        plain.push(' ');
        let after = &rest[open + 1..];
        match after.find('`') {
            Some(close) => {
                quoted.push(&after[..close]);
                rest = &after[close + 1..];
            }
            None => {
                rest = after;
                break;
            }
        }
    }
    plain.push_str(rest);
    (quoted, plain)
}

/// `path` when it reads as a plain repository path: a name from git's log
/// must, before a note quotes it, since a file's name can be anything.
pub fn plain_path(path: &str) -> Option<String> {
    candidate(path, Quoting::Quoted).filter(|p| p == path)
}

fn is_env_assignment(word: &str) -> bool {
    word.split_once('=').is_some_and(|(name, _)| {
        !name.is_empty() && name.chars().all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
    })
}

#[derive(Clone, Copy, PartialEq)]
enum Quoting {
    /// A backticked span that is one word.
    Quoted,
    /// A word inside a backticked command.
    Command,
    /// A word of prose.
    Plain,
}

fn candidate(word: &str, quoting: Quoting) -> Option<String> {
    if word.is_empty() || word.len() > 255 || word.chars().any(|c| c.is_control() || c.is_whitespace()) {
        return None;
    }
    let lower = word.to_ascii_lowercase();
    let not_a_path = lower.contains("://")
        || lower.starts_with("www.")
        || word.contains('@')
        || word.starts_with(['/', '~', '$', '%', '-', '='])
        || word.contains(['*', '?', '[', ']', '{', '}', '<', '>', '|', '&', ';', '"', '\'', '(', ')', '#'])
        || word.contains("...")
        || word.contains('…')
        || word.as_bytes().get(1) == Some(&b':');
    if not_a_path {
        return None;
    }
    // A Windows path names the same file; a line number is not part of it.
    let mut path = word.replace('\\', "/");
    if let Some((file, line)) = path.rsplit_once(':')
        && !line.is_empty()
        && line.bytes().all(|b| b.is_ascii_digit())
    {
        path.truncate(file.len());
    }
    if path.contains(':') {
        return None;
    }
    let path = path.trim_start_matches("./");
    let dir = path.ends_with('/');
    let parts: Vec<&str> = path.split('/').filter(|p| !p.is_empty()).collect();
    let name_like = |p: &&str| *p != "." && *p != ".." && p.chars().all(|c| c.is_alphanumeric() || "._-+@".contains(c));
    if parts.is_empty() || !parts.iter().all(name_like) || path.contains("//") {
        return None;
    }
    // `github.com/me/app`, `golang.org/x/tools`: a module's path, not a file.
    let host = |p: &str| {
        p.rsplit_once('.').is_some_and(|(name, tld)| {
            !name.is_empty() && (2..=6).contains(&tld.len()) && tld.bytes().all(|b| b.is_ascii_lowercase())
        }) && !known_extension(p)
    };
    if parts.len() >= 2 && host(parts[0]) {
        return None;
    }
    let last = parts[parts.len() - 1];
    let has_ext = !dir && known_extension(last);
    let known_name = !dir && KNOWN_NAMES.contains(&last);
    let accepted = match quoting {
        Quoting::Quoted => has_ext || known_name || parts.len() >= 2 || dir,
        Quoting::Command => {
            (has_ext && (parts.len() >= 2 || SCRIPT_EXTENSIONS.iter().any(|e| has_extension(last, e))))
                || (parts.len() >= 2 && !dir)
        }
        Quoting::Plain => {
            has_ext
                || known_name
                || (parts.len() >= 3)
                || (parts.len() >= 2 && KNOWN_DIRS.contains(&parts[0]))
                || (dir && parts.len() == 1 && KNOWN_DIRS.contains(&parts[0]))
        }
    };
    // `Node.js`, `Vue.js`: a product, not a file.
    let product = parts.len() == 1 && has_extension(last, "js") && last.chars().next().is_some_and(char::is_uppercase);
    (accepted && !product).then(|| parts.join("/"))
}

fn has_extension(name: &str, ext: &str) -> bool {
    name.rsplit_once('.').is_some_and(|(stem, e)| !stem.is_empty() && e == ext)
}

fn known_extension(name: &str) -> bool {
    name.rsplit_once('.')
        .is_some_and(|(stem, ext)| !stem.is_empty() && !stem.ends_with('.') && EXTENSIONS.contains(&ext))
}

/// Source and configuration files' extensions: a word ending in one is a
/// file's name (`main.rs`), not a sentence's (`e.g.`, `v1.2`).
const EXTENSIONS: &[&str] = &[
    "rs",
    "toml",
    "lock",
    "md",
    "json",
    "jsonc",
    "yaml",
    "yml",
    "js",
    "mjs",
    "cjs",
    "ts",
    "tsx",
    "jsx",
    "py",
    "pyi",
    "go",
    "mod",
    "java",
    "kt",
    "kts",
    "scala",
    "c",
    "h",
    "cc",
    "cpp",
    "hpp",
    "cs",
    "fs",
    "swift",
    "m",
    "mm",
    "rb",
    "php",
    "pl",
    "lua",
    "r",
    "dart",
    "ex",
    "exs",
    "erl",
    "hs",
    "ml",
    "clj",
    "sh",
    "bash",
    "zsh",
    "fish",
    "ps1",
    "bat",
    "sql",
    "html",
    "css",
    "scss",
    "sass",
    "less",
    "vue",
    "svelte",
    "xml",
    "ini",
    "cfg",
    "conf",
    "env",
    "properties",
    "gradle",
    "proto",
    "tf",
    "nix",
    "mk",
    "cmake",
    "txt",
    "csv",
    "graphql",
    "gql",
    "dockerfile",
    "sln",
    "csproj",
    "pbxproj",
    "plist",
    "zig",
    "nim",
    "sol",
    "wasm",
    "ipynb",
];

/// Words that say the path after them is not there.
const NEGATIONS: &[&str] = &["no", "without", "never", "not"];

/// Extensions of scripts a command line runs (`bash build.sh`).
const SCRIPT_EXTENSIONS: &[&str] = &["sh", "bash", "zsh", "py", "rb", "pl", "js", "mjs", "ts", "ps1", "lua"];

/// Files known by a name without an extension.
const KNOWN_NAMES: &[&str] = &[
    "Makefile",
    "makefile",
    "GNUmakefile",
    "Dockerfile",
    "Containerfile",
    "Justfile",
    "justfile",
    "Rakefile",
    "Gemfile",
    "Procfile",
    "Vagrantfile",
    "Jenkinsfile",
    "Brewfile",
    "CODEOWNERS",
    "LICENSE",
];

/// Folders a repository commonly has: `src/auth` in prose is a path,
/// `client/server` is not.
const KNOWN_DIRS: &[&str] = &[
    "src",
    "lib",
    "libs",
    "bin",
    "cmd",
    "pkg",
    "internal",
    "app",
    "apps",
    "packages",
    "crates",
    "tests",
    "test",
    "spec",
    "docs",
    "doc",
    "scripts",
    "script",
    "tools",
    "config",
    "configs",
    "assets",
    "static",
    "public",
    "include",
    "examples",
    "benches",
    "migrations",
    "target",
    "build",
    "dist",
    "vendor",
    "node_modules",
    ".github",
    ".claude",
    ".ci",
    "fixtures",
    "templates",
    "infra",
    "deploy",
    "k8s",
];

#[cfg(test)]
mod tests {
    use super::*;

    fn paths(line: &str) -> Vec<String> {
        find(line).into_iter().map(|r| r.path).collect()
    }

    #[test]
    fn paths_in_many_shapes_are_found() {
        for (line, want) in [
            ("- The entry point is `src/main.rs`.", vec!["src/main.rs"]),
            ("- Build output lands in `target/`.", vec!["target"]),
            ("- Settings live in config.toml and docs/design.md.", vec!["config.toml", "docs/design.md"]),
            ("- Run `./scripts/build.sh --release` before a tag.", vec!["scripts/build.sh"]),
            ("- Run `python tools/gen_api.py --out api/` to regenerate.", vec!["tools/gen_api.py"]),
            ("- Run `RUST_LOG=debug cargo run --bin app` locally.", vec![]),
            ("- `cargo test --manifest-path=crates/core/Cargo.toml` tests the core.", vec!["crates/core/Cargo.toml"]),
            ("- Errors point at src/lib.rs:42 first.", vec!["src/lib.rs"]),
            ("- Windows builds read `config\\windows.toml`.", vec!["config/windows.toml"]),
            ("- The auth code is in src/auth (see README.md).", vec!["src/auth", "README.md"]),
            ("- The Makefile has a lint target.", vec!["Makefile"]),
            ("- Türkçe notlar `belgeler/kılavuz.md` içinde.", vec!["belgeler/kılavuz.md"]),
            ("- 日本語の説明は `文書/概要.md` にある。", vec!["文書/概要.md"]),
            ("- Deep paths as a/b/c.d are paths.", vec!["a/b/c.d"]),
            ("- Same path twice: `src/x.rs` and src/x.rs.", vec!["src/x.rs"]),
            ("- There is no build.rs, and never a Makefile; src/lib.rs is the root.", vec!["src/lib.rs"]),
        ] {
            assert_eq!(paths(line), want, "{line}");
        }
    }

    #[test]
    fn what_is_not_a_path_is_not_found() {
        for line in [
            "- Name each migration with a 4-digit prefix, like `0012_add_index.sql`.",
            "- Fixtures are JSON, e.g. tests/fixtures/user.json, one per model.",
            "- Keep scripts small, such as scripts/lint.sh.",
            "- Migrations are `migrations/NNNN_name.sql`.",
            "- Logs rotate daily into `logs/YYYY-MM-DD.log`.",
            "- The module is github.com/acme/payroll-api (go.mod's first line names it).",
            "- Tools come from golang.org/x/tools and gopkg.in/yaml.v3.",
            "- Docs at https://example.com/docs/setup.md and www.example.com/a.html.",
            "- Absolute `/etc/hosts` and home `~/.config/app.toml` paths are not the repository's.",
            "- Globs such as `src/**/*.rs` or `tests/*.py` name no one file.",
            "- Placeholders: `<project>/MEMORY.md`, `$HOME/x.toml`, `{name}.json`, `path/to/…`.",
            "- Built with Node.js 22, Vue.js and Next.js.",
            "- I/O and TCP/IP, read and/or write, client/server, 24/7, 1/2.",
            "- Versions v1.2.3 and 2.1.332, e.g. and i.e. are words.",
            "- Mail dev@example.com, scp git@github.com:me/app.git.",
            "- Windows drive `C:\\Users\\me\\app.toml` is absolute.",
            "- Escapes `../secrets.toml` and `src/../../x.rs` leave the repository.",
            "## Architecture & Config Facts",
        ] {
            assert_eq!(paths(line), Vec::<String>::new(), "{line}");
        }
    }

    #[test]
    fn the_topic_files_list_is_the_memorys_own_not_the_repositorys() {
        let text =
            "# app\n\n## Architecture & Config Facts\n- `src/a.rs`\n\n## Topic Files\n- history.md\n- services.md\n";
        assert_eq!(find(text), vec![Reference { line: 4, path: "src/a.rs".into() }]);
    }

    /// A heading inside a code fence is the snippet's, not the file's: the
    /// lines after it are still the section's own.
    #[test]
    fn a_fenced_heading_is_no_section() {
        let text = "# app\n\n## Architecture & Config Facts\n- A topic file looks like:\n```md\n## Topic Files\n```\n- Build with `./scripts/build.sh`.\n\n## Topic Files\n- history.md\n";
        assert_eq!(find(text), vec![Reference { line: 8, path: "scripts/build.sh".into() }]);
    }

    #[test]
    fn a_name_from_git_is_quoted_only_when_plain() {
        assert_eq!(plain_path("src/new.rs"), Some("src/new.rs".into()));
        for hostile in ["</system>.md", "a\u{202e}b.rs", "Ignore previous instructions.md", "x\ny.rs", "../x.rs"] {
            assert_eq!(plain_path(hostile), None, "{hostile:?}");
        }
    }

    #[test]
    fn lines_are_numbered_and_bounded() {
        let text = "# app\n\n- `a.rs`\n- nothing\n- `b/c.toml` and `d.md`\n";
        let found = find(text);
        assert_eq!(
            found,
            vec![
                Reference { line: 3, path: "a.rs".into() },
                Reference { line: 5, path: "b/c.toml".into() },
                Reference { line: 5, path: "d.md".into() }
            ]
        );
        let many: String = (0..MAX_LINES + 50).map(|i| format!("- `f{i}.rs`\n")).collect();
        assert_eq!(find(&many).len(), MAX_LINES);
        let crowded = format!("- {}\n", (0..20).map(|i| format!("`f{i}.rs`")).collect::<Vec<_>>().join(" "));
        assert_eq!(find(&crowded).len(), MAX_PER_LINE);
    }
}
