//! Who may reach the server from a browser: the `Host` and `Origin` checks that keep a web
//! page from driving a local server (DNS rebinding, cross-site requests), on every route.
//!
//! - **Host.** A request must name this server: an IP address, `localhost`, or a name in
//!   [`ServeOptions::allowed_hosts`](super::ServeOptions::allowed_hosts). A rebinding attack
//!   reaches the server under the attacker's DNS name, which is none of these; an IP
//!   literal cannot be rebound, so it is always accepted.
//! - **Origin.** A request without `Origin` (any non-browser client) passes. With one, it
//!   must be the server's own origin (`http://` + its `Host`) or listed in
//!   [`ServeOptions::allowed_origins`](super::ServeOptions::allowed_origins): `scheme://host`
//!   (its scheme's default port), `scheme://host:port`, `scheme://host:*` (any port), or
//!   `null`.
//!
//! Both refusals are HTTP 403 with a one-line reason.

use std::net::IpAddr;
use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::uri::Authority;
use axum::http::{StatusCode, header};
use axum::middleware::Next;
use axum::response::Response;

use super::plain;

/// A host (and optionally a port) a request may name.
#[derive(Debug, PartialEq, Eq)]
struct HostRule {
    host: String,
    port: Option<u16>,
}

/// An origin a browser request may come from.
#[derive(Debug, PartialEq, Eq)]
enum OriginRule {
    Null,
    Site {
        scheme: String,
        host: String,
        port: PortRule,
    },
}

#[derive(Debug, PartialEq, Eq)]
enum PortRule {
    Any,
    Exact(u16),
}

/// The allowed hosts and origins, parsed once.
#[derive(Debug)]
pub(super) struct Guard {
    hosts: Vec<HostRule>,
    origins: Vec<OriginRule>,
}

impl Guard {
    /// `Err` names the first entry that is not a host or an origin.
    pub(super) fn new(hosts: &[String], origins: &[String]) -> Result<Self, String> {
        let hosts = hosts
            .iter()
            .map(|h| parse_host_rule(h).ok_or_else(|| format!("allowed host {h:?} is not a host name")))
            .collect::<Result<_, _>>()?;
        let origins = origins
            .iter()
            .map(|o| {
                parse_origin_rule(o)
                    .ok_or_else(|| format!("allowed origin {o:?} is not scheme://host[:port]"))
            })
            .collect::<Result<_, _>>()?;
        Ok(Self { hosts, origins })
    }

    fn host_allowed(&self, host: &str, port: Option<u16>) -> bool {
        host.parse::<IpAddr>().is_ok()
            || host == "localhost"
            || self
                .hosts
                .iter()
                .any(|r| r.host == host && r.port.is_none_or(|p| Some(p) == port))
    }

    fn origin_allowed(&self, origin: &str, request_host: Option<&str>) -> bool {
        let origin = origin.trim();
        if origin.eq_ignore_ascii_case("null") {
            return self.origins.contains(&OriginRule::Null);
        }
        let Some((scheme, host, port)) = split_origin(origin) else {
            return false;
        };
        // The server's own pages, if it ever has any, are same-origin.
        let same = request_host.is_some_and(|h| {
            scheme == "http"
                && Authority::try_from(h).is_ok_and(|a| normal_host(a.host()) == host && a.port_u16() == port)
        });
        same || self.origins.iter().any(|rule| match rule {
            OriginRule::Null => false,
            OriginRule::Site {
                scheme: s,
                host: h,
                port: p,
            } => {
                *s == scheme
                    && *h == host
                    && match p {
                        PortRule::Any => true,
                        PortRule::Exact(want) => port.or_else(|| default_port(&scheme)) == Some(*want),
                    }
            }
        })
    }
}

/// Lower case, without IPv6 brackets or a trailing root dot.
fn normal_host(host: &str) -> String {
    host.trim_start_matches('[')
        .trim_end_matches(']')
        .trim_end_matches('.')
        .to_ascii_lowercase()
}

fn parse_host_rule(text: &str) -> Option<HostRule> {
    let authority = Authority::try_from(text.trim()).ok()?;
    Some(HostRule {
        host: normal_host(authority.host()),
        port: authority.port_u16(),
    })
}

fn default_port(scheme: &str) -> Option<u16> {
    match scheme {
        "http" => Some(80),
        "https" => Some(443),
        _ => None,
    }
}

