//! What every HTTP client of the crate shares — the LLM client, MCP over HTTP, HTTP tools and
//! `webfetch`: one TLS set-up, and error messages that keep their cause.
//!
//! reqwest's default rustls set-up reads and parses the system's root certificates each
//! time a client is built — milliseconds and a few hundred KB per client, paid even by a
//! client that only ever speaks plain HTTP to a model or MCP server on loopback. Here one
//! rustls configuration serves the whole process, and its platform verifier loads the roots
//! on the first certificate it has to check.

use std::sync::{Arc, OnceLock};

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::CryptoProvider;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{DigitallySignedStruct, Error as TlsError, SignatureScheme};
use rustls_platform_verifier::Verifier;

/// An error and its causes, `: `-joined. reqwest's own message hides the cause ("error
/// sending request"); whoever reads it — a model, a newcomer — needs "connection refused".
#[cfg(any(feature = "client", feature = "http", feature = "builtins", feature = "a2a"))]
pub(crate) fn error_chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut msg = e.to_string();
    let mut source = e.source();
    while let Some(cause) = source {
        msg.push_str(": ");
        msg.push_str(&cause.to_string());
        source = cause.source();
    }
    msg
}

/// Why a capped body read stopped.
#[cfg(any(feature = "builtins", feature = "a2a"))]
#[derive(Debug)]
pub(crate) enum BodyError {
    /// The transport failed mid-body.
    Transport(reqwest::Error),
    /// The body passed the cap.
    TooLarge,
}

