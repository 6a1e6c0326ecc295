//! Stage 4: a generated token with no known prefix, shape or name, found by
//! its Shannon entropy (after gitleaks' `generic-api-key`), the bar lowered
//! after a keyword. Hashes, UUIDs, paths, URLs, identifiers and base64 of
//! text pass; docs/security.md gives the rules and the measured precision.

/// Without a keyword: long, and as random as a generated body of its
/// length is (this share of the most its length allows, `log2(n)`).
const PLAIN_MIN_CHARS: usize = 20;
/// Without a keyword, a base36 body counts from this length.
const BASE36_MIN_CHARS: usize = 28;
const PLAIN_ENTROPY_SHARE: f64 = 0.8;
/// With a keyword just before it.
const KEYWORD_MIN_CHARS: usize = 16;
const KEYWORD_MIN_ENTROPY: f64 = 3.5;
/// Hexadecimal counts only with a keyword, no hash word, and this length.
const HEX_MIN_CHARS: usize = 32;
/// How far before a token a keyword or hash word counts.
const CONTEXT_BYTES: usize = 32;

const KIND: &str = "a high-entropy token (a generated secret)";

/// The first generated-looking token of `text`, named.
pub(super) fn high_entropy(text: &str) -> Option<&'static str> {
    text.lines().any(line_has_secret).then_some(KIND)
}

/// `joined` also lets `.~!:` stand inside one (a key in dotted groups),
/// judged only after a keyword.
fn is_token_char(c: char, joined: bool) -> bool {
    c.is_ascii_alphanumeric() || "+/_-".contains(c) || (joined && ".~!:".contains(c))
}

fn line_has_secret(line: &str) -> bool {
    [false, true].into_iter().any(|joined| {
        let mut start = None;
        for (i, c) in line.char_indices().chain(std::iter::once((line.len(), ' '))) {
            match (is_token_char(c, joined), start) {
                (true, None) => start = Some(i),
                (false, Some(s)) => {
                    if run(line, s, i, joined) {
                        return true;
                    }
                    start = None;
                }
                _ => {}
            }
        }
        false
    })
}

/// A run of token characters, `line[start..end]`: a path (one with a
/// lower-case word between its slashes) is judged a segment at a time.
fn run(line: &str, start: usize, end: usize, joined: bool) -> bool {
    let text = &line[start..end];
    let path = text.split('/').any(|s| s.len() >= 3 && s.bytes().all(|b| b.is_ascii_lowercase()));
    if !path || !text.contains('/') {
        return candidate(line, start, end, joined);
    }
    let mut at = start;
    text.split('/').any(|segment| {
        let from = at;
        at += segment.len() + 1;
        candidate(line, from, from + segment.len(), joined)
    })
}

/// Any keyword in the stretch before a token; a hash, id or public word
/// right before it clears it (`commit <hex>`, `NEXT_PUBLIC_…_KEY=`).
struct Context {
    keyword: bool,
    hex_keyword: bool,
    cleared: bool,
}

#[rustfmt::skip]
const FILLERS: &[&str] = &["is", "are", "was", "be", "the", "a", "an", "of", "for", "to", "at", "in", "as", "like", "e", "g", "eg", "now", "here"];

fn context(before: &str) -> Context {
    let words: Vec<&str> = before.split(|c: char| !c.is_alphanumeric() && c != '_').filter(|w| !w.is_empty()).collect();
    let parts = |word: &str| -> Vec<String> {
        word.split('_').flat_map(split_camel).map(str::to_lowercase).filter(|p| !p.is_empty()).collect()
    };
    let all: Vec<String> = words.iter().flat_map(|w| parts(w)).collect();
    let has = |list: &[&str]| all.iter().any(|p| list.contains(&p.as_str()));
    let adjacent = words.iter().rev().find(|w| !FILLERS.contains(&w.to_lowercase().as_str())).map(|w| parts(w));
    let cleared = adjacent.is_some_and(|parts| {
        parts.iter().any(|p| HASH_WORDS.contains(&p.as_str()) || PUBLIC_WORDS.contains(&p.as_str()))
    });
    Context { keyword: has(KEYWORDS), hex_keyword: has(KEYWORDS) || has(HEX_KEYWORDS), cleared }
}

