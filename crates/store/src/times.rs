//! Times as the JSON the server sends shows them: RFC 3339 in UTC (issue
//! 52), whatever the column holds. Some columns keep unix seconds (as an
//! integer or as text); these `serialize_with` helpers write them in the
//! one format every reply and JSON twin uses.

use std::time::{Duration, UNIX_EPOCH};

use serde::Serializer;

/// Unix seconds as RFC 3339 (`2026-12-01T12:00:00Z`).
pub fn rfc3339(unix: i64) -> String {
    let t = UNIX_EPOCH + Duration::from_secs(unix.max(0) as u64);
    humantime::format_rfc3339_seconds(t).to_string()
}

/// Serializes unix seconds as RFC 3339.
pub fn unix<S: Serializer>(unix: &i64, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&rfc3339(*unix))
}

/// Serializes optional unix seconds as RFC 3339 or `null`.
pub fn unix_opt<S: Serializer>(unix: &Option<i64>, s: S) -> Result<S::Ok, S::Error> {
    match unix {
        Some(u) => s.serialize_str(&rfc3339(*u)),
        None => s.serialize_none(),
    }
}

/// Serializes unix seconds kept as text as RFC 3339 (text that is not a
/// number is written as it is).
pub fn unix_text<S: Serializer>(text: &str, s: S) -> Result<S::Ok, S::Error> {
    match text.trim().parse::<i64>() {
        Ok(u) => s.serialize_str(&rfc3339(u)),
        Err(_) => s.serialize_str(text),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(serde::Serialize)]
    struct T {
        #[serde(serialize_with = "unix")]
        a: i64,
        #[serde(serialize_with = "unix_opt")]
        b: Option<i64>,
        #[serde(serialize_with = "unix_text")]
        c: String,
    }

    #[test]
    fn unix_seconds_read_as_rfc3339() {
        let t = T {
            a: 1_790_856_000,
            b: None,
            c: "0".into(),
        };
        assert_eq!(
            serde_json::to_string(&t).unwrap_or_default(),
            r#"{"a":"2026-10-01T12:00:00Z","b":null,"c":"1970-01-01T00:00:00Z"}"#
        );
    }
}
