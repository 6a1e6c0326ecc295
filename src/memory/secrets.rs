//! Secrets a fork might copy from the transcript into memory: provider API
//! keys and tokens, private key blocks, passwords in URLs, and `.env`-style
//! secret assignments. Memory files are plain text that every later session
//! reads, so a bullet or topic text that carries one is refused, and the
//! refusal never repeats it.
//!
//! Hand-written scanning over bytes (every pattern is ASCII), linear in the
//! text, no regex crate. The rules lean towards shapes that real secrets
//! have (length, a random-looking mix of characters, a known prefix) so that
//! prose about keys and tokens passes:
//!
//! - A provider prefix (`sk-ant-`, `ghp_`, `AKIA`, ...) counts only at the
//!   start of a word and followed by enough random-looking characters:
//!   `sk-ant-` alone, `sk-btn` or `AKIA` in prose pass.
//! - A private key is its `-----BEGIN ... PRIVATE KEY-----` header followed
//!   by key material (40 or more base64 characters); the header alone, or a
//!   `PUBLIC KEY` block, passes.
//! - A URL password is a non-empty, non-placeholder password in
//!   `scheme://user:password@host`; `user@host`, `user:@host` and
//!   `user:${DB_PASSWORD}@host` pass.
//! - An assignment is `NAME=value`, `NAME: value` (also quoted, JSON, YAML,
//!   `:=`, `=>`) where NAME has a SECRET, TOKEN, PASSWORD, PASSWD, PASS,
//!   PASSPHRASE, API KEY, PRIVATE KEY or SECRET KEY part (`ACCESS_TOKEN`,
//!   `dbPassword`, `x-api-key`) and does not end in a word that makes it
//!   about the secret rather than the secret itself (`PASSWORD_MIN_LENGTH`,
//!   `TOKEN_TTL`, `API_KEY_FILE`, `apiKeyHelper`). `MAX_TOKENS` and
//!   `TOKENIZER` have no TOKEN part. The value counts when it is at least 6
//!   characters and random-looking (a digit with a letter, mixed case after
//!   the first letter, or a symbol) or at least 16 characters; numbers,
//!   booleans, placeholders (`<your-key>`, `${VAR}`, `$VAR`, `xxx`, `***`,
//!   `...`, `changeme`, `your-token-here`), paths, references (`op://`,
//!   `arn:`), code (`os.environ["X"]`, `getpass()`, `config.db.password`)
//!   pass.

/// The kind of secret found first, in the words of a refusal ("it looks like
/// it holds an Anthropic API key"), or `None`.
pub fn find_secret(text: &str) -> Option<&'static str> {
    let b = text.as_bytes();
    private_key(b).or_else(|| prefixed(b)).or_else(|| url_password(b)).or_else(|| assignment(b))
}

/// The text itself, or a stand-in that names what it held, for refusals,
/// skipped lines and notes that are stored and shown again.
pub fn redact(text: &str) -> String {
    match find_secret(text) {
        Some(kind) => format!("[not shown: it looks like it holds {kind}]"),
        None => text.to_string(),
    }
}

/// The refusal's reason.
pub fn refusal(kind: &str) -> String {
    format!("it looks like it holds {kind}; secrets are never written to memory")
}

fn is_word(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

/// Characters of an API key or token body.
fn is_token(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c == b'-'
}

fn is_base64(c: u8) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, b'+' | b'/' | b'=' | b'-' | b'_')
}

/// Runs are measured up to this length: enough for every key, and it keeps
/// the scan linear on text like `sk-sk-sk-...`.
const MAX_RUN: usize = 256;

fn run(b: &[u8], from: usize, ok: impl Fn(u8) -> bool) -> usize {
    b[from.min(b.len())..].iter().take(MAX_RUN).take_while(|&&c| ok(c)).count()
}

/// A digit with a letter, or lower and upper case: what generated keys look
/// like and words do not.
fn mixed(s: &[u8]) -> bool {
    let digit = s.iter().any(u8::is_ascii_digit);
    let lower = s.iter().any(u8::is_ascii_lowercase);
    let upper = s.iter().any(u8::is_ascii_uppercase);
    (digit && (lower || upper)) || (lower && upper)
}

