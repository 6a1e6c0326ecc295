//! Secrets a fork might copy into memory: a line that carries one is
//! refused, and the refusal never repeats it. Four stages: documented
//! tokens and prefix families, shapes, assignments (`assign.rs`), entropy
//! (`generic.rs`). The `regex` crate and reading each candidate once keep the
//! scan linear with no length cap. What passes by choice is in
//! docs/security.md (Secrets); `corpus/` holds the cases each way.

mod assign;
#[cfg(test)]
pub(crate) mod corpus;
mod generic;
#[cfg(test)]
mod tests;
mod value;

use regex::Regex;
use std::sync::LazyLock;

/// The kind of secret found first, in a refusal's words ("an Anthropic API key").
pub fn find_secret(text: &str) -> Option<&'static str> {
    find_in(text).or_else(|| {
        // A key in look-alike characters (full-width, a non-breaking hyphen)
        // is the key still.
        (!text.is_ascii()).then(|| find_in(&dashes_as_hyphens(&super::gate::fold_ascii(text)))).flatten()
    })
}

/// Every dash Unicode has, as the hyphen a key's parts are joined by: the
/// gate's fold leaves an em dash or a horizontal bar as it is.
fn dashes_as_hyphens(text: &str) -> String {
    text.chars()
        .map(|c| match c {
            '\u{2010}'..='\u{2015}' | '\u{2212}' | '\u{2e3a}' | '\u{2e3b}' | '\u{fe58}' | '\u{fe63}' | '\u{ff0d}' => {
                '-'
            }
            _ => c,
        })
        .collect()
}

fn find_in(text: &str) -> Option<&'static str> {
    scan(&TOKENS, text)
        .or_else(|| scan(&FAMILIES, text))
        .or_else(|| scan(&SHAPES, text))
        .or_else(|| assign::assignment(text))
        .or_else(|| generic::high_entropy(text))
}

/// The text, or a stand-in naming what it held, for text stored and shown.
pub fn redact(text: &str) -> String {
    match find_secret(text) {
        Some(kind) => format!("[not shown: it looks like it holds {kind}]"),
        None => text.to_string(),
    }
}

/// `text` with each space-separated word that holds a secret replaced by a
/// stand-in naming its kind, the rest kept, so a fresh save still reads
/// what a message said beside a pasted key. What only the whole text shows
/// to be a secret stays in: the caller's gate then leaves the text out.
pub fn mask_words(text: &str) -> String {
    if find_secret(text).is_none() {
        return text.to_string();
    }
    let words: Vec<String> = text
        .split(' ')
        .map(|word| match find_secret(word) {
            Some(kind) => format!("[{kind}, not shown]"),
            None => word.to_string(),
        })
        .collect();
    words.join(" ")
}

/// `line` with its text replaced by `redact`'s stand-in when it holds a
/// secret, its line end kept.
pub fn redact_line(line: &str) -> String {
    let bare = line.trim_end_matches(['\n', '\r']);
    format!("{}{}", redact(bare), &line[bare.len()..])
}

pub fn refusal(kind: &str) -> String {
    format!("it looks like it holds {kind}; secrets are never written to memory")
}

/// How a candidate is confirmed.
#[derive(Clone, Copy)]
enum Check {
    /// The last n characters (the generated body) look generated.
    Tail(usize),
    /// The 12 to 16 characters after a prefix of this length look generated.
    Head(usize),
    Custom(fn(&str) -> bool),
}

struct Rule {
    kind: &'static str,
    pattern: &'static str,
    check: Check,
}

const fn rule(kind: &'static str, check: Check, pattern: &'static str) -> Rule {
    Rule { kind, pattern, check }
}

use Check::{Custom, Head, Tail};

/// Rules joined into regexes of a few alternatives each, one capture group
/// per rule: a small alternation keeps the regex crate's literal prefilter,
/// which one of fifty alternatives loses.
struct Rules {
    groups: Vec<(&'static [Rule], Regex)>,
}

impl Rules {
    fn new(rules: &'static [Rule], per_group: usize) -> Rules {
        let groups = rules
            .chunks(per_group)
            .map(|group| {
                let joined: Vec<String> = group.iter().map(|r| format!("({})", r.pattern)).collect();
                (group, Regex::new(&joined.join("|")).expect("secret patterns compile"))
            })
            .collect();
        Rules { groups }
    }
}

fn scan(rules: &Rules, text: &str) -> Option<&'static str> {
    rules.groups.iter().find_map(|(group, regex)| scan_group(group, regex, text))
}

