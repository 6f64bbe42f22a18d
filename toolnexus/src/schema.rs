//! Input schemas: generated from Rust types, and made safe for each provider.
//!
//! # Generated schemas ([`schema_for`])
//! `#[tool]` derives its schema with [schemars] and shapes it the way
//! models and providers read it best:
//! - every subschema is inlined: no `$ref`/`$defs` (except for a recursive type, which
//!   cannot be inlined), no `$schema`, no root `title`;
//! - the root is `{"type":"object","properties":…,"required":[…]}` with the descriptions
//!   from doc comments;
//! - a field-less enum is a string enum (`{"type":"string","enum":[…]}`), also when its
//!   variants have doc comments (schemars' `oneOf` of `const`s is folded; the variant docs
//!   are dropped, so describe the values in the field's doc comment);
//! - an `Option<T>` field is simply not required, with `T`'s schema (schemars' default
//!   `type: [T, "null"]` / `anyOf: [T, {"type":"null"}]` is folded back to `T`);
//! - the numeric `format`s schemars adds (`int64`, `uint32`, `double`, …) are dropped: they
//!   are OpenAPI-isms that JSON Schema does not define; `minimum` bounds stay.
//!
//! # Provider safety
//! The other ports pass a schema through verbatim; so do `to_openai` and `to_anthropic`.
//! Two provider-specific renderings go further, and both leave a schema already inside
//! their subset byte-for-byte unchanged:
//! - [`gemini_schema`] (used by [`adapter::to_gemini`](crate::adapter::to_gemini)): Gemini's
//!   `parameters` accept an OpenAPI-3 subset, so local `$ref`s are inlined (a cycle becomes
//!   `{}`), `type: [T, "null"]`, a `null` enum value and an `anyOf` member
//!   `{"type":"null"}` become `nullable: true`, `oneOf` becomes `anyOf`, a single-member
//!   `allOf` is merged, `const` becomes a one-value `enum`, an empty `properties` map is
//!   dropped (Gemini rejects it), `format` is kept only where Gemini knows it (`date-time`,
//!   `enum` on strings; `int32`/`int64`; `float`/`double`), and every other keyword
//!   (`$schema`, `$defs`, `additionalProperties`, `examples`, `exclusiveMinimum`, …) is dropped.
//! - [`openai_strict_schema`] (used by
//!   [`adapter::to_openai_strict`](crate::adapter::to_openai_strict)): OpenAI's strict mode wants
//!   every object closed and fully required, so each object schema gets
//!   `additionalProperties: false` and `required` listing every property, and a property that
//!   was optional becomes nullable (`"null"` added to its `type` — and to its `enum` — or an
//!   `anyOf` with `{"type":"null"}` when it has no `type`).
//!
//! ```
//! use serde_json::json;
//! use toolnexus::schema::{gemini_schema, openai_strict_schema};
//!
//! let schema = json!({
//!     "type": "object",
//!     "properties": {"q": {"type": "string"}, "limit": {"type": ["integer", "null"]}},
//!     "required": ["q"],
//!     "additionalProperties": false
//! });
//! assert_eq!(
//!     gemini_schema(&schema).to_string(),
//!     r#"{"type":"object","properties":{"q":{"type":"string"},"limit":{"type":"integer","nullable":true}},"required":["q"]}"#
//! );
//! let plain = json!({"type": "object", "properties": {"q": {"type": "string"}, "n": {"type": "integer"}}, "required": ["q"]});
//! assert_eq!(
//!     openai_strict_schema(&plain).to_string(),
//!     r#"{"type":"object","properties":{"q":{"type":"string"},"n":{"type":["integer","null"]}},"required":["q","n"],"additionalProperties":false}"#
//! );
//! ```

use serde_json::{Map, Value, json};

use schemars::JsonSchema;
use schemars::generate::SchemaSettings;

/// The input schema of an argument type, shaped as described in the [module docs](self).
///
/// ```
/// use toolnexus::schemars::JsonSchema;
///
/// #[derive(JsonSchema)]
/// struct Search {
///     /// What to look for.
///     query: String,
///     limit: Option<u32>,
/// }
/// assert_eq!(
///     toolnexus::schema::schema_for::<Search>().to_string(),
///     r#"{"type":"object","properties":{"query":{"type":"string","description":"What to look for."},"limit":{"type":"integer","minimum":0}},"required":["query"]}"#
/// );
/// ```
pub fn schema_for<T: JsonSchema>() -> Value {
    let generator = SchemaSettings::draft2020_12()
        .with(|s| {
            s.meta_schema = None;
            s.inline_subschemas = true;
        })
        .into_generator();
    let mut schema = generator.into_root_schema_for::<T>().to_value();
    if let Value::Object(root) = &mut schema {
        root.remove("title");
        tidy(root);
    }
    schema
}

