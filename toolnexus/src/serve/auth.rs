//! Bearer-token authentication for every route `serve` mounts: `Authorization: Bearer
//! <token>`, compared in constant time; otherwise HTTP 401 with `WWW-Authenticate: Bearer`
//! (RFC 6750).

use std::fmt;
use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::Response;
use subtle::ConstantTimeEq;

use super::plain;

/// The secret a client must present. Its `Debug` never shows it.
///
/// ```
/// use toolnexus::serve::AuthToken;
///
/// let token = AuthToken::new("s3cret-from-the-environment");
/// assert_eq!(format!("{token:?}"), "AuthToken(<redacted>)");
/// ```
#[derive(Clone)]
pub struct AuthToken(Arc<str>);

impl AuthToken {
    /// A token with this secret.
    pub fn new(secret: impl Into<String>) -> Self {
        Self(Arc::from(secret.into()))
    }

    /// Whether the secret is empty (which `serve` refuses).
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Constant time in the content; only the length can show.
    fn matches(&self, presented: &[u8]) -> bool {
        self.0.as_bytes().ct_eq(presented).into()
    }
}

impl fmt::Debug for AuthToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("AuthToken(<redacted>)")
    }
}

/// The middleware.
pub(super) async fn check(State(token): State<AuthToken>, request: Request, next: Next) -> Response {
    let presented = request
        .headers()
        .get(header::AUTHORIZATION)
        .map(HeaderValue::as_bytes)
        .and_then(|v| {
            let (scheme, rest) = v.split_at_checked(7)?;
            scheme.eq_ignore_ascii_case(b"bearer ").then_some(rest)
        });
    let (challenge, message) = match presented {
        Some(secret) if token.matches(secret) => return next.run(request).await,
        Some(_) => (
            r#"Bearer error="invalid_token""#,
            "unauthorized: the bearer token is not valid",
        ),
        None => (
            "Bearer",
            "unauthorized: this server needs an Authorization: Bearer <token> header",
        ),
    };
    let mut response = plain(StatusCode::UNAUTHORIZED, message.to_owned());
    response
        .headers_mut()
        .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static(challenge));
    response
}
