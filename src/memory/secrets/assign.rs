//! `NAME=value`, `NAME: value`, quoted, JSON, YAML, `:=`, `=>`: a value
//! given to a secret-ish name (`secret_name`), classified in `value.rs`.
//! Random values always count. Word-like values (`correcthorse`) are where
//! passwords and prose meet: they count where config, not prose, is written
//! (`counts`).

use super::value::{Class, classify};
use regex::Regex;
use std::sync::LazyLock;

/// From a secret-ish word (a literal, for the regex crate's prefilter) to
/// the operator; the name's start is found by hand.
static NAME: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"(?:secret|SECRET|Secret|token|TOKEN|Token|pass|PASS|Pass|pw|PW|Pw|key|KEY|Key",
        r"|credential|CREDENTIAL|Credential|creds|CREDS|Creds)",
        r#"[A-Za-z0-9_.\-]*(?:\\?["'`]|\*\*)?[ \t]*(?::=|=>|=|:)[ \t]*"#,
    ))
    .expect("assignment pattern compiles")
});

fn is_name(c: u8) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.' | b'-')
}

/// Names are read back this far from their secret-ish word.
const MAX_NAME: usize = 128;

/// Values are read this far: past any real secret.
const MAX_VALUE: usize = 256;

/// A name's line start is looked for this far back (a bullet's marker).
const LINE_WINDOW: usize = 1024;

pub(super) fn assignment(text: &str) -> Option<&'static str> {
    for found in NAME.find_iter(text) {
        // The regex vouches for the shape: the rest of the name, a closing
        // quote or `**`, spaces, operator, spaces.
        let b = text.as_bytes();
        let floor = found.start().saturating_sub(MAX_NAME);
        let start = (floor..found.start()).rev().take_while(|&i| is_name(b[i])).last().unwrap_or(found.start());
        let m = &text[start..found.end()];
        let name_len = m.bytes().position(|c| !is_name(c)).unwrap_or(m.len());
        let name = &m[..name_len];
        let after_name = &m[name_len..];
        let close_len = after_name.find([' ', '\t', ':', '=']).unwrap_or(after_name.len());
        let close = &after_name[..close_len];
        let op = after_name[close_len..].trim_matches([' ', '\t']);
        let spaced = after_name[close_len..].len() > op.len();
        let end = found.end();
        let mut cut = (end + MAX_VALUE).min(text.len());
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        let rest = &text[end..cut];
        // Not `==`, `::`, `://`.
        if rest.starts_with('=') || (op == ":" && (rest.starts_with(':') || rest.starts_with('/'))) {
            continue;
        }
        let Some(value) = read_value(rest) else {
            continue;
        };
        let Some(parts) = secret_name(name, op) else {
            continue;
        };
        let before = text[..start].trim_end_matches([' ', '\t']);
        // At most LINE_WINDOW back: scanning to the start of one long line
        // for every match is quadratic, and a longer line is no bullet.
        let window = start.saturating_sub(LINE_WINDOW);
        let back = &b[window..start];
        let line = match back.iter().rposition(|&c| c == b'\n' || c == b'\r') {
            Some(at) => &text[window + at + 1..start],
            None if window == 0 => &text[..start],
            None => "",
        }
        .trim_start();
        let bullet = ["- ", "* ", "+ "].iter().any(|b| line.starts_with(b))
            || line.split_once(". ").is_some_and(|(n, _)| !n.is_empty() && n.bytes().all(|c| c.is_ascii_digit()));
        let ctx = Context {
            bullet,
            line_end: value.line_end,
            upper: name.bytes().any(|c| c.is_ascii_uppercase()) && !name.bytes().any(|c| c.is_ascii_lowercase()),
            markdown: close == "`" || close == "**",
            spaced,
            op_colon: op == ":",
            conn: before.ends_with(';') || value.after == Some(';'),
            quoted: value.quote.is_some(),
            prose: value.quote.is_none() && value.prose,
        };
        if counts(parts.family, &classify(value.text, value.quote), value.text, &ctx) {
            return Some(kind(&parts, &ctx));
        }
    }
    None
}