/// A short candidate that fails its check is looked past from its next
/// character, so a key inside it (`sk-proj-ghp_<key>_xxxx`) is still found;
/// a long one from its end, so the scan stays linear.
const RESCAN_WITHIN: usize = 256;

fn scan_group(rules: &[Rule], regex: &Regex, text: &str) -> Option<&'static str> {
    let mut at = 0;
    while let Some(caps) = regex.captures_at(text, at) {
        let Some((i, m)) = caps.iter().skip(1).enumerate().find_map(|(i, m)| Some((i, m?))) else {
            break;
        };
        let rule = &rules[i];
        let found = m.as_str();
        let ok = match rule.check {
            Tail(n) => {
                random_tail(found, n) || {
                    // What is left once a stand-in tail is cut must still be a
                    // prefix and a key's body, not the prefix alone.
                    let cut = without_stand_in_tail(found);
                    cut.len() < found.len() && cut.len() >= n + 3 && random_tail(&cut, n)
                }
            }
            Head(prefix) => generated_head(found.get(prefix..).unwrap_or("")),
            Custom(f) => f(found),
        };
        if !ok {
            at = if found.len() <= RESCAN_WITHIN {
                m.start() + text[m.start()..].chars().next().map_or(1, char::len_utf8)
            } else {
                m.end().max(m.start() + 1)
            };
            if at > text.len() {
                break;
            }
            continue;
        }
        {
            // `Bearer sk-proj-...` names the token's own kind, one level deep.
            if rule.kind == BEARER {
                let value = found.rsplit([' ', '\t']).next().unwrap_or("");
                return scan(&TOKENS, value).or(Some(BEARER));
            }
            return Some(rule.kind);
        }
    }
    None
}

/// A key with a stand-in appended (`…-xxxxxxxx`, `…_here`) is the key still.
fn without_stand_in_tail(found: &str) -> String {
    let mut text = found;
    for _ in 0..2 {
        let repeated = |t: &str| t.len() >= 3 && t.chars().all(|c| t.starts_with(c));
        let word = |t: &str| {
            matches!(
                t.to_ascii_lowercase().as_str(),
                "here" | "example" | "placeholder" | "redacted" | "abcdefg" | "todo"
            )
        };
        // A last segment after a separator that is only a stand-in.
        if let Some((head, tail)) = text.rsplit_once(['-', '_', '.'])
            && !head.is_empty()
            && (repeated(tail) || word(tail))
        {
            text = head;
            continue;
        }
        // A run of one repeated character at the end.
        let last = text.chars().next_back();
        let run = text.chars().rev().take_while(|c| Some(*c) == last).count();
        if run >= 3 && run < text.len() {
            text = &text[..text.len() - run];
            continue;
        }
        break;
    }
    text.to_string()
}

const BEARER: &str = "a bearer token";
/// Key material after the header: blank lines (real or `\n` escaped in
/// JSON), `Proc-Type:`-style header lines, then 40 base64 characters.
macro_rules! key_body {
    () => {
        r"(?:\s|\\[nr])*(?:[A-Za-z][A-Za-z0-9-]*:[^\r\n\\]*(?:\s|\\[nr])+)*[A-Za-z0-9+/=]{40}"
    };
}

static JWT: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"eyJ[A-Za-z0-9_-]{10,}\.eyJ").expect("compiles"));

