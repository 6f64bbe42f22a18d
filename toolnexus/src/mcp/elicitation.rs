//! A served tool's suspension asked of the calling MCP client (MCP `elicitation/create`).
//!
//! When a tool served at `/mcp` suspends (the `question` built-in, or any tool returning a
//! [`Request`]) and the client declared the `elicitation` capability, the gateway asks the
//! client with a form, then runs the tool again with the [`Answer`] (SPEC §10, as the client
//! loop does with `wait_for`). The form is made from the request:
//!
//! - `question`: one string field per question (`answer_1`, `answer_2`, …, titled with the
//!   question; an `enum` of its options when it has some and takes one), and the answer's
//!   data is `{"answers": [..]}`, what a host gives the `question` tool;
//! - a request with `data.schema` (an object schema, e.g. `kind: "input"`): that schema, and
//!   the answer's data is the submitted content;
//! - anything else (an approval, an authorization at a URL): an empty form to accept or
//!   decline, the URL in the message.
//!
//! Decline and cancel end the call with an `isError` result that says so. A client without
//! the capability gets the suspension's own error result, as before.
//!
//! An upstream MCP server's own `elicitation/create`, made during a call such a client makes
//! through the gateway, is passed to that client as is ([`relay`], via
//! [`ToolContext::on_elicit`](crate::ToolContext::on_elicit)) and its reply goes back
//! upstream. The upstream session advertises elicitation only when the toolkit was loaded
//! with a `wait_for`, which also answers for clients without the capability.

use std::time::Duration;

use rmcp::RoleServer;
use rmcp::model::{ElicitRequestParams, ElicitResult, ElicitationAction};
use rmcp::service::Peer;
use serde_json::{Map, Value, json};

use crate::context::OnElicit;
use crate::result::ToolResult;
use crate::suspend::{Answer, Request};

/// How many times one call may suspend and be resumed before its suspension is returned
/// as is (a tool that asks forever must still end).
pub(super) const MAX_ROUNDS: usize = 8;

/// How long a client may take to answer one elicitation (a person fills the form).
const ASK_BOUND: Duration = Duration::from_secs(600);

/// Whether the client of `peer` declared the `elicitation` capability at `initialize`.
pub(super) fn supported(peer: &Peer<RoleServer>) -> bool {
    peer.peer_info()
        .is_some_and(|info| info.capabilities.elicitation.is_some())
}

/// An upstream MCP server's own `elicitation/create`, made during a call the client of
/// `peer` is making through the gateway, passed to that client as is; its reply goes back
/// upstream. `None` (the toolkit's own handling then applies) when the client cannot be
/// asked or does not answer in time.
pub(super) fn relay(peer: Peer<RoleServer>) -> OnElicit {
    OnElicit::new(move |params| {
        let peer = peer.clone();
        Box::pin(async move {
            let params = serde_json::from_value::<ElicitRequestParams>(params).ok()?;
            let reply = tokio::time::timeout(ASK_BOUND, peer.create_elicitation(params))
                .await
                .ok()?
                .ok()?;
            serde_json::to_value(reply).ok()
        })
    })
}

/// What came of asking the client.
pub(super) enum Outcome {
    /// Accepted: run the tool again with this answer.
    Answer(Answer),
    /// Declined, cancelled, or the request could not be made: the call's result.
    Result(ToolResult),
}

/// Ask the client of `peer` for `request` and turn its reply into an [`Outcome`].
pub(super) async fn ask(peer: &Peer<RoleServer>, request: &Request) -> Outcome {
    let Ok(params) = serde_json::from_value::<ElicitRequestParams>(form(request)) else {
        return Outcome::Result(ToolResult::failure(format!(
            "could not ask the client (its form could not be built): {}",
            request.prompt
        )));
    };
    match tokio::time::timeout(ASK_BOUND, peer.create_elicitation(params)).await {
        Ok(Ok(reply)) => outcome(request, reply),
        Ok(Err(e)) => Outcome::Result(ToolResult::failure(format!(
            "could not ask the client ({e}): {}",
            request.prompt
        ))),
        Err(_) => Outcome::Result(ToolResult::failure(format!(
            "the client did not answer within {}s: {}",
            ASK_BOUND.as_secs(),
            request.prompt
        ))),
    }
}