fn candidate(line: &str, start: usize, end: usize, joined: bool) -> bool {
    let token = line[start..end].trim_matches(|c| "-_/.~!:".contains(c));
    let chars = token.len(); // ASCII only
    if chars < KEYWORD_MIN_CHARS {
        return false;
    }
    // A URL's word is the URL's (a token in a query has rules of its own).
    let word_start = line[..start].rfind(char::is_whitespace).map_or(0, |i| i + 1);
    let word_end = line[end..].find(char::is_whitespace).map_or(line.len(), |i| end + i);
    let word = &line[word_start..word_end];
    if word.contains("://") || word.contains("base64,") || public_shape(token) {
        return false;
    }
    let context = context(&line[floor_char(line, start.saturating_sub(CONTEXT_BYTES))..start]);
    if context.cleared || (joined && !context.keyword) {
        return false;
    }
    // An id's shape is public unless a secret's word stands before it.
    if !context.keyword && (stripe_object_id(token) || type_id(token)) {
        return false;
    }
    let keyword = context.keyword;
    // A vendor's key needs no keyword: its prefix and body give it away.
    if vendor_key(line, start, token) {
        return true;
    }
    let hex = token.strip_prefix("0x").unwrap_or(token).bytes().all(|b| b.is_ascii_hexdigit() || b == b'-');
    if hex {
        return context.hex_keyword && !uuid(token) && hex_secret(token);
    }
    let min_entropy = if keyword { KEYWORD_MIN_ENTROPY } else { PLAIN_ENTROPY_SHARE * (chars as f64).log2().min(6.0) };
    chars >= if keyword { KEYWORD_MIN_CHARS } else { PLAIN_MIN_CHARS }
        && super::value::entropy(token) >= min_entropy
        && generated(token, keyword)
        && !name_like(token)
        && (!keyword || super::value::looks_random(token))
        && !super::value::stand_in_run(token)
        && !decodes_to_text(token)
}

/// A key of a provider no rule names, by its shape alone: a short vendor
/// prefix of one to three parts and a separator (`acme_live_`, `tok-us-`,
/// `hx1.`), then a long generated body of letters and digits: mixed case,
/// capitals and digits, or a long run of lower case and digits (hex
/// included, since the prefix is no hash's). Without a prefix, only a long
/// run of capitals and digits past hex's letters (a ULID is 26). Hash and
/// digest names (`sha512-`, `sha256:`) are no vendor's.
fn vendor_key(line: &str, start: usize, token: &str) -> bool {
    let parts: Vec<&str> = token.split(['_', '-']).collect();
    // The prefix: up to three short leading parts, the first a word; the
    // body is the rest, its separators left out.
    let short = |p: &&&str| !p.is_empty() && p.len() <= 10 && p.bytes().all(|b| b.is_ascii_alphanumeric());
    let lead = parts.iter().take(3).take_while(short).count().min(parts.len() - 1);
    // Many parts are a name or a cache key (`node-modules-Linux-X64-20-…`):
    // then only the last part is a body.
    let lead = if parts.len() > 5 { parts.len() - 1 } else { lead };
    let (prefix, body): (Vec<&str>, String) = (parts[..lead].to_vec(), parts[lead..].concat());
    // Or a dotted prefix before the run that holds a digit (`hx1.`,
    // `upl.v2.`, `dt0c01.`): a word and a dot before a hash (`index.…`) is
    // a file name, not a vendor's.
    let dotted = line[..start].strip_suffix('.').map(|before| {
        let word = before.rsplit(|c: char| !(c.is_ascii_alphanumeric() || c == '.')).next().unwrap_or("");
        word.trim_start_matches('.')
    });
    let dotted = dotted.filter(|w| !w.is_empty() && w.len() <= 24 && w.bytes().any(|b| b.is_ascii_digit()));
    let first = prefix.first().copied().or(dotted).unwrap_or("");
    let vendor = first.bytes().next().is_some_and(|b| b.is_ascii_alphabetic())
        && !HASH_WORDS.contains(&first.to_ascii_lowercase().as_str())
        && !["sha1", "sha224", "sha384", "md5", "blake2b", "blake3", "crc32", "xxh64"]
            .contains(&first.to_ascii_lowercase().as_str());
    let body = body.as_str();
    let n = body.len();
    if n < 20 || !body.bytes().all(|b| b.is_ascii_alphanumeric()) || super::value::stand_in_run(body) {
        return false;
    }
    // A UUID stays an id, prefixed or not.
    if uuid(&parts[lead..].join("-")) {
        return false;
    }
    let count = |f: fn(&u8) -> bool| body.as_bytes().iter().filter(|b| f(b)).count();
    let (upper, lower, digits) =
        (count(u8::is_ascii_uppercase), count(u8::is_ascii_lowercase), count(u8::is_ascii_digit));
    let entropy = super::value::entropy(body);
    let spread = |a: usize, b: usize| a * 8 >= n && b * 8 >= n;
    let hex = body.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
    if !vendor {
        // Capitals and digits alone, past hex and a ULID's length.
        let past_hex = body.bytes().any(|b| b.is_ascii_uppercase() && b > b'F');
        return lower == 0 && n >= 32 && spread(upper, digits) && past_hex && entropy >= 4.0;
    }
    match (upper > 0, lower > 0) {
        (true, true) => digits >= 2 && entropy >= PLAIN_ENTROPY_SHARE * (n as f64).log2().min(6.0) && !name_like(body),
        (true, false) => spread(upper, digits) && entropy >= 3.5,
        (false, true) => n >= 24 && spread(lower, digits) && entropy >= 3.5 && (hex || !name_like(body)),
        (false, false) => false,
    }
}

