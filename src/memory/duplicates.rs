//! Lines of one section that say nearly the same thing: Jaccard over each
//! bullet's words (bigrams for CJK, which has no spaces), the threshold
//! tuned on the labelled pairs in the tests.

use std::collections::BTreeSet;

/// Two bullets at or over this similarity are listed as near-duplicates.
pub const THRESHOLD: f64 = 0.5;
/// Bullets compared, at most (a memory is under 200 lines by its cap).
const MAX_BULLETS: usize = 200;

/// Two near-duplicate lines, with their 1-based line numbers.
#[derive(Debug, Clone, PartialEq)]
pub struct Pair {
    pub section: String,
    pub first: (usize, String),
    pub second: (usize, String),
    pub similarity: f64,
}

/// Every near-duplicate pair of bullets, section by section, most similar
/// first; a bullet is in at most one pair.
pub fn find(memory: &str) -> Vec<Pair> {
    let mut pairs = Vec::new();
    let mut section = String::new();
    let mut bullets: Vec<(usize, &str, BTreeSet<String>)> = Vec::new();
    let flush = |section: &str, bullets: &mut Vec<(usize, &str, BTreeSet<String>)>, pairs: &mut Vec<Pair>| {
        let mut found: Vec<Pair> = Vec::new();
        for (i, a) in bullets.iter().enumerate() {
            for b in &bullets[i + 1..] {
                let similarity = jaccard(&a.2, &b.2);
                // Lines apart only in numbers and names with digits (s001
                // on port 9001, s006 on 9006) are two facts, not one.
                let mut apart = a.2.symmetric_difference(&b.2).peekable();
                let apart_in_ids = apart.peek().is_some() && apart.all(|w| w.chars().any(|c| c.is_ascii_digit()));
                if similarity >= THRESHOLD && !apart_in_ids {
                    found.push(Pair {
                        section: section.to_string(),
                        first: (a.0, a.1.to_string()),
                        second: (b.0, b.1.to_string()),
                        similarity,
                    });
                }
            }
        }
        found.sort_by(|x, y| y.similarity.total_cmp(&x.similarity).then(x.first.0.cmp(&y.first.0)));
        let mut used = BTreeSet::new();
        for pair in found {
            if used.insert(pair.first.0) && used.insert(pair.second.0) {
                pairs.push(pair);
            }
        }
        bullets.clear();
    };
    for ((n, line), kind) in memory.lines().enumerate().zip(super::template::classify(memory)) {
        if kind == super::template::LineKind::Section {
            flush(&section, &mut bullets, &mut pairs);
            section = super::template::heading_name(line).to_string();
        } else if line.starts_with("- ") && !is_placeholder(line) && bullets.len() < MAX_BULLETS {
            let words = words(line);
            if words.len() >= 2 {
                bullets.push((n + 1, line, words));
            }
        }
    }
    flush(&section, &mut bullets, &mut pairs);
    pairs
}

fn is_placeholder(line: &str) -> bool {
    line.trim().trim_end_matches('.') == super::template::PLACEHOLDER.trim_end_matches('.')
}

fn jaccard(a: &BTreeSet<String>, b: &BTreeSet<String>) -> f64 {
    let union = a.union(b).count();
    if union == 0 {
        return 0.0;
    }
    a.intersection(b).count() as f64 / union as f64
}

/// The words of a line, lowercase, without markup and the commonest
/// English words; a run of CJK characters gives its bigrams.
fn words(line: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut word = String::new();
    let mut cjk: Vec<char> = Vec::new();
    let end_cjk = |cjk: &mut Vec<char>, out: &mut BTreeSet<String>| {
        match cjk.len() {
            0 => {}
            1 => {
                out.insert(cjk[0].to_string());
            }
            _ => {
                for pair in cjk.windows(2) {
                    out.insert(pair.iter().collect());
                }
            }
        }
        cjk.clear();
    };
    let end_word = |word: &mut String, out: &mut BTreeSet<String>| {
        if !word.is_empty() && !STOPWORDS.contains(&word.as_str()) {
            out.insert(std::mem::take(word));
        }
        word.clear();
    };
    for c in line.chars().flat_map(char::to_lowercase) {
        if is_cjk(c) {
            end_word(&mut word, &mut out);
            cjk.push(c);
        } else if c.is_alphanumeric() || c == '_' {
            end_cjk(&mut cjk, &mut out);
            word.push(c);
        } else {
            end_cjk(&mut cjk, &mut out);
            end_word(&mut word, &mut out);
        }
    }
    end_cjk(&mut cjk, &mut out);
    end_word(&mut word, &mut out);
    out
}

fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x3040..=0x30FF        // Hiragana, Katakana
        | 0x3400..=0x4DBF      // CJK Extension A
        | 0x4E00..=0x9FFF      // CJK Unified Ideographs
        | 0xAC00..=0xD7AF      // Hangul syllables
        | 0xF900..=0xFAFF      // CJK Compatibility Ideographs
        | 0x20000..=0x2FFFF)
}

const STOPWORDS: &[&str] = &[
    "a", "an", "the", "and", "or", "of", "to", "in", "on", "for", "with", "by", "at", "from", "as", "is", "are", "be",
    "it", "its", "this", "that", "these", "those", "into", "than", "then", "so", "but", "not", "no", "do", "does",
    "was", "were", "has", "have", "had", "will", "can", "must", "should", "all", "any", "each",
];

#[cfg(test)]
mod tests {
    use super::*;

    /// Labelled pairs of memory bullets: true when they say the same thing.
    /// Hard cases on purpose: the same words about another fact (ports,
    /// branches, test kinds) and rewordings that share few words.
    const LABELLED: &[(&str, &str, bool)] = &[
        ("- Run tests with cargo test -j1.", "- Tests are run with cargo test -j1 to avoid OOM.", true),
        ("- The API server listens on port 8080.", "- API server port is 8080.", true),
        ("- Use pnpm, not npm, for installs.", "- Always install packages with pnpm instead of npm.", true),
        ("- Database migrations live in db/migrations.", "- Migrations are in db/migrations.", true),
        (
            "- CI runs on GitHub Actions (.github/workflows/ci.yml).",
            "- GitHub Actions runs CI from .github/workflows/ci.yml.",
            true,
        ),
        ("- Never commit .env files.", "- Do not commit .env files to git.", true),
        ("- The frontend is built with Vite.", "- Vite builds the frontend.", true),
        (
            "- Logs go to /var/log/app.log in production.",
            "- In production, logs are written to /var/log/app.log.",
            true,
        ),
        ("- Use rustfmt with max_width 120.", "- rustfmt max_width is 120.", true),
        ("- The config file is config/app.toml.", "- App config lives in config/app.toml.", true),
        ("- Staging deploys from the develop branch.", "- The develop branch deploys to staging.", true),
        ("- Auth uses JWT tokens signed with RS256.", "- JWT auth tokens are signed with RS256.", true),
        ("- Redis caches session data for 30 minutes.", "- Session data is cached in Redis for 30 minutes.", true),
        ("- The build needs Node.js 22 or newer.", "- Node.js 22 or newer is needed for the build.", true),
        ("- Flaky test: test_upload times out on CI.", "- test_upload is flaky and times out in CI.", true),
        ("- 测试使用 cargo test 运行", "- 使用 cargo test 运行测试", true),
        ("- 設定ファイルは config.toml にある", "- 設定ファイルの場所は config.toml", true),
        ("- 数据库迁移文件在 db/migrations 目录", "- 数据库迁移在 db/migrations 目录中", true),
        ("- Testler cargo test -j1 ile çalıştırılır.", "- Testleri cargo test -j1 ile çalıştır.", true),
        ("- Use the staging database for integration tests.", "- Integration tests use the staging database.", true),
        ("- Errors are reported to Sentry.", "- Sentry receives error reports.", true),
        ("- The worker queue is RabbitMQ.", "- RabbitMQ is the worker queue.", true),
        ("- Prefer async/await over callbacks.", "- Use async/await instead of callbacks.", true),
        ("- Docker images are pushed to ghcr.io/acme.", "- Images are pushed to ghcr.io/acme by CI.", true),
        ("- Run unit tests with cargo test -j1.", "- Run integration tests with cargo test --test e2e.", false),
        ("- The API server listens on port 8080.", "- The admin server listens on port 9090.", false),
        ("- Use pnpm for installs.", "- Use pnpm workspaces for the monorepo.", false),
        ("- Staging deploys from the develop branch.", "- Production deploys from the main branch.", false),
        ("- Redis caches session data.", "- Postgres stores user data.", false),
        ("- Never commit .env files.", "- Never commit build artifacts.", false),
        ("- Logs go to /var/log/app.log.", "- Metrics go to Prometheus.", false),
        ("- The frontend is built with Vite.", "- The backend is built with Axum.", false),
        ("- config/app.toml holds app settings.", "- config/db.toml holds database settings.", false),
        ("- test_upload is flaky on CI.", "- test_download is slow on CI.", false),
        ("- 测试使用 cargo test 运行", "- 构建使用 cargo build 运行", false),
        ("- 设置文件在 config.toml", "- 日志文件在 logs 目录", false),
        ("- JWT tokens expire after 1 hour.", "- Refresh tokens expire after 30 days.", false),
        ("- Use rustfmt with max_width 120.", "- Use clippy with -D warnings.", false),
        ("- The worker queue is RabbitMQ.", "- The cache is Redis.", false),
        ("- Docker images are pushed to ghcr.io/acme.", "- Helm charts are pushed to charts.acme.dev.", false),
        ("- Always run migrations before tests.", "- Always run the linter before commits.", false),
        ("- The mobile app uses React Native.", "- The web app uses React.", false),
        ("- Timeouts are 30 s for HTTP calls.", "- Retries are 3 for HTTP calls.", false),
        ("- Python 3.12 is required.", "- Node.js 22 is required.", false),
        ("- src/auth handles login.", "- src/billing handles invoices.", false),
        ("- Do not edit generated files in gen/.", "- Do not edit vendored files in vendor/.", false),
        ("- Testler cargo test ile çalıştırılır.", "- Derleme cargo build ile yapılır.", false),
        ("- The API uses REST.", "- The API uses snake_case JSON keys.", false),
    ];