/// A response body read chunk by chunk and refused once it passes `max` bytes: a server
/// cannot make us buffer without bound, whatever its `Content-Length` says.
#[cfg(any(feature = "builtins", feature = "a2a"))]
pub(crate) async fn read_capped(mut response: reqwest::Response, max: usize) -> Result<Vec<u8>, BodyError> {
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(BodyError::Transport)? {
        if body.len() + chunk.len() > max {
            return Err(BodyError::TooLarge);
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// A reqwest client builder on the shared TLS configuration.
pub(crate) fn client_builder() -> reqwest::ClientBuilder {
    static SHARED: OnceLock<Option<SharedTls>> = OnceLock::new();
    builder_on(SHARED.get_or_init(SharedTls::new).as_ref())
}

fn builder_on(tls: Option<&SharedTls>) -> reqwest::ClientBuilder {
    let builder = reqwest::Client::builder();
    match tls {
        Some(tls) => builder.tls_backend_preconfigured(tls.config.clone()),
        // Unreachable with the bundled provider; reqwest's own set-up still works.
        None => builder,
    }
}

struct SharedTls {
    config: rustls::ClientConfig,
    #[cfg(test)]
    verifier: Arc<LazyVerifier>,
}

impl SharedTls {
    fn new() -> Option<Self> {
        let provider = CryptoProvider::get_default()
            .cloned()
            .unwrap_or_else(|| Arc::new(rustls::crypto::aws_lc_rs::default_provider()));
        let verifier = Arc::new(LazyVerifier::new(provider.clone()));
        let mut config = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .ok()?
            .dangerous()
            .with_custom_certificate_verifier(verifier.clone())
            .with_no_client_auth();
        // What reqwest offers by default: HTTP/2 when the server speaks it (and it was built
        // with HTTP/2: offering h2 without speaking it would break every such connection).
        config.alpn_protocols = if cfg!(feature = "http2") {
            vec![b"h2".to_vec(), b"http/1.1".to_vec()]
        } else {
            vec![b"http/1.1".to_vec()]
        };
        Some(SharedTls {
            config,
            #[cfg(test)]
            verifier,
        })
    }
}

/// The platform verifier, created on first use.
#[derive(Debug)]
struct LazyVerifier {
    provider: Arc<CryptoProvider>,
    inner: OnceLock<Result<Verifier, TlsError>>,
}

impl LazyVerifier {
    fn new(provider: Arc<CryptoProvider>) -> Self {
        Self {
            provider,
            inner: OnceLock::new(),
        }
    }

    fn get(&self) -> Result<&Verifier, TlsError> {
        self.inner
            .get_or_init(|| Verifier::new(self.provider.clone()))
            .as_ref()
            .map_err(Clone::clone)
    }

    #[cfg(test)]
    fn is_loaded(&self) -> bool {
        self.inner.get().is_some()
    }
}

impl ServerCertVerifier for LazyVerifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, TlsError> {
        self.get()?
            .verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now)
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, TlsError> {
        self.get()?.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, TlsError> {
        self.get()?.verify_tls13_signature(message, cert, dss)
    }

    // Asked while writing the ClientHello, before any certificate arrives: the provider
    // knows the answer without the roots.
    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::TcpListener;

    // A self-signed certificate for `localhost` (openssl, P-256, valid until 2125) and its key.
    const CERT: &[u8] = include_bytes!("../testdata/localhost.cert.der");
    const KEY: &[u8] = include_bytes!("../testdata/localhost.key.der");

    /// Accept one connection, read the request head, answer with `response` in one write.
    async fn serve_once(listener: TcpListener, response: &'static [u8]) {
        let (mut tcp, _) = listener.accept().await.unwrap();
        tcp.set_nodelay(true).unwrap();
        let mut buf = vec![0; 4096];
        let mut got = Vec::new();
        while !got.windows(4).any(|w| w == b"\r\n\r\n") {
            let n = tcp.read(&mut buf).await.unwrap();
            assert!(n > 0, "connection closed before the request head");
            got.extend_from_slice(&buf[..n]);
        }
        tcp.write_all(response).await.unwrap();
    }

    #[tokio::test]
    async fn plain_http_never_loads_the_certificate_store() {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/", listener.local_addr().unwrap());
        let server = tokio::spawn(serve_once(
            listener,
            b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\nok",
        ));
        let tls = SharedTls::new().unwrap();
        let client = builder_on(Some(&tls)).build().unwrap();
        let resp = client.get(&url).send().await.unwrap();
        assert_eq!(resp.status(), 200);
        assert_eq!(resp.text().await.unwrap(), "ok");
        server.await.unwrap();
        assert!(!tls.verifier.is_loaded());
    }

    #[tokio::test]
    async fn https_checks_the_certificate_against_the_platform_roots() {
        let key = rustls::pki_types::PrivateKeyDer::try_from(KEY.to_vec()).unwrap();
        let config = rustls::ServerConfig::builder_with_provider(Arc::new(
            rustls::crypto::aws_lc_rs::default_provider(),
        ))
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(vec![CertificateDer::from(CERT.to_vec())], key)
        .unwrap();
        let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let server = tokio::spawn(async move {
            let (tcp, _) = listener.accept().await.unwrap();
            // The client aborts the handshake: the server only sees it fail.
            assert!(acceptor.accept(tcp).await.is_err());
        });
        let tls = SharedTls::new().unwrap();
        let client = builder_on(Some(&tls))
            .resolve("localhost", ([127, 0, 0, 1], port).into())
            .build()
            .unwrap();
        let err = client
            .get(format!("https://localhost:{port}/"))
            .send()
            .await
            .unwrap_err();
        let mut chain = err.to_string();
        let mut source = std::error::Error::source(&err);
        while let Some(s) = source {
            chain.push_str(&format!(": {s}"));
            source = s.source();
        }
        // Which rejection webpki reports depends on the machine's roots; that it rejects the
        // self-signed certificate is the point.
        assert!(chain.contains("invalid peer certificate"), "{chain}");
        assert!(tls.verifier.is_loaded());
        server.await.unwrap();
    }

    #[tokio::test]
    async fn tls_offers_h2_only_when_built_with_http2() {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let server = tokio::spawn(async move {
            let (tcp, _) = listener.accept().await.unwrap();
            let acceptor = rustls::server::Acceptor::default();
            let start = tokio_rustls::LazyConfigAcceptor::new(acceptor, tcp)
                .await
                .unwrap();
            let offered: Vec<Vec<u8>> = start
                .client_hello()
                .alpn()
                .map(|protocols| protocols.map(<[u8]>::to_vec).collect())
                .unwrap_or_default();
            offered // dropping the connection here fails the client's handshake
        });
        let tls = SharedTls::new().unwrap();
        let client = builder_on(Some(&tls))
            .resolve("localhost", ([127, 0, 0, 1], port).into())
            .build()
            .unwrap();
        assert!(
            client
                .get(format!("https://localhost:{port}/"))
                .send()
                .await
                .is_err()
        );
        let want: &[&[u8]] = if cfg!(feature = "http2") {
            &[b"h2", b"http/1.1"]
        } else {
            &[b"http/1.1"]
        };
        assert_eq!(server.await.unwrap(), want);
    }

    #[test]
    fn the_verifier_loads_on_first_use() {
        let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
        let verifier = LazyVerifier::new(provider.clone());
        assert!(!verifier.is_loaded());
        assert_eq!(
            verifier.supported_verify_schemes(),
            provider.signature_verification_algorithms.supported_schemes()
        );
        assert!(!verifier.is_loaded());
        let name = ServerName::try_from("localhost").unwrap();
        let err = verifier
            .verify_server_cert(&CertificateDer::from(CERT), &[], &name, &[], UnixTime::now())
            .unwrap_err();
        assert!(matches!(err, TlsError::InvalidCertificate(_)), "{err:?}");
        assert!(verifier.is_loaded());
    }
}
