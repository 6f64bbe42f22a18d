//! HTTP tools (SPEC §7) against a real axum server on 127.0.0.1 that records every request.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::Bytes;
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::IntoResponse;
use serde_json::{Value, json};
use toolnexus::http::{
    BodyMode, HttpToolSpec, OpenApiError, OpenApiOptions, OpenApiSource, ResultMode, http_tool,
    http_tools_from_openapi,
};
use toolnexus::{ToolContext, ToolSource};

#[derive(Debug, Clone, PartialEq)]
struct Seen {
    method: String,
    path: String,
    query: Option<String>,
    headers: BTreeMap<String, String>,
    body: String,
}

struct Server {
    base: String,
    seen: Arc<Mutex<Vec<Seen>>>,
}

impl Server {
    fn last(&self) -> Seen {
        self.seen.lock().unwrap().last().cloned().expect("a request")
    }
}

const OPENAPI: &str = r##"{"openapi":"3.0.0","paths":{"/ok":{"get":{"operationId":"ok"}}}}"##;

async fn serve() -> Server {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    let app = Router::new().fallback(move |method: Method, uri: Uri, headers: HeaderMap, body: Bytes| {
        let log = log.clone();
        async move {
            let path = uri.path().to_owned();
            let headers = headers
                .iter()
                .filter(|(k, _)| {
                    !["host", "accept", "accept-encoding", "content-length"].contains(&k.as_str())
                })
                .map(|(k, v)| (k.to_string(), v.to_str().unwrap_or("").to_owned()))
                .collect();
            log.lock().unwrap().push(Seen {
                method: method.to_string(),
                path: path.clone(),
                query: uri.query().map(str::to_owned),
                headers,
                body: String::from_utf8_lossy(&body).into_owned(),
            });
            if let Some(code) = path.strip_prefix("/status/") {
                let code = StatusCode::from_u16(code.parse().unwrap()).unwrap();
                return (code, "nope".to_owned()).into_response();
            }
            match path.as_str() {
                "/json" => (StatusCode::OK, "{\"a\": [1, 2], \"b\": \"é\"}".to_owned()).into_response(),
                "/slow" => {
                    tokio::time::sleep(Duration::from_secs(5)).await;
                    "late".into_response()
                }
                "/openapi.json" => OPENAPI.into_response(),
                _ => (StatusCode::CREATED, "ok".to_owned()).into_response(),
            }
        }
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    Server { base, seen }
}

fn headers(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

#[tokio::test]
async fn get_fills_placeholders_sends_args_as_query_and_expands_env_headers() {
    let srv = serve().await;
    let tool = http_tool(HttpToolSpec {
        description: "Fetch a user".into(),
        headers: headers(&[
            ("X-Pkg", "pkg=${CARGO_PKG_NAME}"),
            ("X-Missing", "[${TOOLNEXUS_SURELY_UNSET}]"),
        ]),
        ..HttpToolSpec::new("get_user", "get", format!("{}/users/{{id}}/x", srv.base))
    });
    assert_eq!(tool.source(), ToolSource::Http);
    assert_eq!(tool.description(), "Fetch a user");
    assert_eq!(
        tool.input_schema(),
        &json!({"type": "object", "properties": {}, "additionalProperties": false})
    );
    let r = tool
        .execute(json!({"id": "a b/c", "q": "x y", "n": 2}), ToolContext::default())
        .await;
    assert_eq!(
        r.to_json(),
        r#"{"output":"ok","isError":false,"metadata":{"status":201}}"#
    );
    let pkg = std::env::var("CARGO_PKG_NAME").unwrap();
    assert_eq!(
        srv.last(),
        Seen {
            method: "GET".into(),
            path: "/users/a%20b%2Fc/x".into(),
            query: Some("q=x+y&n=2".into()),
            headers: headers(&[("x-missing", "[]"), ("x-pkg", &format!("pkg={pkg}"))]),
            body: String::new(),
        }
    );
}

#[tokio::test]
async fn post_json_form_and_raw_bodies() {
    let srv = serve().await;
    let json_tool = http_tool(HttpToolSpec {
        query: vec!["page".into()],
        ..HttpToolSpec::new("create", "POST", format!("{}/items?v=1", srv.base))
    });
    let r = json_tool
        .execute(
            json!({"page": 3, "name": "n", "tags": [1, "two"]}),
            ToolContext::default(),
        )
        .await;
    assert!(!r.is_error, "{}", r.output);
    let seen = srv.last();
    assert_eq!(
        (seen.method.as_str(), seen.path.as_str(), seen.query.as_deref()),
        ("POST", "/items", Some("v=1&page=3"))
    );
    assert_eq!(seen.body, r#"{"name":"n","tags":[1,"two"]}"#);
    assert_eq!(seen.headers, headers(&[("content-type", "application/json")]));

    let form = http_tool(HttpToolSpec {
        body: BodyMode::Form,
        ..HttpToolSpec::new("f", "put", format!("{}/f", srv.base))
    });
    form.execute(json!({"a": "1 & 2", "b": true}), ToolContext::default())
        .await;
    let seen = srv.last();
    assert_eq!(
        (seen.method.as_str(), seen.body.as_str()),
        ("PUT", "a=1+%26+2&b=true")
    );
    assert_eq!(
        seen.headers,
        headers(&[("content-type", "application/x-www-form-urlencoded")])
    );

    let raw = http_tool(HttpToolSpec {
        body: BodyMode::Raw,
        headers: headers(&[("Content-Type", "text/plain")]),
        ..HttpToolSpec::new("r", "PATCH", format!("{}/r", srv.base))
    });
    raw.execute(
        json!({"body": "line1\nline2", "ignored": 1}),
        ToolContext::default(),
    )
    .await;
    let seen = srv.last();
    assert_eq!(
        (seen.method.as_str(), seen.body.as_str()),
        ("PATCH", "line1\nline2")
    );
    assert_eq!(seen.headers, headers(&[("content-type", "text/plain")]));

    // No arguments left ⇒ no body and no content type.
    json_tool
        .execute(json!({"page": 1}), ToolContext::default())
        .await;
    assert_eq!(srv.last().headers, BTreeMap::new());
    assert_eq!(srv.last().body, "");
}

#[tokio::test]
async fn non_2xx_is_an_error_with_status() {
    let srv = serve().await;
    let tool = http_tool(HttpToolSpec::new(
        "t",
        "DELETE",
        format!("{}/status/{{code}}", srv.base),
    ));
    let r = tool.execute(json!({"code": 404}), ToolContext::default()).await;
    assert_eq!(
        r.to_json(),
        r#"{"output":"HTTP 404: nope","isError":true,"metadata":{"status":404}}"#
    );
    let r = tool.execute(json!({"code": "503"}), ToolContext::default()).await;
    assert_eq!(r.output, "HTTP 503: nope");
    assert_eq!(srv.last().method, "DELETE");
}

#[tokio::test]
async fn result_modes() {
    let srv = serve().await;
    let mk = |mode, path: &str| {
        http_tool(HttpToolSpec {
            result_mode: mode,
            ..HttpToolSpec::new("t", "GET", format!("{}{path}", srv.base))
        })
    };
    let r = mk(ResultMode::Json, "/json")
        .execute(json!({}), ToolContext::default())
        .await;
    assert_eq!(r.output, r#"{"a":[1,2],"b":"é"}"#);
    let r = mk(ResultMode::Json, "/plain")
        .execute(json!({}), ToolContext::default())
        .await;
    assert_eq!(r.output, r#""ok""#);
    let r = mk(ResultMode::StatusText, "/plain")
        .execute(json!({}), ToolContext::default())
        .await;
    assert_eq!(r.output, "201\nok");
    let r = mk(ResultMode::Text, "/json")
        .execute(json!({}), ToolContext::default())
        .await;
    assert_eq!(r.output, "{\"a\": [1, 2], \"b\": \"é\"}");
}

#[tokio::test]
async fn timeout_and_transport_errors_are_error_results() {
    let srv = serve().await;
    let tool = http_tool(HttpToolSpec {
        timeout: Some(Duration::from_millis(200)),
        ..HttpToolSpec::new("slow", "GET", format!("{}/slow", srv.base))
    });
    let start = Instant::now();
    let r = tool.execute(json!({}), ToolContext::default()).await;
    assert!(start.elapsed() < Duration::from_secs(4));
    assert_eq!(r.output, "slow: HTTP request timed out after 200ms");
    assert!(r.is_error);

    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let tool = http_tool(HttpToolSpec::new(
        "down",
        "GET",
        format!("http://127.0.0.1:{port}/"),
    ));
    let r = tool.execute(json!({}), ToolContext::default()).await;
    assert!(r.is_error);
    assert!(
        r.output.starts_with("down: HTTP request failed: "),
        "{}",
        r.output
    );

    let r = tool.execute(json!([1]), ToolContext::default()).await;
    assert_eq!(r.output, "arguments must be a JSON object, got [1]");
}

fn petstore(base: &str) -> Value {
    json!({
        "openapi": "3.0.3",
        "servers": [{"url": format!("{base}/v1/")}],
        "paths": {
            "/pets/{petId}": {
                "parameters": [{"name": "petId", "in": "path", "required": true, "schema": {"type": "string"}}],
                "get": {
                    "operationId": "getPet",
                    "summary": "Get a pet",
                    "parameters": [
                        {"$ref": "#/components/parameters/Verbose"},
                        {"name": "X-Trace", "in": "header", "schema": {"type": "string"}}
                    ]
                }
            },
            "/pets": {
                "post": {
                    "operationId": "create.pet",
                    "description": "Create a pet",
                    "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Pet"}}}}
                },
                "put": {
                    "requestBody": {"content": {"text/plain": {"schema": {"type": "string"}}}}
                }
            }
        },
        "components": {
            "parameters": {"Verbose": {"name": "verbose", "in": "query", "description": "More detail", "schema": {"type": "boolean"}}},
            "schemas": {"Pet": {"type": "object", "required": ["name"], "properties": {
                "name": {"type": "string"}, "owner": {"$ref": "#/components/schemas/Owner"}}},
                "Owner": {"type": "object", "properties": {"id": {"type": "integer"}}}}
        }
    })
}

#[tokio::test]
async fn openapi_import_builds_one_tool_per_operation() {
    let srv = serve().await;
    let tools = http_tools_from_openapi(
        petstore(&srv.base),
        OpenApiOptions::default().header("X-Api", "k"),
    )
    .await
    .unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name()).collect();
    assert_eq!(names, ["getPet", "put_pets", "create_pet"]);
    let (get, put, create) = (&tools[0], &tools[1], &tools[2]);
    assert_eq!(get.description(), "Get a pet");
    assert_eq!(
        get.input_schema(),
        &json!({"type": "object", "properties": {
            "petId": {"type": "string"},
            "verbose": {"type": "boolean", "description": "More detail"}
        }, "required": ["petId"]})
    );
    assert_eq!(
        create.input_schema(),
        &json!({"type": "object", "properties": {
            "name": {"type": "string"},
            "owner": {"type": "object", "properties": {"id": {"type": "integer"}}}
        }, "required": ["name"]})
    );
    assert_eq!(put.description(), "PUT /pets");

    let r = get
        .execute(json!({"petId": "p1", "verbose": true}), ToolContext::default())
        .await;
    assert_eq!(r.output, "ok");
    let seen = srv.last();
    assert_eq!(
        (seen.method.as_str(), seen.path.as_str(), seen.query.as_deref()),
        ("GET", "/v1/pets/p1", Some("verbose=true"))
    );
    assert_eq!(seen.headers, headers(&[("x-api", "k")]));

    create
        .execute(json!({"name": "rex", "owner": {"id": 1}}), ToolContext::default())
        .await;
    let seen = srv.last();
    assert_eq!((seen.method.as_str(), seen.path.as_str()), ("POST", "/v1/pets"));
    assert_eq!(seen.body, r#"{"name":"rex","owner":{"id":1}}"#);

    put.execute(json!({"body": "raw text"}), ToolContext::default())
        .await;
    assert_eq!(srv.last().body, "raw text");
}

#[tokio::test]
async fn openapi_from_yaml_file_and_url_and_errors() {
    let srv = serve().await;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("api.yaml");
    std::fs::write(
        &path,
        "openapi: 3.0.0\npaths:\n  /ok:\n    get:\n      operationId: ok\n",
    )
    .unwrap();
    let opts = OpenApiOptions::default().base_url(srv.base.clone());
    let tools = http_tools_from_openapi(path.clone(), opts.clone()).await.unwrap();
    assert_eq!(tools[0].name(), "ok");
    tools[0].execute(json!({}), ToolContext::default()).await;
    assert_eq!(srv.last().path, "/ok");

    let url = format!("{}/openapi.json", srv.base);
    let tools = http_tools_from_openapi(url.as_str(), opts.clone()).await.unwrap();
    assert_eq!(tools.len(), 1);

    let missing = dir.path().join("missing.json");
    let err = http_tools_from_openapi(missing.clone(), opts.clone())
        .await
        .unwrap_err();
    assert!(matches!(err, OpenApiError::Read { .. }));
    assert!(
        err.to_string()
            .starts_with(&format!("OpenAPI spec {}: ", missing.display())),
        "{err}"
    );

    std::fs::write(&path, "paths: [unterminated").unwrap();
    let err = http_tools_from_openapi(OpenApiSource::Path(path.clone()), opts.clone())
        .await
        .unwrap_err();
    assert!(matches!(err, OpenApiError::Parse { .. }), "{err}");
    assert_eq!(
        err.to_string(),
        format!(
            "OpenAPI spec {}: not valid JSON or YAML: while parsing a flow sequence, \
             expected ',' or ']' at line 2 column 1",
            path.display()
        )
    );

    let err = http_tools_from_openapi(json!({"openapi": "3"}), opts.clone())
        .await
        .unwrap_err();
    assert_eq!(err.to_string(), "OpenAPI spec <value>: no `paths` object");
    let err = http_tools_from_openapi(json!({"paths": {}}), OpenApiOptions::default())
        .await
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "OpenAPI spec <value>: no base URL: pass one or declare `servers`"
    );

    let err = http_tools_from_openapi(format!("{}/status/500", srv.base).as_str(), opts)
        .await
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        format!("OpenAPI spec {}/status/500: HTTP 500", srv.base)
    );
}
