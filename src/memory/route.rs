//! Who pays for a save: the billing route the fork will use, worked out in
//! Claude Code's own order for `-p` (docs/cost.md, Who pays). Pure: a
//! `Source` brings what the fork will see. No credentials file is ever
//! opened; only whether a variable is set matters, never its value.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Payer {
    /// Bedrock, Vertex or Foundry: the cloud account pays.
    Cloud,
    /// `ANTHROPIC_BASE_URL` at a host that is not Anthropic's.
    Gateway,
    /// `ANTHROPIC_AUTH_TOKEN`: the token's account.
    AuthToken,
    /// `ANTHROPIC_API_KEY`: the key's account, at API rates.
    ApiKey,
    /// An `apiKeyHelper` in the settings: the key it prints.
    ApiKeyHelper,
    /// The Claude plan's login: its usage limits (the 5-hour and weekly
    /// windows), as the user's own prompts (docs/cost.md, Who pays).
    Subscription,
}

/// How the fork's requests authenticate, as measured (tests/e2e/billing.rs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Header {
    /// `x-api-key: …` alone (`ANTHROPIC_API_KEY`).
    XApiKey,
    /// `Authorization: Bearer …` alone (an auth token, or the subscription's).
    Bearer,
    /// Both: an `apiKeyHelper` sends its key as both, and a key beside an
    /// auth token sends each.
    Both,
    /// The cloud provider's own signing.
    Provider,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Route {
    pub payer: Payer,
    pub header: Header,
    /// The cloud provider, or the gateway's host; empty otherwise.
    #[serde(default)]
    pub detail: String,
}

/// Each variable the fork will see, and whether its settings carry an `apiKeyHelper`.
pub trait Source {
    fn var(&self, name: &str) -> Option<String>;
    fn api_key_helper(&self) -> bool;
}

const CLOUDS: [(&str, &str); 3] = [
    ("CLAUDE_CODE_USE_BEDROCK", "Amazon Bedrock"),
    ("CLAUDE_CODE_USE_VERTEX", "Google Vertex AI"),
    ("CLAUDE_CODE_USE_FOUNDRY", "Microsoft Foundry"),
];

fn truthy(value: Option<String>) -> bool {
    value.is_some_and(|v| matches!(v.trim().to_ascii_lowercase().as_str(), "1" | "true" | "yes" | "on"))
}

impl Route {
    pub fn of(source: &dyn Source) -> Route {
        if let Some((_, provider)) = CLOUDS.iter().find(|(name, _)| truthy(source.var(name))) {
            return Route { payer: Payer::Cloud, header: Header::Provider, detail: provider.to_string() };
        }
        let set = |name: &str| source.var(name).is_some_and(|v| !v.is_empty());
        // The credentials decide the headers, whoever bills them; the OAuth
        // token is sent only when none of them is set.
        let (key, token, helper) = (set("ANTHROPIC_API_KEY"), set("ANTHROPIC_AUTH_TOKEN"), source.api_key_helper());
        let header = match (key || helper, token || helper || !key) {
            (true, true) => Header::Both,
            (true, false) => Header::XApiKey,
            _ => Header::Bearer,
        };
        if let Some(host) = source.var("ANTHROPIC_BASE_URL").as_deref().and_then(host).filter(|h| !is_anthropic(h)) {
            return Route { payer: Payer::Gateway, header, detail: host };
        }
        let payer = match (token, key, helper) {
            (true, _, _) => Payer::AuthToken,
            (_, true, _) => Payer::ApiKey,
            (_, _, true) => Payer::ApiKeyHelper,
            _ => Payer::Subscription,
        };
        Route { payer, header, detail: String::new() }
    }

    /// The ledger key: a budget counts only saves billed the same way.
    pub fn key(&self) -> String {
        let payer =
            serde_json::to_value(self.payer).ok().and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default();
        if self.detail.is_empty() { payer } else { format!("{payer}:{}", self.detail) }
    }

    /// Whether a Claude plan's usage limits pay: no dollars change hands,
    /// and the plan's windows guard the saves.
    pub fn is_subscription(&self) -> bool {
        self.payer == Payer::Subscription
    }

