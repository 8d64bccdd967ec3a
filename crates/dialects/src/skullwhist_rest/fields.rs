//! A request body of the 2014 API as its fields: each value is kept as the
//! JSON text it was sent as, and read only when a handler asks for it. A
//! `status` call's body parses without one allocation; as a
//! `serde_json::Value`, every key and every string of it was allocated
//! (about 2% of a busy server's CPU, issue 53).

use std::borrow::Cow;
use std::fmt;

use serde::de::{Deserializer, MapAccess, Visitor};
use serde::Deserialize;
use serde_json::value::RawValue;

use super::refusal::Refusal;

/// The fields of a JSON object, in the order sent, each value as its JSON
/// text (borrowed from the body when it can be).
#[derive(Debug, Default)]
pub struct Fields<'a>(Vec<(Cow<'a, str>, Cow<'a, RawValue>)>);

/// Why a body is not a request's fields.
#[derive(Debug)]
pub enum BadBody {
    /// Not JSON: the parser's message.
    Json(serde_json::Error),
    /// JSON, but not an object.
    NotAnObject,
}

impl<'a> Fields<'a> {
    /// Parses `body`, which must be one JSON object. A body that is not
    /// one is parsed again as a `serde_json::Value`, so that it is refused
    /// with the words it was before (a recursion limit included).
    pub fn parse(body: &'a [u8]) -> Result<Fields<'a>, BadBody> {
        serde_json::from_slice(body).map_err(|_| {
            match serde_json::from_slice::<serde_json::Value>(body) {
                Ok(_) => BadBody::NotAnObject,
                Err(e) => BadBody::Json(e),
            }
        })
    }

    /// Fields of string values (a query string's).
    pub fn of_strings<'s>(pairs: impl IntoIterator<Item = (&'s str, &'s str)>) -> Fields<'static> {
        Fields(
            pairs
                .into_iter()
                .filter_map(|(k, v)| {
                    let text = serde_json::to_string(v).ok()?;
                    let raw = RawValue::from_string(text).ok()?;
                    Some((Cow::Owned(k.to_string()), Cow::Owned(raw)))
                })
                .collect(),
        )
    }

    /// The JSON text of field `key`; the last one when it was sent twice
    /// (as a JSON object keeps it).
    pub fn raw(&self, key: &str) -> Option<&RawValue> {
        self.0
            .iter()
            .rev()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_ref())
    }

    /// Field `key` when it is a string (unescaped), else `None`.
    pub fn str(&self, key: &str) -> Option<Cow<'_, str>> {
        text(self.raw(key)?)
    }
}

/// A raw value that is a JSON string, unescaped (borrowed when it has no
/// escapes); `None` for any other value.
fn text(raw: &RawValue) -> Option<Cow<'_, str>> {
    let raw = raw.get();
    if !raw.starts_with('"') {
        return None;
    }
    serde_json::from_str::<Text<'_>>(raw).ok().map(|t| t.0)
}

/// A JSON string, borrowed from its text when it has no escapes.
#[derive(Deserialize)]
struct Text<'a>(#[serde(borrow)] Cow<'a, str>);

/// A string field of a request.
pub fn str_field<'b>(body: &'b Fields<'_>, key: &str) -> Result<Cow<'b, str>, Refusal> {
    text(present(body, key)?).ok_or_else(|| Refusal(format!("key '{key}' must be a string")))
}

/// Field `key`'s raw value, unless it is missing or `null`.
fn present<'b>(body: &'b Fields<'_>, key: &str) -> Result<&'b RawValue, Refusal> {
    body.raw(key)
        .filter(|raw| raw.get() != "null")
        .ok_or_else(|| Refusal(format!("missing key '{key}'")))
}