#[derive(Clone, Copy, PartialEq)]
enum Family {
    Password,
    Secret,
    /// Only ends in KEY: public keys, cache keys and secrets share it.
    Key,
}

/// The name's parts, upper case and without separators, one after another
/// in `buf` (so a joined `API` `KEY` is the slice `APIKEY`).
struct Name {
    family: Family,
    buf: String,
    bounds: Vec<(usize, usize)>,
}

impl Name {
    fn parts(&self) -> impl DoubleEndedIterator<Item = &str> + ExactSizeIterator {
        self.bounds.iter().map(|&(a, b)| &self.buf[a..b])
    }
}

struct Context {
    /// The name starts a markdown list item: `- NAME: value` is prose.
    bullet: bool,
    /// Nothing but spaces (and a `#` comment) follows a bare value.
    line_end: bool,
    /// `DB_PASSWORD`: env-style, its value is literal config.
    upper: bool,
    /// `` `NAME`: `` or `**Name**:`: markdown prose.
    markdown: bool,
    /// Spaces around the operator: `password = x`, not `password=x`.
    spaced: bool,
    op_colon: bool,
    /// In a connection string: `;Password=x` or `Password=x;`.
    conn: bool,
    quoted: bool,
    /// More words follow a bare value on its line.
    prose: bool,
}

fn kind(name: &Name, ctx: &Context) -> &'static str {
    let has = |p: &str| name.parts().any(|x| x == p);
    if (has("AWS") && (has("SECRET") || has("SECRETKEY"))) || (has("SECRET") && has("ACCESSKEY")) {
        "an AWS secret access key"
    } else if name.family == Family::Password && ctx.conn {
        "a password in a connection string"
    } else if name.family == Family::Password {
        "a password"
    } else {
        "a secret assignment"
    }
}

fn counts(family: Family, class: &Class, value: &str, ctx: &Context) -> bool {
    match *class {
        Class::StandIn => false,
        Class::Random => family != Family::Key || value.chars().count() >= 16,
        Class::Word { .. } if family == Family::Key || ctx.markdown => false,
        Class::Word { digits: false, .. } if ctx.prose && (ctx.op_colon || ctx.spaced) => false,
        Class::Word { digits: true, one_chunk: true } if family == Family::Password => true,
        Class::Word { .. } if ctx.bullet && ctx.op_colon => false,
        // INI and properties files: `password = correcthorse`.
        Class::Word { one_chunk: true, .. }
            if family == Family::Password && ctx.spaced && !ctx.op_colon && ctx.line_end =>
        {
            true
        }
        Class::Word { .. } if ctx.upper => true,
        Class::Word { .. } => family == Family::Password && (ctx.quoted || ctx.conn || (!ctx.op_colon && !ctx.spaced)),
    }
}

struct Value<'a> {
    text: &'a str,
    quote: Option<&'a str>,
    /// The character right after a bare value.
    after: Option<char>,
    /// More words follow a bare value on its line.
    prose: bool,
    line_end: bool,
}

/// A quoted value, or a bare one up to a space or punctuation. `None` for
/// code: `os.environ["X"]`, `getpass()`, `Option<String>`.
fn read_value(rest: &str) -> Option<Value<'_>> {
    for quote in ["\\\"", "\\'", "\"", "'", "`"] {
        if let Some(inner) = rest.strip_prefix(quote) {
            let end = inner.find(['\n', '\r']).unwrap_or(inner.len());
            let end = inner[..end].find(quote).unwrap_or(end);
            return Some(Value {
                text: inner[..end].trim(),
                quote: Some(quote),
                after: None,
                prose: false,
                line_end: false,
            });
        }
    }
    let end = rest.find(|c: char| c.is_whitespace() || "\"'`,;&)]}>([<|\\".contains(c)).unwrap_or(rest.len());
    let after = rest[end..].chars().next();
    if matches!(after, Some('(' | '[' | '<')) {
        return None;
    }
    let text = rest[..end].trim_end_matches(['.', ':']);
    let tail = &rest[end..];
    let prose = tail.starts_with([' ', '\t'])
        && tail.trim_start_matches([' ', '\t']).starts_with(|c: char| c.is_alphabetic() || c == '(');
    // The line ends, or a `#` comment does.
    let line_end = tail.trim_start_matches([' ', '\t']).chars().next().is_none_or(|c| matches!(c, '\n' | '\r' | '#'));
    Some(Value { text, quote: None, after, prose, line_end })
}