    /// Whether a plan's usage windows, as Claude Code reports them, stand
    /// for what this route's saves draw on: a plan's login, or a gateway it
    /// reaches with a bearer token (Claude Code reads the windows for both);
    /// never an API key's, a cloud's or an auth token's own account.
    pub fn draws_on_plan_windows(&self) -> bool {
        self.is_subscription() || (self.payer == Payer::Gateway && self.header == Header::Bearer)
    }

    /// One plain sentence: who pays for this route's saves.
    pub fn sentence(&self) -> String {
        match self.payer {
            Payer::Subscription => "saves draw on your Claude plan's usage limits, the 5-hour and weekly windows \
your own prompts draw on; no money is paid unless you turned on extra usage, and a dollar figure for them is what \
that usage would cost at API prices"
                .into(),
            Payer::ApiKey => "saves are billed to ANTHROPIC_API_KEY at API rates, not to a Claude plan: a key \
exported in your shell (for your scripts, say) pays for every save"
                .into(),
            Payer::ApiKeyHelper => {
                "saves are billed at API rates to the key your settings' apiKeyHelper prints, not to a Claude plan"
                    .into()
            }
            Payer::AuthToken => "saves are billed to the account of ANTHROPIC_AUTH_TOKEN, not to a Claude plan".into(),
            Payer::Gateway => format!(
                "saves go through the gateway at {} (ANTHROPIC_BASE_URL), which bills them as it is set up",
                self.detail
            ),
            Payer::Cloud => format!("saves are billed by {} to your cloud account, at its rates", self.detail),
        }
    }
}

/// A few words on what a save on a ledger key (`Route::key`) draws on,
/// for one line of `list` or `sessions`; `sentence` says it in full.
pub fn in_brief(key: &str) -> String {
    // Only the shapes `key` writes: a key in a record is not trusted to say
    // a plan pays.
    let (payer, detail) = key.split_once(':').unwrap_or((key, ""));
    match (serde_json::from_value::<Payer>(serde_json::Value::from(payer)), detail.is_empty()) {
        (Ok(Payer::Subscription), true) => "draws on the Claude plan's usage limits".into(),
        (Ok(Payer::ApiKey), true) => "billed to ANTHROPIC_API_KEY".into(),
        (Ok(Payer::ApiKeyHelper), true) => "billed to the apiKeyHelper's key".into(),
        (Ok(Payer::AuthToken), true) => "billed to ANTHROPIC_AUTH_TOKEN's account".into(),
        (Ok(Payer::Gateway), false) => format!("through the gateway at {detail}, billed as it is set up"),
        (Ok(Payer::Cloud), false) => format!("billed by {detail}"),
        _ => format!("billed as {key:?}"),
    }
}

/// `https://user@llm.example.com:8443/v1` → `llm.example.com`.
pub fn host(url: &str) -> Option<String> {
    let rest = url.trim().split_once("://").map_or(url.trim(), |(_, rest)| rest);
    let authority = rest.split(['/', '?', '#']).next()?;
    let authority = authority.rsplit_once('@').map_or(authority, |(_, host)| host);
    let host =
        if let Some(v6) = authority.strip_prefix('[') { v6.split(']').next()? } else { authority.split(':').next()? };
    (!host.is_empty()).then(|| host.to_ascii_lowercase())
}

