//! The canonical JSON form the classifier's byte-identity claim rests on: object keys sorted
//! recursively (code-point order), arrays never reordered, compact separators, non-ASCII and
//! `<>&'"`-style characters sent raw (only what JSON requires is escaped).
//!
//! Numbers are written the way the Python port writes them (its `repr`), so even a `state`
//! holding floats goes out byte-identical to that port's body: `1e-05`, `1e+16`, `100.0`,
//! `-0.0`.
//!
//! ```
//! use serde_json::json;
//! use toolnexus::classifier::canonical_json;
//!
//! let v = json!({"b": [3, 1, 2], "a": {"z": "é<&>", "y": 1e-5}, "c": 100.0});
//! assert_eq!(
//!     String::from_utf8(canonical_json(&v)).unwrap(),
//!     r#"{"a":{"y":1e-05,"z":"é<&>"},"b":[3,1,2],"c":100.0}"#
//! );
//! ```

use std::fmt::Write as _;

use serde_json::{Number, Value};

/// `value` in canonical form, as UTF-8 bytes.
pub fn canonical_json(value: &Value) -> Vec<u8> {
    let mut out = String::new();
    write_value(&mut out, value);
    out.into_bytes()
}

fn write_value(out: &mut String, value: &Value) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => write_number(out, n),
        Value::String(s) => write_string(out, s),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_value(out, item);
            }
            out.push(']');
        }
        Value::Object(map) => {
            // Byte order of UTF-8 keys is code-point order, which is what the port sorts by.
            let mut entries: Vec<_> = map.iter().collect();
            entries.sort_unstable_by(|a, b| a.0.cmp(b.0));
            out.push('{');
            for (i, (k, v)) in entries.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_string(out, k);
                out.push(':');
                write_value(out, v);
            }
            out.push('}');
        }
    }
}

/// serde_json's string escaping is exactly the port's (`\"`, `\\`, the five short control
/// escapes, `\u00xx` lowercase for the other control characters, everything else raw).
fn write_string(out: &mut String, s: &str) {
    out.push_str(&serde_json::to_string(s).unwrap_or_default());
}

fn write_number(out: &mut String, n: &Number) {
    if n.is_f64()
        && let Some(f) = n.as_f64()
    {
        write_float(out, f);
        return;
    }
    let _ = write!(out, "{n}");
}

/// A float as Python's `repr`: the shortest digits that round-trip, in positional notation
/// when the decimal exponent is in `-4..16`, else `d.ddde±XX` (two exponent digits at least),
/// and always with a `.0` or an exponent so it reads back as a float.
fn write_float(out: &mut String, f: f64) {
    // `{:e}` yields the shortest round-trip digits: `1.2345e-7`, `-5e0`.
    let sci = format!("{f:e}");
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let (sign, mantissa) = match mantissa.strip_prefix('-') {
        Some(m) => ("-", m),
        None => ("", mantissa),
    };
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    out.push_str(sign);
    if (-4..16).contains(&exp) {
        let point = exp + 1; // digits before the decimal point
        if point <= 0 {
            out.push_str("0.");
            out.extend(std::iter::repeat_n('0', point.unsigned_abs() as usize));
            out.push_str(&digits);
        } else {
            let point = point as usize;
            if digits.len() <= point {
                out.push_str(&digits);
                out.extend(std::iter::repeat_n('0', point - digits.len()));
                out.push_str(".0");
            } else {
                out.push_str(&digits[..point]);
                out.push('.');
                out.push_str(&digits[point..]);
            }
        }
    } else {
        out.push_str(&digits[..1]);
        if digits.len() > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        let _ = write!(out, "e{}{:02}", if exp < 0 { '-' } else { '+' }, exp.abs());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn float(f: f64) -> String {
        let mut s = String::new();
        write_float(&mut s, f);
        s
    }

    #[test]
    fn floats_read_like_python_repr() {
        for (f, want) in [
            (1e16, "1e+16"),
            (1e15, "1000000000000000.0"),
            (0.0001, "0.0001"),
            (0.00001, "1e-05"),
            (1.0, "1.0"),
            (-0.0, "-0.0"),
            (0.0, "0.0"),
            (123.456, "123.456"),
            (1e-7, "1e-07"),
            (1.5e300, "1.5e+300"),
            (5e-324, "5e-324"),
            (0.1 + 0.2, "0.30000000000000004"),
            (100.0, "100.0"),
            (1234567890123456.0, "1234567890123456.0"),
            (12345678901234567.0, "1.2345678901234568e+16"),
            (-2.5e-5, "-2.5e-05"),
            (0.85, "0.85"),
        ] {
            assert_eq!(float(f), want, "{f:e}");
        }
    }

    #[test]
    fn integers_stay_integers_and_strings_escape_only_what_json_needs() {
        let v: Value =
            serde_json::from_str(r#"{"n":-3,"big":18446744073709551615,"s":"a\"b\\c\n\u0001\u007f\u2028"}"#)
                .unwrap();
        assert_eq!(
            String::from_utf8(canonical_json(&v)).unwrap(),
            "{\"big\":18446744073709551615,\"n\":-3,\"s\":\"a\\\"b\\\\c\\n\\u0001\u{7f}\u{2028}\"}"
        );
    }
}