/// The `elicitation/create` params (wire JSON) for `request`.
fn form(request: &Request) -> Value {
    let mut message = request.prompt.clone();
    if let Some(url) = &request.url {
        message = format!("{message}\n{url}");
    }
    let data = request.data.as_ref();
    let schema = if let Some(questions) = questions(request) {
        let mut properties = Map::new();
        for (i, q) in questions.iter().enumerate() {
            let mut field = json!({"type": "string", "title": q["question"]});
            if let Some(options) = q["options"].as_array().filter(|o| !o.is_empty())
                && q["multiple"] != true
            {
                field["enum"] = Value::Array(options.clone());
            }
            properties.insert(format!("answer_{}", i + 1), field);
        }
        let required: Vec<String> = properties.keys().cloned().collect();
        json!({"type": "object", "properties": properties, "required": required})
    } else if let Some(schema) = data
        .and_then(|d| d.get("schema"))
        .filter(|s| s["type"] == "object")
    {
        schema.clone()
    } else {
        json!({"type": "object", "properties": {}})
    };
    json!({"mode": "form", "message": message, "requestedSchema": schema})
}

/// A `question` request's questions.
fn questions(request: &Request) -> Option<&Vec<Value>> {
    (request.kind == "question")
        .then(|| request.data.as_ref()?.get("questions")?.as_array())
        .flatten()
}

fn outcome(request: &Request, reply: ElicitResult) -> Outcome {
    let said = match reply.action {
        ElicitationAction::Accept => {
            let content = reply.content.unwrap_or_else(|| json!({}));
            let data = match questions(request) {
                Some(questions) => {
                    let answers: Vec<Value> = (1..=questions.len())
                        .map(|i| content[format!("answer_{i}")].clone())
                        .collect();
                    json!({"answers": answers})
                }
                None => content,
            };
            return Outcome::Answer(Answer {
                id: request.id.clone(),
                ok: true,
                data: Some(data),
                reason: None,
            });
        }
        ElicitationAction::Decline => "declined",
        // Cancel, and any action a later protocol adds: not an answer.
        _ => "cancelled",
    };
    Outcome::Result(ToolResult::failure(format!(
        "the client {said} the request: {}",
        request.prompt
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_question_becomes_one_field_per_question() {
        let request = Request::new("question", "Which city?\nHow many?").with_data(Map::from_iter([(
            "questions".to_owned(),
            json!([{"question": "Which city?", "options": ["Chennai", "Oslo"]}, {"question": "How many?"}]),
        )]));
        assert_eq!(
            form(&request),
            json!({"mode": "form", "message": "Which city?\nHow many?", "requestedSchema": {
                "type": "object",
                "properties": {
                    "answer_1": {"type": "string", "title": "Which city?", "enum": ["Chennai", "Oslo"]},
                    "answer_2": {"type": "string", "title": "How many?"}
                },
                "required": ["answer_1", "answer_2"]
            }})
        );
        let reply = ElicitResult::new(ElicitationAction::Accept)
            .with_content(json!({"answer_1": "Oslo", "answer_2": "3"}));
        let Outcome::Answer(answer) = outcome(&request, reply) else {
            panic!("accepted")
        };
        assert_eq!(answer.data, Some(json!({"answers": ["Oslo", "3"]})));
        assert_eq!((answer.id, answer.ok), (request.id.clone(), true));
    }

    #[test]
    fn a_decline_is_an_error_result_that_says_so() {
        let request = Request::new("approval", "Delete the table?").with_url("https://x.example/ok");
        assert_eq!(
            form(&request)["message"],
            "Delete the table?\nhttps://x.example/ok"
        );
        let Outcome::Result(r) = outcome(&request, ElicitResult::new(ElicitationAction::Decline)) else {
            panic!("declined")
        };
        assert_eq!(
            r.to_json(),
            r#"{"output":"the client declined the request: Delete the table?","isError":true}"#
        );
    }
}