fn find(b: &[u8], from: usize, needle: &[u8]) -> Option<usize> {
    b.get(from..)?.windows(needle.len()).position(|w| w == needle).map(|at| from + at)
}

fn private_key(b: &[u8]) -> Option<&'static str> {
    let mut from = 0;
    while let Some(at) = find(b, from, b"-----BEGIN ") {
        from = at + 1;
        let label_start = at + 11;
        let label_len = run(b, label_start, |c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == b' ');
        let label = &b[label_start..label_start + label_len];
        let after = label_start + label_len;
        if label_len > 60 || !b[after..].starts_with(b"-----") || find(label, 0, b"PRIVATE KEY").is_none() {
            continue;
        }
        // Key material: a long base64 run within the next lines (skipping
        // `Proc-Type:`-style headers of encrypted keys).
        let window = &b[after + 5..b.len().min(after + 5 + 600)];
        let longest = window.split(|c| !is_base64(*c)).map(<[u8]>::len).max().unwrap_or(0);
        if longest >= 40 {
            return Some("a private key block");
        }
    }
    None
}

struct Prefix {
    prefix: &'static [u8],
    /// Body characters after the prefix: at least, at most.
    min: usize,
    max: usize,
    body: fn(u8) -> bool,
    /// The body must look generated (see `mixed`).
    random: bool,
    kind: &'static str,
}

fn alnum(c: u8) -> bool {
    c.is_ascii_alphanumeric()
}
fn upper_alnum(c: u8) -> bool {
    c.is_ascii_uppercase() || c.is_ascii_digit()
}
fn word(c: u8) -> bool {
    is_word(c)
}

const PREFIXES: &[Prefix] = &[
    Prefix { prefix: b"sk-ant-", min: 20, max: BODY_RUN, body: is_token, random: true, kind: "an Anthropic API key" },
    Prefix { prefix: b"sk-proj-", min: 20, max: BODY_RUN, body: is_token, random: true, kind: "an OpenAI API key" },
    Prefix { prefix: b"sk-svcacct-", min: 20, max: BODY_RUN, body: is_token, random: true, kind: "an OpenAI API key" },
    Prefix { prefix: b"sk-admin-", min: 20, max: BODY_RUN, body: is_token, random: true, kind: "an OpenAI API key" },
    // Legacy OpenAI keys: sk- and 48 letters and digits. Must come after the
    // longer sk- prefixes.
    Prefix { prefix: b"sk-", min: 32, max: BODY_RUN, body: is_token, random: true, kind: "an OpenAI API key" },
    Prefix { prefix: b"AKIA", min: 16, max: 16, body: upper_alnum, random: false, kind: "an AWS access key id" },
    Prefix { prefix: b"ASIA", min: 16, max: 16, body: upper_alnum, random: false, kind: "an AWS access key id" },
    Prefix { prefix: b"ghp_", min: 30, max: BODY_RUN, body: alnum, random: true, kind: "a GitHub token" },
    Prefix { prefix: b"gho_", min: 30, max: BODY_RUN, body: alnum, random: true, kind: "a GitHub token" },
    Prefix { prefix: b"ghu_", min: 30, max: BODY_RUN, body: alnum, random: true, kind: "a GitHub token" },
    Prefix { prefix: b"ghs_", min: 30, max: BODY_RUN, body: alnum, random: true, kind: "a GitHub token" },
    Prefix { prefix: b"ghr_", min: 30, max: BODY_RUN, body: alnum, random: true, kind: "a GitHub token" },
    Prefix { prefix: b"github_pat_", min: 30, max: BODY_RUN, body: word, random: true, kind: "a GitHub token" },
    Prefix { prefix: b"glpat-", min: 20, max: BODY_RUN, body: is_token, random: true, kind: "a GitLab token" },
    Prefix { prefix: b"xoxb-", min: 20, max: BODY_RUN, body: is_token, random: true, kind: "a Slack token" },
    Prefix { prefix: b"xoxp-", min: 20, max: BODY_RUN, body: is_token, random: true, kind: "a Slack token" },
    Prefix { prefix: b"xoxa-", min: 20, max: BODY_RUN, body: is_token, random: true, kind: "a Slack token" },
    Prefix { prefix: b"xoxr-", min: 20, max: BODY_RUN, body: is_token, random: true, kind: "a Slack token" },
    Prefix { prefix: b"xoxs-", min: 20, max: BODY_RUN, body: is_token, random: true, kind: "a Slack token" },
    Prefix { prefix: b"xapp-", min: 20, max: BODY_RUN, body: is_token, random: true, kind: "a Slack token" },
    Prefix { prefix: b"sk_live_", min: 20, max: BODY_RUN, body: alnum, random: true, kind: "a Stripe key" },
    Prefix { prefix: b"rk_live_", min: 20, max: BODY_RUN, body: alnum, random: true, kind: "a Stripe key" },
    Prefix { prefix: b"sk_test_", min: 20, max: BODY_RUN, body: alnum, random: true, kind: "a Stripe key" },
    Prefix { prefix: b"rk_test_", min: 20, max: BODY_RUN, body: alnum, random: true, kind: "a Stripe key" },
    Prefix { prefix: b"whsec_", min: 24, max: BODY_RUN, body: alnum, random: true, kind: "a Stripe key" },
    Prefix { prefix: b"AIza", min: 35, max: 35, body: is_token, random: false, kind: "a Google API key" },
    Prefix { prefix: b"npm_", min: 36, max: BODY_RUN, body: alnum, random: true, kind: "an npm token" },
    Prefix { prefix: b"Bearer ", min: 20, max: BODY_RUN, body: bearer, random: true, kind: "a bearer token" },
];