fn is_anthropic(host: &str) -> bool {
    let host = host.trim_end_matches('.');
    host == "anthropic.com" || host.ends_with(".anthropic.com")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    struct Vars(BTreeMap<&'static str, &'static str>, bool);

    impl Source for Vars {
        fn var(&self, name: &str) -> Option<String> {
            self.0.get(name).map(|v| v.to_string())
        }
        fn api_key_helper(&self) -> bool {
            self.1
        }
    }

    fn route(vars: &[(&'static str, &'static str)], helper: bool) -> Route {
        Route::of(&Vars(vars.iter().copied().collect(), helper))
    }

    #[test]
    fn claude_codes_order_decides_who_pays() {
        use Header::*;
        use Payer::*;
        type Case<'a> = (&'a [(&'a str, &'a str)], bool, Payer, Header);
        let cases: &[Case] = &[
            (&[], false, Subscription, Bearer),
            (&[("CLAUDE_CODE_OAUTH_TOKEN", "t")], false, Subscription, Bearer),
            (&[("ANTHROPIC_API_KEY", "k")], false, ApiKey, XApiKey),
            (&[("ANTHROPIC_API_KEY", "k"), ("CLAUDE_CODE_OAUTH_TOKEN", "t")], false, ApiKey, XApiKey),
            (&[], true, ApiKeyHelper, Both),
            (&[("CLAUDE_CODE_OAUTH_TOKEN", "t")], true, ApiKeyHelper, Both),
            (&[("ANTHROPIC_API_KEY", "k")], true, ApiKey, Both),
            (&[("ANTHROPIC_AUTH_TOKEN", "a")], false, AuthToken, Bearer),
            (&[("ANTHROPIC_AUTH_TOKEN", "a"), ("CLAUDE_CODE_OAUTH_TOKEN", "t")], false, AuthToken, Bearer),
            (&[("ANTHROPIC_AUTH_TOKEN", "a")], true, AuthToken, Both),
            (&[("ANTHROPIC_AUTH_TOKEN", "a"), ("ANTHROPIC_API_KEY", "k")], false, AuthToken, Both),
            (&[("ANTHROPIC_API_KEY", "")], false, Subscription, Bearer),
            (&[("ANTHROPIC_BASE_URL", "https://api.anthropic.com")], false, Subscription, Bearer),
            (
                &[("ANTHROPIC_BASE_URL", "https://llm.corp.example:8443/v1"), ("ANTHROPIC_API_KEY", "k")],
                false,
                Gateway,
                XApiKey,
            ),
            (
                &[("ANTHROPIC_BASE_URL", "http://127.0.0.1:9/"), ("CLAUDE_CODE_OAUTH_TOKEN", "t")],
                false,
                Gateway,
                Bearer,
            ),
            (&[("CLAUDE_CODE_USE_BEDROCK", "1"), ("ANTHROPIC_API_KEY", "k")], false, Cloud, Provider),
            (&[("CLAUDE_CODE_USE_VERTEX", "true")], false, Cloud, Provider),
            (&[("CLAUDE_CODE_USE_BEDROCK", "0")], false, Subscription, Bearer),
        ];
        for (vars, helper, payer, header) in cases {
            let route = route(vars, *helper);
            assert_eq!((route.payer, route.header), (*payer, *header), "{vars:?} helper={helper}");
            assert!(!route.sentence().is_empty());
        }
        assert_eq!(route(&[("ANTHROPIC_BASE_URL", "http://127.0.0.1:9/")], false).key(), "gateway:127.0.0.1");
        assert_eq!(route(&[], false).key(), "subscription");
        assert!(route(&[], false).sentence().starts_with("saves draw on your Claude plan's usage limits"));
        assert_eq!(in_brief(&route(&[], false).key()), "draws on the Claude plan's usage limits");
        assert_eq!(in_brief("cloud:Amazon Bedrock"), "billed by Amazon Bedrock");
        assert_eq!(in_brief("written later"), "billed as \"written later\"");
        assert_eq!(in_brief("subscription:x"), "billed as \"subscription:x\"");
        assert_eq!(in_brief("gateway:"), "billed as \"gateway:\"");
        let windows = |vars: &[(&'static str, &'static str)]| route(vars, false).draws_on_plan_windows();
        assert!(windows(&[]) && windows(&[("ANTHROPIC_BASE_URL", "http://127.0.0.1:9/")]));
        assert!(!windows(&[("ANTHROPIC_API_KEY", "k")]));
        assert!(!windows(&[("ANTHROPIC_BASE_URL", "http://127.0.0.1:9/"), ("ANTHROPIC_API_KEY", "k")]));
        assert!(!windows(&[("CLAUDE_CODE_USE_BEDROCK", "1")]));
        assert_eq!(route(&[("CLAUDE_CODE_USE_FOUNDRY", "1")], false).key(), "cloud:Microsoft Foundry");
    }

    #[test]
    fn hosts_from_urls() {
        let cases = [
            ("https://api.anthropic.com", Some("api.anthropic.com")),
            ("https://user:pw@LLM.Example.com:8443/v1?x", Some("llm.example.com")),
            ("http://[::1]:8080", Some("::1")),
            ("llm.example.com", Some("llm.example.com")),
            ("", None),
        ];
        for (url, want) in cases {
            assert_eq!(host(url).as_deref(), want, "{url}");
        }
        assert!(is_anthropic("api.anthropic.com") && !is_anthropic("anthropic.com.evil.example"));
        assert!(!is_anthropic("notanthropic.com"));
    }
}
