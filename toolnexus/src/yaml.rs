//! YAML 1.2 read into a small tree: a SKILL.md's frontmatter and OpenAPI documents.
//!
//! On yaml-rust2's event parser (a small, well-kept YAML 1.2 parser), with the loading done
//! here so that it is bounded: a tree deeper than [`Limits::max_depth`] is refused, and so is
//! a document whose anchors and aliases would copy more than [`Limits::max_copies`] nodes (an
//! alias bomb, "billion laughs", costs its budget, not the machine's memory). Merge keys
//! (`<<`) are applied as YAML 1.1 and PyYAML define them: a mapping's own keys win over merged
//! ones, and earlier merged mappings over later ones.
//!
//! Every error names the line and column it was found at.

use std::collections::HashMap;
use std::fmt;

#[cfg(feature = "http")]
use serde_json::Map;
use serde_json::{Number, Value};
use yaml_rust2::parser::{Event, Parser, Tag};
use yaml_rust2::scanner::{Marker, ScanError, TScalarStyle};

/// How much one document may cost.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Limits {
    /// The deepest nesting of sequences and mappings, aliases expanded.
    pub max_depth: usize,
    /// Nodes copied by anchors and aliases together.
    pub max_copies: usize,
}

/// A YAML error with the 1-based line and column it was found at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Error {
    message: String,
    line: usize,
    column: usize,
}

impl Error {
    fn new(message: impl Into<String>, at: Marker) -> Self {
        Error {
            message: message.into(),
            line: at.line(),
            column: at.col() + 1,
        }
    }
}

impl Error {
    /// A mapping key that is a sequence or a mapping, at `at`.
    pub fn key_not_scalar(at: Marker) -> Self {
        Error::new("a mapping key is not a scalar", at)
    }
}

impl From<ScanError> for Error {
    fn from(e: ScanError) -> Self {
        Error::new(e.info(), *e.marker())
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} at line {} column {}", self.message, self.line, self.column)
    }
}

/// One node of a document.
#[derive(Debug, Clone)]
pub(crate) enum Node {
    Scalar(Scalar),
    Seq(Vec<Node>),
    Map(Vec<Entry>),
}

/// A mapping's entry, with where its key starts (for errors).
#[derive(Debug, Clone)]
pub(crate) struct Entry {
    pub key: Node,
    pub value: Node,
    pub at: Marker,
}

/// A scalar's text as written (quotes and escapes resolved, lines folded) and what it is.
#[derive(Debug, Clone)]
pub(crate) struct Scalar {
    pub text: String,
    pub kind: Kind,
}

/// What a scalar's tag and style make it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// Plain and untagged: null, a boolean, a number or a string by its text (the core schema).
    Plain,
    /// A string whatever its text: quoted, a block scalar, `!!str` or an unknown tag.
    Str,
    /// Tagged `!!null`, `!!bool`, `!!int` or `!!float`.
    Null,
    Bool,
    Int,
    Float,
}

impl Kind {
    fn of(style: TScalarStyle, tag: Option<&Tag>) -> Kind {
        match tag {
            Some(tag) => {
                let core = if tag.handle == "tag:yaml.org,2002:" {
                    tag.suffix.as_str()
                } else {
                    // Verbatim `!<tag:yaml.org,2002:int>`.
                    tag.suffix.strip_prefix("tag:yaml.org,2002:").unwrap_or("")
                };
                match core {
                    "null" => Kind::Null,
                    "bool" => Kind::Bool,
                    "int" => Kind::Int,
                    "float" => Kind::Float,
                    _ => Kind::Str,
                }
            }
            None if style == TScalarStyle::Plain => Kind::Plain,
            None => Kind::Str,
        }
    }
}

impl Scalar {
    /// Whether this is YAML's null: an untagged plain `null`/`~`/empty, or `!!null`.
    #[cfg(feature = "skills")]
    pub fn is_null(&self) -> bool {
        match self.kind {
            Kind::Null => true,
            Kind::Plain => is_null(&self.text),
            _ => false,
        }
    }