fn bearer(c: u8) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.' | b'~' | b'+' | b'/' | b'=')
}

/// Key bodies are read this far: past every prefix's minimum, and enough to
/// tell a generated key from a word.
const BODY_RUN: usize = 64;

fn prefixed(b: &[u8]) -> Option<&'static str> {
    // A JWT header run that failed fails from any later start inside it too.
    let mut no_jwt_before = 0;
    for i in 0..b.len() {
        // Every prefix starts with one of these: most positions end here.
        if !b"sAgxrwnBe".contains(&b[i]) || (i > 0 && is_word(b[i - 1])) {
            continue;
        }
        if i >= no_jwt_before && b[i..].starts_with(b"eyJ") {
            if jwt(b, i) {
                return Some("a JSON Web Token");
            }
            let header = run(b, i, |c| c.is_ascii_alphanumeric() || c == b'-' || c == b'_');
            if header < MAX_RUN {
                no_jwt_before = i + header;
            }
        }
        for p in PREFIXES {
            if !b[i..].starts_with(p.prefix) {
                continue;
            }
            let body_start = i + p.prefix.len();
            let len = b[body_start..].iter().take(BODY_RUN).take_while(|&&c| (p.body)(c)).count();
            let body = &b[body_start..body_start + len];
            let length_ok = len >= p.min && (p.max == BODY_RUN || len == p.max);
            if length_ok && (!p.random || mixed(body)) && !placeholder(body) {
                if p.prefix == b"Bearer " && jwt(b, body_start) {
                    return Some("a JSON Web Token");
                }
                return Some(p.kind);
            }
            // The first matching prefix decides: `sk-ant-x` is not retried
            // as a legacy `sk-` key.
            break;
        }
    }
    None
}

/// `eyJ...` `.` `eyJ...` `.` signature: header and payload are base64url
/// JSON objects.
fn jwt(b: &[u8], at: usize) -> bool {
    let b64url = |c: u8| c.is_ascii_alphanumeric() || c == b'-' || c == b'_';
    let header = run(b, at, b64url);
    let payload_at = at + header + 1;
    if header < 10 || b.get(at + header) != Some(&b'.') || !b[payload_at.min(b.len())..].starts_with(b"eyJ") {
        return false;
    }
    let payload = run(b, payload_at, b64url);
    let signature_at = payload_at + payload + 1;
    payload >= 10 && b.get(payload_at + payload) == Some(&b'.') && run(b, signature_at, b64url) >= 10
}