/// Every pattern here starts with a literal, for the regex crate's prefilter.
static TOKENS: LazyLock<Rules> = LazyLock::new(|| Rules::new(TOKEN_RULES, 12));
#[rustfmt::skip]
const TOKEN_RULES: &[Rule] = &[
    rule("a Google Cloud service account key", Tail(40),
        concat!(r#"\\?"private_key\\?"\s*:\s*\\?"-----BEGIN [A-Z ]{0,20}PRIVATE KEY-----"#, key_body!())),
    // Any spacing in the armour line.
    rule("a private key block", Tail(40),
        concat!(r"-----BEGIN[ \t]+(?:[A-Z0-9]+[ \t]+){0,4}PRIVATE[ \t]+KEY(?:[ \t]+BLOCK)?[ \t]*-----", key_body!())),
    rule("a PuTTY private key", Tail(40),
        r"Private-Lines:[ \t]*[0-9]+(?:\s|\\[nr])+[A-Za-z0-9+/=]{40}"),
    // A private key's DER or OpenSSH body, pasted without its header.
    rule("a private key", Tail(40),
        r"(?-u:\b)(?:MII[A-Za-z0-9+/]{2,3}IBA(?:DAN|AKC|AKB)|b3BlbnNzaC1rZXktdjE|MHcCAQEE)[A-Za-z0-9+/]{40}"),
    rule("an Anthropic API key", Tail(16),
        r"(?-u:\b)sk-ant-[a-z]{2,8}[0-9]{0,3}-[A-Za-z0-9_-]{16,}"),
    rule("an OpenAI API key", Tail(20),
        r"(?-u:\b)sk-(?:proj|svcacct|admin|None)-[A-Za-z0-9_-]{20,}"),
    rule("an OpenAI API key", Tail(32),
        r"(?-u:\b)sk-[A-Za-z0-9]{32,}(?-u:\b)"),
    rule("an AWS access key id", Tail(16),
        r"(?-u:\b)(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{16}(?-u:\b)"),
    rule("a GitHub token", Tail(16),
        r"(?-u:\b)gh[pousr]_[A-Za-z0-9]{16,}"),
    rule("a GitHub token", Tail(50),
        r"(?-u:\b)github_pat_[A-Za-z0-9_]{50,}"),
    rule("a GitLab token", Tail(20),
        r"(?-u:\b)gl(?:pat|dt|rt|ptt|cbt|oas|ft|imt|soat|agent|ffct)-[A-Za-z0-9_-]{20,}"),
    rule("a Slack token", Tail(10),
        r"(?-u:\b)xox[abposre]-(?:[0-9]+-)+[A-Za-z0-9]{10,}"),
    rule("a Slack token", Tail(16),
        r"(?-u:\b)xapp-[0-9]-[A-Z0-9]{8,}-[0-9]+-[A-Za-z0-9]{16,}"),
    rule("a Slack webhook URL", Tail(20),
        r"hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9+/]{40,}"),
    rule("a Stripe key", Tail(20),
        r"(?-u:\b)(?:sk|rk)_(?:live|test|prod)_[A-Za-z0-9]{20,}"),
    rule("a Stripe webhook secret", Tail(32),
        r"(?-u:\b)whsec_[A-Za-z0-9+/=]{32,}"),
    rule("a Google API key", Tail(35),
        r"(?-u:\b)AIza[A-Za-z0-9_-]{35}"),
    rule("a Google OAuth client secret", Tail(28),
        r"(?-u:\b)GOCSPX-[A-Za-z0-9_-]{28}"),
    rule("a Google OAuth token", Tail(40),
        r"(?-u:\b)ya29\.[A-Za-z0-9_-]{40,}"),
    rule("an npm token", Tail(36),
        r"(?-u:\b)npm_[A-Za-z0-9]{36,}"),
    rule("a PyPI token", Tail(50),
        r"(?-u:\b)pypi-AgE(?:IcHlwaS5vcmc|NdGVzdC5weXBpLm9yZw)[A-Za-z0-9_-]{50,}"),
    rule("a SendGrid API key", Tail(43),
        r"(?-u:\b)SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}"),
    rule("a Twilio API key", Tail(32),
        r"(?-u:\b)SK[0-9a-f]{32}(?-u:\b)"),
    rule("a Mailgun API key", Tail(32),
        r"(?-u:\b)key-[0-9a-f]{32}(?-u:\b)"),
    rule("a Hugging Face token", Tail(34),
        r"(?-u:\b)(?:hf_|api_org_)[A-Za-z0-9]{34}(?-u:\b)"),
    rule("an Azure storage account key", Tail(40),
        r"AccountKey=[A-Za-z0-9+/]{40,}={0,2}"),
    rule("an Azure shared access key", Tail(30),
        r"SharedAccessKey=[A-Za-z0-9+/]{30,}={0,2}"),
    rule("a shared access signature", Tail(20),
        r"[?&;]sig=[A-Za-z0-9%+/]{30,}"),
    rule("a signed URL", Tail(64),
        r"X-(?:Amz|Goog)-Signature=[0-9a-f]{64,}"),
    rule("a Discord webhook URL", Tail(40),
        r"discord(?:app)?\.com/api/webhooks/[0-9]{17,20}/[A-Za-z0-9_-]{60,}"),
    rule("a DigitalOcean token", Tail(64),
        r"(?-u:\b)do[opr]_v1_[a-f0-9]{64}"),
    rule("a Shopify token", Tail(32),
        r"(?-u:\b)shp(?:at|ss|ca|pa)_[a-fA-F0-9]{32}"),
    rule("an Atlassian API token", Tail(50),
        r"(?-u:\b)AT(?:ATT|CTT)3[A-Za-z0-9_=-]{150,}"),
    rule("a Databricks token", Tail(32),
        r"(?-u:\b)dapi[a-f0-9]{32}(?-u:\b)"),
    rule("a Heroku API key", Tail(40),
        r"(?-u:\b)HRKU-AA[A-Za-z0-9_-]{58}"),
    rule("a Doppler token", Tail(40),
        r"(?-u:\b)dp\.(?:st|pt|ct|sa|scim|audit)\.(?:[a-z0-9_-]{1,40}\.)?[A-Za-z0-9]{40,}"),
    rule("a Linear API key", Tail(40),
        r"(?-u:\b)lin_(?:api|oauth)_[A-Za-z0-9]{40,}"),
    rule("a Postman API key", Tail(34),
        r"(?-u:\b)PMAK-[a-fA-F0-9]{24}-[a-fA-F0-9]{34}"),
    rule("a Sentry token", Tail(40),
        r"(?-u:\b)sntrys_eyJ[A-Za-z0-9+/=_-]{50,}"),
    rule("a Sentry token", Tail(64),
        r"(?-u:\b)sntryu_[a-f0-9]{64}"),
    rule("a Sentry DSN", Custom(sentry_dsn),
        r"https?://[0-9a-f]{32}@[A-Za-z0-9.-]+/[0-9]+"),
    rule("a HashiCorp Vault token", Tail(40),
        r"(?-u:\b)hv[sb]\.[A-Za-z0-9_-]{90,}"),
    rule("a Grafana token", Tail(40),
        r"(?-u:\b)glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}"),
    rule("a Supabase token", Tail(40),
        r"(?-u:\b)sbp_[a-f0-9]{40}"),
    rule("a Groq API key", Tail(48),
        r"(?-u:\b)gsk_[A-Za-z0-9]{48,}"),
    rule("a Perplexity API key", Tail(48),
        r"(?-u:\b)pplx-[A-Za-z0-9]{48}"),
    rule("an xAI API key", Tail(70),
        r"(?-u:\b)xai-[A-Za-z0-9]{70,}"),
    rule("a 1Password service account token", Tail(40),
        r"(?-u:\b)ops_eyJ[A-Za-z0-9+/=_-]{100,}"),
    rule("an age secret key", Tail(58),
        r"AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}"),
    // A known prefix and 16 key characters are a key; short prefixes need
    // their documented length, so `sk-learn` and Python's `1//0` pass.
    rule("an OpenRouter API key", Tail(16),
        r"(?-u:\b)sk-or-v1-[A-Za-z0-9]{16,}"),
    rule("a Replicate API token", Tail(16),
        r"(?-u:\b)r8_[A-Za-z0-9]{37}"),
    rule("an NVIDIA API key", Tail(16),
        r"(?-u:\b)nvapi-[A-Za-z0-9_-]{16,}"),
    rule("a Tavily API key", Tail(16),
        r"(?-u:\b)tvly-(?:dev-|prod-)?[A-Za-z0-9]{16,}"),
    rule("a Brevo API key", Tail(16),
        r"(?-u:\b)xkeysib-[A-Za-z0-9-]{16,}"),
    rule("a Terraform Cloud token", Tail(16),
        r"\.atlasv1\.[A-Za-z0-9_=-]{16,}"),
    rule("a Fly.io token", Tail(16),
        r"(?-u:\b)FlyV1[ \t]+[A-Za-z0-9+/=,_-]{16,}"),
    rule("a Square access token", Tail(16),
        r"(?-u:\b)EAAA[A-Za-z0-9_-]{60,}"),
    rule("a Meta access token", Tail(16),
        r"(?-u:\b)EAA[A-Za-z0-9]{90,}"),
    rule("a Netlify token", Tail(16),
        r"(?-u:\b)nfp_[A-Za-z0-9]{36,}"),
    rule("a Google OAuth refresh token", Tail(16),
        r"(?-u:\b)1//0[A-Za-z0-9_-]{40,}"),
    rule("a Kubernetes bootstrap token", Tail(16),
        r"--token[ \t=]+[a-z0-9]{6}\.[a-z0-9]{16}(?-u:\b)"),
    rule("a password hash", Custom(password_hash),
        r"\$(?:2[abxy]?\$[0-9]{2}\$[./A-Za-z0-9]{53}|apr1\$[./A-Za-z0-9]{1,8}\$[./A-Za-z0-9]{22}|[56]\$(?:rounds=[0-9]+\$)?[./A-Za-z0-9]{1,16}\$[./A-Za-z0-9]{43,86}|1\$[./A-Za-z0-9]{1,8}\$[./A-Za-z0-9]{22}|y\$[./A-Za-z0-9]+\$[./A-Za-z0-9]+\$[./A-Za-z0-9]{43})"),
    rule("a password hash", Tail(16),
        r"\{SSHA?\}[A-Za-z0-9+/]{27,}={0,2}"),
    rule("a session cookie", Custom(last_value_random),
        r"(?i-u:cookie)[ \t]*:[^\r\n]*?(?i-u:sess|sid|token|auth)[A-Za-z0-9_.-]*=[A-Za-z0-9%._~+/=-]{16,}"),
    rule("a token in a URL", Custom(last_value_random),
        r"[?&](?:auth|token|key|api_?key|apikey|secret|client_secret|access_key|password)=[A-Za-z0-9%._~+/-]{16,}"),
    rule("a JSON Web Token", Tail(10),
        r"(?-u:\b)eyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}"),
    rule(BEARER, Custom(bearer),
        r"(?:Bearer|bearer|BEARER)[ \t]+[A-Za-z0-9._~+/-]{16,}=*"),
];

/// Families (stage 1b): a provider's prefix and 12 token characters are its
/// key whatever the tail, since exact shapes miss unknown variants. A prefix
/// too plain to be one provider's (Twilio's `SK`) keeps its exact shape only.
static FAMILIES: LazyLock<Rules> = LazyLock::new(|| Rules::new(FAMILY_RULES, 12));
macro_rules! family {
    ($kind:expr, $prefix:literal, $escaped:literal, $body:literal) => {
        rule($kind, Head($prefix.len()), concat!(r"(?-u:\b)", $escaped, $body, "{12,}"))
    };
}
#[rustfmt::skip]
const FAMILY_RULES: &[Rule] = &[
    family!("an Anthropic API key", "sk-ant-", "sk-ant-", "[A-Za-z0-9_-]"),
    family!("an OpenAI API key", "sk-proj-", "sk-proj-", "[A-Za-z0-9_-]"),
    family!("an OpenAI API key", "sk-svcacct-", "sk-svcacct-", "[A-Za-z0-9_-]"),
    family!("an OpenAI API key", "sk-admin-", "sk-admin-", "[A-Za-z0-9_-]"),
    family!("a GitHub token", "ghp_", "gh[pousr]_", "[A-Za-z0-9_]"),
    family!("a GitHub token", "github_pat_", "github_pat_", "[A-Za-z0-9_]"),
    family!("a GitLab token", "glpat-", "gl(?:pat|dt|rt|ptt|cbt|oas|ft|imt|soat|ffct)-", "[A-Za-z0-9_-]"),
    family!("a Slack token", "xoxb-", "xox[abposre]-", "[A-Za-z0-9-]"),
    family!("a Slack token", "xapp-", "xapp-", "[A-Za-z0-9-]"),
    family!("a Stripe key", "sk_live_", "[sr]k_(?:live|test|prod)_", "[A-Za-z0-9]"),
    family!("a Stripe webhook secret", "whsec_", "whsec_", "[A-Za-z0-9+/=]"),
    family!("a Pinecone API key", "pcsk_", "pcsk_", "[A-Za-z0-9_-]"),
    family!("a Hugging Face token", "hf_", "hf_", "[A-Za-z0-9]"),
    family!("a Hugging Face token", "api_org_", "api_org_", "[A-Za-z0-9]"),
    family!("an npm token", "npm_", "npm_", "[A-Za-z0-9]"),
    family!("a Databricks token", "dapi", "dapi", "[a-f0-9]"),
    family!("a SendGrid API key", "SG.", r"SG\.", "[A-Za-z0-9_.-]"),
    family!("a Doppler token", "dp.st.", r"dp\.(?:st|pt|ct|sa)\.", "[A-Za-z0-9_.-]"),
    family!("a Groq API key", "gsk_", "gsk_", "[A-Za-z0-9]"),
    family!("a Perplexity API key", "pplx-", "pplx-", "[A-Za-z0-9]"),
    family!("an xAI API key", "xai-", "xai-", "[A-Za-z0-9]"),
    family!("a Sentry token", "sntryu_", "sntry[us]_", "[A-Za-z0-9+/=_-]"),
    family!("a HashiCorp Vault token", "hvs.", r"hv[sb]\.", "[A-Za-z0-9_-]"),
    family!("a Supabase token", "sbp_", "sbp_", "[a-f0-9]"),
    family!("a Grafana token", "glsa_", "gl(?:sa|c)_", "[A-Za-z0-9_=]"),
    family!("a Linear API key", "lin_api_", "lin_(?:api|oauth)_", "[A-Za-z0-9]"),
    family!("a Shopify token", "shpat_", "shp(?:at|ss|ca|pa)_", "[a-fA-F0-9]"),
    family!("a DigitalOcean token", "dop_v1_", "do[opr]_v1_", "[a-f0-9]"),
    family!("a Heroku API key", "HRKU-", "HRKU-", "[A-Za-z0-9_-]"),
    family!("a Postman API key", "PMAK-", "PMAK-", "[A-Za-z0-9-]"),
    family!("an OpenRouter API key", "sk-or-", "sk-or-", "[A-Za-z0-9_-]"),
    family!("an NVIDIA API key", "nvapi-", "nvapi-", "[A-Za-z0-9_-]"),
    family!("a Tavily API key", "tvly-", "tvly-", "[A-Za-z0-9_-]"),
    family!("a Brevo API key", "xkeysib-", "xkeysib-", "[A-Za-z0-9-]"),
    family!("a Replicate API token", "r8_", "r8_", "[A-Za-z0-9]"),
    family!("a Netlify token", "nfp_", "nfp_", "[A-Za-z0-9]"),
    family!("a Google API key", "AIza", "AIza", "[A-Za-z0-9_-]"),
    family!("a Google OAuth client secret", "GOCSPX-", "GOCSPX-", "[A-Za-z0-9_-]"),
    family!("a PyPI token", "pypi-AgE", "pypi-AgE", "[A-Za-z0-9_-]"),
    family!("a 1Password service account token", "ops_", "ops_eyJ", "[A-Za-z0-9+/=_-]"),
    family!("an Atlassian API token", "ATATT", "AT(?:ATT|CTT)", "[A-Za-z0-9_=-]"),
    family!("an age secret key", "AGE-SECRET-KEY-", "AGE-SECRET-KEY-", "[A-Z0-9]"),
];

/// A family key's head: half distinct, a digit or both cases (a word or
/// snake_case name has neither), and no stand-in run.
fn generated_head(body: &str) -> bool {
    let head: String = body.chars().take(16).collect();
    let n = head.chars().count();
    if n < 12 {
        return false;
    }
    let distinct = distinct_alphanumeric(head.as_bytes());
    let digit = head.bytes().any(|b| b.is_ascii_digit());
    let cases = head.bytes().any(|b| b.is_ascii_lowercase()) && head.bytes().any(|b| b.is_ascii_uppercase());
    distinct * 2 >= n && (digit || cases) && !value::stand_in_run(&head)
}

/// Shapes with no literal first, one regex each, so the regex crate searches
/// for the literal inside (`://`, `Q~`), which a joined regex would not.
static SHAPES: LazyLock<Rules> = LazyLock::new(|| Rules::new(SHAPE_RULES, 1));
#[rustfmt::skip]
const SHAPE_RULES: &[Rule] = &[
    rule("a Discord bot token", Custom(discord),
        r"(?-u:\b)[MNO][A-Za-z0-9_-]{23,27}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,40}"),
    rule("a Telegram bot token", Tail(34),
        r"(?:(?-u:\b)|bot)[0-9]{5,16}:A[A-Za-z0-9_-]{34}"),
    rule("an Azure AD client secret", Tail(31),
        r"(?-u:\b)[A-Za-z0-9_~.]{3}[0-9]Q~[A-Za-z0-9_~.-]{31,34}"),
    rule("a password in an Authorization header", Custom(basic_auth),
        r#"(?i-u:authorization)\\?["']?[ \t]*[:=][ \t]*\\?["']?[ \t]*(?i-u:basic)[ \t]+[A-Za-z0-9+/]{6,}={0,2}"#),
    rule("a token in an Authorization header", Custom(last_word_random),
        r#"(?i-u:authorization)\\?["']?[ \t]*[:=][ \t]*\\?["']?[ \t]*(?i-u:token|api-?key|key|sso-key)[ \t]+[A-Za-z0-9._~+/=:-]{16,}"#),
    rule("a password in a curl command", Custom(curl_user),
        r#"(?-u:\b)curl(?-u:\b)[^\r\n]*?[ \t](?:-u|--user)[ \t=]+["']?[^\s:"']*:[^\s"']+"#),
    rule("a password in a .netrc line", Custom(netrc),
        r"(?-u:\b)machine[ \t]+[^\s]+[ \t]+login[ \t]+[^\s]+[ \t]+password[ \t]+[^\s]+"),
    rule("a password in a command line", Custom(flag_value),
        r#"(?-u:\b)(?:docker[ \t]+login|sshpass|redis-cli)(?-u:\b)[^\r\n]*?[ \t](?:-p|-a|--pass|--password)[ \t=]+["']?[^\s"']+"#),
    rule("a password in a command line", Custom(flag_value),
        r#"(?-u:\b)(?:mysql|mysqldump|mysqladmin|mariadb)(?-u:\b)[^\r\n]*?[ \t]-p[^\s"'-][^\s"']*"#),
    rule("a registry credential", Custom(basic_auth),
        r#"(?:(?-u:\b)_auth|\\?"auth\\?")[ \t]*[:=][ \t]*\\?"?[A-Za-z0-9+/]{8,}={0,2}"#),
    rule("a password in a .pgpass line", Custom(pgpass),
        r"(?-u:\b)[A-Za-z*][A-Za-z0-9.*-]*:(?:[0-9]{2,5}|\*):[A-Za-z0-9_*-]+:[A-Za-z0-9_*-]+:[^\s:]{6,}"),
    rule("a password in a URL", Custom(url_password),
        r#"[A-Za-z][A-Za-z0-9+.-]*://[^\s:/?#@"'<>`]*:[^\s@"'<>`]*@(?:[A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])"#),
    rule("a token in a URL", Custom(url_user_token),
        r#"[A-Za-z][A-Za-z0-9+.-]*://[^\s:/?#@"'<>`]{12,}@(?:[A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])"#),
];

/// Enough distinct characters, and no stand-in run (`xxxx`, `EXAMPLE`).
fn random_tail(found: &str, n: usize) -> bool {
    let t = &found.as_bytes()[found.len().saturating_sub(n)..];
    distinct_alphanumeric(t) >= (n / 2).clamp(4, 10) && !value::stand_in_run(&String::from_utf8_lossy(t))
}

/// How many different letters and digits `t` holds.
fn distinct_alphanumeric(t: &[u8]) -> usize {
    let mut seen = [false; 128];
    t.iter().filter(|c| c.is_ascii_alphanumeric()).filter(|&&c| !std::mem::replace(&mut seen[c as usize], true)).count()
}

/// A crypt(3) hash: a stand-in (`$2b$10$xxxx…`) is not one.
fn password_hash(found: &str) -> bool {
    let tail = found.rsplit('$').next().unwrap_or("");
    random_tail(tail, tail.len().min(22))
}

/// The value after the last `=`, when it looks generated.
fn last_value_random(found: &str) -> bool {
    let value = found.rsplit('=').find(|v| !v.is_empty()).unwrap_or("");
    value::looks_random(value.trim_end_matches('='))
}

/// `host:port:database:user:password` whose password is not a stand-in.
fn pgpass(found: &str) -> bool {
    let password = found.rsplit(':').next().unwrap_or("");
    !value::stand_in_run(password) && !matches!(password, "password" | "changeme" | "secret" | "postgres")
}

fn sentry_dsn(found: &str) -> bool {
    let key = found.split("//").nth(1).and_then(|rest| rest.split('@').next()).unwrap_or("");
    random_tail(key, 32)
}

fn bearer(found: &str) -> bool {
    last_word_random(found.trim_end_matches('='))
}

/// The value after the scheme word (`Bearer x`, `Authorization: Token x`).
fn last_word_random(found: &str) -> bool {
    let value = found.rsplit([' ', '\t']).next().unwrap_or("");
    JWT.is_match(value) || value::looks_random(value)
}

/// The bot's numeric id (base64 of digits), a timestamp, an HMAC.
fn discord(found: &str) -> bool {
    let mut parts = found.split('.');
    let (id, _, mac) = (parts.next().unwrap_or(""), parts.next(), parts.next().unwrap_or(""));
    let id_digits = base64_decode(id).is_some_and(|d| d.len() >= 17 && d.iter().all(u8::is_ascii_digit));
    id_digits && random_tail(mac, 27)
}

/// base64 of `user:password` (`Authorization: Basic`, `.npmrc`, Docker).
fn basic_auth(found: &str) -> bool {
    let value = found.rsplit([' ', '\t', '=', ':', '"']).find(|w| !w.is_empty()).unwrap_or("");
    let Some(decoded) = base64_decode(value.trim_end_matches('=')) else {
        return false;
    };
    let Ok(decoded) = String::from_utf8(decoded) else {
        return false;
    };
    if !decoded.bytes().all(|c| (0x20..0x7f).contains(&c)) {
        return false;
    }
    decoded.split_once(':').is_some_and(|(user, password)| real_password(user, password))
}

/// The last word is `user:password`, `--user=user:password`, maybe quoted.
fn curl_user(found: &str) -> bool {
    let last = found.rsplit([' ', '\t']).next().unwrap_or("");
    let creds = last.strip_prefix("--user=").unwrap_or(last).trim_start_matches(['=', '"', '\'']);
    creds.split_once(':').is_some_and(|(user, password)| real_password(user, password))
}

fn netrc(found: &str) -> bool {
    let words: Vec<&str> = found.split_whitespace().collect();
    let after = |key: &str| words.iter().position(|w| *w == key).and_then(|i| words.get(i + 1)).copied();
    real_password(after("login").unwrap_or(""), after("password").unwrap_or(""))
}

/// The value of `-p x`, `--password x`, `-px`.
fn flag_value(found: &str) -> bool {
    let last = found.rsplit([' ', '\t', '=']).next().unwrap_or("");
    let last = last.strip_prefix("-p").unwrap_or(last).trim_start_matches(['"', '\'']);
    let last = last.trim_end_matches(['"', '\'']);
    real_password("", last) && last.chars().count() >= 4
}

/// Not empty, a placeholder, the user name again (`postgres:postgres`, a
/// local default), nor a port.
fn real_password(user: &str, password: &str) -> bool {
    let port = password.bytes().take_while(u8::is_ascii_digit).count();
    let is_port = port > 0 && port <= 5 && password[port..].chars().next().is_none_or(|c| "/?#".contains(c));
    !password.is_empty() && password != user && !is_port && !value::placeholder(password)
}

fn url_password(found: &str) -> bool {
    let check = |url: &str| {
        let Some((_, rest)) = url.split_once("://") else {
            return false;
        };
        let userinfo = rest.rsplit_once('@').map_or("", |(u, _)| u);
        // A token as the user name with an empty or stand-in password
        // (`https://<PAT>:@…`, `https://<PAT>:x@…`) is the same token.
        userinfo.split_once(':').is_some_and(|(user, password)| real_password(user, password) || user_token(user))
    };
    if check(found) {
        return true;
    }
    // `http://host:80/?next=https://user:pw@x`: the inner URL, once.
    let Some(inner) = found.rfind("://").filter(|&i| i > found.find("://").unwrap_or(i)) else {
        return false;
    };
    let start = found[..inner].rfind(|c: char| !(c.is_ascii_alphanumeric() || "+.-".contains(c))).map_or(0, |i| i + 1);
    check(&found[start..])
}

/// A URL's user name that is a token (`https://<PAT>@dev.azure.com/…`,
/// `https://<40 hex>@github.com/…`): whatever its shape, long or random,
/// never a bare user name such as `git@` or `user@`, nor a placeholder.
fn url_user_token(found: &str) -> bool {
    user_token(found.split_once("://").and_then(|(_, rest)| rest.rsplit_once('@')).map_or("", |(u, _)| u))
}

/// Long and in one piece, or random: a user name of words (`contoso-team`,
/// `jane-at-123456789012`, AWS CodeCommit's form) is not a token.
fn user_token(user: &str) -> bool {
    let one_piece = user.chars().count() >= 20 && !user.contains(['-', '.']);
    !value::placeholder(user) && (one_piece || value::looks_random(user))
}

fn base64_decode(s: &str) -> Option<Vec<u8>> {
    let value = |c: u8| match c {
        b'A'..=b'Z' => Some(c - b'A'),
        b'a'..=b'z' => Some(c - b'a' + 26),
        b'0'..=b'9' => Some(c - b'0' + 52),
        b'+' => Some(62),
        b'/' => Some(63),
        _ => None,
    };
    if s.len() % 4 == 1 {
        return None;
    }
    let mut out = Vec::with_capacity(s.len() * 3 / 4);
    for chunk in s.as_bytes().chunks(4) {
        let v: Vec<u8> = chunk.iter().map(|&c| value(c)).collect::<Option<_>>()?;
        let n = v.iter().fold(0u32, |n, &d| n << 6 | d as u32) << (6 * (4 - v.len()));
        out.extend_from_slice(&n.to_be_bytes()[1..v.len()]);
    }
    Some(out)
}