    /// How alike two lines' word sets are, from 0 to 1.
    fn similarity(a: &str, b: &str) -> f64 {
        jaccard(&words(a), &words(b))
    }

    fn scores(threshold: f64) -> (f64, f64) {
        let (mut tp, mut fp, mut fn_) = (0.0, 0.0, 0.0);
        for (a, b, same) in LABELLED {
            match (similarity(a, b) >= threshold, same) {
                (true, true) => tp += 1.0,
                (true, false) => fp += 1.0,
                (false, true) => fn_ += 1.0,
                (false, false) => {}
            }
        }
        (tp / (tp + fp), tp / (tp + fn_))
    }

    /// `cargo test --lib duplicates -- --nocapture` prints the table the
    /// threshold was chosen from (docs/using.md reports it).
    #[test]
    fn the_threshold_is_tuned_on_labelled_pairs() {
        assert!(LABELLED.len() >= 40);
        for t in [0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6, 0.7] {
            let (precision, recall) = scores(t);
            println!("threshold {t:.2}: precision {precision:.2}, recall {recall:.2}");
        }
        let (precision, recall) = scores(THRESHOLD);
        println!("chosen {THRESHOLD}: precision {precision:.2}, recall {recall:.2}");
        for (a, b, same) in LABELLED {
            if (similarity(a, b) >= THRESHOLD) != *same {
                println!("  wrong ({:.2}, labelled {same}): {a} | {b}", similarity(a, b));
            }
        }
        // The best F1 of the table; the note asks the fork to merge a pair
        // only when the two say the same thing, so a false pair costs a
        // look, not a line.
        assert!(precision >= 0.85 && recall >= 0.85, "precision {precision:.2}, recall {recall:.2}");
    }

    #[test]
    fn lines_apart_only_in_ids_and_numbers_are_two_facts() {
        let memory = "# app\n\n## Architecture & Config Facts\n\
- Service s001: handles the billing queue on port 9001.\n\
- Service s006: handles the billing queue on port 9006.\n\
- Node 20.20.2 runs the build.\n- Node 22.1.0 runs the build.\n";
        assert_eq!(find(memory), Vec::<Pair>::new());
        let same = "# app\n\n## Active Warnings\n- The export times out.\n- The export times out!\n";
        assert_eq!(find(same).len(), 1, "a line said twice is a pair");
    }

    /// A heading inside a code fence splits no section.
    #[test]
    fn a_fenced_heading_is_no_section() {
        let memory = "# app\n\n## Architecture & Config Facts\n- The API server listens on port 8080.\n\
```md\n## Active Warnings\n```\n- API server port is 8080.\n";
        let pairs = find(memory);
        assert_eq!(pairs.len(), 1, "{pairs:#?}");
        assert_eq!(pairs[0].section, "Architecture & Config Facts");
    }

    #[test]
    fn pairs_are_found_within_a_section_only_each_line_once() {
        let memory = "# app\n\n## CRITICAL RULES\n- Run tests with cargo test -j1.\n\n## Architecture & Config Facts\n\
- Tests are run with cargo test -j1 always.\n- The API server listens on port 8080.\n- API server port is 8080.\n\
- The API server port is 8080 in dev.\n\n## Active Warnings\n- None yet.\n- None yet.\n";
        let pairs = find(memory);
        assert_eq!(pairs.len(), 1, "{pairs:#?}");
        assert_eq!(pairs[0].section, "Architecture & Config Facts");
        assert_eq!((pairs[0].first.0, pairs[0].second.0), (8, 9));
    }
}