/// The schema-valued children of a schema object, for a recursive walk: the values of
/// `properties`/`$defs`/…, the members of `anyOf`/…, and single subschemas like `items`.
fn for_each_subschema(schema: &mut Map<String, Value>, mut f: impl FnMut(&mut Map<String, Value>)) {
    for (key, value) in schema.iter_mut() {
        match (key.as_str(), value) {
            (
                "properties" | "patternProperties" | "$defs" | "definitions" | "dependentSchemas",
                Value::Object(m),
            ) => {
                m.values_mut().filter_map(Value::as_object_mut).for_each(&mut f);
            }
            ("anyOf" | "oneOf" | "allOf" | "prefixItems" | "items", Value::Array(list)) => {
                list.iter_mut().filter_map(Value::as_object_mut).for_each(&mut f);
            }
            (
                "items"
                | "additionalProperties"
                | "not"
                | "contains"
                | "if"
                | "then"
                | "else"
                | "propertyNames"
                | "unevaluatedProperties"
                | "unevaluatedItems"
                | "additionalItems",
                Value::Object(m),
            ) => f(m),
            _ => {}
        }
    }
}

fn is_null_schema(v: &Value) -> bool {
    v.get("type").and_then(Value::as_str) == Some("null")
}

/// Remove the nullability schemars expresses for `Option<T>` from a `type` array, an `enum`
/// and an `anyOf`; `true` when there was any. Merging a lone remaining `anyOf` member keeps
/// the parent's own keys (a field description) first.
fn strip_null(schema: &mut Map<String, Value>) -> bool {
    let mut had_null = false;
    if let Some(Value::Array(types)) = schema.get_mut("type")
        && let Some(i) = types.iter().position(|t| t == "null")
    {
        types.remove(i);
        had_null = true;
        if types.len() == 1 {
            let only = types.remove(0);
            schema.insert("type".into(), only);
        }
    }
    if let Some(Value::Array(values)) = schema.get_mut("enum")
        && let Some(i) = values.iter().position(Value::is_null)
    {
        values.remove(i);
        had_null = true;
    }
    if let Some(Value::Array(members)) = schema.get_mut("anyOf")
        && let Some(i) = members.iter().position(is_null_schema)
    {
        members.remove(i);
        had_null = true;
        if members.len() == 1
            && let Some(Value::Object(only)) =
                schema.remove("anyOf").and_then(|mut m| m.as_array_mut()?.pop())
        {
            for (k, v) in only {
                schema.entry(k).or_insert(v);
            }
        }
    }
    had_null
}

/// The values of a `oneOf`/`anyOf` whose members are all string constants — what schemars
/// emits for an enum with documented variants — to fold into one string enum.
fn string_choices(members: &[Value]) -> Option<Vec<Value>> {
    let mut values = Vec::new();
    for member in members {
        let m = member.as_object()?;
        if m.get("type").and_then(Value::as_str) != Some("string")
            || m.keys()
                .any(|k| !matches!(k.as_str(), "type" | "const" | "enum" | "description" | "title"))
        {
            return None;
        }
        match (m.get("const"), m.get("enum")) {
            (Some(c @ Value::String(_)), None) => values.push(c.clone()),
            (None, Some(Value::Array(list))) if list.iter().all(Value::is_string) => {
                values.extend(list.iter().cloned())
            }
            _ => return None,
        }
    }
    Some(values)
}

fn fold_string_enum(schema: &mut Map<String, Value>) {
    let Some((key, values)) = ["oneOf", "anyOf"].iter().find_map(|k| {
        let members = schema.get(*k)?.as_array()?;
        Some((*k, string_choices(members)?))
    }) else {
        return;
    };
    *schema = std::mem::take(schema)
        .into_iter()
        .flat_map(|(k, v)| {
            if k == key {
                vec![
                    ("type".to_owned(), json!("string")),
                    ("enum".to_owned(), Value::Array(values.clone())),
                ]
            } else {
                vec![(k, v)]
            }
        })
        .collect();
}

fn tidy(schema: &mut Map<String, Value>) {
    strip_null(schema);
    fold_string_enum(schema);
    if matches!(
        schema.get("type").and_then(Value::as_str),
        Some("integer" | "number")
    ) {
        schema.remove("format");
    }
    for_each_subschema(schema, tidy);
}

/// `schema` rendered for Gemini's OpenAPI-subset `parameters` (rules in the
/// [module docs](self)).
pub fn gemini_schema(schema: &Value) -> Value {
    let Value::Object(root) = schema else {
        return schema.clone();
    };
    let mut stack = Vec::new();
    Value::Object(gemini_object(root, root, &mut stack))
}