/// A name made of words (`TokenCounterV2Impl32Bit`): half its parts plain
/// words, or half its letters in word-like runs with a quarter vowels (a
/// random body has about a fifth).
fn name_like(token: &str) -> bool {
    let chunks: Vec<&str> = token.split(['-', '_', '.']).filter(|c| !c.is_empty()).collect();
    let words = chunks.iter().filter(|c| c.len() >= 3 && c.bytes().all(|b| b.is_ascii_alphabetic())).count();
    if chunks.len() >= 3 && words * 2 >= chunks.len() {
        return true;
    }
    let b = token.as_bytes();
    let (mut wordy, mut i) = (0, 0);
    while i < b.len() {
        let capital = usize::from(b[i].is_ascii_uppercase());
        let lower = b[i + capital..].iter().take_while(|c| c.is_ascii_lowercase()).count();
        if lower >= 4 - capital {
            wordy += capital + lower;
            i += capital + lower;
        } else {
            i += 1;
        }
    }
    let letters: Vec<u8> = b.iter().copied().filter(u8::is_ascii_alphabetic).collect();
    let vowels = letters.iter().filter(|c| b"aeiouAEIOU".contains(c)).count();
    wordy * 2 >= letters.len().max(1) && vowels * 4 >= letters.len()
}

/// Public by design: SRI hashes, ssh fingerprints and public keys, DER of a
/// certificate or public key (a private key's DER is caught earlier).
fn public_shape(token: &str) -> bool {
    #[rustfmt::skip]
    const PUBLIC: &[&str] = &[
        "sha1-", "sha256-", "sha384-", "sha512-", "SHA256:", "SHA1:", "MD5:", "AAAAB3Nza", "AAAAC3Nza",
        "AAAAE2VjZHNh", "MII", "MF",
    ];
    PUBLIC.iter().any(|p| token.starts_with(p))
}

/// A Stripe object's id (`price_1MoBy5LkdIwHu7ixZhnattbh`): an object's
/// prefix, then one run starting with a digit. Stripe's secrets are
/// `sk_`, `rk_` and `whsec_`, and a client secret has a second `_`.
fn stripe_object_id(token: &str) -> bool {
    #[rustfmt::skip]
    const OBJECTS: &[&str] = &[
        "acct", "ba", "card", "ch", "cn", "cus", "dp", "du", "evt", "file", "ii", "in", "pi", "pm", "po",
        "price", "prod", "promo", "py", "re", "seti", "si", "sub", "tr", "txn",
    ];
    token.split_once('_').is_some_and(|(object, body)| {
        OBJECTS.contains(&object)
            && (14..=32).contains(&body.len())
            && body.bytes().next().is_some_and(|b| b.is_ascii_digit())
            && body.bytes().all(|b| b.is_ascii_alphanumeric())
    })
}

