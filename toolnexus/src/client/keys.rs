//! Which API key goes where, and keeping keys out of everything echoed.
//!
//! A provider's environment key (`OPENROUTER_API_KEY`, `OPENAI_API_KEY`,
//! `ANTHROPIC_API_KEY`) is sent only to that provider's own host, over https: a key left in
//! the environment never reaches a local proxy, a gateway or a typo'd host. Any other host
//! takes an explicit key — [`api_key`](super::ClientBuilder::api_key) or
//! [`api_key_env`](super::ClientBuilder::api_key_env).
//!
//! Every provider error, transport error and `Debug` line the client produces passes through
//! a [`Redactor`]: any run of 8 or more characters of a secret (the key, a query value of the
//! base URL) is replaced, so a gateway that reflects part of a key leaks none of it.

use url::Url;

use super::ConfigError;

/// The provider hosts and the environment variable each one's key is read from.
const PROVIDER_ENV: [(&str, &str); 4] = [
    ("openrouter.ai", "OPENROUTER_API_KEY"),
    ("api.openai.com", "OPENAI_API_KEY"),
    ("api.anthropic.com", "ANTHROPIC_API_KEY"),
    ("generativelanguage.googleapis.com", "GEMINI_API_KEY"),
];

/// What replaces a redacted secret.
pub(crate) const REDACTED: &str = "«redacted»";

/// The shortest run of a secret that is redacted wherever it appears.
const RUN: usize = 8;

/// The environment variable whose key belongs to `base`'s host: only for https, only for a
/// provider's own host (or a subdomain of `openrouter.ai`).
pub(crate) fn provider_env(base: &Url) -> Option<&'static str> {
    if base.scheme() != "https" {
        return None;
    }
    let host = base.host_str()?;
    PROVIDER_ENV
        .iter()
        .find(|(h, _)| host == *h || (*h == "openrouter.ai" && host.ends_with(".openrouter.ai")))
        .map(|(_, env)| *env)
}

/// The key for `base`: `explicit` when given, else the variable `key_env` names, else the
/// provider variable of `base`'s host. `lookup` reads the environment (a seam for tests).
pub(crate) fn resolve(
    explicit: Option<String>,
    key_env: Option<&str>,
    base: &Url,
    lookup: impl Fn(&str) -> Option<String>,
) -> Result<String, ConfigError> {
    if let Some(key) = explicit.filter(|k| !k.is_empty()) {
        return Ok(key);
    }
    let var = key_env.filter(|n| !n.is_empty()).or_else(|| provider_env(base));
    let found = var.and_then(|v| lookup(v).filter(|k| !k.is_empty()));
    found.ok_or_else(|| ConfigError::MissingApiKey {
        host: base.host_str().unwrap_or_default().to_owned(),
        looked_for: var.map(str::to_owned),
    })
}

/// Replaces every run of 8+ characters of any of its secrets with `«redacted»` (a secret
/// shorter than 8 characters, but at least 4, only as a whole).
#[derive(Clone, Debug, Default)]
pub(crate) struct Redactor {
    secrets: Vec<String>,
}

impl Redactor {
    /// Secrets: the API key and every query value of the base URL (`?key=…`).
    pub(crate) fn new(api_key: &str, base: &Url) -> Self {
        let mut secrets = vec![api_key.to_owned()];
        secrets.extend(base.query_pairs().map(|(_, v)| v.into_owned()));
        secrets.retain(|s| s.len() >= 4);
        Self { secrets }
    }

    /// `text` with every secret run replaced.
    pub(crate) fn redact(&self, text: &str) -> String {
        let bytes = text.as_bytes();
        let mut hidden = vec![false; bytes.len()];
        for secret in &self.secrets {
            let s = secret.as_bytes();
            let width = s.len().min(RUN);
            // Every window of the secret that appears in the text hides its bytes; a run of
            // 8+ characters of the secret is a chain of such windows.
            let windows: std::collections::HashSet<&[u8]> = s.windows(width).collect();
            for (i, w) in bytes.windows(width).enumerate() {
                if windows.contains(w) {
                    hidden[i..i + width].iter_mut().for_each(|h| *h = true);
                }
            }
        }
        if !hidden.contains(&true) {
            return text.to_owned();
        }
        let mut out = String::with_capacity(text.len());
        let mut in_run = false;
        for (i, c) in text.char_indices() {
            let hide = hidden[i..i + c.len_utf8()].contains(&true);
            if hide && !in_run {
                out.push_str(REDACTED);
            } else if !hide {
                out.push(c);
            }
            in_run = hide;
        }
        out
    }
}