/// The keywords of Gemini's `Schema` object.
const GEMINI_KEYWORDS: &[&str] = &[
    "type",
    "format",
    "title",
    "description",
    "nullable",
    "enum",
    "maxItems",
    "minItems",
    "properties",
    "required",
    "minProperties",
    "maxProperties",
    "minLength",
    "maxLength",
    "pattern",
    "example",
    "anyOf",
    "propertyOrdering",
    "default",
    "items",
    "minimum",
    "maximum",
];

fn resolve<'a>(root: &'a Map<String, Value>, reference: &str) -> Option<&'a Map<String, Value>> {
    if reference == "#" {
        return Some(root);
    }
    let (defs, name) = reference.strip_prefix("#/")?.split_once('/')?;
    root.get(defs)?.get(name)?.as_object()
}

fn gemini_object(
    schema: &Map<String, Value>,
    root: &Map<String, Value>,
    refs: &mut Vec<String>,
) -> Map<String, Value> {
    if let Some(reference) = schema.get("$ref").and_then(Value::as_str) {
        let Some(target) = resolve(root, reference).filter(|_| !refs.iter().any(|r| r == reference)) else {
            return Map::new();
        };
        refs.push(reference.to_owned());
        let mut inlined = gemini_object(target, root, refs);
        refs.pop();
        // Keys beside a `$ref` (a field's description) describe this use: they win.
        for (k, v) in gemini_object(&without(schema, "$ref"), root, refs) {
            inlined.insert(k, v);
        }
        return inlined;
    }
    let mut out = schema.clone();
    if let Some(Value::Array(members)) = out.remove("oneOf") {
        out.entry("anyOf").or_insert(Value::Array(members));
    }
    if let Some(Value::Array(mut members)) = out.remove("allOf")
        && let (1, Some(Value::Object(only))) = (members.len(), members.pop())
    {
        for (k, v) in only {
            out.entry(k).or_insert(v);
        }
    }
    if let Some(value) = out.remove("const") {
        out.entry("enum").or_insert(json!([value]));
    }
    let nullable = strip_null(&mut out);
    if out.get("type").is_some_and(Value::is_array) {
        // Several non-null types: one anyOf member per type.
        if let Some(Value::Array(types)) = out.remove("type") {
            let members = types.into_iter().map(|t| json!({ "type": t })).collect();
            out.entry("anyOf").or_insert(Value::Array(members));
        }
    }
    if nullable {
        out.insert("nullable".into(), Value::Bool(true));
    }
    if let Some(format) = out.get("format").and_then(Value::as_str) {
        let known = match out.get("type").and_then(Value::as_str) {
            Some("string") => matches!(format, "date-time" | "enum"),
            Some("integer") => matches!(format, "int32" | "int64"),
            Some("number") => matches!(format, "float" | "double"),
            _ => false,
        };
        if !known {
            out.remove("format");
        }
    }
    if out
        .get("properties")
        .and_then(Value::as_object)
        .is_some_and(Map::is_empty)
    {
        out.remove("properties");
        if out
            .get("required")
            .and_then(Value::as_array)
            .is_some_and(Vec::is_empty)
        {
            out.remove("required");
        }
    }
    out.retain(|k, _| GEMINI_KEYWORDS.contains(&k.as_str()));
    for (key, value) in out.iter_mut() {
        match (key.as_str(), value) {
            ("properties", Value::Object(m)) => {
                for v in m.values_mut() {
                    if let Value::Object(o) = v {
                        *o = gemini_object(o, root, refs);
                    }
                }
            }
            ("anyOf", Value::Array(list)) => {
                for v in list.iter_mut() {
                    if let Value::Object(o) = v {
                        *o = gemini_object(o, root, refs);
                    }
                }
            }
            ("items", Value::Object(o)) => *o = gemini_object(o, root, refs),
            _ => {}
        }
    }
    out
}

fn without(schema: &Map<String, Value>, key: &str) -> Map<String, Value> {
    schema
        .iter()
        .filter(|(k, _)| *k != key)
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

/// `schema` rendered for OpenAI's strict mode (rules in the [module docs](self)).
pub fn openai_strict_schema(schema: &Value) -> Value {
    let mut out = schema.clone();
    if let Value::Object(root) = &mut out {
        close(root);
    }
    out
}

fn close(schema: &mut Map<String, Value>) {
    let is_object =
        schema.get("type").and_then(Value::as_str) == Some("object") || schema.contains_key("properties");
    if is_object {
        let required: Vec<String> = schema
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).map(str::to_owned).collect())
            .unwrap_or_default();
        let properties = schema
            .entry("properties")
            .or_insert_with(|| Value::Object(Map::new()))
            .as_object_mut();
        let mut names = Vec::new();
        if let Some(properties) = properties {
            for (name, property) in properties.iter_mut() {
                if !required.contains(name) {
                    make_nullable(property);
                }
                names.push(Value::String(name.clone()));
            }
        }
        schema.insert("required".into(), Value::Array(names));
        schema.insert("additionalProperties".into(), Value::Bool(false));
    }
    for_each_subschema(schema, close);
}