    /// The value by the core schema: null, a boolean, an integer (too large for 64 bits: a
    /// float, as a JSON reader makes it), a float (non-finite: `null`, as in serde_json) or a
    /// string. `None`: a tagged scalar that is not what its tag says.
    fn value(&self) -> Option<Value> {
        let text = self.text.as_str();
        match self.kind {
            Kind::Str => Some(Value::String(self.text.clone())),
            Kind::Plain if is_null(text) => Some(Value::Null),
            Kind::Plain => Some(
                bool_of(text)
                    .map(Value::Bool)
                    .or_else(|| int_of(text))
                    .or_else(|| float_of(text))
                    .unwrap_or_else(|| Value::String(self.text.clone())),
            ),
            Kind::Null => is_null(text).then_some(Value::Null),
            Kind::Bool => bool_of(text).map(Value::Bool),
            Kind::Int => int_of(text),
            // `!!float 1` is 1.0, not 1.
            Kind::Float if int_of(text).is_some() => float_json(text.parse().ok()?),
            Kind::Float => float_of(text),
        }
    }
}

impl Node {
    /// A scalar key's text; `None` for a sequence or mapping.
    pub fn key_text(&self) -> Option<&str> {
        match self {
            Node::Scalar(s) => Some(&s.text),
            _ => None,
        }
    }

    /// The node as JSON: scalars by the core schema (see [`Scalar::value`]), mappings need
    /// scalar keys, each key once.
    #[cfg(feature = "http")]
    pub fn into_json(self) -> Result<Value, Error> {
        Ok(match self {
            Node::Scalar(s) => s.value().unwrap_or(Value::String(s.text)),
            Node::Seq(items) => {
                Value::Array(items.into_iter().map(Node::into_json).collect::<Result<_, _>>()?)
            }
            Node::Map(entries) => {
                let mut map = Map::with_capacity(entries.len());
                for Entry { key, value, at } in entries {
                    let Node::Scalar(key) = key else {
                        return Err(Error::key_not_scalar(at));
                    };
                    if map.contains_key(&key.text) {
                        return Err(Error::new(format!("duplicate key {:?}", key.text), at));
                    }
                    map.insert(key.text, value.into_json()?);
                }
                Value::Object(map)
            }
        })
    }
}

/// Parses one YAML document. `Ok(None)`: the text holds no document (only comments, blanks
/// or directives' absence of content).
pub(crate) fn parse(text: &str, limits: Limits) -> Result<Option<Node>, Error> {
    // The parser does not skip a byte order mark; YAML allows one at the start of a stream.
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut parser = Parser::new_from_str(text);
    let mut loader = Loader {
        limits,
        open: Vec::new(),
        anchors: HashMap::new(),
        copies: 0,
        document: None,
        documents: 0,
    };
    loop {
        let (event, at) = parser.next_token()?;
        match event {
            Event::StreamEnd => return Ok(loader.document),
            Event::DocumentStart => {
                loader.documents += 1;
                if loader.documents > 1 {
                    return Err(Error::new("more than one YAML document", at));
                }
            }
            Event::Scalar(text, style, anchor, tag) => {
                let kind = Kind::of(style, tag.as_ref());
                let scalar = Scalar { text, kind };
                // A tagged value must be what its tag says; the rest is valid by definition.
                if !matches!(kind, Kind::Plain | Kind::Str) && scalar.value().is_none() {
                    let tag = format!("{kind:?}").to_lowercase();
                    return Err(Error::new(
                        format!("{:?} is not a valid !!{tag}", scalar.text),
                        at,
                    ));
                }
                loader.add(Node::Scalar(scalar), Shape::LEAF, anchor, at)?;
            }
            Event::SequenceStart(anchor, _) => loader.open(Open::Seq(Vec::new()), anchor, at)?,
            Event::MappingStart(anchor, _) => loader.open(Open::Map(Vec::new(), None), anchor, at)?,
            Event::SequenceEnd | Event::MappingEnd => loader.close(at)?,
            Event::Alias(id) => loader.alias(id, at)?,
            Event::Nothing | Event::StreamStart | Event::DocumentEnd => {}
        }
    }
}

/// A node's size in nodes and its height in nesting levels.
#[derive(Debug, Clone, Copy)]
struct Shape {
    nodes: usize,
    height: usize,
}

impl Shape {
    const LEAF: Shape = Shape { nodes: 1, height: 0 };
}

/// A collection still being read.
enum Open {
    Seq(Vec<Node>),
    /// The entries so far and a key waiting for its value.
    Map(Vec<Entry>, Option<(Node, Marker)>),
}

struct Frame {
    node: Open,
    anchor: usize,
    at: Marker,
    /// Of the children so far.
    shape: Shape,
}

struct Loader {
    limits: Limits,
    open: Vec<Frame>,
    /// Anchor id → the anchored node and its shape.
    anchors: HashMap<usize, (Node, Shape)>,
    copies: usize,
    document: Option<Node>,
    documents: usize,
}