/// Parts of a name that make its value a password.
#[rustfmt::skip]
const PASSWORD_PARTS: &[&str] = &[
    "PASSWORD", "PASSWORDS", "PASSWD", "PWD", "PW", "PASS", "PASSPHRASE", "PASSCODE",
];
/// Parts of a name that make its value a secret (KEY pairs are joined).
#[rustfmt::skip]
const SECRET_PARTS: &[&str] = &[
    "SECRET", "SECRETS", "TOKEN", "CREDENTIAL", "CREDENTIALS", "CREDS", "APIKEY", "APIKEYS", "PRIVATEKEY",
    "SECRETKEY", "ENCRYPTIONKEY", "DECRYPTIONKEY", "MASTERKEY", "SIGNINGKEY", "ACCESSKEY", "AUTHKEY", "APPKEY",
    "HMACKEY", "JWTKEY", "CRYPTOKEY", "LICENSEKEY", "SESSIONKEY", "WEBHOOKKEY", "CLIENTKEY", "ACCOUNTKEY",
    "SHAREDKEY", "SERVICEKEY",
];
/// Words joined with a following KEY: `API_KEY`, `apiKey` are one part.
#[rustfmt::skip]
const KEY_JOIN: &[&str] = &[
    "API", "PRIVATE", "SECRET", "ENCRYPTION", "DECRYPTION", "MASTER", "SIGNING", "ACCESS", "AUTH", "APP",
    "HMAC", "JWT", "CRYPTO", "LICENSE", "SESSION", "WEBHOOK", "CLIENT", "ACCOUNT", "SHARED", "SERVICE",
];
/// Last parts of a name that make it about the secret, not the secret (a
/// plural S is dropped first). Sorted, for a binary search.
#[rustfmt::skip]
pub(super) const ABOUT_PARTS: &[&str] = &[
    "AGE", "ALGO", "ALGORITHM", "AT", "AUDIENCE", "BACKEND", "BIT", "BUDGET", "BYTE", "CHARACTER", "CHARS",
    "CHECK", "CHECKSUM", "CLASS", "CMD", "COMMAND", "COMPLEXITY", "COST", "COUNT", "DAY", "DEBUG", "DIGEST",
    "DIR", "DISABLED", "DOC", "DOCS", "EMAIL", "ENABLED", "ENCODING", "ENDPOINT", "ENV", "ERROR", "EXAMPLE",
    "EXPIRATION", "EXPIRE", "EXPIRED", "EXPIRES", "EXPIRY", "FIELD", "FIELDS", "FILE", "FINGERPRINT", "FLAG",
    "FOLDER", "FORMAT", "GROUP", "HASH", "HASHER", "HEADER", "HELPER", "HINT", "HOST", "HOUR", "ID", "IN",
    "INTERVAL", "ISSUER", "KEYCHAIN", "KEYS", "KIND", "LABEL", "LEN", "LENGTH", "LIFETIME", "LIMIT", "LINK",
    "LOCATION", "LOG", "LOGGING", "LOGIN", "MANAGER", "MAX", "METHOD", "MIN", "MINUTE", "MODE", "MS", "NAME",
    "OWNER", "PATH", "PATTERN", "PLACEHOLDER", "POLICIE", "POLICY", "PORT", "PREFIX", "PRICE", "PROMPT",
    "PROMPTED", "PROVIDER", "RATE", "REF", "REGEX", "REGION", "REQUEST", "REQUIRED", "RESET", "ROTATION",
    "ROUND", "SALT", "SCHEME", "SECOND", "SHA", "SHA256", "SIZE", "SOURCE", "SPEC", "STATE", "STATUS", "STDIN",
    "STORE", "STRATEGY", "STRENGTH", "SUFFIX", "TEST", "TIMEOUT", "TTL", "TYPE", "URI", "URL", "USAGE", "USER",
    "USERNAME", "VALID", "VALIDATION", "VALIDATOR", "VAR", "VARIABLE", "VERSION",
];
/// A KEY after one of these is public by design or not a credential.
#[rustfmt::skip]
const NOT_SECRET_KEY: &[&str] = &[
    "PUB", "SITE", "ANON", "PRIMARY", "FOREIGN", "SORT", "PARTITION", "CACHE", "IDEMPOTENCY", "ROUTING",
    "SHARD", "LOOKUP", "OBJECT", "UNIQUE", "COMPOSITE", "DEDUP", "DEDUPE", "MESSAGE", "EVENT", "TRACE",
    "FEATURE", "I18N", "TRANSLATION", "HOT", "SHORTCUT", "MAP", "DICT", "JSON", "YAML", "REGISTRY", "STATE",
    "GROUP", "ORDER", "INDEX", "SSH", "GPG", "PGP", "HOST",
];