/// A TypeID (`user_01h455vb4pex5vsknk084sn02q`): a lower-case type, then
/// 26 characters of Crockford's base32, the first at most `7`.
fn type_id(token: &str) -> bool {
    token.rsplit_once('_').is_some_and(|(kind, body)| {
        kind.bytes().all(|b| b.is_ascii_lowercase() || b == b'_')
            && body.len() == 26
            && body.bytes().next().is_some_and(|b| (b'0'..=b'7').contains(&b))
            && body.bytes().all(|b| b.is_ascii_digit() || (b.is_ascii_lowercase() && !b"ilou".contains(&b)))
    })
}

fn floor_char(s: &str, mut i: usize) -> usize {
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

#[rustfmt::skip]
const KEYWORDS: &[&str] = &[
    "key", "token", "secret", "password", "passwd", "pwd", "pass", "auth", "credential", "credentials",
    "creds", "api", "apikey", "bearer", "private", "signature", "session", "cookie", "access", "passwort", "kennwort",
    "contraseña", "contrasena", "clave", "şifre", "sifre", "parola", "senha", "wachtwoord", "lösenord", "hasło",
    "пароль", "ключ", "токен", "schlüssel", "otp", "totp",
];
/// Hexadecimal is a secret after a keyword above or one of these, unless
/// a hash word stands right before it.
#[rustfmt::skip]
const HEX_KEYWORDS: &[&str] = &["signing", "admin", "app"];
/// Keys and ids that are public by design.
#[rustfmt::skip]
const PUBLIC_WORDS: &[&str] = &[
    "public", "publishable", "site", "integrity", "certificate", "cert", "fingerprint", "pub",
];
#[rustfmt::skip]
const HASH_WORDS: &[&str] = &[
    "commit", "sha", "sha1", "sha256", "sha512", "md5", "digest", "hash", "checksum", "fingerprint",
    "revision", "rev", "object", "blob", "tree", "merge", "build", "id", "ids", "etag", "nonce", "salt", "hex",
    "uuid", "ulid", "ulids", "playlist", "video", "idempotency", "gpg", "sha256:",
];

/// `apiToken` → `api`, `Token`; `APIKey` → `API`, `Key`.
fn split_camel(word: &str) -> Vec<&str> {
    let b = word.as_bytes();
    let mut parts = Vec::new();
    let mut from = 0;
    for i in 1..b.len() {
        let next_lower = b.get(i + 1).is_some_and(u8::is_ascii_lowercase);
        let boundary = (b[i - 1].is_ascii_lowercase() && b[i].is_ascii_uppercase())
            || (b[i - 1].is_ascii_uppercase() && b[i].is_ascii_uppercase() && next_lower)
            || (b[i - 1].is_ascii_digit() != b[i].is_ascii_digit());
        if boundary {
            parts.push(&word[from..i]);
            from = i;
        }
    }
    parts.push(&word[from..]);
    parts
}

fn uuid(token: &str) -> bool {
    let lengths: Vec<usize> = token.split('-').map(str::len).collect();
    lengths == [8, 4, 4, 4, 12]
}

fn hex_secret(token: &str) -> bool {
    let digits: String = token.chars().filter(|&c| c != '-').collect();
    digits.len() >= HEX_MIN_CHARS && super::value::entropy(&digits) >= 3.0
}

/// Generated, not a name: two character classes or more, changing often (a
/// random base62 body changes at about 60%); without a keyword, all three
/// (a ULID or camelCase name lacks one) or `base36`.
fn generated(token: &str, keyword: bool) -> bool {
    let b: Vec<u8> = token.bytes().filter(u8::is_ascii_alphanumeric).collect();
    let class = |c: u8| {
        if c.is_ascii_digit() {
            0
        } else if c.is_ascii_uppercase() {
            1
        } else {
            2
        }
    };
    let digits = b.iter().filter(|c| c.is_ascii_digit()).count();
    let letters = b.len() - digits;
    let classes = [0, 1, 2].iter().filter(|&&k| b.iter().any(|&c| class(c) == k)).count();
    let changes = b.windows(2).filter(|w| class(w[0]) != class(w[1])).count();
    let change_rate = changes as f64 / b.len().max(2) as f64;
    let enough =
        if keyword { digits >= 1 || change_rate >= 0.3 } else { (classes == 3 || base36(token)) && change_rate >= 0.3 };
    letters >= 4 && classes >= 2 && enough
}

/// A generated body of lower case and digits: long, one word (no `-` or
/// `_` joining names), a fifth or more digits, and a letter that Nix's
/// base32 leaves out (`e`, `o`, `t`, `u`), so a store path's hash passes.
fn base36(token: &str) -> bool {
    let b = token.as_bytes();
    let digits = b.iter().filter(|c| c.is_ascii_digit()).count();
    b.len() >= BASE36_MIN_CHARS
        && b.iter().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
        && digits * 5 >= b.len()
        && b.iter().any(|c| b"eotu".contains(c))
}

/// Base64 of ordinary text (`SGVsbG8gd29ybGQ=`): it decodes to printable
/// words, which a generated key does not.
fn decodes_to_text(token: &str) -> bool {
    let Some(bytes) = super::base64_decode(token.trim_end_matches('=')) else { return false };
    bytes.len() >= 8
        && bytes.iter().all(|&b| (0x20..0x7f).contains(&b) || b == b'\n')
        && bytes.iter().filter(|&&b| b == b' ').count() * 12 >= bytes.len()
}

#[cfg(test)]
mod tests {
    use super::super::corpus::{an, b64, hx, k, rand, u64s, uuid as a_uuid};
    use super::*;

    /// Secrets of shapes no rule before this stage knows, and ordinary
    /// lines that must pass: the table the thresholds were tuned on.
    fn table() -> (Vec<String>, Vec<String>) {
        let secrets: Vec<String> = vec![
            k(&["- the vendor key is ", &an(1, 32)]),
            k(&["- staging token: ", &an(2, 40)]),
            k(&["- ", &an(3, 48), " is the deploy credential"]),
            k(&["- use ", &b64(4, 44), " to sign the webhook"]),
            k(&["- x-api-key ", &u64s(5, 36)]),
            k(&["- secret ", &hx(6, 40)]),
            k(&["- api token 7f", &hx(7, 62)]),
            k(&["- zz_live_", &an(8, 32)]),
            k(&["- tok-", &u64s(9, 40), " (ops)"]),
            k(&["- acme_sk_", &an(10, 28)]),
            k(&["- MYSVC-", &an(11, 30).to_uppercase(), &hx(11, 8)]),
            k(&["- the session cookie value ", &u64s(12, 32)]),
            k(&["- key ", &an(13, 20)]),
            k(&["- auth ", &an(14, 24), "=="]),
            k(&["- password ", &an(15, 18), "!"]),
            k(&["- private key ", &b64(16, 64)]),
            k(&["- ", &an(17, 26)]),
            k(&["- bearer ", &u64s(18, 30)]),
            k(&["- apiToken=", &an(19, 22)]),
            k(&["- access ", &an(20, 32).to_lowercase()]),
            k(&["- paste ", &b64(21, 88), " into the console"]),
            k(&["- `", &u64s(22, 43), "` unlocks the admin panel"]),
            k(&["- the signing secret is ", &hx(23, 64)]),
            k(&["- key: ", &u64s(24, 20), "-", &u64s(25, 20)]),
            // Found by the attacker's review.
            k(&["- The Datadog API key is ", &hx(40, 32)]),
            k(&["- Algolia admin key: ", &hx(41, 32)]),
            k(&["- DD_APP_KEY for the build bot is ", &hx(42, 40)]),
            k(&["- the api token (build 42) is ", &hx(43, 40)]),
            k(&["- the api key (not the public one) is ", &an(44, 32)]),
            k(&["- site secret ", &an(45, 40)]),
            k(&["- Passwort für staging: ", &an(46, 18)]),
            k(&["- contraseña ", &an(47, 20)]),
            k(&["- şifre: ", &an(48, 20)]),
            k(&["- the key is ", &an(49, 8), ".", &an(50, 8), ".", &an(51, 8), ".", &an(52, 8)]),
            k(&["- token ", &an(53, 12), "~", &an(54, 12), "~", &an(55, 12)]),
            k(&["- https://api.vendor.io/v1/send?key=", &an(56, 32)]),
            // Shorter than a key usually is, or of lower case and digits
            // only, with no keyword near.
            k(&["- ", &an(57, 20), " opens the staging box"]),
            k(&["- the vendor gave us ", &an(58, 22)]),
            k(&["- ", &rand(59, 32, "abcdefghijklmnopqrstuvwxyz0123456789"), " (vendor)"]),
        ];
        let owned = |items: &[&str]| items.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let mut passes = owned(&[
            "- The fix landed in commit 3f2a9c1e8b7d6a5f4e3d2c1b0a9f8e7d6c5b4a39.",
            "- Release image digest sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
            "- The build id is 2b7e151628aed2a6abf7158809cf4f3c.",
            "- Docs: https://docs.google.com/document/d/1aBcD3fGhIjKlMnOpQrStUvWxYz0123456789/edit",
            "- Run `cargo test --test cli sessions_saving_at_once_with_room_for_one_save_start_one_fork`.",
            "- Config lives in src/memory/secrets/corpus/caught.rs and src/save/budget.rs.",
            "- The env var MEMORY_SAVE_FORK_TIMEOUT_SECONDS bounds the fork.",
            "- getHTTPResponseCodeForRequestHandlerV2 is the entry point.",
            "- Base64 of the banner: SGVsbG8gd29ybGQsIHRoaXMgaXMgYSBiYW5uZXIgZm9yIHRoZSBhcHA=",
            "- The API key lives in 1Password under prod/app-api-key-2024.",
            "- Token TTL is 3600 seconds; refresh after 86400.",
            "- Key rotation: every 90 days, see runbooks/rotate-keys-2025-q3.md",
            "- Node 20.20.2, npm 11.19.1, cargo 1.95.0 (f2d3ce0bd 2026-03-21).",
            "- The secret manager path is projects/my-proj-123456/secrets/db-password/versions/latest.",
            "- Tests: 108 lib, 75 bin, 250 cli; 587 s on CI.",
            "- Proptest seed cc 4f1c2a3b5d6e7f8091a2b3c4d5e6f708 reproduces the failure.",
            "- The merge commit a1b2c3d4e5f60718293a4b5c6d7e8f9012345678 fixed the key lookup.",
            "- Cache key format: v2-linux-x86_64-rustc-1.95.0-cargo-lock-hash",
            "- Fixture ids: c7913528-c726-407d-a030-104c5096a70b and e4bc3e67-cb90-4f19-b9b8-fc7038273c42.",
            "- Branch feature/PROJ-1234-add-oauth2-pkce-flow-for-cli-login is merged.",
            "- The wasm module is at pkg/memory_save_core_bg.wasm (wasm32-unknown-unknown).",
            "- Python: `hashlib.sha256(b'abc').hexdigest()` gives the digest.",
            "- Use the `x-api-key` header, not `Authorization`.",
            "- AWS region eu-central-1, bucket acme-prod-artifacts-eu-central-1-20240612.",
            "- Model claude-opus-4-5-20251101 for the fork; claude-sonnet-5-5 for the session.",
            "- The JWT library is jsonwebtoken 9; tokens expire after 15 minutes.",
            "- The session id is kept in `~/.cli-tweaks/state/memory-save/sessions/<id>.json`.",
            "- Tag v1.2.3-rc.4+build.20261202 is the release candidate.",
            // Found by the attacker's review.
            "- The GitHub host key is SHA256:uNiVztksCsDhcc0u9e8BujQXVUpKZIDTMczCvj3tD2s",
            "- Nix store path /nix/store/0c0pqcyjsd5qsvbvkn3rq0ywxl7j7b5v-rustc-1.95.0 is pinned.",
            "- Order ids are ULIDs like 01ARZ3NDEKTSV4RRFFQ69G5FAV.",
            "- The intro video is in the YouTube playlist id PLFgquLnL59alCl_2TQvOiD5Vgm1hCaGSI.",
            "- Cache key: node-modules-Linux-X64-20-9f3b2c1d4e5f6a7b",
            "- The API key lives in the vault at kv/data/prod/payments/Stripe2024LiveKeyV3.",
            "- Access the dashboard at grafana.internal:3000/d/Xk9f2LqP7Rt3mZ8w/overview",
            "- The token counter is TokenCounterV2Impl32Bit.",
            "- Private repos live in acme/Infra2024MonorepoV3BackendServices.",
            "- The API route /api/v2/Projects2024Q4Report/ExportCsv exports the report.",
            "- Key takeaway: TestSuite2024RegressionV3Big is flaky.",
            "- idempotency_key values are hex: b4eb997733794ed4a8c5151149dba3ab",
            "- The toolchain comes from 0c0pqcyjsd5qsvbvkn3rq0ywxl7j7b5v in the Nix store.",
            "- The base image is ubuntu2204jammyamd64image20240612v3.",
            "- Fixtures: user42, order1337, invoice2024q4, shipment7.",
        ]);
        passes.push(k(&["- Run id ", &a_uuid(30), " failed"]));
        passes.push(k(&["- The tree object ", &hx(31, 40), " holds the docs"]));
        passes.extend(super::super::corpus::near_misses());
        (secrets, passes)
    }

    #[test]
    fn the_generic_rule_finds_unknown_shapes_and_lets_ordinary_lines_pass() {
        let (secrets, passes) = table();
        let caught: Vec<&String> = secrets.iter().filter(|s| super::super::find_secret(s).is_some()).collect();
        let flagged: Vec<&String> = passes.iter().filter(|s| super::super::find_secret(s).is_some()).collect();
        let (tp, fn_, fp) = (caught.len(), secrets.len() - caught.len(), flagged.len());
        let precision = tp as f64 / (tp + fp).max(1) as f64;
        let recall = tp as f64 / (tp + fn_).max(1) as f64;
        eprintln!(
            "generic rule: {tp} of {} unknown-shape secrets caught, {fp} of {} ordinary lines flagged; precision {precision:.3}, recall {recall:.3}",
            secrets.len(),
            passes.len()
        );
        let missed: Vec<&String> = secrets.iter().filter(|s| super::super::find_secret(s).is_none()).collect();
        assert!(missed.is_empty(), "missed: {missed:#?}");
        assert!(flagged.is_empty(), "flagged: {flagged:#?}");
    }

    /// Held out from the tuning: random bodies of other seeds, lengths and
    /// alphabets with and without a keyword, against every line of this
    /// repository's own manual (real ordinary text: commands, paths,
    /// hashes, versions, identifiers).
    #[test]
    fn held_out_bodies_are_caught_and_the_manual_passes() {
        use super::super::corpus::{B64, URL64};
        let mut plain = (0, 0);
        let mut keyed = (0, 0);
        for seed in 1000..1120u64 {
            let n = 20 + (seed as usize * 7) % 45;
            let alphabet = [super::super::corpus::ALNUM, URL64, B64][seed as usize % 3];
            let body = rand(seed, n, alphabet);
            let found = |text: String| super::super::find_secret(&text).is_some();
            if n >= PLAIN_MIN_CHARS {
                plain.1 += 1;
                plain.0 += usize::from(found(k(&["- ", &body, " (vendor)"])));
            }
            keyed.1 += 1;
            keyed.0 += usize::from(found(k(&["- the vendor token ", &body])));
        }
        let manual = [
            include_str!("../../../README.md"),
            include_str!("../../../docs/using.md"),
            include_str!("../../../docs/design.md"),
            include_str!("../../../docs/cost.md"),
            include_str!("../../../docs/security.md"),
            include_str!("../../../docs/configuration.md"),
            include_str!("../../../docs/sync.md"),
            include_str!("../../../docs/install.md"),
            include_str!("../../../docs/development.md"),
            include_str!("../../../docs/troubleshooting.md"),
        ];
        let lines: Vec<&str> = manual.iter().flat_map(|text| text.lines()).filter(|l| !l.trim().is_empty()).collect();
        let flagged: Vec<&&str> = lines.iter().filter(|l| high_entropy(l).is_some()).collect();
        eprintln!(
            "generic rule, held out: {} of {} plain bodies and {} of {} after a keyword caught; {} of {} manual lines flagged",
            plain.0,
            plain.1,
            keyed.0,
            keyed.1,
            flagged.len(),
            lines.len()
        );
        assert!(flagged.is_empty(), "{flagged:#?}");
        assert!(plain.0 * 100 >= plain.1 * 90 && keyed.0 * 100 >= keyed.1 * 95, "{plain:?} {keyed:?}");
    }
}