impl Loader {
    fn open(&mut self, node: Open, anchor: usize, at: Marker) -> Result<(), Error> {
        if self.open.len() >= self.limits.max_depth {
            return Err(self.too_deep(at));
        }
        self.open.push(Frame {
            node,
            anchor,
            at,
            shape: Shape { nodes: 1, height: 0 },
        });
        Ok(())
    }

    fn close(&mut self, at: Marker) -> Result<(), Error> {
        let Some(frame) = self.open.pop() else {
            return Err(Error::new("a collection ends that never started", at));
        };
        let node = match frame.node {
            Open::Seq(items) => Node::Seq(items),
            Open::Map(entries, _) => Node::Map(merge(entries)?),
        };
        let shape = Shape {
            nodes: frame.shape.nodes,
            height: frame.shape.height + 1,
        };
        self.add(node, shape, frame.anchor, frame.at)
    }

    fn alias(&mut self, id: usize, at: Marker) -> Result<(), Error> {
        let Some((node, shape)) = self.anchors.get(&id) else {
            // The anchor is known to the parser but its node is still open: a cycle.
            return Err(Error::new("an alias refers to a node that contains it", at));
        };
        let (node, shape) = (node.clone(), *shape);
        self.copied(shape, at)?;
        self.add(node, shape, 0, at)
    }

    /// Counts a copy of a node against the budget.
    fn copied(&mut self, shape: Shape, at: Marker) -> Result<(), Error> {
        self.copies = self.copies.saturating_add(shape.nodes);
        if self.copies > self.limits.max_copies {
            return Err(Error::new(
                format!(
                    "anchors and aliases expand to more than {} nodes",
                    self.limits.max_copies
                ),
                at,
            ));
        }
        Ok(())
    }

    fn too_deep(&self, at: Marker) -> Error {
        Error::new(format!("nested deeper than {} levels", self.limits.max_depth), at)
    }

    /// Places a finished node in its parent (or as the document).
    fn add(&mut self, node: Node, shape: Shape, anchor: usize, at: Marker) -> Result<(), Error> {
        if self.open.len() + shape.height > self.limits.max_depth {
            return Err(self.too_deep(at));
        }
        // Anchor ids start at 1; 0 is none.
        if anchor > 0 {
            self.copied(shape, at)?;
            self.anchors.insert(anchor, (node.clone(), shape));
        }
        let Some(parent) = self.open.last_mut() else {
            self.document = Some(node);
            return Ok(());
        };
        parent.shape.nodes = parent.shape.nodes.saturating_add(shape.nodes);
        parent.shape.height = parent.shape.height.max(shape.height);
        match &mut parent.node {
            Open::Seq(items) => items.push(node),
            Open::Map(entries, key) => match key.take() {
                None => *key = Some((node, at)),
                Some((key, at)) => entries.push(Entry { key, value: node, at }),
            },
        }
        Ok(())
    }
}

/// Applies a mapping's merge keys (`<<: *base` or `<<: [*a, *b]`): the merged entries whose
/// keys the mapping does not have itself, the first merged mapping winning, then its own.
fn merge(entries: Vec<Entry>) -> Result<Vec<Entry>, Error> {
    let is_merge =
        |e: &Entry| matches!(&e.key, Node::Scalar(Scalar { text, kind: Kind::Plain, .. }) if text == "<<");
    if !entries.iter().any(is_merge) {
        return Ok(entries);
    }
    let (sources, own): (Vec<Entry>, Vec<Entry>) = entries.into_iter().partition(is_merge);
    let mut merged: Vec<Entry> = Vec::new();
    for source in sources {
        let at = source.at;
        let maps = match source.value {
            Node::Map(m) => vec![m],
            Node::Seq(items) => items
                .into_iter()
                .map(|item| match item {
                    Node::Map(m) => Ok(m),
                    _ => Err(Error::new("a merge key (<<) takes mappings only", at)),
                })
                .collect::<Result<_, _>>()?,
            Node::Scalar(_) => {
                return Err(Error::new(
                    "a merge key (<<) takes a mapping or a list of mappings",
                    at,
                ));
            }
        };
        for entry in maps.into_iter().flatten() {
            let key = entry.key.key_text();
            let taken = |e: &Entry| key.is_some() && e.key.key_text() == key;
            if !own.iter().any(taken) && !merged.iter().any(taken) {
                merged.push(entry);
            }
        }
    }
    merged.extend(own);
    Ok(merged)
}

fn is_null(text: &str) -> bool {
    matches!(text, "" | "~" | "null" | "Null" | "NULL")
}

