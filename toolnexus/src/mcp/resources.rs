//! A server's MCP resources as two tools the model can call (opt-in with
//! [`LoadOptions::resources`](super::LoadOptions::resources)): `<server>_list_resources`
//! (`resources/list`, one page at a time) and `<server>_read_resource` (`resources/read`).

use std::sync::Arc;

use rmcp::model::{
    ClientRequest, ListResourcesRequest, PaginatedRequestParams, ReadResourceRequest,
    ReadResourceRequestParams,
};
use serde_json::{Value, json};

use super::session::Session;
use crate::content::{ContentPart, Media, MediaSource};
use crate::result::ToolResult;
use crate::tool::{Tool, ToolAnnotations, ToolSource, sanitize};

/// The two resource tools of `session`'s server, named like its other tools.
pub(super) fn resource_tools(session: &Arc<Session>) -> [Tool; 2] {
    let prefix = sanitize(session.name());
    let read_only = ToolAnnotations {
        read_only_hint: Some(true),
        ..ToolAnnotations::default()
    };
    let lister = Arc::clone(session);
    let list = Tool::new(format!("{prefix}_list_resources"), move |args: Value, _ctx| {
        let session = Arc::clone(&lister);
        async move { list(&session, &args).await }
    })
    .with_description(format!(
        "List the resources MCP server \"{}\" offers: each one's uri, name, mimeType and \
         description. When the answer has a nextCursor, pass it as `cursor` for the next page.",
        session.name()
    ))
    .with_schema(json!({"type": "object", "properties": {
        "cursor": {"type": "string", "description": "nextCursor of the previous page"}
    }}));
    let reader = Arc::clone(session);
    let read = Tool::new(format!("{prefix}_read_resource"), move |args: Value, _ctx| {
        let session = Arc::clone(&reader);
        async move { read(&session, &args).await }
    })
    .with_description(format!(
        "Read one resource of MCP server \"{}\" by its uri (from {prefix}_list_resources).",
        session.name()
    ))
    .with_schema(json!({"type": "object", "properties": {
        "uri": {"type": "string", "description": "The resource's uri"}
    }, "required": ["uri"]}));
    [list, read].map(|t| t.with_source(ToolSource::Mcp).with_annotations(read_only.clone()))
}

async fn list(session: &Session, args: &Value) -> ToolResult {
    let cursor = match &args["cursor"] {
        Value::Null => None,
        Value::String(c) => Some(c.clone()),
        other => return session.failure(format!("cursor must be a string, got {other}")),
    };
    let params = PaginatedRequestParams::default().with_cursor(cursor);
    let request = ClientRequest::ListResourcesRequest(ListResourcesRequest::with_param(params));
    match session.request(request, "resources/list").await {
        Ok(mut wire) => {
            if let Value::Object(page) = &mut wire {
                page.remove("_meta");
            }
            ToolResult::success(wire.to_string()).with_meta("server", json!(session.name()))
        }
        Err(reason) => session.failure(reason),
    }
}

async fn read(session: &Session, args: &Value) -> ToolResult {
    let Some(uri) = args["uri"].as_str() else {
        return session.failure("uri is required (a string)");
    };
    let request =
        ClientRequest::ReadResourceRequest(ReadResourceRequest::new(ReadResourceRequestParams::new(uri)));
    match session.request(request, "resources/read").await {
        Ok(wire) => contents_result(session.name(), &wire),
        Err(reason) => session.failure(reason),
    }
}

/// A `resources/read` result: the text contents joined by newlines, each blob a file part
/// (named by its uri); only blobs ⇒ their summaries, so the output is never empty.
fn contents_result(server: &str, wire: &Value) -> ToolResult {
    let contents = wire["contents"].as_array().map(Vec::as_slice).unwrap_or_default();
    let text: Vec<&str> = contents.iter().filter_map(|c| c["text"].as_str()).collect();
    let parts: Vec<ContentPart> = contents
        .iter()
        .filter_map(|c| {
            Some(ContentPart::File(Media {
                mime_type: c["mimeType"]
                    .as_str()
                    .unwrap_or("application/octet-stream")
                    .to_owned(),
                source: MediaSource::Data(c["blob"].as_str()?.to_owned()),
                name: c["uri"].as_str().map(str::to_owned),
            }))
        })
        .collect();
    let output = if text.is_empty() {
        parts
            .iter()
            .map(ContentPart::summary)
            .collect::<Vec<_>>()
            .join("\n")
    } else {
        text.join("\n")
    };
    ToolResult::success(output)
        .with_meta("server", json!(server))
        .with_parts(parts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn read_results_join_text_and_carry_blobs_as_parts() {
        let r = contents_result(
            "s",
            &json!({"contents": [
                {"uri": "a://1", "mimeType": "text/plain", "text": "one"},
                {"uri": "a://2", "text": "two"},
                {"uri": "a://3", "mimeType": "image/png", "blob": "iVBORw0KGgo="}]}),
        );
        assert_eq!(r.output, "one\ntwo");
        assert_eq!(r.parts.len(), 1);
        assert_eq!(r.parts[0].summary(), "file (image/png, 8 bytes)");
        let r = contents_result("s", &json!({"contents": [{"uri": "a://3", "blob": "AAAA"}]}));
        assert_eq!(r.output, "file (application/octet-stream, 3 bytes)");
        assert!(!r.is_error);
    }
}