/// The upper case parts of `dbPassword`, `x-api-key`, `AWSSecretKey`; `None`
/// unless the name is secret-ish and not about the secret.
fn secret_name(name: &str, op: &str) -> Option<Name> {
    let b = name.as_bytes();
    let mut buf = String::with_capacity(b.len());
    let mut bounds: Vec<(usize, usize)> = Vec::new();
    let mut start = 0;
    for (i, &c) in b.iter().enumerate() {
        let prev = if i > 0 { b[i - 1] } else { 0 };
        let next = b.get(i + 1).copied().unwrap_or(0);
        let camel = c.is_ascii_uppercase()
            && (prev.is_ascii_lowercase() || (prev.is_ascii_uppercase() && next.is_ascii_lowercase()));
        if (!c.is_ascii_alphanumeric() || camel) && buf.len() > start {
            bounds.push((start, buf.len()));
            start = buf.len();
        }
        if c.is_ascii_alphanumeric() {
            buf.push(c.to_ascii_uppercase() as char);
        }
    }
    if buf.len() > start {
        bounds.push((start, buf.len()));
    }
    // `API` `KEY` is one part: the slices are adjacent in `buf`.
    let mut joined: Vec<(usize, usize)> = Vec::with_capacity(bounds.len());
    for (a, e) in bounds {
        match joined.last_mut() {
            Some(last) if matches!(&buf[a..e], "KEY" | "KEYS") && KEY_JOIN.contains(&&buf[last.0..last.1]) => {
                last.1 = e
            }
            _ => joined.push((a, e)),
        }
    }
    let name = Name { family: Family::Key, buf, bounds: joined };
    let last = name.parts().next_back()?;
    let singular = last.strip_suffix('S').filter(|s| s.len() > 1).unwrap_or(last);
    if ABOUT_PARTS.binary_search(&last).is_ok() || ABOUT_PARTS.binary_search(&singular).is_ok() {
        return None;
    }
    if name.parts().any(|p| p == "PUBLIC" || p == "PUBLISHABLE") {
        return None;
    }
    // `PASS: src/utils2.test.ts` is a test result.
    if name.parts().len() == 1 && last == "PASS" && op == ":" {
        return None;
    }
    let family = if name.parts().any(|p| {
        PASSWORD_PARTS.contains(&p)
            || (p.len() > 8 && (p.ends_with("PASSWORD") || p.ends_with("PASSWD")))
            || (p.len() > 3 && p.ends_with("PWD"))
    }) {
        Family::Password
    } else if name.parts().any(|p| {
        SECRET_PARTS.contains(&p)
            || (p.len() > 6 && (p.ends_with("TOKEN") || p.ends_with("SECRET") || p.ends_with("APIKEY")))
    }) {
        Family::Secret
    } else if (last == "KEY" || last == "KEYS")
        && name.parts().len() > 1
        && !NOT_SECRET_KEY.contains(&name.parts().rev().nth(1).unwrap_or(""))
    {
        Family::Key
    } else {
        return None;
    };
    Some(Name { family, ..name })
}
