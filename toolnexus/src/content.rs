//! Content parts (SPEC §1B): non-text tool output — images, files, audio — carried beside
//! the text `output` of a [`ToolResult`](crate::ToolResult).
//!
//! A part is **bytes-or-URL, never a path**: a path does not survive a persisted transcript
//! or a process boundary, so the constructors read and base64-encode at construction time.
//! Mime types come from one fixed extension table ([`mime_for_extension`]) and are never
//! sniffed, so every port agrees on them.
//!
//! ```
//! use toolnexus::ContentPart;
//!
//! let png = ContentPart::image_bytes(vec![0x89, b'P', b'N', b'G'], "image/png");
//! assert_eq!(png.summary(), "image (image/png, 4 bytes)");
//! assert_eq!(
//!     serde_json::to_string(&png).unwrap(),
//!     r#"{"type":"image","mimeType":"image/png","data":"iVBORw=="}"#
//! );
//! ```

use std::io::Read as _;
use std::path::Path;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as B64;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// The fixed media table: extension → (mime type, part kind). Shared by every port.
const MEDIA_TYPES: &[(&str, &str, MediaKind)] = &[
    ("png", "image/png", MediaKind::Image),
    ("jpg", "image/jpeg", MediaKind::Image),
    ("jpeg", "image/jpeg", MediaKind::Image),
    ("gif", "image/gif", MediaKind::Image),
    ("webp", "image/webp", MediaKind::Image),
    ("pdf", "application/pdf", MediaKind::File),
    ("mp3", "audio/mpeg", MediaKind::Audio),
    ("wav", "audio/wav", MediaKind::Audio),
];

/// Which kind of media a non-text part is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MediaKind {
    /// A picture (`image/*`).
    Image,
    /// A document (e.g. `application/pdf`).
    File,
    /// A sound clip (`audio/*`).
    Audio,
}

impl MediaKind {
    /// The wire name: `image`, `file` or `audio`.
    pub fn as_str(self) -> &'static str {
        match self {
            MediaKind::Image => "image",
            MediaKind::File => "file",
            MediaKind::Audio => "audio",
        }
    }
}

/// Look an extension (without the dot, any case) up in the fixed media table.
///
/// ```
/// use toolnexus::content::{mime_for_extension, MediaKind};
/// assert_eq!(mime_for_extension("PNG"), Some(("image/png", MediaKind::Image)));
/// assert_eq!(mime_for_extension("exe"), None);
/// ```
pub fn mime_for_extension(ext: &str) -> Option<(&'static str, MediaKind)> {
    MEDIA_TYPES
        .iter()
        .find(|(e, _, _)| e.eq_ignore_ascii_case(ext))
        .map(|&(_, mime, kind)| (mime, kind))
}

/// Where the bytes of a media part live.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MediaSource {
    /// Standard, padded base64 with no line breaks.
    Data(String),
    /// A remote `http(s)` URL the provider fetches itself.
    Url(String),
}

/// An image, file or audio payload.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Media {
    /// The mime type, e.g. `image/png`.
    #[serde(rename = "mimeType")]
    pub mime_type: String,
    /// The bytes (base64) or a URL — exactly one.
    #[serde(flatten)]
    pub source: MediaSource,
    /// An optional file name (used as the OpenAI `filename` of a file part).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

impl Media {
    /// The decoded size of the payload in bytes; `0` for a URL.
    pub fn byte_len(&self) -> usize {
        match &self.source {
            MediaSource::Data(b64) => decoded_len(b64),
            MediaSource::Url(_) => 0,
        }
    }
}

/// One content part: text or media. Serializes as the canonical wire form shared by every
/// port: `{"type":"text","text":…}` or `{"type":"image","mimeType":…,"data"|"url":…,"name"?:…}`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum ContentPart {
    /// Plain text.
    Text {
        /// The text.
        text: String,
    },
    /// An image.
    Image(Media),
    /// A document.
    File(Media),
    /// An audio clip.
    Audio(Media),
}

