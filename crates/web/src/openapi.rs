//! The HTTP API reference, rendered from `/openapi.json` (the document the
//! server serves, [`OPENAPI`]): `/docs/http-api` lists the
//! document's tags, `/docs/http-api/{tag}` shows every operation and webhook
//! of a tag with its parameters, bodies, responses and the schemas they use.
//! Nothing here is copied by hand: a new route in the document appears here.

use std::collections::BTreeSet;
use std::fmt::Write as _;

use axum::extract::Path;
use axum::response::{Html, IntoResponse, Response};
use serde_json::Value;

use crate::html::{esc, layout};
use crate::page::{Fmt, WebError};

/// The OpenAPI document of `/v1` and the push webhooks. It lives beside
/// its reader, the reference pages; the HTTP layer above serves the same
/// text at `/openapi.json`.
pub const OPENAPI: &str = include_str!("openapi.json");

fn document() -> Result<Value, WebError> {
    serde_json::from_str(OPENAPI).map_err(|e| {
        tracing::error!("openapi.json does not parse: {e}");
        WebError::Internal
    })
}

/// Text from the document, escaped, with site paths (`/docs/…`, `/start`,
/// `/api/`, `/openapi.json`) turned into links.
pub fn linkify(text: &str) -> String {
    let mut out = String::new();
    for (i, word) in text.split(' ').enumerate() {
        if i > 0 {
            out.push(' ');
        }
        let end = word
            .find(|c: char| !(c.is_ascii_alphanumeric() || "/-_.".contains(c)))
            .unwrap_or(word.len());
        let core = word[..end].trim_end_matches('.');
        let rest = &word[core.len()..];
        let site = ["/docs", "/start", "/api/", "/openapi.json", "/rules"];
        if site.iter().any(|p| core.starts_with(p)) {
            let _ = write!(out, "<a href=\"{0}\">{0}</a>{1}", esc(core), esc(rest));
        } else {
            out.push_str(&esc(word));
        }
    }
    out
}