/// An integer field of a request, also when sent as a numeric string.
pub fn int_field(body: &Fields<'_>, key: &str) -> Result<i64, Refusal> {
    let bad = || Refusal(format!("key '{key}' must be an integer"));
    let value = present(body, key)?;
    match value.get() {
        raw if raw.starts_with('"') => {
            let s = text(value).ok_or_else(bad)?;
            s.trim().parse::<i64>().map_err(|_| bad())
        }
        // A number that is an integer JSON number (not `1.0`, not `1e2`),
        // as `serde_json::Number::as_i64` read it.
        raw => match serde_json::from_str::<serde_json::Number>(raw) {
            Ok(n) => n.as_i64().ok_or_else(bad),
            Err(_) => Err(bad()),
        },
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Fields<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Object<'a>(std::marker::PhantomData<&'a ()>);

        impl<'de> Visitor<'de> for Object<'de> {
            type Value = Fields<'de>;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON object")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Fields<'de>, A::Error> {
                let mut fields = Vec::with_capacity(map.size_hint().unwrap_or(4));
                while let Some((Text(k), v)) = map.next_entry::<Text<'de>, &'de RawValue>()? {
                    if !as_a_value_would(v.get()) {
                        // (`parse` then gives serde_json's own words.)
                        return Err(serde::de::Error::custom("not a value"));
                    }
                    fields.push((k, Cow::Borrowed(v)));
                }
                Ok(Fields(fields))
            }
        }

        d.deserialize_map(Object(std::marker::PhantomData))
    }
}

/// Whether `json`, captured as a field's raw value, is one that a
/// `serde_json::Value` object would have taken: a raw value is captured
/// without converting its numbers (`1e999` is out of range) or decoding its
/// escapes (a lone surrogate), and without the nesting limit. A plain
/// string, short integer or literal is taken as it is; anything else is
/// checked the long way (rare in requests).
fn as_a_value_would(json: &str) -> bool {
    let plain = match json.as_bytes().first() {
        Some(b'"') => !json.contains('\\'),
        Some(b'-' | b'0'..=b'9') => {
            json.len() <= 20 && json.bytes().all(|b| b == b'-' || b.is_ascii_digit())
        }
        Some(b't' | b'f' | b'n') => true,
        _ => false,
    };
    plain || (!too_deep(json) && serde_json::from_str::<serde_json::Value>(json).is_ok())
}