/// Why a content part could not be built.
#[derive(thiserror::Error)]
pub enum ContentError {
    /// The payload is larger than the configured limit (decoded bytes).
    #[error("content part is {size} decoded bytes, over the limit of {limit}")]
    TooLarge {
        /// The decoded size.
        size: usize,
        /// The limit it exceeded.
        limit: usize,
    },
    /// The file's extension is not in the media table and no mime type was given.
    #[error("unknown file extension {0:?}: pass an explicit mime type")]
    UnknownExtension(String),
    /// The file could not be read.
    #[error("cannot read {path}: {source}")]
    Io {
        /// The path that failed.
        path: String,
        /// The underlying error.
        source: std::io::Error,
    },
}

crate::debug_as_display!(ContentError);

/// A part that has no block shape in a provider's tool-result encoding.
#[derive(Clone, PartialEq, Eq, thiserror::Error)]
#[error("no \"{style}\" block shape for a {kind} part ({mime_type})")]
pub struct UnsupportedPart {
    /// `image`, `file` or `audio`.
    pub kind: &'static str,
    /// The part's mime type.
    pub mime_type: String,
    /// `openai` or `anthropic`.
    pub style: &'static str,
}

crate::debug_as_display!(UnsupportedPart);

impl ContentPart {
    /// A text part.
    pub fn text(text: impl Into<String>) -> Self {
        ContentPart::Text { text: text.into() }
    }

    /// A media part of `kind` from raw bytes and an explicit mime type.
    pub fn from_bytes(kind: MediaKind, bytes: impl AsRef<[u8]>, mime_type: impl Into<String>) -> Self {
        Self::media(
            kind,
            Media {
                mime_type: mime_type.into(),
                source: MediaSource::Data(B64.encode(bytes.as_ref())),
                name: None,
            },
        )
    }

    /// An image part from raw bytes.
    pub fn image_bytes(bytes: impl AsRef<[u8]>, mime_type: impl Into<String>) -> Self {
        Self::from_bytes(MediaKind::Image, bytes, mime_type)
    }

    /// A media part of `kind` pointing at a URL the provider fetches.
    pub fn from_url(kind: MediaKind, url: impl Into<String>, mime_type: impl Into<String>) -> Self {
        Self::media(
            kind,
            Media {
                mime_type: mime_type.into(),
                source: MediaSource::Url(url.into()),
                name: None,
            },
        )
    }

    /// Read a file now and build the part its extension names (image, file or audio),
    /// refusing files larger than `max_bytes` (when given) before reading them whole.
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// let path = dir.path().join("shot.png");
    /// std::fs::write(&path, [1u8, 2, 3]).unwrap();
    /// let part = toolnexus::ContentPart::from_path(&path, None).unwrap();
    /// assert_eq!(part.summary(), "image (image/png, 3 bytes)");
    /// let err = toolnexus::ContentPart::from_path(&path, Some(2)).unwrap_err();
    /// assert_eq!(err.to_string(), "content part is 3 decoded bytes, over the limit of 2");
    /// ```
    pub fn from_path(path: impl AsRef<Path>, max_bytes: Option<usize>) -> Result<Self, ContentError> {
        let path = path.as_ref();
        let ext = path.extension().and_then(|e| e.to_str()).unwrap_or_default();
        let (mime, kind) =
            mime_for_extension(ext).ok_or_else(|| ContentError::UnknownExtension(format!(".{ext}")))?;
        let io_err = |source| ContentError::Io {
            path: path.display().to_string(),
            source,
        };
        let bytes = match max_bytes {
            Some(limit) => {
                let mut file = std::fs::File::open(path).map_err(io_err)?;
                let size = file.metadata().map_err(io_err)?.len() as usize;
                if size > limit {
                    return Err(ContentError::TooLarge { size, limit });
                }
                // Bounded by what is read, not by the size reported: `/proc` files report 0.
                let mut bytes = Vec::with_capacity(size);
                (&mut file)
                    .take(limit as u64 + 1)
                    .read_to_end(&mut bytes)
                    .map_err(io_err)?;
                if bytes.len() > limit {
                    return Err(ContentError::TooLarge {
                        size: bytes.len(),
                        limit,
                    });
                }
                bytes
            }
            None => std::fs::read(path).map_err(io_err)?,
        };
        let mut part = Self::from_bytes(kind, bytes, mime);
        if let Some(media) = part.media_mut() {
            media.name = path.file_name().map(|n| n.to_string_lossy().into_owned());
        }
        Ok(part)
    }