/// `scheme://host[:port]` → its parts, normalized; `None` for anything else.
fn split_origin(text: &str) -> Option<(String, String, Option<u16>)> {
    let uri = axum::http::Uri::try_from(text).ok()?;
    let scheme = uri.scheme_str()?.to_ascii_lowercase();
    let authority = uri.authority()?;
    if uri
        .path_and_query()
        .is_some_and(|p| p.as_str() != "/" && !p.as_str().is_empty())
    {
        return None;
    }
    Some((scheme, normal_host(authority.host()), authority.port_u16()))
}

fn parse_origin_rule(text: &str) -> Option<OriginRule> {
    let text = text.trim();
    if text.eq_ignore_ascii_case("null") {
        return Some(OriginRule::Null);
    }
    let (base, any_port) = match text.strip_suffix(":*") {
        Some(base) => (base, true),
        None => (text, false),
    };
    let (scheme, host, port) = split_origin(base)?;
    let port = match (any_port, port) {
        (true, None) => PortRule::Any,
        (true, Some(_)) => return None,
        (false, Some(p)) => PortRule::Exact(p),
        // No port written: the scheme's default, as a browser serializes the origin.
        (false, None) => PortRule::Exact(default_port(&scheme)?),
    };
    Some(OriginRule::Site { scheme, host, port })
}

/// The middleware: `Host`, then `Origin`.
pub(super) async fn check(State(guard): State<Arc<Guard>>, request: Request, next: Next) -> Response {
    let host_header = request
        .headers()
        .get(header::HOST)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let host = host_header
        .clone()
        .or_else(|| request.uri().authority().map(|a| a.to_string()));
    if let Some(host) = &host {
        let allowed = Authority::try_from(host.as_str())
            .is_ok_and(|a| guard.host_allowed(&normal_host(a.host()), a.port_u16()));
        if !allowed {
            return plain(
                StatusCode::FORBIDDEN,
                format!(
                    "forbidden: Host {host:?} is not a name of this server (allow it with allowed_hosts)"
                ),
            );
        }
    }
    if let Some(origin) = request.headers().get(header::ORIGIN) {
        let origin = String::from_utf8_lossy(origin.as_bytes()).into_owned();
        if !guard.origin_allowed(&origin, host.as_deref()) {
            return plain(
                StatusCode::FORBIDDEN,
                format!("forbidden: Origin {origin:?} is not allowed (allow it with allowed_origins)"),
            );
        }
    }
    next.run(request).await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn guard(hosts: &[&str], origins: &[&str]) -> Guard {
        let own = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        Guard::new(&own(hosts), &own(origins)).unwrap()
    }

    #[test]
    fn hosts_are_ip_literals_localhost_or_listed() {
        let g = guard(&["api.example.com", "pinned.example:8443"], &[]);
        assert!(g.host_allowed("127.0.0.1", Some(80)));
        assert!(g.host_allowed("::1", None));
        assert!(g.host_allowed("10.1.2.3", Some(9)));
        assert!(g.host_allowed("localhost", Some(1)));
        assert!(g.host_allowed("api.example.com", Some(7)));
        assert!(g.host_allowed("pinned.example", Some(8443)));
        assert!(!g.host_allowed("pinned.example", Some(8444)));
        assert!(!g.host_allowed("evil.example", Some(80)));
        assert!(!g.host_allowed("localhost.evil.example", None));
    }

    #[test]
    fn origins_are_same_origin_or_listed() {
        let g = guard(
            &[],
            &[
                "https://app.example",
                "http://localhost:*",
                "http://ide.local:6274",
            ],
        );
        assert!(g.origin_allowed("http://127.0.0.1:8080", Some("127.0.0.1:8080")));
        assert!(!g.origin_allowed("http://127.0.0.1:9999", Some("127.0.0.1:8080")));
        assert!(g.origin_allowed("https://app.example", None));
        assert!(g.origin_allowed("https://app.example:443", None));
        assert!(!g.origin_allowed("https://app.example:8443", None));
        assert!(g.origin_allowed("http://localhost:6274", None));
        assert!(g.origin_allowed("http://ide.local:6274", None));
        assert!(!g.origin_allowed("http://ide.local:6275", None));
        assert!(!g.origin_allowed("http://evil.example", Some("127.0.0.1:8080")));
        assert!(!g.origin_allowed("null", None));
        assert!(!g.origin_allowed("not an origin", None));
        assert!(guard(&[], &["null"]).origin_allowed("null", None));
    }

    #[test]
    fn bad_entries_are_named() {
        let err = Guard::new(&[], &["app.example".into()]).unwrap_err();
        assert_eq!(err, r#"allowed origin "app.example" is not scheme://host[:port]"#);
        let err = Guard::new(&["bad host/x".into()], &[]).unwrap_err();
        assert_eq!(err, r#"allowed host "bad host/x" is not a host name"#);
    }
}