fn url_password(b: &[u8]) -> Option<&'static str> {
    let mut from = 0;
    while let Some(at) = find(b, from, b"://") {
        from = at + 3;
        // A scheme: letters, then letters, digits, + . -
        let scheme =
            b[..at].iter().rev().take_while(|&&c| c.is_ascii_alphanumeric() || matches!(c, b'+' | b'.' | b'-')).count();
        if scheme == 0 || !b[at - scheme].is_ascii_alphabetic() {
            continue;
        }
        let authority_len = run(b, from, |c| {
            !matches!(c, b'/' | b'?' | b'#' | b' ' | b'\t' | b'\n' | b'\r' | b'"' | b'\'' | b'`' | b'<' | b'>')
        });
        let authority = &b[from..from + authority_len];
        let Some(at_sign) = authority.iter().rposition(|&c| c == b'@') else { continue };
        let userinfo = &authority[..at_sign];
        let Some(colon) = userinfo.iter().position(|&c| c == b':') else { continue };
        let password = &userinfo[colon + 1..];
        if !password.is_empty() && !placeholder(password) {
            return Some("a password in a URL");
        }
    }
    None
}

/// Values that stand for a secret rather than being one.
fn placeholder(v: &[u8]) -> bool {
    let Some(&first) = v.first() else { return true };
    if matches!(first, b'$' | b'<' | b'{' | b'%' | b'[' | b'(') {
        return true;
    }
    // One character repeated, or only masking characters: xxx, ***, ..., ###.
    if v.iter().all(|&c| c.eq_ignore_ascii_case(&first)) || v.iter().all(|c| b"*.#-_xX ".contains(c)) {
        return true;
    }
    let lower = String::from_utf8_lossy(v).to_ascii_lowercase();
    const WORDS: &[&str] = &[
        "password",
        "passwd",
        "pass",
        "secret",
        "token",
        "changeme",
        "null",
        "none",
        "nil",
        "undefined",
        "redacted",
        "hidden",
        "dummy",
        "todo",
        "tbd",
    ];
    const PARTS: &[&str] = &[
        "your",
        "placeholder",
        "redacted",
        "example",
        "changeme",
        "change-me",
        "change_me",
        "replace",
        "xxxx",
        "****",
    ];
    WORDS.contains(&lower.as_str()) || PARTS.iter().any(|p| lower.contains(p))
}

/// Parts of an assignment's name that make its value a secret.
const SECRET_PARTS: &[&str] =
    &["SECRET", "SECRETS", "TOKEN", "PASSWORD", "PASSWD", "PASS", "PASSPHRASE", "APIKEY", "PRIVATEKEY"];
/// Last parts of a name that make it about the secret, not the secret.
const ABOUT_PARTS: &[&str] = &[
    "LENGTH",
    "LEN",
    "MIN",
    "MAX",
    "TTL",
    "TIMEOUT",
    "EXPIRY",
    "EXPIRES",
    "EXPIRATION",
    "LIFETIME",
    "AGE",
    "FILE",
    "PATH",
    "DIR",
    "NAME",
    "ID",
    "URL",
    "URI",
    "HEADER",
    "ALGO",
    "ALGORITHM",
    "HASH",
    "TYPE",
    "MODE",
    "SIZE",
    "COUNT",
    "LIMIT",
    "ENV",
    "VAR",
    "COMMAND",
    "CMD",
    "HELPER",
    "PROVIDER",
    "ROUNDS",
    "ENDPOINT",
    "ISSUER",
    "AUDIENCE",
    "REGION",
    "ENABLED",
    "REQUIRED",
    "POLICY",
    "STORE",
    "BACKEND",
    "SOURCE",
    "FORMAT",
    "PREFIX",
    "FIELD",
    "KIND",
    "VERSION",
    "LOCATION",
    "MANAGER",
    "ROTATION",
    "INTERVAL",
    "REF",
];

