//! Where the durable state lives, as one string: `memory`, `file:<dir>`, `sqlite:<path>` or a
//! `postgres://` URL. The password of a PostgreSQL URL never leaves this type: its `Display`
//! and `Debug` mask it, and every error built from it carries the masked form.

use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;

/// A parsed store location (the CLI's `--store`, the SPEC's `store`).
///
/// ```
/// use toolnexus::store::StoreUrl;
///
/// let url: StoreUrl = "postgres://app:s3cret@db.internal:5432/toolnexus".parse().unwrap();
/// assert_eq!(url.to_string(), "postgres://app:***@db.internal:5432/toolnexus");
/// assert!(!format!("{url:?}").contains("s3cret"));
/// assert_eq!("sqlite:state.db".parse::<StoreUrl>().unwrap(), StoreUrl::Sqlite("state.db".into()));
/// assert!("sqlite::memory:".parse::<StoreUrl>().is_err());
/// ```
#[derive(Clone, PartialEq, Eq)]
pub enum StoreUrl {
    /// In this process only; gone at exit.
    Memory,
    /// One JSON file per record in a directory (one process at a time).
    File(PathBuf),
    /// An SQLite database file (created if missing); several processes on one host may share it.
    Sqlite(PathBuf),
    /// A PostgreSQL connection URL (`postgres://` or `postgresql://`); replicas on several
    /// hosts share it. Read it for connecting only: print the `StoreUrl` itself, which masks
    /// the password.
    Postgres(String),
}

/// Why a store string was refused. Every URL it quotes has its password masked.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StoreUrlError {
    /// The string was empty.
    #[error("empty store URL (expected memory, file:<dir>, sqlite:<path> or postgres://...)")]
    Empty,
    /// No known scheme.
    #[error("unknown store \"{url}\" (expected memory, file:<dir>, sqlite:<path> or postgres://...)")]
    Unknown {
        /// The string given, password masked.
        url: String,
    },
    /// `file:` or `sqlite:` without a path.
    #[error("store \"{url}\": the path after `{scheme}:` is empty")]
    EmptyPath {
        /// The string given.
        url: String,
        /// `file` or `sqlite`.
        scheme: &'static str,
    },
    /// `sqlite::memory:`: a private, volatile database is what `memory` already is.
    #[error(
        "store \"{url}\": an in-memory SQLite database is neither durable nor shared; use `memory` or sqlite:<path>"
    )]
    SqliteInMemory {
        /// The string given.
        url: String,
    },
    /// A `postgres://` URL that does not parse or has no host.
    #[error("store \"{url}\": not a valid PostgreSQL URL: {reason}")]
    Postgres {
        /// The string given, password masked.
        url: String,
        /// What is wrong with it.
        reason: String,
    },
}

impl FromStr for StoreUrl {
    type Err = StoreUrlError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let s = s.trim();
        if s.is_empty() {
            return Err(StoreUrlError::Empty);
        }
        if s == "memory" {
            return Ok(Self::Memory);
        }
        if s.starts_with("postgres://") || s.starts_with("postgresql://") {
            return parse_postgres(s);
        }
        if let Some(path) = s.strip_prefix("sqlite:") {
            let path = path.strip_prefix("//").unwrap_or(path);
            if path == ":memory:" || path.starts_with(":memory:?") || path.contains("mode=memory") {
                return Err(StoreUrlError::SqliteInMemory { url: s.to_owned() });
            }
            return non_empty(s, "sqlite", path).map(Self::Sqlite);
        }
        if let Some(path) = s.strip_prefix("file:") {
            return non_empty(s, "file", path).map(Self::File);
        }
        Err(StoreUrlError::Unknown { url: redact(s) })
    }
}

fn non_empty(url: &str, scheme: &'static str, path: &str) -> Result<PathBuf, StoreUrlError> {
    if path.is_empty() {
        Err(StoreUrlError::EmptyPath {
            url: url.to_owned(),
            scheme,
        })
    } else {
        Ok(PathBuf::from(path))
    }
}

fn parse_postgres(s: &str) -> Result<StoreUrl, StoreUrlError> {
    let invalid = |reason: String| StoreUrlError::Postgres {
        url: redact(s),
        reason,
    };
    // `url::ParseError`'s text never quotes the input, so it is safe to show.
    let parsed = url::Url::parse(s).map_err(|e| invalid(e.to_string()))?;
    if parsed.host_str().is_none_or(str::is_empty) {
        return Err(invalid("no host".to_owned()));
    }
    Ok(StoreUrl::Postgres(s.to_owned()))
}