    /// Check a part against a size limit in decoded bytes.
    pub fn check_size(&self, limit: usize) -> Result<(), ContentError> {
        let size = self.byte_len();
        if size > limit {
            return Err(ContentError::TooLarge { size, limit });
        }
        Ok(())
    }

    fn media(kind: MediaKind, media: Media) -> Self {
        match kind {
            MediaKind::Image => ContentPart::Image(media),
            MediaKind::File => ContentPart::File(media),
            MediaKind::Audio => ContentPart::Audio(media),
        }
    }

    fn media_mut(&mut self) -> Option<&mut Media> {
        match self {
            ContentPart::Text { .. } => None,
            ContentPart::Image(m) | ContentPart::File(m) | ContentPart::Audio(m) => Some(m),
        }
    }

    /// The media payload, when this is not a text part.
    pub fn as_media(&self) -> Option<(MediaKind, &Media)> {
        match self {
            ContentPart::Text { .. } => None,
            ContentPart::Image(m) => Some((MediaKind::Image, m)),
            ContentPart::File(m) => Some((MediaKind::File, m)),
            ContentPart::Audio(m) => Some((MediaKind::Audio, m)),
        }
    }

    /// The wire `type`: `text`, `image`, `file` or `audio`.
    pub fn kind_str(&self) -> &'static str {
        self.as_media().map_or("text", |(k, _)| k.as_str())
    }

    /// Decoded payload size in bytes (text: its UTF-8 length; URL media: 0).
    pub fn byte_len(&self) -> usize {
        match self {
            ContentPart::Text { text } => text.len(),
            _ => self.as_media().map_or(0, |(_, m)| m.byte_len()),
        }
    }

    /// A one-line description shared by every port: `image (image/png, 82 bytes)`.
    /// A part's data is never part of a summary, a log line or an error.
    pub fn summary(&self) -> String {
        match self.as_media() {
            Some((kind, m)) => format!("{} ({}, {} bytes)", kind.as_str(), m.mime_type, m.byte_len()),
            None => format!("text ({} bytes)", self.byte_len()),
        }
    }

    /// The text a part degrades to when a provider cannot carry it.
    pub fn placeholder(&self) -> String {
        match self.as_media() {
            Some((kind, m)) => format!(
                "[unsupported {} part ({}, {} bytes)]",
                kind.as_str(),
                m.mime_type,
                m.byte_len()
            ),
            None => self.summary(),
        }
    }

    /// Encode as an OpenAI Chat Completions content block (`text`, `image_url`, `file`,
    /// `input_audio`).
    pub fn to_openai_block(&self) -> Result<Value, UnsupportedPart> {
        let unsupported = |kind: MediaKind, m: &Media| UnsupportedPart {
            kind: kind.as_str(),
            mime_type: m.mime_type.clone(),
            style: "openai",
        };
        match self {
            ContentPart::Text { text } => Ok(json!({"type": "text", "text": text})),
            ContentPart::Image(m) => {
                let url = match &m.source {
                    MediaSource::Url(u) => u.clone(),
                    MediaSource::Data(d) => data_url(&m.mime_type, d),
                };
                Ok(json!({"type": "image_url", "image_url": {"url": url}}))
            }
            ContentPart::File(m) => match &m.source {
                // Chat Completions has no URL form for a file part.
                MediaSource::Url(_) => Err(unsupported(MediaKind::File, m)),
                MediaSource::Data(d) => Ok(json!({
                    "type": "file",
                    "file": {
                        "filename": m.name.as_deref().unwrap_or("file"),
                        "file_data": data_url(&m.mime_type, d),
                    }
                })),
            },
            ContentPart::Audio(m) => {
                let format = match m.mime_type.as_str() {
                    "audio/mpeg" | "audio/mp3" => "mp3",
                    "audio/wav" | "audio/x-wav" => "wav",
                    _ => return Err(unsupported(MediaKind::Audio, m)),
                };
                match &m.source {
                    MediaSource::Data(d) => Ok(json!({
                        "type": "input_audio",
                        "input_audio": {"data": d, "format": format}
                    })),
                    MediaSource::Url(_) => Err(unsupported(MediaKind::Audio, m)),
                }
            }
        }
    }

    /// Encode as an Anthropic Messages content block (`text`, `image`, `document`).
    /// Anthropic defines no audio block.
    pub fn to_anthropic_block(&self) -> Result<Value, UnsupportedPart> {
        let (block, m) = match self {
            ContentPart::Text { text } => return Ok(json!({"type": "text", "text": text})),
            ContentPart::Image(m) => ("image", m),
            ContentPart::File(m) => ("document", m),
            ContentPart::Audio(m) => {
                return Err(UnsupportedPart {
                    kind: "audio",
                    mime_type: m.mime_type.clone(),
                    style: "anthropic",
                });
            }
        };
        let source = match &m.source {
            MediaSource::Url(u) => json!({"type": "url", "url": u}),
            MediaSource::Data(d) => json!({"type": "base64", "media_type": m.mime_type, "data": d}),
        };
        Ok(json!({"type": block, "source": source}))
    }
}