/// Splits `dbPassword`, `DB_PASSWORD`, `x-api-key`, `auth.token` into upper
/// case parts; `API KEY` and `PRIVATE KEY` pairs are joined.
fn name_parts(name: &[u8]) -> Vec<String> {
    let mut parts: Vec<String> = Vec::new();
    let mut current = String::new();
    for (i, &c) in name.iter().enumerate() {
        let camel = c.is_ascii_uppercase() && i > 0 && name[i - 1].is_ascii_lowercase();
        if (!c.is_ascii_alphanumeric() || camel) && !current.is_empty() {
            parts.push(std::mem::take(&mut current));
        }
        if c.is_ascii_alphanumeric() {
            current.push(c.to_ascii_uppercase() as char);
        }
    }
    if !current.is_empty() {
        parts.push(current);
    }
    let mut joined: Vec<String> = Vec::new();
    for part in parts {
        match (joined.last_mut(), part.as_str()) {
            (Some(last), "KEY") if matches!(last.as_str(), "API" | "PRIVATE" | "SECRET") => last.push_str("KEY"),
            _ => joined.push(part),
        }
    }
    joined
}

fn secret_name(name: &[u8]) -> bool {
    let parts = name_parts(name);
    let Some(last) = parts.last() else { return false };
    let secret = parts.iter().any(|p| {
        SECRET_PARTS.contains(&p.as_str())
            || p == "SECRETKEY"
            || (p.len() > 5 && (p.ends_with("TOKEN") || p.ends_with("PASSWORD") || p.ends_with("SECRET")))
    });
    secret && !ABOUT_PARTS.contains(&last.as_str())
}

fn assignment(b: &[u8]) -> Option<&'static str> {
    for (i, &c) in b.iter().enumerate() {
        if c != b'=' && c != b':' {
            continue;
        }
        let prev = if i > 0 { b[i - 1] } else { 0 };
        let next = b.get(i + 1).copied().unwrap_or(0);
        // Not `==`, `!=`, `<=`, `::`, `://`; `:=` and `=>` are read from
        // their first character.
        if (c == b'=' && matches!(prev, b'=' | b'!' | b'<' | b'>' | b':'))
            || (c == b':' && (prev == b':' || next == b':' || next == b'/'))
            || (c == b'=' && next == b'=')
        {
            continue;
        }
        // The name: skip spaces, a closing quote or `**`, then name characters.
        let mut end = i;
        while end > 0 && b[end - 1] == b' ' {
            end -= 1;
        }
        let mut skipped = 0;
        while end > 0 && skipped < 2 && matches!(b[end - 1], b'"' | b'\'' | b'`' | b'*') {
            end -= 1;
            skipped += 1;
        }
        let name_len = b[..end]
            .iter()
            .rev()
            .take_while(|&&c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-' | b'.'))
            .count();
        if name_len == 0 || !secret_name(&b[end - name_len..end]) {
            continue;
        }
        // The value: skip `=`/`>` of `:=`/`=>`, spaces, then a quoted or bare value.
        let mut at = i + 1;
        if matches!(b.get(at), Some(b'=' | b'>')) {
            at += 1;
        }
        at += run(b, at, |c| c == b' ' || c == b'\t');
        let Some(&open) = b.get(at) else { continue };
        let value = if matches!(open, b'"' | b'\'' | b'`') {
            let len = run(b, at + 1, |c| c != open && c != b'\n');
            &b[at + 1..at + 1 + len]
        } else {
            let len = run(b, at, |c| !c.is_ascii_whitespace() && !b"\"'`,;&)]}>([".contains(&c));
            // `os.environ["X"]`, `getpass()`: code, not a value.
            if matches!(b.get(at + len), Some(b'(' | b'[')) {
                continue;
            }
            &b[at..at + len]
        };
        if secret_value(value) {
            let parts = name_parts(&b[end - name_len..end]);
            let aws =
                parts.iter().any(|p| p == "AWS") || parts.windows(2).any(|w| w[0] == "SECRET" && w[1] == "ACCESS");
            return Some(if aws { "an AWS secret access key" } else { "a secret assignment" });
        }
    }
    None
}