fn bool_of(text: &str) -> Option<bool> {
    match text {
        "true" | "True" | "TRUE" => Some(true),
        "false" | "False" | "FALSE" => Some(false),
        _ => None,
    }
}

/// An integer of the core schema: decimal with an optional sign, `0o` octal, `0x` hex. One
/// too large for 64 bits is a float, as a JSON reader would make it.
fn int_of(text: &str) -> Option<Value> {
    if let Some(digits) = text.strip_prefix("0o") {
        return u64::from_str_radix(digits, 8).ok().map(Value::from);
    }
    if let Some(digits) = text.strip_prefix("0x") {
        return u64::from_str_radix(digits, 16).ok().map(Value::from);
    }
    let digits = text.strip_prefix(['-', '+']).unwrap_or(text);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let unsigned = text.strip_prefix('+').unwrap_or(text);
    if let Ok(n) = unsigned.parse::<u64>() {
        return Some(Value::from(n));
    }
    if let Ok(n) = unsigned.parse::<i64>() {
        return Some(Value::from(n));
    }
    float_json(text.parse().ok()?)
}

/// A float of the core schema: `[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?`, or
/// `.inf`/`.nan` in their three spellings (JSON has neither: `null`).
fn float_of(text: &str) -> Option<Value> {
    let unsigned = text.strip_prefix(['-', '+']).unwrap_or(text);
    if matches!(unsigned, ".inf" | ".Inf" | ".INF") || matches!(text, ".nan" | ".NaN" | ".NAN") {
        return Some(Value::Null);
    }
    let (mantissa, exponent) = match unsigned.find(['e', 'E']) {
        Some(i) => (&unsigned[..i], Some(&unsigned[i + 1..])),
        None => (unsigned, None),
    };
    let (whole, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    let mantissa_ok = digits(whole)
        && digits(fraction)
        && (!whole.is_empty() || (mantissa.contains('.') && !fraction.is_empty()));
    let exponent_ok = exponent.is_none_or(|e| {
        let e = e.strip_prefix(['-', '+']).unwrap_or(e);
        !e.is_empty() && digits(e)
    });
    if !(mantissa_ok && exponent_ok) {
        return None;
    }
    float_json(text.parse().ok()?)
}

fn float_json(f: f64) -> Option<Value> {
    Some(Number::from_f64(f).map_or(Value::Null, Value::Number))
}

// Through the JSON a caller gets (the frontmatter's reading is tests/skills.rs's).
#[cfg(all(test, feature = "http"))]
mod tests {
    use super::*;
    use serde_json::json;

    const LIMITS: Limits = Limits {
        max_depth: 8,
        max_copies: 100,
    };

    fn json(text: &str) -> Result<Value, String> {
        match parse(text, LIMITS) {
            Ok(Some(node)) => node.into_json().map_err(|e| e.to_string()),
            Ok(None) => Ok(Value::Null),
            Err(e) => Err(e.to_string()),
        }
    }

    #[test]
    fn scalars_follow_the_core_schema() {
        let doc = "a: 0x1F\nb: 0o17\nc: 1e3\nd: .5\ne: -.inf\nf: 18446744073709551616\n\
                   g: -9\nh: +5\ni: 1_000\nj: yes\nk: ~\nl: 3.\nm: 0X1\nn: 2024-01-01\n\
                   o: '1'\np: !!str 1\nq: !!float 1\nr: 1e\ns: .\nt: True\nu: NULL\nv:\n\
                   w: \"null\"\nx: !!null ~\ny: !!bool false\nz: !custom 7\n";
        assert_eq!(
            json(doc).unwrap(),
            json!({"a": 31, "b": 15, "c": 1000.0, "d": 0.5, "e": null,
                   "f": 18446744073709551616.0, "g": -9, "h": 5, "i": "1_000", "j": "yes",
                   "k": null, "l": 3.0, "m": "0X1", "n": "2024-01-01", "o": "1", "p": "1",
                   "q": 1.0, "r": "1e", "s": ".", "t": true, "u": null, "v": null,
                   "w": "null", "x": null, "y": false, "z": "7"})
        );
        // Key order is the document's.
        let keys: Vec<String> = json("b: 1\na: 2\nc: 3\n")
            .unwrap()
            .as_object()
            .unwrap()
            .keys()
            .cloned()
            .collect();
        assert_eq!(keys, ["b", "a", "c"]);
    }

    #[test]
    fn block_scalars_quotes_and_a_byte_order_mark() {
        assert_eq!(
            json("\u{feff}lit: |\n  one\n  two\nfold: >-\n  a\n  b\ndq: \"t\\tx \\u00e9\"\nsq: 'it''s'\n")
                .unwrap(),
            json!({"lit": "one\ntwo\n", "fold": "a b", "dq": "t\tx é", "sq": "it's"})
        );
    }

    #[test]
    fn no_document_is_none() {
        assert!(parse("", LIMITS).unwrap().is_none());
        assert!(parse("# only a comment\n\n", LIMITS).unwrap().is_none());
    }

    #[test]
    fn anchors_aliases_and_merge_keys() {
        assert_eq!(
            json("x: &a hello\ny: *a\nlist: &l [1, 2]\ncopy: *l\n").unwrap(),
            json!({"x": "hello", "y": "hello", "list": [1, 2], "copy": [1, 2]})
        );
        // Own keys win over merged ones wherever they stand; the first merged mapping wins.
        let doc = "a: &a {k: 1, m: 1}\nb: &b {k: 2, n: 2}\n\
                   c:\n  k: own\n  <<: [*a, *b]\n  z: 0\n";
        assert_eq!(
            json(doc).unwrap()["c"],
            json!({"m": 1, "n": 2, "k": "own", "z": 0})
        );
        // A quoted "<<" is an ordinary key.
        assert_eq!(json("'<<': 1\n").unwrap(), json!({"<<": 1}));
    }

    #[test]
    fn errors_name_line_and_column() {
        let cases = [
            (
                "paths: [unterminated",
                "while parsing a flow sequence, expected ',' or ']' at line 2 column 1",
            ),
            (
                "name: a\n description: x\n",
                "mapping values are not allowed in this context at line 2 column 13",
            ),
            ("a: 1\nb: 2\na: 3\n", "duplicate key \"a\" at line 3 column 1"),
            (
                "a: b\n---\nc: d\n",
                "more than one YAML document at line 2 column 1",
            ),
            (
                "x: 1\n[a]: b\n",
                "a mapping key is not a scalar at line 2 column 1",
            ),
            (
                "x: !!int abc\n",
                "\"abc\" is not a valid !!int at line 1 column 10",
            ),
            (
                "x: !!bool yes\n",
                "\"yes\" is not a valid !!bool at line 1 column 11",
            ),
            (
                "x: *nope\n",
                "while parsing node, found unknown anchor at line 1 column 4",
            ),
            (
                "a: &a [*a]\n",
                "an alias refers to a node that contains it at line 1 column 8",
            ),
            (
                "<<: 5\n",
                "a merge key (<<) takes a mapping or a list of mappings at line 1 column 1",
            ),
            (
                "a: &a [1]\n<<: [*a]\n",
                "a merge key (<<) takes mappings only at line 2 column 1",
            ),
            (
                "%YAML 1.2\n",
                "did not find expected <document start> at line 2 column 1",
            ),
        ];
        for (doc, message) in cases {
            assert_eq!(json(doc).unwrap_err(), message, "{doc:?}");
        }
    }

    #[test]
    fn an_alias_bomb_is_refused() {
        let mut doc = String::from("l0: &l0 [x, x, x, x, x, x, x, x, x]\n");
        for i in 1..9 {
            let p = i - 1;
            doc.push_str(&format!(
                "l{i}: &l{i} [*l{p}, *l{p}, *l{p}, *l{p}, *l{p}, *l{p}, *l{p}, *l{p}, *l{p}]\n"
            ));
        }
        // Anchoring l0 copies its 10 nodes, l1's nine aliases 90 more: 100. Anchoring l1
        // (91 nodes) passes the limit, where l1 starts.
        assert_eq!(
            json(&doc).unwrap_err(),
            "anchors and aliases expand to more than 100 nodes at line 2 column 9"
        );
    }

    #[test]
    fn nesting_is_bounded_with_aliases_expanded() {
        assert_eq!(
            json("[[[[[[[[[x]]]]]]]]]").unwrap_err(),
            "nested deeper than 8 levels at line 1 column 9"
        );
        assert_eq!(
            json(&"- ".repeat(9)).unwrap_err(),
            "nested deeper than 8 levels at line 1 column 17"
        );
        assert_eq!(json("[[[[[[[[x]]]]]]]]").unwrap()[0][0][0][0][0][0][0][0], "x");
        // Five levels, then an alias of four more levels inside them: nine.
        assert_eq!(
            json("a: &a [[[[x]]]]\nb: [[[[*a]]]]\n").unwrap_err(),
            "nested deeper than 8 levels at line 2 column 8"
        );
    }
}