/// Whether a JSON value nests deeper than a `serde_json::Value` may (it
/// stops at 128 levels, the body's object included): a raw value is
/// captured without that limit, and such a body was always refused.
fn too_deep(json: &str) -> bool {
    if !json.starts_with(['[', '{']) {
        return false;
    }
    let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
    for b in json.bytes() {
        if in_string {
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                if depth >= 127 {
                    return true;
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Fields<'_> {
        Fields::parse(text.as_bytes()).expect("an object")
    }

    #[test]
    fn request_fields_are_read_leniently() {
        let body =
            parse(r#"{"a": " 12 ", "b": 3, "c": [1], "s": 4, "n": null, "f": 1.0, "e": 1e2}"#);
        assert_eq!(int_field(&body, "a"), Ok(12));
        assert_eq!(int_field(&body, "b"), Ok(3));
        let must = |k: &str| Err(Refusal(format!("key '{k}' must be an integer")));
        assert_eq!(int_field(&body, "c"), must("c"));
        assert_eq!(int_field(&body, "f"), must("f"));
        assert_eq!(int_field(&body, "e"), must("e"));
        let missing = |k: &str| Refusal(format!("missing key '{k}'"));
        assert_eq!(int_field(&body, "z"), Err(missing("z")));
        assert_eq!(int_field(&body, "n"), Err(missing("n")));
        assert_eq!(str_field(&body, "n"), Err(missing("n")));
        let not_a_string = Err(Refusal("key 's' must be a string".into()));
        assert_eq!(str_field(&body, "s"), not_a_string);
    }

    #[test]
    fn strings_are_unescaped_and_borrowed_when_plain() {
        let body = parse(r#"{"session": "abc", "card": "H\u0030\n5", "k\"ey": "v"}"#);
        let session = str_field(&body, "session").unwrap();
        assert!(matches!(session, Cow::Borrowed("abc")), "{session:?}");
        assert_eq!(str_field(&body, "card").unwrap(), "H0\n5");
        assert_eq!(str_field(&body, "k\"ey").unwrap(), "v");
    }

    /// The same answers as a `serde_json::Value` object gave, field by field.
    #[test]
    fn fields_read_as_a_value_object_did() {
        let text = r#"{"session": "x", "session": "y", "bid": "-3", "game": 9007199254740993,
                       "big": 18446744073709551616, "neg": -0, "t": true, "o": {"a": 1}}"#;
        let body = parse(text);
        let value: serde_json::Map<String, serde_json::Value> = serde_json::from_str(text).unwrap();
        for key in ["session", "bid", "game", "big", "neg", "t", "o", "missing"] {
            let old_str = match value.get(key) {
                None | Some(serde_json::Value::Null) => {
                    Err(Refusal(format!("missing key '{key}'")))
                }
                Some(serde_json::Value::String(s)) => Ok(s.clone()),
                Some(_) => Err(Refusal(format!("key '{key}' must be a string"))),
            };
            assert_eq!(str_field(&body, key).map(Cow::into_owned), old_str, "{key}");
            let bad = || Refusal(format!("key '{key}' must be an integer"));
            let old_int = match value.get(key) {
                None | Some(serde_json::Value::Null) => {
                    Err(Refusal(format!("missing key '{key}'")))
                }
                Some(serde_json::Value::Number(n)) => n.as_i64().ok_or_else(bad),
                Some(serde_json::Value::String(s)) => s.trim().parse::<i64>().map_err(|_| bad()),
                Some(_) => Err(bad()),
            };
            assert_eq!(int_field(&body, key), old_int, "{key}");
        }
    }

    #[test]
    fn a_body_that_is_no_object_is_told_from_one_that_is_no_json() {
        for text in ["[1]", "\"s\"", "3", "null"] {
            assert!(
                matches!(Fields::parse(text.as_bytes()), Err(BadBody::NotAnObject)),
                "{text}"
            );
        }
        let deep = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
        let deep_field = format!("{}1{}", "{\"a\":".repeat(5000), "}".repeat(5000));
        let huge = format!("{{\"a\": {}}}", "9".repeat(400));
        for text in [
            "{",
            "{\"a\":}",
            "{} x",
            "nul",
            &deep,
            &deep_field,
            r#"{"a": 5.69e1111111}"#,
            r#"{"a": [1, {"b": -1e400}]}"#,
            r#"{"a": "\ud800"}"#,
            &huge,
        ] {
            assert!(
                matches!(Fields::parse(text.as_bytes()), Err(BadBody::Json(_))),
                "{text}"
            );
        }
        assert!(parse("{}").raw("a").is_none());
        // As deep as a `Value` may nest, and no deeper; brackets in strings
        // do not count.
        let (open, close) = ("{\"a\":".repeat(127), "}".repeat(127));
        assert!(Fields::parse(format!("{open}1{close}").as_bytes()).is_ok());
        assert!(serde_json::from_str::<serde_json::Value>(&format!("{open}1{close}")).is_ok());
        let (open, close) = ("{\"a\":".repeat(128), "}".repeat(128));
        assert!(serde_json::from_str::<serde_json::Value>(&format!("{open}1{close}")).is_err());
        assert!(matches!(
            Fields::parse(format!("{open}1{close}").as_bytes()),
            Err(BadBody::Json(_))
        ));
        let brackets = format!("{{\"s\": \"{}\\\"[\"}}", "[".repeat(300));
        assert_eq!(str_field(&parse(&brackets), "s").unwrap().len(), 302);
    }

    #[test]
    fn query_strings_become_string_fields() {
        let body = Fields::of_strings([("session", "a\"b"), ("bid", "4")]);
        assert_eq!(str_field(&body, "session").unwrap(), "a\"b");
        assert_eq!(int_field(&body, "bid"), Ok(4));
    }
}
