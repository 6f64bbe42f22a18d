//! [`Client::list_models`] (issue 22): the provider's models, for switching between them.
//! OpenAI style `GET {base}/models`; Anthropic style `GET {base}/v1/models`, followed page by
//! page (`has_more`, `after_id`); Gemini `GET {base}/models` (`nextPageToken`). Same key, headers, retries and read timeout as a run.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::wire::{self, Style};
use super::{Client, ClientError, DecodeError};

/// Pages of an Anthropic model list followed at most (of up to 1000 models each).
const MAX_PAGES: usize = 100;

/// One model a provider offers.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModelInfo {
    /// The id to pass to [`ClientBuilder::model`](super::ClientBuilder::model).
    pub id: String,
    /// A display name, when the provider gives one (Anthropic `display_name`, OpenRouter `name`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The context window in tokens, when the provider reports it (OpenRouter).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_length: Option<u64>,
}

impl ModelInfo {
    fn from_entry(m: &Value, name_key: &str) -> Option<Self> {
        Some(ModelInfo {
            id: m["id"].as_str()?.to_owned(),
            name: m[name_key].as_str().map(str::to_owned),
            context_length: m["context_length"].as_u64(),
        })
    }
}

impl Client {
    /// The provider's models, sorted by id.
    ///
    /// ```no_run
    /// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
    /// use toolnexus::client::{Client, Style};
    ///
    /// let client = Client::builder()
    ///     .base_url("https://openrouter.ai/api/v1")
    ///     .style(Style::OpenAi)
    ///     .model("deepseek/deepseek-chat")
    ///     .build()?;
    /// for m in client.list_models().await? {
    ///     println!("{} {}", m.id, m.name.unwrap_or_default());
    /// }
    /// # Ok(()) }
    /// ```
    pub async fn list_models(&self) -> Result<Vec<ModelInfo>, ClientError> {
        let provider = &self.inner.provider;
        let mut out = Vec::new();
        match provider.style {
            Style::OpenAi => {
                let body = provider
                    .get_json(models_url(&provider.base, "/models", &[]))
                    .await?;
                out.extend(
                    entries(&body)?
                        .iter()
                        .filter_map(|m| ModelInfo::from_entry(m, "name")),
                );
            }
            Style::Anthropic => {
                let path = if provider.base.path().trim_end_matches('/').ends_with("/v1") {
                    "/models"
                } else {
                    "/v1/models"
                };
                let mut after: Option<String> = None;
                for _ in 0..MAX_PAGES {
                    let mut query = vec![("limit", "1000")];
                    if let Some(after) = &after {
                        query.push(("after_id", after));
                    }
                    let body = provider
                        .get_json(models_url(&provider.base, path, &query))
                        .await?;
                    out.extend(
                        entries(&body)?
                            .iter()
                            .filter_map(|m| ModelInfo::from_entry(m, "display_name")),
                    );
                    match body["last_id"].as_str() {
                        Some(last) if body["has_more"] == true => after = Some(last.to_owned()),
                        _ => break,
                    }
                }
            }
            Style::Gemini => {
                let mut token: Option<String> = None;
                for _ in 0..MAX_PAGES {
                    let mut query = vec![("pageSize", "1000")];
                    if let Some(token) = &token {
                        query.push(("pageToken", token));
                    }
                    let body = provider
                        .get_json(models_url(&provider.base, "/models", &query))
                        .await?;
                    let models = body["models"].as_array().ok_or_else(|| {
                        DecodeError::shape(format!(
                            "model list has no \"models\" array: {}",
                            wire::short(&body)
                        ))
                    })?;
                    out.extend(models.iter().filter_map(gemini_model));
                    match body["nextPageToken"].as_str().filter(|t| !t.is_empty()) {
                        Some(next) => token = Some(next.to_owned()),
                        None => break,
                    }
                }
            }
        }
        out.sort_by(|a, b| a.id.cmp(&b.id));
        Ok(out)
    }
}

/// A Gemini `models[]` entry: `name` without its `models/` prefix, `displayName`,
/// `inputTokenLimit`.
fn gemini_model(m: &Value) -> Option<ModelInfo> {
    let name = m["name"].as_str()?;
    Some(ModelInfo {
        id: name.strip_prefix("models/").unwrap_or(name).to_owned(),
        name: m["displayName"].as_str().map(str::to_owned),
        context_length: m["inputTokenLimit"].as_u64(),
    })
}

/// `base` + `path`, its query (a `?key=`) kept and `query` appended.
fn models_url(base: &url::Url, path: &str, query: &[(&str, &str)]) -> String {
    let mut url = base.clone();
    url.set_path(&format!("{}{path}", base.path().trim_end_matches('/')));
    if !query.is_empty() {
        url.query_pairs_mut().extend_pairs(query);
    }
    url.into()
}

fn entries(body: &Value) -> Result<&Vec<Value>, ClientError> {
    body["data"].as_array().ok_or_else(|| {
        DecodeError::shape(format!("model list has no \"data\" array: {}", wire::short(body))).into()
    })
}