fn secret_value(v: &[u8]) -> bool {
    let v = v.trim_ascii();
    if v.len() < 6 || placeholder(v) {
        return false;
    }
    let lower = v.to_ascii_lowercase();
    if matches!(lower.as_slice(), b"true" | b"false" | b"yes" | b"no" | b"on" | b"off" | b"required" | b"optional") {
        return false;
    }
    // Numbers (with a unit or separators): 3600, 12h, 1_000, 0.5.
    if v[0].is_ascii_digit()
        && v.iter().all(|c| c.is_ascii_digit() || b"._,".contains(c) || c.is_ascii_lowercase())
        && v.iter().filter(|c| c.is_ascii_lowercase()).count() <= 3
    {
        return false;
    }
    // Paths, references to a secret store, dotted code paths.
    const REFERENCES: &[&[u8]] =
        &[b"/", b"~/", b"./", b"../", b"op://", b"arn:", b"vault:", b"env:", b"file:", b"!", b"@"];
    if REFERENCES.iter().any(|r| v.starts_with(r)) || dotted_path(v) {
        return false;
    }
    let symbol = v.iter().any(|c| !c.is_ascii_alphanumeric() && !matches!(c, b'-' | b'_' | b'.' | b' '));
    let random = mixed(&v[1..]) || v.iter().any(u8::is_ascii_digit) && v.iter().any(u8::is_ascii_alphabetic) || symbol;
    random || v.len() >= 16
}