/// `url` with every query value replaced: how an endpoint may be shown.
pub(crate) fn redact_query(url: &mut Url) {
    if url.query().is_none() {
        return;
    }
    let names: Vec<String> = url.query_pairs().map(|(k, _)| k.into_owned()).collect();
    url.query_pairs_mut()
        .clear()
        .extend_pairs(names.iter().map(|k| (k.as_str(), "redacted")));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(s: &str) -> Url {
        Url::parse(s).unwrap()
    }

    #[test]
    fn provider_keys_go_only_to_their_own_https_host() {
        assert_eq!(
            provider_env(&url("https://openrouter.ai/api/v1")),
            Some("OPENROUTER_API_KEY")
        );
        assert_eq!(
            provider_env(&url("https://eu.openrouter.ai/api/v1")),
            Some("OPENROUTER_API_KEY")
        );
        assert_eq!(
            provider_env(&url("https://api.openai.com/v1")),
            Some("OPENAI_API_KEY")
        );
        assert_eq!(
            provider_env(&url("https://api.anthropic.com")),
            Some("ANTHROPIC_API_KEY")
        );
        for other in [
            "http://api.openai.com/v1",
            "https://api.openai.com.evil.example/v1",
            "https://openrouter.ai.example/v1",
            "https://notopenrouter.ai/v1",
            "http://127.0.0.1:8080/v1",
            "https://gateway.internal/v1",
        ] {
            assert_eq!(provider_env(&url(other)), None, "{other}");
        }
    }

    #[test]
    fn resolution_order_and_the_missing_key_error() {
        let env = |k: &str| match k {
            "OPENAI_API_KEY" => Some("sk-openai".to_owned()),
            "MY_GATEWAY_KEY" => Some("sk-gateway".to_owned()),
            "EMPTY" => Some(String::new()),
            _ => None,
        };
        let local = url("http://127.0.0.1:9/v1");
        let openai = url("https://api.openai.com/v1");
        assert_eq!(resolve(Some("sk-x".into()), None, &local, env).unwrap(), "sk-x");
        assert_eq!(resolve(None, None, &openai, env).unwrap(), "sk-openai");
        assert_eq!(
            resolve(None, Some("MY_GATEWAY_KEY"), &local, env).unwrap(),
            "sk-gateway"
        );
        let err = resolve(None, None, &local, env).unwrap_err();
        assert_eq!(
            err.to_string(),
            "toolnexus: no API key for 127.0.0.1: set api_key or api_key_env(NAME) — OPENROUTER_API_KEY, \
             OPENAI_API_KEY, ANTHROPIC_API_KEY and GEMINI_API_KEY are only sent to their own hosts \
             (openrouter.ai, api.openai.com, api.anthropic.com, generativelanguage.googleapis.com, over https)"
        );
        let err = resolve(Some(String::new()), Some("EMPTY"), &local, env).unwrap_err();
        assert_eq!(
            err.to_string(),
            "toolnexus: no API key for 127.0.0.1: EMPTY is not set — set it, or set api_key or api_key_env(NAME)"
        );
        let err = resolve(None, None, &url("https://api.anthropic.com"), env).unwrap_err();
        assert_eq!(
            err.to_string(),
            "toolnexus: no API key for api.anthropic.com: ANTHROPIC_API_KEY is not set — set it, or set api_key or api_key_env(NAME)"
        );
    }

    #[test]
    fn any_eight_character_run_of_a_secret_is_redacted() {
        let r = Redactor::new(
            "sk-or-v1-0123456789abcdef",
            &url("http://h/v1?key=AIzaSECRETVALUE&x=ab"),
        );
        assert_eq!(
            r.redact("bad key sk-or-v1-0123456789abcdef!"),
            "bad key «redacted»!"
        );
        assert_eq!(
            r.redact("key …0123456789ab… was revoked"),
            "key …«redacted»… was revoked"
        );
        assert_eq!(r.redact("only 1234567 here"), "only 1234567 here");
        assert_eq!(r.redact("q=AIzaSECRETVALUE"), "q=«redacted»");
        assert_eq!(r.redact("tail ECRETVAL."), "tail «redacted».");
        assert_eq!(r.redact("x=ab stays"), "x=ab stays");
        let short = Redactor::new("abcde", &url("http://h"));
        assert_eq!(short.redact("k=abcde; abcd"), "k=«redacted»; abcd");
    }

    #[test]
    fn query_values_are_hidden_in_a_shown_url() {
        let mut u = url("http://h/v1/chat/completions?key=SECRET123&alt=sse");
        redact_query(&mut u);
        assert_eq!(
            u.as_str(),
            "http://h/v1/chat/completions?key=redacted&alt=redacted"
        );
    }
}
