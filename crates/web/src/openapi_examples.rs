//! An example request and answer for each operation of the HTTP API
//! reference, made from the document itself (its schemas, enums, defaults
//! and formats), so that an example cannot drift from what it describes.

use serde_json::{json, Map, Value};

/// Deepest nesting of schemas an example follows.
const DEPTH: usize = 6;

/// A string with nothing known about it.
const TEXT: &str = "…";

/// A plausible string for a field, by its name.
fn text_for(field: &str) -> &'static str {
    match field {
        "name" | "bot" => "alice-bot",
        "owner" => "alice",
        "password" => "s3cret",
        "url" | "endpoint" => "https://bot.example/croupier",
        "token" => "crp_…",
        "dialect" => "croupier",
        "game" => "goofspiel",
        "error" | "reason" | "pause_reason" => "why, in a sentence",
        "auth_user" => "croupier",
        "status" => "running",
        _ => TEXT,
    }
}

/// An example value of `schema` (references resolved in `doc`).
pub fn value(doc: &Value, schema: &Value, depth: usize) -> Value {
    if depth > DEPTH {
        return Value::Null;
    }
    if let Some(r) = schema["$ref"].as_str() {
        let name = r.rsplit('/').next().unwrap_or(r);
        return value(doc, &doc["components"]["schemas"][name], depth + 1);
    }
    for key in ["example", "const", "default"] {
        if !schema[key].is_null() {
            return schema[key].clone();
        }
    }
    if let Some(first) = schema["enum"].as_array().and_then(|e| e.first()) {
        return first.clone();
    }
    if let Some(first) = schema["oneOf"]
        .as_array()
        .or(schema["anyOf"].as_array())
        .and_then(|a| a.first())
    {
        return value(doc, first, depth + 1);
    }
    let kind = match &schema["type"] {
        Value::String(t) => t.as_str(),
        Value::Array(ts) => ts
            .iter()
            .filter_map(Value::as_str)
            .find(|t| *t != "null")
            .unwrap_or("null"),
        _ if schema["properties"].is_object() => "object",
        _ => "string",
    };
    match kind {
        "object" => {
            let mut out = Map::new();
            for (name, p) in schema["properties"].as_object().into_iter().flatten() {
                let mut v = value(doc, p, depth + 1);
                if v == json!(TEXT) {
                    v = json!(text_for(name));
                }
                out.insert(name.clone(), v);
            }
            Value::Object(out)
        }
        "array" => json!([value(doc, &schema["items"], depth + 1)]),
        "integer" => schema["minimum"]
            .as_i64()
            .map_or(json!(1), |m| json!(m.max(1))),
        "number" => json!(1.5),
        "boolean" => json!(true),
        "null" => Value::Null,
        _ => match schema["format"].as_str() {
            Some("date-time") => json!("2026-12-01T12:00:00Z"),
            Some("uri") => json!("https://bot.example/croupier"),
            _ => json!(TEXT),
        },
    }
}

/// A `curl` command for an operation, with `SERVER` for the site's
/// address.
pub fn request(doc: &Value, method: &str, path: &str, op: &Value, shared: &Value) -> String {
    if method == "webhook" {
        // Croupier is the client: what it sends to the bot's URL.
        let schema = &op["requestBody"]["content"]["application/json"]["schema"];
        let body = serde_json::to_string_pretty(&value(doc, schema, 0)).unwrap_or_default();
        return format!(
            "POST https://bot.example/croupier (the bot's URL)\nContent-Type: application/json\n\n{body}"
        );
    }
    let mut url = format!("SERVER{path}");
    let query: Vec<String> = shared
        .as_array()
        .into_iter()
        .flatten()
        .chain(op["parameters"].as_array().into_iter().flatten())
        .filter(|p| p["in"] == "query" && p["required"] == Value::Bool(true))
        .map(|p| {
            let v = value(doc, &p["schema"], 0);
            let text = v.as_str().map_or_else(|| v.to_string(), str::to_string);
            format!("{}={text}", p["name"].as_str().unwrap_or("?"))
        })
        .collect();
    if !query.is_empty() {
        url = format!("{url}?{}", query.join("&"));
    }
    let mut cmd = format!("curl -X {} '{url}'", method.to_uppercase());
    let schemes: Vec<&str> = op["security"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_object)
        .flat_map(|o| o.keys().map(String::as_str))
        .collect();
    match schemes
        .first()
        .map(|n| doc["components"]["securitySchemes"][n]["scheme"].as_str())
    {
        Some(Some("basic")) => cmd.push_str(" -u OWNER:PASSWORD"),
        Some(Some("bearer")) => cmd.push_str(" -H 'Authorization: Bearer crp_…'"),
        _ => {}
    }
    let content = &op["requestBody"]["content"];
    if let Some(schema) = content["application/json"]["schema"].as_object() {
        let body = value(doc, &Value::Object(schema.clone()), 0);
        cmd.push_str(&format!(
            " \\\n  -H 'Content-Type: application/json' -d '{body}'"
        ));
    } else if content["application/octet-stream"].is_object() {
        cmd.push_str(" \\\n  -H 'Content-Type: application/octet-stream' --data-binary @bot.py");
    }
    cmd
}

/// The first successful answer with a JSON body, as (status, example).
pub fn answer(doc: &Value, op: &Value) -> Option<(String, String)> {
    let responses = op["responses"].as_object()?;
    responses
        .iter()
        .filter(|(status, _)| status.starts_with('2'))
        .find_map(|(status, r)| {
            let schema = &r["content"]["application/json"]["schema"];
            schema.is_object().then(|| {
                let v = value(doc, schema, 0);
                let text = serde_json::to_string_pretty(&v).unwrap_or_default();
                (status.clone(), text)
            })
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn examples_follow_the_schemas() {
        let doc: Value = serde_json::from_str(crate::openapi::OPENAPI).expect("the document");
        let mut answers = 0;
        for (path, item) in doc["paths"].as_object().expect("paths") {
            for (method, op) in item.as_object().expect("item") {
                if method == "parameters" {
                    continue;
                }
                let curl = request(&doc, method, path, op, &item["parameters"]);
                assert!(curl.starts_with(&format!("curl -X {}", method.to_uppercase())));
                if op["requestBody"]["content"]["application/json"].is_object() {
                    let json = &curl[curl.find("-d '").expect("a body") + 4..curl.len() - 1];
                    let body: Value = serde_json::from_str(json).expect("the body is JSON");
                    assert!(body.is_object(), "{path}: {body}");
                }
                answers += usize::from(answer(&doc, op).is_some());
            }
        }
        assert!(answers > 10, "{answers} operations answer JSON");
        let s = json!({"type": "object", "properties": {
            "when": {"type": "string", "format": "date-time"},
            "kind": {"enum": ["push", "pull"]},
            "n": {"type": ["integer", "null"], "minimum": 3},
            "list": {"type": "array", "items": {"type": "boolean"}}
        }});
        assert_eq!(
            value(&json!({}), &s, 0),
            json!({"when": "2026-12-01T12:00:00Z", "kind": "push", "n": 3, "list": [true]})
        );
    }
}
