//! How an assigned value reads: a stand-in, random, or word-like
//! (`assign.rs` decides which count for which names).
//!
//! - Stand-ins never count: short values, placeholders, numbers, states and
//!   type names, references, code, paths, e-mail addresses, and names of a
//!   stored secret (`classify`).
//! - Random values count for every secret-ish name: a symbol, a long hex
//!   run, a chunk that switches class four or more times and is not
//!   camelCase (`Tr0ub4dor`), a long chunk of high entropy or few vowels.
//!   Overall entropy must reach 2.5 bits a character.
//! - Word-like is the rest (`correcthorse`, `cl100k_base`, `hunter22`).

use regex::Regex;
use std::sync::LazyLock;

const MIN_VALUE: usize = 6;

pub(super) enum Class {
    StandIn,
    Random,
    Word { digits: bool, one_chunk: bool },
}

/// `quote` is the quote the value was written in, if any.
pub(super) fn classify(v: &str, quote: Option<&str>) -> Class {
    let v = v.trim();
    if v.chars().count() < MIN_VALUE
        || reference(v)
        || number(v)
        || code_path(v)
        || email(v)
        || state(v)
        || placeholder(v)
    {
        return Class::StandIn;
    }
    // A shell command in backticks.
    if quote == Some("`") && v.contains(' ') {
        return Class::StandIn;
    }
    if looks_random(v) {
        return Class::Random;
    }
    // Paths and file names, identifiers that name a secret.
    if v.contains('/') || v.contains('\\') || dotted(v) || names_a_secret(v) {
        return Class::StandIn;
    }
    Class::Word { digits: v.bytes().any(|c| c.is_ascii_digit()), one_chunk: !v.contains(['-', '_', '.', ' ']) }
}

/// Values that stand for a secret rather than being one.
pub(super) fn placeholder(v: &str) -> bool {
    let v = v.trim();
    let Some(first) = v.chars().next() else {
        return true;
    };
    if "<{[(".contains(first) || v.contains("${") || v.contains("{{") || v.contains("$(") {
        return true;
    }
    let second = v[first.len_utf8()..].chars().next();
    if first == '$' && second.is_some_and(|c| c.is_ascii_alphabetic() || c == '_') {
        return true;
    }
    // `%s`, `%(name)s`, `%VAR%`; not a percent-escape like `%2F`.
    if first == '%' && (v.len() > 2 && v.ends_with('%') || matches!(second, Some('s' | 'd' | '('))) {
        return true;
    }
    if v.chars().all(|c| c == first) || v.chars().all(|c| "*.#-_xX•● ".contains(c)) {
        return true;
    }
    #[rustfmt::skip]
    const WORDS: &[&str] = &[
        "password", "passwd", "pass", "pwd", "secret", "token", "key", "apikey", "api_key", "changeme",
        "changeit", "null", "none", "nil", "undefined", "redacted", "hidden", "dummy", "todo", "tbd", "fixme",
        "foo", "bar", "baz", "foobar", "test", "example", "sample", "placeholder", "whatever", "something",
        "value", "mypassword", "yourpassword", "mysecret", "mytoken", "secret123", "password123", "abcdef",
        "123456", "qwerty", "abc123", "test123", "foo123", "12345678", "s3cr3t",
    ];
    WORDS.iter().any(|w| w.eq_ignore_ascii_case(v)) || stand_in_part(v)
}

/// Words that mark a stand-in: `your-key-here`, `xxxx`, `EXAMPLE`.
static STAND_IN: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"(?i-u:your|placeholder|redacted|example|changeme|change-me|change_me|changeit|replace",
        r"|xxxx|\*\*\*\*|\.\.\.|dummy|fake|insert|-here|_here)",
    ))
    .expect("stand-in pattern compiles")
});

fn stand_in_part(v: &str) -> bool {
    STAND_IN.is_match(v)
}

/// A stand-in word, or a run like `abcdef` or `000000` (which a chosen
/// password may hold, a generated body hardly ever).
pub(super) fn stand_in_run(t: &str) -> bool {
    if stand_in_part(t) {
        return true;
    }
    let lower = t.to_ascii_lowercase();
    let b = lower.as_bytes();
    let (mut up, mut same) = (1, 1);
    for w in b.windows(2) {
        up = if w[1] == w[0].wrapping_add(1) && w[0].is_ascii_alphanumeric() { up + 1 } else { 1 };
        same = if w[1] == w[0] { same + 1 } else { 1 };
        if up >= 6 || same >= 6 {
            return true;
        }
    }
    false
}

/// Booleans, states and type names: `true`, `required`, `unset`, `string`.
fn state(v: &str) -> bool {
    #[rustfmt::skip]
    const WORDS: &[&str] = &[
        "true", "false", "yes", "no", "on", "off", "required", "optional", "set", "unset", "missing", "present",
        "needed", "expired", "invalid", "valid", "empty", "rotated", "revoked", "configured", "provided",
        "enabled", "disabled", "masked", "inherit", "inherited", "generated", "encrypted", "stored", "pending",
        "unknown", "default", "string", "str", "bytes", "number", "integer", "boolean", "object",
        "secretstring",
    ];
    WORDS.iter().any(|w| w.eq_ignore_ascii_case(v))
}