/// `config.db.password`, `settings.SECRET_KEY`: identifiers joined by dots.
fn dotted_path(v: &[u8]) -> bool {
    v.contains(&b'.')
        && v.split(|&c| c == b'.').all(|part| {
            part.first().is_some_and(|c| c.is_ascii_alphabetic() || *c == b'_') && part.iter().all(|&c| is_word(c))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    // Samples are assembled at run time so that this file does not itself
    // look like it leaks keys to secret scanners.
    fn k(parts: &[&str]) -> String {
        parts.concat()
    }

    const R40: &str = "Xb7Qm2Lp9Rt4Vw6Yz1Ac3De5Fg8Hj0Kn2Mq4Ps6U";

    #[test]
    fn realistic_samples_are_found() {
        let cases: Vec<(String, &str)> = vec![
            (k(&["ANTHROPIC_API_KEY=", "sk-ant-", "api03-", R40, R40, "AA"]), "an Anthropic API key"),
            (k(&["- The key is ", "sk-ant-", "oat01-", R40]), "an Anthropic API key"),
            (k(&["export OPENAI_API_KEY=", "sk-proj-", R40, "_", R40]), "an OpenAI API key"),
            (k(&["use ", "sk-", &R40[..32], "T3BlbkFJ", "abcdEFGH1234"]), "an OpenAI API key"),
            (k(&["AKIA", "Q3EGRWHK7ZTDMN4X"]), "an AWS access key id"),
            (k(&["creds: ", "ASIA", "Y34FZKBOKMUTVV7A", " (session)"]), "an AWS access key id"),
            (
                k(&["aws_secret_access_key = ", "wJalrXUtnFEMI/K7MDENG/bPxRfiCY", "9q2LmZ8vKe"]),
                "an AWS secret access key",
            ),
            (k(&["git remote uses ", "ghp_", &R40[..36]]), "a GitHub token"),
            (k(&["gho_", &R40[..36]]), "a GitHub token"),
            (k(&["ghs_", &R40[..36]]), "a GitHub token"),
            (k(&["github_pat_", "11ABCDEFG0", &R40[..12], "_", R40, R40]), "a GitHub token"),
            (k(&["CI uses ", "glpat-", "xY3z_AbCdEf12GhIjKlM"]), "a GitLab token"),
            (k(&["xoxb-", "123456789012-1234567890123-", "AbCdEfGhIjKlMnOpQrStUvWx"]), "a Slack token"),
            (k(&["xapp-", "1-A0123456789-1234567890123-", "abcdef0123456789"]), "a Slack token"),
            (k(&["STRIPE=", "sk_live_", "51H8xYzAbCdEfGh", "IjKlMnOpQrStUvWx"]), "a Stripe key"),
            (k(&["rk_live_", &R40[..24]]), "a Stripe key"),
            (k(&["maps key ", "AIza", "SyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY"]), "a Google API key"),
            (k(&["//registry.npmjs.org/:_authToken=", "npm_", &R40[..36]]), "an npm token"),
            (
                k(&[
                    "Authorization: Bearer ",
                    "eyJ",
                    "hbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9",
                    ".",
                    "eyJ",
                    "zdWIiOiIxMjM0NTY3ODkwIn0",
                    ".",
                    "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
                ]),
                "a JSON Web Token",
            ),
            (k(&["curl -H 'Authorization: Bearer ", "a1B2c3D4e5F6g7H8i9J0kLmN", "'"]), "a bearer token"),
            (
                k(&[
                    "-----BEGIN ",
                    "RSA PRIVATE KEY-----\n",
                    "MIIEpAIBAAKCAQEA",
                    R40,
                    "\n",
                    R40,
                    "\n-----END RSA PRIVATE KEY-----",
                ]),
                "a private key block",
            ),
            (
                k(&[
                    "-----BEGIN ",
                    "OPENSSH PRIVATE KEY-----\n",
                    "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAAB",
                ]),
                "a private key block",
            ),
            (
                k(&[
                    "-----BEGIN ",
                    "EC PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,0A1B\n\n",
                    R40,
                    R40,
                ]),
                "a private key block",
            ),
            (k(&["- DB is postgres://app:", "Tr0ub4dor&3", "@db.internal:5432/app"]), "a password in a URL"),
            (k(&["redis://:", "s3cr3tpw", "@cache:6379"]), "a password in a URL"),
            (k(&["https://deploy:", "hunter22", "@git.example.com/repo.git"]), "a password in a URL"),
            (k(&["DB_PASSWORD=", "hunter22"]), "a secret assignment"),
            (k(&["  export DATABASE_PASSWORD='", "c0rrect-h0rse", "'"]), "a secret assignment"),
            (k(&["JWT_SECRET: ", "f9a8b7c6d5e4f3a2b1c0"]), "a secret assignment"),
            (k(&["{\"client_secret\": \"", "Zq8wX2vB9nM4kL7j", "\"}"]), "a secret assignment"),
            (k(&["SECRET_KEY_BASE=", "django-insecure-", "x9#k2m"]), "a secret assignment"),
            (k(&["dbPassword := \"", "Pa55w0rd!", "\""]), "a secret assignment"),
            (k(&["'api_key' => '", "4f3c2b1a0e9d8c7b", "'"]), "a secret assignment"),
            (k(&["x-api-key: ", "Qw3rTy9Uiop2"]), "a secret assignment"),
            (k(&["MY_TOKEN=", "correcthorsebatterystaple"]), "a secret assignment"),
            (k(&["**Password**: `", "Sup3rS3cret", "`"]), "a secret assignment"),
            (k(&["https://api.example.com/v1?access_token=", "a1b2c3d4e5f6", "&x=1"]), "a secret assignment"),
        ];
        for (text, want) in &cases {
            assert_eq!(find_secret(text), Some(*want), "{text}");
        }
    }

    #[test]
    fn near_misses_pass() {
        let cases: Vec<String> = vec![
            "Rotate the API key monthly; the token expires after an hour".into(),
            "- Set ANTHROPIC_API_KEY in your shell before running the fork".into(),
            "- `GITHUB_TOKEN`: needed for releases".into(),
            "- Password: stored in the keychain, never in env".into(),
            "- Auth token: see 1Password".into(),
            "PASSWORD_MIN_LENGTH=12".into(),
            "TOKEN_TTL=3600".into(),
            "SESSION_TOKEN_TTL=12h".into(),
            "MAX_TOKENS=4096 and max_tokens: 8192".into(),
            "- usage: input_tokens: 1200, output_tokens: 340, cache_read_input_tokens: 99000".into(),
            "TOKENIZER=cl100k_base".into(),
            "API_KEY_FILE=/run/secrets/api_key".into(),
            "\"apiKeyHelper\": \"~/bin/get-key.sh\"".into(),
            "PASSWORD_HASH_ALGO=argon2id".into(),
            "DB_PASSWORD=".into(),
            "DB_PASSWORD=${DB_PASSWORD}".into(),
            "DB_PASSWORD=$DB_PASSWORD".into(),
            "API_KEY=<your-api-key>".into(),
            "API_KEY=your-api-key-here".into(),
            "SECRET=xxxxxxxx".into(),
            "SECRET=********".into(),
            "PASSWORD=changeme".into(),
            "TOKEN=...".into(),
            "REQUIRE_TOKEN=true".into(),
            "OP_TOKEN=op://vault/item/credential".into(),
            "DB_SECRET=arn:aws:secretsmanager:us-east-1:123:secret:db".into(),
            "password = os.environ[\"DB_PASSWORD\"]".into(),
            "password = getpass()".into(),
            "password = config.db.password".into(),
            "if token == expected_token_value_here {".into(),
            "Token::new(kind) and Password::from(s)".into(),
            "<div class=\"sk-spinner sk-spinner-wave sk-fading-circle-container\">".into(),
            "- Short ids like sk-1a2b and sk-test are fine".into(),
            "- AKIA prefixes mark long-term AWS keys, ASIA temporary ones".into(),
            // AWS's own documentation sample is a placeholder.
            "AKIAIOSFODNN7EXAMPLE".into(),
            format!("AKIA{} and AKIA1234567890ABCDEF1234 (too long)", "X".repeat(16)),
            "ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx".into(),
            "- ghp_ tokens are classic PATs; glpat- is GitLab; xoxb- is a Slack bot token".into(),
            "- npm_config_registry and npm_package_version come from npm".into(),
            "- task-1234567890abcdefghijklmnopqrstuvwxyzABCD is a task id".into(),
            "Clone with https://user@github.com/org/repo.git or ssh://git@github.com:22/org/repo".into(),
            "postgres://app:@localhost/app and postgres://app:${PGPASSWORD}@db/app".into(),
            "https://example.com:8443/path?x=1#frag".into(),
            "-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gunVTLw7onLRnrq0\n-----END PUBLIC KEY-----".into(),
            "- Deploy keys start with -----BEGIN OPENSSH PRIVATE KEY----- and live in ~/.ssh".into(),
            "- JWTs look like eyJ... . eyJ... . sig".into(),
            "- Bearer tokens go in the Authorization header".into(),
            "- Rust 2024 edition; cargo test -j1; the hook exits 0".into(),
            "a = b; x == y; let v: Vec<u8> = Vec::new();".into(),
            "- Memory: 50,000 characters; lines: 200".into(),
        ];
        for text in &cases {
            assert_eq!(find_secret(text), None, "{text}");
        }
    }

    #[test]
    fn redaction_never_repeats_the_secret() {
        let text = k(&["- key ", "ghp_", &R40[..36]]);
        let shown = redact(&text);
        assert!(!shown.contains("ghp_"), "{shown}");
        assert!(shown.contains("a GitHub token"));
        assert_eq!(redact("- plain fact"), "- plain fact");
    }

    #[test]
    fn long_or_odd_text_is_scanned_quickly_and_safely() {
        // Fourteen times the longest topic append.
        let text = "sk-".repeat(50_000)
            + " "
            + &"TOKEN=\"\n".repeat(25_000)
            + " "
            + &"eyJ-".repeat(25_000)
            + " "
            + &"a=".repeat(50_000)
            + &"://".repeat(50_000)
            + "é€𝄞";
        let started = std::time::Instant::now();
        assert_eq!(find_secret(&text), None);
        eprintln!("{} bytes: {:?}", text.len(), started.elapsed());
        assert!(started.elapsed().as_secs() < 2, "{:?}", started.elapsed());
    }

    proptest::proptest! {
        #[test]
        fn lowercase_prose_is_never_flagged(text in "[a-z ,.;()'\n]{0,400}") {
            proptest::prop_assert_eq!(find_secret(&text), None);
        }

        #[test]
        fn any_text_does_not_panic(text in "\\PC{0,300}") {
            let _ = find_secret(&text);
        }
    }
}