fn data_url(mime: &str, b64: &str) -> String {
    format!("data:{mime};base64,{b64}")
}

/// Decoded length of a padded standard-base64 string, without decoding it.
fn decoded_len(b64: &str) -> usize {
    let pad = b64.bytes().rev().take(2).filter(|&b| b == b'=').count();
    (b64.len() / 4 * 3).saturating_sub(pad)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wire_form_is_canonical() {
        let t = ContentPart::text("hi");
        assert_eq!(
            serde_json::to_string(&t).unwrap(),
            r#"{"type":"text","text":"hi"}"#
        );
        let u = ContentPart::from_url(MediaKind::Image, "https://x/a.png", "image/png");
        assert_eq!(
            serde_json::to_string(&u).unwrap(),
            r#"{"type":"image","mimeType":"image/png","url":"https://x/a.png"}"#
        );
        let back: ContentPart = serde_json::from_str(&serde_json::to_string(&u).unwrap()).unwrap();
        assert_eq!(back, u);
        assert_eq!(u.summary(), "image (image/png, 0 bytes)");
    }

    #[test]
    fn decoded_len_matches_base64() {
        for n in 0..10 {
            let bytes = vec![7u8; n];
            assert_eq!(decoded_len(&B64.encode(&bytes)), n);
        }
    }

    #[test]
    fn provider_blocks() {
        let img = ContentPart::image_bytes([1u8, 2, 3], "image/png");
        assert_eq!(
            img.to_openai_block().unwrap().to_string(),
            r#"{"type":"image_url","image_url":{"url":"data:image/png;base64,AQID"}}"#
        );
        assert_eq!(
            img.to_anthropic_block().unwrap().to_string(),
            r#"{"type":"image","source":{"type":"base64","media_type":"image/png","data":"AQID"}}"#
        );
        let wav = ContentPart::from_bytes(MediaKind::Audio, [0u8; 3], "audio/wav");
        assert_eq!(
            wav.to_openai_block().unwrap().to_string(),
            r#"{"type":"input_audio","input_audio":{"data":"AAAA","format":"wav"}}"#
        );
        let err = wav.to_anthropic_block().unwrap_err();
        assert_eq!(
            err.to_string(),
            r#"no "anthropic" block shape for a audio part (audio/wav)"#
        );
        assert_eq!(wav.placeholder(), "[unsupported audio part (audio/wav, 3 bytes)]");
        let pdf = ContentPart::from_bytes(MediaKind::File, b"%PDF", "application/pdf");
        assert_eq!(
            pdf.to_openai_block().unwrap().to_string(),
            r#"{"type":"file","file":{"filename":"file","file_data":"data:application/pdf;base64,JVBERg=="}}"#
        );
        assert_eq!(
            pdf.to_anthropic_block().unwrap().to_string(),
            r#"{"type":"document","source":{"type":"base64","media_type":"application/pdf","data":"JVBERg=="}}"#
        );
    }

    #[test]
    fn unknown_extension_and_missing_file_are_typed_errors() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.exe");
        std::fs::write(&p, b"x").unwrap();
        assert!(matches!(
            ContentPart::from_path(&p, None),
            Err(ContentError::UnknownExtension(e)) if e == ".exe"
        ));
        assert!(matches!(
            ContentPart::from_path(dir.path().join("nope.png"), None),
            Err(ContentError::Io { .. })
        ));
    }
}
