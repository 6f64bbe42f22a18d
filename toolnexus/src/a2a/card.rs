//! The Agent Card: what an A2A agent publishes at `/.well-known/agent-card.json` — its
//! name, its skills and where its JSON-RPC endpoint is.
//!
//! One type serves both directions: [`Agent::resolve`](super::Agent::resolve) reads a peer's
//! card (the SPEC's shape with `url`, or A2A 1.0's with `supportedInterfaces`), and a
//! served toolkit writes its own in the SPEC's field order, plus a `supportedInterfaces`
//! entry so the A2A 1.0 SDKs talk to it in their dialect.
//!
//! ```
//! use toolnexus::a2a::{AgentCard, Dialect};
//!
//! let card: AgentCard = serde_json::from_str(r#"{"name": "py agent",
//!     "supportedInterfaces": [{"url": "http://127.0.0.1:9/rpc", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
//!     "skills": [{"id": "echo", "name": "Echo", "description": "Echoes"}]}"#).unwrap();
//! let (endpoint, dialect) = card.endpoint("http://127.0.0.1:9/.well-known/agent-card.json").unwrap();
//! assert_eq!((endpoint.as_str(), dialect), ("http://127.0.0.1:9/rpc", Dialect::V1));
//! ```

use serde::{Deserialize, Serialize};

use super::wire::Dialect;

/// Where the card lives on an agent's origin.
pub const CARD_PATH: &str = "/.well-known/agent-card.json";
/// The protocol version a served card states (SPEC §7B).
pub const PROTOCOL_VERSION: &str = "0.3.0";
/// The transport name of JSON-RPC in `supportedInterfaces`.
pub const JSONRPC_BINDING: &str = "JSONRPC";

/// An agent's self-description.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentCard {
    /// The agent's name; the prefix of every tool made from it.
    #[serde(default)]
    pub name: String,
    /// What it does.
    #[serde(default)]
    pub description: String,
    /// Its version.
    #[serde(default)]
    pub version: String,
    /// The A2A version of the SPEC-shaped card (`url` + this).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protocol_version: Option<String>,
    /// What the agent can do beyond submit-and-poll.
    #[serde(default)]
    pub capabilities: Capabilities,
    /// Input media types.
    #[serde(default)]
    pub default_input_modes: Vec<String>,
    /// Output media types.
    #[serde(default)]
    pub default_output_modes: Vec<String>,
    /// What it offers; one tool each.
    #[serde(default)]
    pub skills: Vec<AgentSkill>,
    /// The JSON-RPC endpoint of a SPEC-shaped card.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// Who runs the agent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<Provider>,
    /// The endpoints of an A2A 1.0 card, one per transport and version.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub supported_interfaces: Vec<AgentInterface>,
}

/// Optional protocol features; a served toolkit offers neither.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Capabilities {
    /// Server-sent task updates.
    #[serde(default)]
    pub streaming: bool,
    /// Webhook task updates.
    #[serde(default)]
    pub push_notifications: bool,
}

/// One skill an agent offers.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct AgentSkill {
    /// Its id (the tool name suffix; `name` when empty).
    #[serde(default)]
    pub id: String,
    /// Its display name.
    #[serde(default)]
    pub name: String,
    /// What it does; the tool description.
    #[serde(default)]
    pub description: String,
    /// Keywords.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
    /// Example requests.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub examples: Vec<String>,
}

/// Who runs an agent.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Provider {
    /// The organization.
    #[serde(default)]
    pub organization: String,
    /// Its web site.
    #[serde(default)]
    pub url: String,
}

/// One endpoint of an A2A 1.0 card.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentInterface {
    /// Where to send requests.
    #[serde(default)]
    pub url: String,
    /// `JSONRPC`, `HTTP+JSON` or `GRPC`.
    #[serde(default)]
    pub protocol_binding: String,
    /// The A2A version spoken there.
    #[serde(default)]
    pub protocol_version: String,
}

impl AgentCard {
    /// The JSON-RPC endpoint and the dialect to speak there. A 1.0 card's JSON-RPC
    /// interface wins (the highest version); else the card's `url`; else the origin of
    /// `card_url` (SPEC §7A). A card that lists interfaces but no JSON-RPC one is an error.
    pub fn endpoint(&self, card_url: &str) -> Result<(String, Dialect), String> {
        if !self.supported_interfaces.is_empty() {
            let best = self
                .supported_interfaces
                .iter()
                .filter(|i| i.protocol_binding.eq_ignore_ascii_case(JSONRPC_BINDING) && !i.url.is_empty())
                .max_by_key(|i| major_version(&i.protocol_version));
            return match best {
                Some(i) if major_version(&i.protocol_version) >= 1 => Ok((i.url.clone(), Dialect::V1)),
                Some(i) => Ok((i.url.clone(), Dialect::Spec)),
                None => Err("the agent card offers no JSON-RPC interface".into()),
            };
        }
        if let Some(url) = self.url.as_deref().filter(|u| !u.is_empty()) {
            return Ok((url.to_owned(), Dialect::Spec));
        }
        let parsed = url::Url::parse(card_url).map_err(|e| format!("bad card URL {card_url}: {e}"))?;
        Ok((parsed.origin().ascii_serialization(), Dialect::Spec))
    }
}

/// The major version of `"1.0"`, `"0.3.0"`; 0 when unparsable or empty.
fn major_version(v: &str) -> u32 {
    v.split('.')
        .next()
        .and_then(|m| m.trim().parse().ok())
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn card(v: serde_json::Value) -> AgentCard {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn endpoint_choice() {
        let at = "http://h:1/.well-known/agent-card.json";
        assert_eq!(
            card(json!({"name": "a", "url": "http://h:1/rpc"})).endpoint(at),
            Ok(("http://h:1/rpc".into(), Dialect::Spec))
        );
        // No url: the card's origin (SPEC §7A).
        assert_eq!(
            card(json!({"name": "a"})).endpoint(at),
            Ok(("http://h:1".into(), Dialect::Spec))
        );
        // Interfaces win over `url`; the newest JSON-RPC one is picked.
        let both = card(
            json!({"name": "a", "url": "http://h:1/old", "supportedInterfaces": [
                {"url": "http://h:1/grpc", "protocolBinding": "GRPC", "protocolVersion": "1.0"},
                {"url": "http://h:1/v03", "protocolBinding": "JSONRPC", "protocolVersion": "0.3"},
                {"url": "http://h:1/v1", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
            ]}),
        );
        assert_eq!(both.endpoint(at), Ok(("http://h:1/v1".into(), Dialect::V1)));
        let legacy = card(json!({"name": "a", "supportedInterfaces": [
            {"url": "http://h:1/v03", "protocolBinding": "JSONRPC", "protocolVersion": "0.3"}]}));
        assert_eq!(legacy.endpoint(at), Ok(("http://h:1/v03".into(), Dialect::Spec)));
        let grpc_only = card(json!({"name": "a", "supportedInterfaces": [
            {"url": "http://h:1/g", "protocolBinding": "GRPC", "protocolVersion": "1.0"}]}));
        assert_eq!(
            grpc_only.endpoint(at),
            Err("the agent card offers no JSON-RPC interface".into())
        );
        assert!(
            card(json!({}))
                .endpoint("not a url")
                .unwrap_err()
                .starts_with("bad card URL not a url")
        );
    }
}
