//! Builders that produce exactly the classifier's inputs, so a request built here is
//! byte-identical to one written by hand.

use serde_json::{Map, Value};

use crate::classifier::{ClassifierError, Question, Questions};

/// A question with the name its answer is filed under.
pub type NamedQuestion = (String, Question);

/// A noul question without criteria.
pub fn noul(name: impl Into<String>, instructions: impl Into<String>) -> NamedQuestion {
    (name.into(), Question::noul(instructions))
}

/// A noul question labelling its true and false cases; both empty leaves the criteria off
/// the wire, as [`noul`] does.
pub fn noul_with(
    name: impl Into<String>,
    instructions: impl Into<String>,
    if_true: impl Into<String>,
    if_false: impl Into<String>,
) -> NamedQuestion {
    let (if_true, if_false) = (if_true.into(), if_false.into());
    let q = Question::noul(instructions);
    let q = if if_true.is_empty() && if_false.is_empty() {
        q
    } else {
        q.with_criteria(if_true, if_false)
    };
    (name.into(), q)
}

/// A choice over `(option id, what picking it means)` pairs.
pub fn choice<K: Into<String>, D: Into<String>>(
    name: impl Into<String>,
    instructions: impl Into<String>,
    options: impl IntoIterator<Item = (K, D)>,
) -> NamedQuestion {
    (name.into(), Question::choice(instructions, options))
}

/// A score over ordered `levels`, lowest first.
pub fn score<L: Into<String>>(
    name: impl Into<String>,
    instructions: impl Into<String>,
    levels: impl IntoIterator<Item = L>,
) -> NamedQuestion {
    (name.into(), Question::score(instructions, levels))
}

/// Named questions to the classifier's map; a repeated name is an error naming it.
///
/// ```
/// use toolnexus::judge::{noul, questions};
///
/// assert!(questions([noul("a", "A?"), noul("b", "B?")]).is_ok());
/// let err = questions([noul("a", "A?"), noul("a", "again?")]).unwrap_err();
/// assert_eq!(err.to_string(), "duplicate question name \"a\"");
/// ```
pub fn questions(named: impl IntoIterator<Item = NamedQuestion>) -> Result<Questions, ClassifierError> {
    let mut out = Questions::new();
    for (name, q) in named {
        if out.contains_key(&name) {
            return Err(ClassifierError::DuplicateQuestion(name));
        }
        out.insert(name, q);
    }
    Ok(out)
}

/// A state: `role` next to the data's fields (a field named `role` in the data wins), or
/// under `data` when the data is not an object.
///
/// ```
/// use serde_json::json;
/// use toolnexus::judge::state;
///
/// assert_eq!(state("You review", json!({"text": "hi"})), json!({"role": "You review", "text": "hi"}));
/// assert_eq!(state("You review", json!("hi")), json!({"role": "You review", "data": "hi"}));
/// ```
pub fn state(role: impl Into<String>, data: Value) -> Value {
    let mut out = Map::new();
    out.insert("role".into(), Value::String(role.into()));
    match data {
        Value::Object(fields) => out.extend(fields),
        other => {
            out.insert("data".into(), other);
        }
    }
    Value::Object(out)
}

/// `{context, message}` with `extra`'s fields merged in (they win).
pub fn context(ctx: impl Into<String>, message: impl Into<String>, extra: Map<String, Value>) -> Value {
    let mut out = Map::new();
    out.insert("context".into(), Value::String(ctx.into()));
    out.insert("message".into(), Value::String(message.into()));
    out.extend(extra);
    Value::Object(out)
}