/// The tags of the document: (name, description).
fn tags(doc: &Value) -> Vec<(String, String)> {
    doc["tags"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|t| {
                    (
                        t["name"].as_str().unwrap_or_default().to_string(),
                        t["description"].as_str().unwrap_or_default().to_string(),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

/// A schema's type in a few words, with references linked to their anchor.
fn type_of(s: &Value, used: &mut BTreeSet<String>) -> String {
    if let Some(r) = s["$ref"].as_str() {
        let name = r.rsplit('/').next().unwrap_or(r).to_string();
        let link = format!("<a href=\"#schema-{0}\">{0}</a>", esc(&name));
        used.insert(name);
        return link;
    }
    if let Some(e) = s["enum"].as_array() {
        let vals: Vec<String> = e
            .iter()
            .map(|v| format!("<code>{}</code>", esc(&v.to_string())))
            .collect();
        return format!("one of {}", vals.join(", "));
    }
    if let Some(alts) = s["oneOf"].as_array().or(s["anyOf"].as_array()) {
        let parts: Vec<String> = alts.iter().map(|a| type_of(a, used)).collect();
        return parts.join(" or ");
    }
    match &s["type"] {
        Value::String(t) if t == "array" => format!("array of {}", type_of(&s["items"], used)),
        Value::String(t) => esc(t),
        Value::Array(ts) => ts
            .iter()
            .filter_map(Value::as_str)
            .map(esc)
            .collect::<Vec<_>>()
            .join(" or "),
        _ => "any".into(),
    }
}

fn description(v: &Value) -> String {
    v["description"].as_str().map(linkify).unwrap_or_default()
}

/// A table of an object schema's properties (or one line for other types).
fn schema_table(s: &Value, used: &mut BTreeSet<String>) -> String {
    let Some(props) = s["properties"].as_object() else {
        return format!("<p>{} {}</p>", type_of(s, used), description(s));
    };
    let required: Vec<&str> = s["required"]
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut out = format!(
        "{}<div class=\"scroll\"><table class=\"fields\"><thead><tr><th>Field</th><th>Type</th><th>Meaning</th></tr></thead><tbody>",
        s["description"]
            .as_str()
            .map(|d| format!("<p>{}</p>", linkify(d)))
            .unwrap_or_default()
    );
    for (name, p) in props {
        let req = if required.contains(&name.as_str()) {
            " <small>required</small>"
        } else {
            ""
        };
        let _ = write!(
            out,
            "<tr><td><code>{}</code>{req}</td><td>{}</td><td>{}</td></tr>",
            esc(name),
            type_of(p, used),
            description(p)
        );
    }
    out.push_str("</tbody></table></div>");
    out
}

fn body_schema(content: &Value) -> Option<&Value> {
    content["content"]["application/json"]["schema"]
        .is_object()
        .then(|| &content["content"]["application/json"]["schema"])
}

/// One operation (a path's method, or a webhook).
fn operation(
    method: &str,
    path: &str,
    op: &Value,
    shared: &Value,
    used: &mut BTreeSet<String>,
) -> String {
    let id = op["operationId"].as_str().unwrap_or(path);
    let mut out = format!(
        "<section class=\"op panel\" id=\"{}\"><h2><span class=\"tag method\">{}</span> <code>{}</code></h2><p><b>{}</b></p>",
        esc(id),
        esc(&method.to_uppercase()),
        esc(path),
        op["summary"].as_str().map(linkify).unwrap_or_default()
    );
    if let Some(d) = op["description"].as_str() {
        let _ = write!(out, "<p>{}</p>", linkify(d));
    }
    if let Some(sec) = op["security"].as_array() {
        let names: Vec<String> = sec
            .iter()
            .filter_map(Value::as_object)
            .flat_map(|o| o.keys().cloned())
            .collect();
        if !names.is_empty() {
            let _ = write!(
                out,
                "<p>Authentication: {}.</p>",
                names
                    .iter()
                    .map(|n| format!("<a href=\"#auth-{0}\">{0}</a>", esc(n)))
                    .collect::<Vec<_>>()
                    .join(" or ")
            );
        }
    }
    let params: Vec<&Value> = shared
        .as_array()
        .into_iter()
        .flatten()
        .chain(op["parameters"].as_array().into_iter().flatten())
        .collect();
    if !params.is_empty() {
        out.push_str("<h3>Parameters</h3><div class=\"scroll\"><table class=\"fields\"><thead><tr><th>Name</th><th>In</th><th>Type</th><th>Meaning</th></tr></thead><tbody>");
        for p in params {
            let _ = write!(
                out,
                "<tr><td><code>{}</code>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                esc(p["name"].as_str().unwrap_or_default()),
                if p["required"] == Value::Bool(true) {
                    " <small>required</small>"
                } else {
                    ""
                },
                esc(p["in"].as_str().unwrap_or_default()),
                type_of(&p["schema"], used),
                description(p)
            );
        }
        out.push_str("</tbody></table></div>");
    }
    if let Some(s) = body_schema(&op["requestBody"]) {
        let _ = write!(
            out,
            "<h3>Request body</h3><p>JSON: {}</p>",
            type_of(s, used)
        );
    }
    if let Some(rs) = op["responses"].as_object() {
        out.push_str("<h3>Responses</h3><ul class=\"responses\">");
        for (status, r) in rs {
            let schema = body_schema(r)
                .map(|s| format!(" — {}", type_of(s, used)))
                .unwrap_or_default();
            let _ = write!(
                out,
                "<li><code>{}</code> {}{schema}</li>",
                esc(status),
                description(r)
            );
        }
        out.push_str("</ul>");
    }
    out.push_str("</section>");
    out
}

/// The page of one tag, or `None` if the document has no such tag.
pub fn tag_page(doc: &Value, tag: &str) -> Option<String> {
    let all = tags(doc);
    let (_, about) = all.iter().find(|(n, _)| n == tag)?;
    let has_tag = |op: &Value| {
        op["tags"]
            .as_array()
            .is_some_and(|t| t.iter().any(|x| x.as_str() == Some(tag)))
    };
    let mut used = BTreeSet::new();
    let mut ops = String::new();
    for (path, item) in doc["paths"].as_object().into_iter().flatten() {
        for (method, op) in item.as_object().into_iter().flatten() {
            if method != "parameters" && has_tag(op) {
                ops.push_str(&operation(method, path, op, &item["parameters"], &mut used));
            }
        }
    }
    for (name, item) in doc["webhooks"].as_object().into_iter().flatten() {
        for (method, op) in item.as_object().into_iter().flatten() {
            if has_tag(op) {
                let what = format!("{method} to the bot's URL");
                let mut o = op.clone();
                if o["operationId"].is_null() {
                    o["operationId"] = Value::String(name.clone());
                }
                ops.push_str(&operation("webhook", &what, &o, &Value::Null, &mut used));
            }
        }
    }
    // Schemas used, and the schemas those use, each once.
    let mut schemas = String::new();
    let mut done = BTreeSet::new();
    while let Some(name) = used.iter().find(|n| !done.contains(*n)).cloned() {
        done.insert(name.clone());
        let s = &doc["components"]["schemas"][&name];
        let _ = write!(
            schemas,
            "<h3 id=\"schema-{0}\">{0}</h3>{1}",
            esc(&name),
            schema_table(s, &mut used)
        );
    }
    let mut auth = String::new();
    for (name, s) in doc["components"]["securitySchemes"]
        .as_object()
        .into_iter()
        .flatten()
    {
        let _ = write!(
            auth,
            "<li id=\"auth-{0}\"><code>{0}</code>: HTTP {1} — {2}</li>",
            esc(name),
            esc(s["scheme"].as_str().unwrap_or_default()),
            description(s)
        );
    }
    let tabs: String = all
        .iter()
        .map(|(n, _)| {
            if n == tag {
                format!("<span class=\"current\">{}</span>", esc(n))
            } else {
                format!("<a href=\"/docs/http-api/{0}\">{0}</a>", esc(n))
            }
        })
        .collect();
    Some(format!(
        "<p><a href=\"/docs\">API documentation</a> › <a href=\"/docs/http-api\">HTTP API reference</a></p>\
<h1>HTTP API: {t}</h1><p class=\"lead\">{about}</p><nav class=\"pager\">{tabs}</nav>{ops}\
<h2>Schemas</h2>{schemas}<h2>Authentication</h2><ul>{auth}</ul>\
<p class=\"empty\">Rendered from <a href=\"/openapi.json\">/openapi.json</a>.</p>",
        t = esc(tag),
        about = linkify(about),
    ))
}

/// The reference's index page.
pub fn index_page(doc: &Value) -> String {
    let mut body = format!(
        "<p><a href=\"/docs\">API documentation</a></p><h1>HTTP API reference</h1>\
<p class=\"lead\">{}</p><p>The machine-readable document is <a href=\"/openapi.json\">/openapi.json</a> \
(OpenAPI {}); these pages are rendered from it.</p><div class=\"grid\">",
        description(&doc["info"]),
        esc(doc["openapi"].as_str().unwrap_or_default())
    );
    for (name, about) in tags(doc) {
        let _ = write!(
            body,
            "<a class=\"panel\" href=\"/docs/http-api/{0}\"><h3>{0}</h3><p>{1}</p></a>",
            esc(&name),
            esc(&about)
        );
    }
    body.push_str("</div>");
    body
}

pub async fn index() -> Response {
    match document() {
        Ok(doc) => Html(layout("HTTP API reference", None, &index_page(&doc))).into_response(),
        Err(e) => e.page(Fmt::Html),
    }
}

pub async fn tag(Path(tag): Path<String>) -> Response {
    let doc = match document() {
        Ok(d) => d,
        Err(e) => return e.page(Fmt::Html),
    };
    match tag_page(&doc, &tag) {
        Some(body) => Html(layout(&format!("HTTP API: {tag}"), None, &body)).into_response(),
        None => WebError::NotFound(format!("The HTTP API has no section '{tag}'.")).page(Fmt::Html),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_operation_and_webhook_appears_on_its_tag_page() {
        let doc: Value = serde_json::from_str(OPENAPI).expect("the document parses");
        let pages: String = tags(&doc)
            .iter()
            .map(|(t, _)| tag_page(&doc, t).expect("a page per tag"))
            .collect();
        for (path, item) in doc["paths"].as_object().expect("paths") {
            for (method, op) in item.as_object().expect("item") {
                if method == "parameters" {
                    continue;
                }
                let id = op["operationId"]
                    .as_str()
                    .expect("every operation has an id");
                assert!(op["tags"].is_array(), "{path} {method} has no tag");
                assert!(pages.contains(&format!("id=\"{id}\"")), "{id} missing");
            }
        }
        for name in doc["webhooks"].as_object().expect("webhooks").keys() {
            assert!(pages.contains(&format!("id=\"{name}\"")), "{name} missing");
        }
        // Every schema a page links to is defined on that page.
        for (t, _) in tags(&doc) {
            let page = tag_page(&doc, &t).expect("page");
            for part in page.split("href=\"#schema-").skip(1) {
                let name = &part[..part.find('"').expect("quote")];
                assert!(
                    page.contains(&format!("id=\"schema-{name}\"")),
                    "{t}: {name}"
                );
            }
        }
        assert!(tag_page(&doc, "nope").is_none());
    }

    #[test]
    fn descriptions_name_site_pages_not_repository_files() {
        assert!(!OPENAPI.contains("docs/protocol/"));
        assert!(!OPENAPI.contains(".md"));
        assert_eq!(
            linkify("See /docs/ladder."),
            "See <a href=\"/docs/ladder\">/docs/ladder</a>."
        );
        assert_eq!(linkify("a <b>"), "a &lt;b&gt;");
    }
}