fn make_nullable(property: &mut Value) {
    let Value::Object(p) = property else { return };
    match p.get_mut("type") {
        Some(Value::String(t)) if t != "null" => {
            let t = std::mem::take(t);
            p.insert("type".into(), json!([t, "null"]));
        }
        Some(Value::Array(types)) => {
            if !types.iter().any(|t| t == "null") {
                types.push(json!("null"));
            }
        }
        Some(_) => return,
        None => {
            let original = std::mem::take(p);
            p.insert("anyOf".into(), json!([original, {"type": "null"}]));
            return;
        }
    }
    if let Some(Value::Array(values)) = p.get_mut("enum")
        && !values.iter().any(Value::is_null)
    {
        values.push(Value::Null);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_schema_inside_the_subsets_is_unchanged() {
        let s = json!({"type": "object", "properties": {"path": {"type": "string", "description": "File"},
            "mode": {"type": "string", "enum": ["a", "b"]}, "n": {"type": "integer", "minimum": 1},
            "tags": {"type": "array", "items": {"type": "string"}}}, "required": ["path"]});
        assert_eq!(gemini_schema(&s).to_string(), s.to_string());
        assert_eq!(
            gemini_schema(&json!({"type": "object"})),
            json!({"type": "object"})
        );
        let closed = json!({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"], "additionalProperties": false});
        assert_eq!(openai_strict_schema(&closed).to_string(), closed.to_string());
    }

    #[test]
    fn gemini_resolves_refs_and_nullability() {
        let s = json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "properties": {
                "filter": {"$ref": "#/$defs/Filter", "description": "How to filter"},
                "kind": {"oneOf": [{"const": "a"}, {"const": "b"}]},
                "when": {"type": "string", "format": "date-time"},
                "site": {"type": "string", "format": "uri"},
                "tree": {"$ref": "#/$defs/Tree"},
                "mode": {"anyOf": [{"type": "string", "enum": ["x", "y"]}, {"type": "null"}]},
                "num": {"type": ["integer", "string"]},
                "none": {"type": "object", "properties": {}, "required": []}
            },
            "$defs": {
                "Filter": {"type": "object", "properties": {"limit": {"type": ["integer", "null"], "exclusiveMinimum": 0}},
                    "additionalProperties": false},
                "Tree": {"type": "object", "properties": {"child": {"$ref": "#/$defs/Tree"}}}
            }
        });
        assert_eq!(
            gemini_schema(&s).to_string(),
            concat!(
                r#"{"type":"object","properties":{"#,
                r#""filter":{"type":"object","properties":{"limit":{"type":"integer","nullable":true}},"description":"How to filter"},"#,
                r#""kind":{"anyOf":[{"enum":["a"]},{"enum":["b"]}]},"#,
                r#""when":{"type":"string","format":"date-time"},"site":{"type":"string"},"#,
                r#""tree":{"type":"object","properties":{"child":{}}},"#,
                r#""mode":{"type":"string","enum":["x","y"],"nullable":true},"#,
                r#""num":{"anyOf":[{"type":"integer"},{"type":"string"}]},"#,
                r#""none":{"type":"object"}}}"#
            )
        );
    }

    #[test]
    fn strict_closes_nested_objects_and_nulls_optional_fields() {
        let s = json!({"type": "object", "properties": {
            "q": {"type": "string"},
            "mode": {"type": "string", "enum": ["a", "b"]},
            "filter": {"type": "object", "properties": {"limit": {"type": "integer"}}},
            "any": {"description": "anything"}
        }, "required": ["q"]});
        assert_eq!(
            openai_strict_schema(&s).to_string(),
            concat!(
                r#"{"type":"object","properties":{"q":{"type":"string"},"#,
                r#""mode":{"type":["string","null"],"enum":["a","b",null]},"#,
                r#""filter":{"type":["object","null"],"properties":{"limit":{"type":["integer","null"]}},"required":["limit"],"additionalProperties":false},"#,
                r#""any":{"anyOf":[{"description":"anything"},{"type":"null"}]}},"#,
                r#""required":["q","mode","filter","any"],"additionalProperties":false}"#
            )
        );
    }
}