/// `3600`, `12h`, `1_000`, `0.5`, `v1.2.3`.
fn number(v: &str) -> bool {
    let v = v.strip_prefix(['v', 'V']).filter(|r| r.starts_with(|c: char| c.is_ascii_digit())).unwrap_or(v);
    let digits = v.bytes().take_while(|c| c.is_ascii_digit() || b"._,+-".contains(c)).count();
    digits > 0
        && v.as_bytes()[0].is_ascii_digit()
        && v.len() - digits <= 3
        && v[digits..].bytes().all(|c| c.is_ascii_alphabetic())
}

/// References to a secret store, YAML tags, decorators, `file:` and `env:`.
fn reference(v: &str) -> bool {
    #[rustfmt::skip]
    const PREFIXES: &[&str] = &[
        "op://", "arn:", "vault:", "env:", "file:", "secret:", "secrets:", "ssm:", "sm://", "gcp:", "gcpsm://",
        "azkv:", "akv://", "keyvault:", "k8s:", "ref+", "!", "@", "~/", "./", "../",
    ];
    PREFIXES.iter().any(|p| v.starts_with(p))
}

fn email(v: &str) -> bool {
    let Some((local, domain)) = v.split_once('@') else {
        return false;
    };
    !local.is_empty()
        && local.chars().all(|c| c.is_ascii_alphanumeric() || "._%+-".contains(c))
        && domain.contains('.')
        && domain.split('.').all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_alphanumeric() || c == '-'))
}

/// `process.env.OPENAI_API_KEY!`, `config.db.password`, `settings.SECRET`.
fn code_path(v: &str) -> bool {
    let v = v.trim_end_matches(['!', '?']);
    v.contains('.')
        && v.split('.').all(|p| {
            p.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_' || c == '$')
                && p.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$')
                && !random_chunk(p)
        })
}

/// File names and dotted words: `utils2.test.ts`, `id_rsa.pub`.
fn dotted(v: &str) -> bool {
    v.contains('.')
        && v.split('.').all(|p| !p.is_empty() && p.chars().all(|c| c.is_alphanumeric() || c == '_' || c == '-'))
}

/// `db-credentials-v2`, `prod_api_token`: the name of a stored secret.
fn names_a_secret(v: &str) -> bool {
    #[rustfmt::skip]
    const VOCAB: &[&str] = &[
        "secret", "secrets", "credential", "credentials", "creds", "password", "passwords", "passwd", "token",
        "tokens", "key", "keys", "apikey", "vault", "kms", "keyring", "keychain", "cert", "certs",
    ];
    let chunks: Vec<&str> = v.split(['-', '_', '.', ':', ' ']).collect();
    chunks.len() >= 2 && chunks.iter().any(|c| VOCAB.contains(&c.to_ascii_lowercase().as_str()))
}

/// Generated rather than chosen: see the module doc.
pub(super) fn looks_random(v: &str) -> bool {
    let v = v.trim();
    if v.chars().count() < MIN_VALUE || entropy(v) < 2.5 {
        return false;
    }
    let symbol = v.chars().any(|c| !c.is_alphanumeric() && !"-_./ ".contains(c));
    symbol || v.split(['-', '_', '.', '/', ' ']).any(random_chunk)
}

fn random_chunk(c: &str) -> bool {
    let n = c.chars().count();
    if n < 4 || !c.is_ascii() {
        return false;
    }
    let digit = c.bytes().any(|b| b.is_ascii_digit());
    let alpha = c.bytes().any(|b| b.is_ascii_alphabetic());
    if n >= 8 && digit && alpha && c.bytes().all(|b| b.is_ascii_hexdigit()) {
        return true;
    }
    let (segments, camel) = segments(c);
    if segments >= 4 && !camel {
        return true;
    }
    if alpha && !digit && n >= 12 {
        let vowels = c.bytes().filter(|b| b"aeiouyAEIOUY".contains(b)).count();
        if vowels * 5 < n {
            return true;
        }
    }
    n >= 32 || (n >= 20 && entropy(c) >= 4.0)
}

/// Runs split where letters meet digits or case changes (`cl100k` is 3,
/// `Zq8wX2vB` is 7), and whether they are camelCase words.
fn segments(c: &str) -> (usize, bool) {
    let b = c.as_bytes();
    let (mut count, mut camel, mut start) = (1, b.iter().all(u8::is_ascii_alphabetic), 0);
    for i in 1..b.len() {
        let (p, x) = (b[i - 1], b[i]);
        let next = b.get(i + 1).copied().unwrap_or(0);
        let boundary = p.is_ascii_digit() != x.is_ascii_digit()
            || (p.is_ascii_lowercase() && x.is_ascii_uppercase())
            || (p.is_ascii_uppercase() && x.is_ascii_uppercase() && next.is_ascii_lowercase());
        if boundary {
            camel &= count == 1 || i - start >= 3;
            count += 1;
            start = i;
        }
    }
    camel &= count == 1 || b.len() - start >= 3;
    (count, camel)
}

/// Shannon entropy in bits a character.
pub(super) fn entropy(v: &str) -> f64 {
    let mut ascii = [0u32; 128];
    let mut other: Vec<(char, u32)> = Vec::new();
    let mut n = 0u32;
    for c in v.chars() {
        n += 1;
        if c.is_ascii() {
            ascii[c as usize] += 1;
        } else if let Some(e) = other.iter_mut().find(|e| e.0 == c) {
            e.1 += 1;
        } else {
            other.push((c, 1));
        }
    }
    let n = f64::from(n);
    ascii
        .iter()
        .copied()
        .chain(other.iter().map(|e| e.1))
        .filter(|&k| k > 0)
        .map(|k| -(f64::from(k) / n) * (f64::from(k) / n).log2())
        .sum()
}
