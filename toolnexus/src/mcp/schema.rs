//! Listed MCP input schemas made provider-safe: servers send `$defs`/`$ref` (pydantic, zod)
//! that several providers reject, so local refs are inlined and the definitions dropped
//! before a schema reaches an adapter. The root's `$schema` stays where the server put it
//! (the SPEC passes MCP schemas through verbatim); the Gemini rendering drops it.

use serde_json::{Map, Value, json};

/// Deeper than any real schema; a self-referencing definition stops here as `{}`.
const MAX_DEPTH: usize = 32;

/// The tool schema the ports hand to adapters: the server's schema with `type: "object"`,
/// `properties` defaulted to `{}` and `additionalProperties: false`, after [`sanitize`].
pub(crate) fn input_schema(listed: &Value) -> Value {
    let mut schema = match sanitize(listed) {
        Value::Object(m) => m,
        _ => Map::new(),
    };
    schema.insert("type".into(), json!("object"));
    if !schema.get("properties").is_some_and(Value::is_object) {
        schema.insert("properties".into(), json!({}));
    }
    schema.insert("additionalProperties".into(), json!(false));
    Value::Object(schema)
}

/// Inline local `$ref`s (`#/$defs/X`, `#/definitions/X`), then drop `$id`, `$defs`,
/// `definitions`, any `$ref` that could not be resolved, and `$schema` below the root.
pub(crate) fn sanitize(schema: &Value) -> Value {
    let empty = Map::new();
    let Value::Object(root) = schema else {
        return schema.clone();
    };
    let defs = |key: &str| root.get(key).and_then(Value::as_object).unwrap_or(&empty);
    let ctx = Defs {
        defs: defs("$defs"),
        definitions: defs("definitions"),
    };
    ctx.walk_object(root, &mut Vec::new(), Meta::Keep)
}

/// Whether an object's `$schema` is kept: only the root's says which dialect the whole
/// schema is written in.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Meta {
    Keep,
    Drop,
}

struct Defs<'a> {
    defs: &'a Map<String, Value>,
    definitions: &'a Map<String, Value>,
}

impl Defs<'_> {
    fn resolve<'r>(&self, reference: &'r str) -> Option<(&'r str, &Value)> {
        let (table, name) = if let Some(n) = reference.strip_prefix("#/$defs/") {
            (self.defs, n)
        } else {
            (self.definitions, reference.strip_prefix("#/definitions/")?)
        };
        table.get(name).map(|v| (name, v))
    }

    fn walk(&self, value: &Value, expanding: &mut Vec<String>) -> Value {
        match value {
            Value::Object(map) => self.walk_object(map, expanding, Meta::Drop),
            Value::Array(items) => Value::Array(items.iter().map(|v| self.walk(v, expanding)).collect()),
            other => other.clone(),
        }
    }

    fn walk_object(&self, map: &Map<String, Value>, expanding: &mut Vec<String>, meta: Meta) -> Value {
        let mut out = Map::new();
        if let Some(reference) = map.get("$ref").and_then(Value::as_str)
            && let Some((name, target)) = self.resolve(reference)
            && !expanding.iter().any(|n| n == name)
            && expanding.len() < MAX_DEPTH
        {
            expanding.push(name.to_owned());
            if let Value::Object(inlined) = self.walk(target, expanding) {
                out = inlined;
            }
            expanding.pop();
        }
        for (key, v) in map {
            let dropped = match key.as_str() {
                "$ref" | "$id" | "$defs" | "definitions" => true,
                "$schema" => meta == Meta::Drop,
                _ => false,
            };
            if dropped {
                continue;
            }
            // Keys beside a `$ref` (a description, a default) refine the inlined target.
            out.insert(key.clone(), self.walk(v, expanding));
        }
        Value::Object(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_root_schema_uri_in_place_and_inlines_defs() {
        let listed = json!({
            "$schema": "http://json-schema.org/draft-07/schema#",
            "type": "object",
            "properties": {
                "point": {"$ref": "#/$defs/Point", "description": "where"},
                "tags": {"type": "array", "items": {"$ref": "#/definitions/Tag"}}
            },
            "$defs": {"Point": {"type": "object", "properties": {"x": {"type": "number"}}}},
            "definitions": {"Tag": {"$schema": "http://json-schema.org/draft-07/schema#", "type": "string"}}
        });
        let schema = input_schema(&listed);
        assert_eq!(
            schema,
            json!({
                "$schema": "http://json-schema.org/draft-07/schema#",
                "type": "object",
                "properties": {
                    "point": {"type": "object", "properties": {"x": {"type": "number"}}, "description": "where"},
                    "tags": {"type": "array", "items": {"type": "string"}}
                },
                "additionalProperties": false
            })
        );
        // Byte for byte: the server's `$schema` first, where it was.
        assert!(
            schema
                .to_string()
                .starts_with(r##"{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","##)
        );
    }

    #[test]
    fn recursive_and_unresolvable_refs_terminate() {
        let listed = json!({
            "properties": {
                "node": {"$ref": "#/$defs/Node"},
                "remote": {"$ref": "https://example.com/s.json", "type": "string"}
            },
            "$defs": {"Node": {"type": "object", "properties": {"next": {"$ref": "#/$defs/Node"}}}}
        });
        assert_eq!(
            input_schema(&listed),
            json!({
                "properties": {
                    "node": {"type": "object", "properties": {"next": {}}},
                    "remote": {"type": "string"}
                },
                "type": "object",
                "additionalProperties": false
            })
        );
    }

    #[test]
    fn non_object_schema_becomes_empty_object_schema() {
        assert_eq!(
            input_schema(&json!(null)),
            json!({"type": "object", "properties": {}, "additionalProperties": false})
        );
    }
}