/// `url` with the password of its user-info and of any `password=` query parameter replaced
/// by `***`. Works on strings that do not parse as URLs too, since those end up in errors.
pub(crate) fn redact(url: &str) -> String {
    let Some(scheme_end) = url.find("://") else {
        return url.to_owned();
    };
    let (head, rest) = url.split_at(scheme_end + 3);
    // The authority ends at the first `/`, `?` or `#` after the last `@` (a password may hold
    // any of them unencoded); masking too much is the safe error.
    let mut out = head.to_owned();
    let rest = match rest.rfind('@') {
        Some(at) => {
            let userinfo = &rest[..at];
            match userinfo.find(':') {
                Some(colon) => {
                    out.push_str(&userinfo[..colon]);
                    out.push_str(":***");
                }
                None => out.push_str(userinfo),
            }
            &rest[at..]
        }
        None => rest,
    };
    match rest.find('?') {
        Some(q) => {
            out.push_str(&rest[..=q]);
            let query: Vec<String> = rest[q + 1..]
                .split('&')
                .map(|pair| match pair.split_once('=') {
                    Some((k, _)) if k.eq_ignore_ascii_case("password") => format!("{k}=***"),
                    _ => pair.to_owned(),
                })
                .collect();
            out.push_str(&query.join("&"));
        }
        None => out.push_str(rest),
    }
    out
}

impl fmt::Display for StoreUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Memory => f.write_str("memory"),
            Self::File(dir) => write!(f, "file:{}", dir.display()),
            Self::Sqlite(path) => write!(f, "sqlite:{}", path.display()),
            Self::Postgres(url) => f.write_str(&redact(url)),
        }
    }
}

// By hand: a derived `Debug` would print the password.
crate::debug_as_display!(StoreUrl);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_each_scheme() {
        assert_eq!("memory".parse::<StoreUrl>(), Ok(StoreUrl::Memory));
        assert_eq!(
            "file:/var/tn".parse::<StoreUrl>(),
            Ok(StoreUrl::File("/var/tn".into()))
        );
        assert_eq!(
            "sqlite:///var/tn.db".parse::<StoreUrl>(),
            Ok(StoreUrl::Sqlite("/var/tn.db".into()))
        );
        assert_eq!(
            "postgresql://h/db".parse::<StoreUrl>(),
            Ok(StoreUrl::Postgres("postgresql://h/db".into()))
        );
    }

    #[test]
    fn refuses_bad_input_with_typed_errors() {
        assert_eq!("".parse::<StoreUrl>(), Err(StoreUrlError::Empty));
        assert_eq!(
            "sqlite:".parse::<StoreUrl>(),
            Err(StoreUrlError::EmptyPath {
                url: "sqlite:".into(),
                scheme: "sqlite"
            })
        );
        assert_eq!(
            "sqlite::memory:".parse::<StoreUrl>(),
            Err(StoreUrlError::SqliteInMemory {
                url: "sqlite::memory:".into()
            })
        );
        let err = "mysql://root:hunter2@h/db".parse::<StoreUrl>().unwrap_err();
        assert_eq!(
            err.to_string(),
            "unknown store \"mysql://root:***@h/db\" (expected memory, file:<dir>, sqlite:<path> or postgres://...)"
        );
        let err = "postgres://u:hunter2@:5432/db".parse::<StoreUrl>().unwrap_err();
        assert!(!err.to_string().contains("hunter2"), "{err}");
        assert!(matches!(err, StoreUrlError::Postgres { .. }), "{err}");
    }

    #[test]
    fn masks_passwords_everywhere() {
        let url: StoreUrl = "postgres://u:p%40ss@h:5433/db?sslmode=disable&password=x"
            .parse()
            .unwrap();
        let shown = "postgres://u:***@h:5433/db?sslmode=disable&password=***";
        assert_eq!(url.to_string(), shown);
        assert_eq!(format!("{url:?}"), shown);
        assert_eq!(redact("postgres://u@h/db"), "postgres://u@h/db");
        assert_eq!(redact("postgres://u:a@b/c@h/db"), "postgres://u:***@h/db");
    }
}
