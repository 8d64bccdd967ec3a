//! The HTTP API reference, rendered from `/openapi.json` (the document the
//! server serves, [`OPENAPI`]): `/docs/http-api` lists the
//! document's tags, `/docs/http-api/{tag}` shows every operation and webhook
//! of a tag with its parameters, bodies, responses and the schemas they use.
//! Nothing here is copied by hand: a new route in the document appears here.

use std::collections::BTreeSet;

use axum::extract::Path;
use axum::response::{Html, IntoResponse, Response};
use serde_json::Value;

use crate::html::{html, layout, Markup, PreEscaped};
use crate::openapi_examples as examples;
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

/// Text from the document, with site paths (`/docs/…`, `/start`,
/// `/api/`, `/openapi.json`) turned into links.
pub fn linkify(text: &str) -> Markup {
    let site = ["/docs", "/start", "/api/", "/openapi.json", "/rules"];
    html! {
        @for (i, word) in text.split(' ').enumerate() {
            @if i > 0 { " " }
            @let end = word
                .find(|c: char| !(c.is_ascii_alphanumeric() || "/-_.#".contains(c)))
                .unwrap_or(word.len());
            @let core = word[..end].trim_end_matches('.');
            @if site.iter().any(|p| core.starts_with(p)) {
                a href=(core) { (core) } (&word[core.len()..])
            } @else {
                (word)
            }
        }
    }
}

/// A description from the document: its Markdown (code, emphasis, links
/// to this site) rendered inline, and site paths in its text linked. Raw
/// HTML in it is shown as text; links elsewhere keep only their text.
pub fn rich(text: &str) -> Markup {
    use pulldown_cmark::{CowStr, Event, Parser, Tag, TagEnd};
    let here = |dest: &str| dest.starts_with('/') || dest.starts_with('#');
    let mut dropped = 0usize;
    let mut events = Vec::new();
    for e in Parser::new(text) {
        match e {
            // Text with its site paths linked (`linkify` escapes it).
            Event::Text(t) => {
                events.push(Event::InlineHtml(CowStr::from(linkify(&t).into_string())))
            }
            // Code escaped as every other value of the site is.
            Event::Code(c) => events.push(Event::InlineHtml(CowStr::from(
                html! { code { (c.as_ref()) } }.into_string(),
            ))),
            Event::Html(h) | Event::InlineHtml(h) => events.push(Event::Text(h)),
            Event::Start(Tag::Paragraph) | Event::End(TagEnd::Paragraph) => {}
            Event::Start(Tag::Link { ref dest_url, .. }) if !here(dest_url) => dropped += 1,
            Event::End(TagEnd::Link) if dropped > 0 => dropped -= 1,
            other => events.push(other),
        }
    }
    let mut out = String::new();
    pulldown_cmark::html::push_html(&mut out, events.into_iter());
    PreEscaped(out)
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
fn type_of(s: &Value, used: &mut BTreeSet<String>) -> Markup {
    if let Some(r) = s["$ref"].as_str() {
        let name = r.rsplit('/').next().unwrap_or(r).to_string();
        let link = html! { a href={ "#schema-" (name) } { (name) } };
        used.insert(name);
        return link;
    }
    if let Some(e) = s["enum"].as_array() {
        return html! {
            "one of "
            @for (i, v) in e.iter().enumerate() {
                @if i > 0 { ", " }
                code { (v.to_string()) }
            }
        };
    }
    if let Some(alts) = s["oneOf"].as_array().or(s["anyOf"].as_array()) {
        let parts: Vec<Markup> = alts.iter().map(|a| type_of(a, used)).collect();
        return html! { @for (i, p) in parts.iter().enumerate() { @if i > 0 { " or " } (p) } };
    }
    match &s["type"] {
        Value::String(t) if t == "array" => {
            let items = type_of(&s["items"], used);
            html! { "array of " (items) }
        }
        Value::String(t) => html! { (t) },
        Value::Array(ts) => html! {
            @for (i, t) in ts.iter().filter_map(Value::as_str).enumerate() {
                @if i > 0 { " or " }
                (t)
            }
        },
        _ => html! { "any" },
    }
}

fn description(v: &Value) -> Markup {
    v["description"].as_str().map(rich).unwrap_or_default()
}

/// Whether a response is the throttling answer every endpoint shares (said
/// once per page, under "Throttling").
fn throttled(status: &str) -> bool {
    status == "429"
}

/// A table of an object schema's properties (or one line for other types).
fn schema_table(s: &Value, used: &mut BTreeSet<String>) -> Markup {
    let Some(props) = s["properties"].as_object() else {
        let t = type_of(s, used);
        return html! { p { (t) " " (description(s)) } };
    };
    let required: Vec<&str> = s["required"]
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let rows: Vec<(&String, Markup, Markup)> = props
        .iter()
        .map(|(name, p)| (name, type_of(p, used), description(p)))
        .collect();
    html! {
        @if let Some(d) = s["description"].as_str() { p { (rich(d)) } }
        div class="scroll" { table class="fields wide" {
            thead { tr { th { "Field" } th { "Type" } th { "Meaning" } } }
            tbody {
                @for (name, t, meaning) in rows {
                    tr {
                        td { code { (name) } @if required.contains(&name.as_str()) { " " small { "required" } } }
                        td { (t) }
                        td { (meaning) }
                    }
                }
            }
        } }
    }
}

fn body_schema(content: &Value) -> Option<&Value> {
    content["content"]["application/json"]["schema"]
        .is_object()
        .then(|| &content["content"]["application/json"]["schema"])
}

/// One operation (a path's method, or a webhook).
fn operation(
    doc: &Value,
    method: &str,
    path: &str,
    op: &Value,
    shared: &Value,
    used: &mut BTreeSet<String>,
) -> Markup {
    let id = op["operationId"].as_str().unwrap_or(path);
    let auth: Vec<String> = op["security"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_object)
        .flat_map(|o| o.keys().cloned())
        .collect();
    let params: Vec<(&Value, Markup)> = shared
        .as_array()
        .into_iter()
        .flatten()
        .chain(op["parameters"].as_array().into_iter().flatten())
        .map(|p| (p, type_of(&p["schema"], used)))
        .collect();
    // A body defined in place is shown field by field; a named schema is
    // linked (and shown under Schemas).
    let body = body_schema(&op["requestBody"]).map(|s| {
        if s["properties"].is_object() {
            schema_table(s, used)
        } else {
            let t = type_of(s, used);
            html! { p { "JSON: " (t) } }
        }
    });
    let responses: Vec<(&String, Markup, Option<Markup>)> = op["responses"]
        .as_object()
        .into_iter()
        .flatten()
        .map(|(status, r)| {
            (
                status,
                description(r),
                body_schema(r).map(|s| type_of(s, used)),
            )
        })
        .collect();
    let curl = examples::request(doc, method, path, op, shared);
    let answer = examples::answer(doc, op);
    html! {
        section class="op panel" id=(id) {
            h2 { span class="tag method" { (method.to_uppercase()) } " " code { (path) } }
            p { b { (op["summary"].as_str().map(rich).unwrap_or_default()) } }
            @if let Some(d) = op["description"].as_str() { p { (rich(d)) } }
            @if !auth.is_empty() {
                p {
                    "Authentication: "
                    @for (i, n) in auth.iter().enumerate() {
                        @if i > 0 { " or " }
                        a href={ "#auth-" (n) } { (n) }
                    }
                    "."
                }
            }
            @if !params.is_empty() {
                h3 { "Parameters" }
                div class="scroll" { table class="fields wide" {
                    thead { tr { th { "Name" } th { "In" } th { "Type" } th { "Meaning" } } }
                    tbody {
                        @for (p, t) in &params {
                            tr {
                                td {
                                    code { (p["name"].as_str().unwrap_or_default()) }
                                    @if p["required"] == Value::Bool(true) { " " small { "required" } }
                                }
                                td { (p["in"].as_str().unwrap_or_default()) }
                                td { (t) }
                                td { (description(p)) }
                            }
                        }
                    }
                } }
            }
            @if let Some(b) = body {
                h3 { "Request body" }
                (b)
            }
            h3 { "Example" }
            pre class="example" { (curl) }
            @if let Some((status, text)) = &answer {
                p { "answers " code { (status) } " with:" }
                pre class="example" { (text) }
            }
            @if op["responses"].is_object() {
                h3 { "Responses" }
                ul class="responses" {
                    @for (status, meaning, schema) in &responses {
                        @if throttled(status) {
                            li { code { (status) } " " a href="#throttling" { "throttled" } }
                        } @else {
                            li { code { (status) } " " (meaning) @if let Some(t) = schema { " — " (t) } }
                        }
                    }
                }
            }
        }
    }
}

/// The page of one tag, or `None` if the document has no such tag.
pub fn tag_page(doc: &Value, tag: &str) -> Option<Markup> {
    let all = tags(doc);
    let (_, about) = all.iter().find(|(n, _)| n == tag)?;
    let has_tag = |op: &Value| {
        op["tags"]
            .as_array()
            .is_some_and(|t| t.iter().any(|x| x.as_str() == Some(tag)))
    };
    let mut used = BTreeSet::new();
    let mut ops = Vec::new();
    for (path, item) in doc["paths"].as_object().into_iter().flatten() {
        for (method, op) in item.as_object().into_iter().flatten() {
            if method != "parameters" && has_tag(op) {
                ops.push(operation(
                    doc,
                    method,
                    path,
                    op,
                    &item["parameters"],
                    &mut used,
                ));
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
                ops.push(operation(
                    doc,
                    "webhook",
                    &what,
                    &o,
                    &Value::Null,
                    &mut used,
                ));
            }
        }
    }
    // Schemas used, and the schemas those use, each once.
    let mut schemas = Vec::new();
    let mut done = BTreeSet::new();
    while let Some(name) = used.iter().find(|n| !done.contains(*n)).cloned() {
        done.insert(name.clone());
        let table = schema_table(&doc["components"]["schemas"][&name], &mut used);
        schemas.push((name, table));
    }
    // The throttling answer, said once: the first endpoint's that has one.
    let throttling = doc["paths"]
        .as_object()
        .into_iter()
        .flatten()
        .flat_map(|(_, item)| item.as_object().into_iter().flatten())
        .find_map(|(_, op)| op["responses"]["429"]["description"].as_str());
    let schemes: Vec<(&String, &Value)> = doc["components"]["securitySchemes"]
        .as_object()
        .into_iter()
        .flatten()
        .collect();
    Some(html! {
        p { a href="/docs" { "API documentation" } " › " a href="/docs/http-api" { "HTTP API reference" } }
        h1 { "HTTP API: " (tag) }
        p class="lead" { (rich(about)) }
        nav class="pager" {
            @for (n, _) in &all {
                @if n == tag { span class="current" { (n) } }
                @else { a href={ "/docs/http-api/" (n) } { (n) } }
            }
        }
        @for o in ops { (o) }
        @if let Some(t) = throttling {
            h2 id="throttling" { "Throttling" }
            p {
                "Any endpoint may answer " code { "429" } ". " (rich(t)) ". The answer carries a "
                code { "Retry-After" } " header (seconds) and " code { "{\"error\": reason}" } "."
            }
        }
        h2 { "Schemas" }
        @for (name, table) in schemas {
            h3 id={ "schema-" (name) } { (name) }
            (table)
        }
        h2 { "Authentication" }
        ul {
            @for (name, s) in schemes {
                li id={ "auth-" (name) } {
                    code { (name) } ": HTTP " (s["scheme"].as_str().unwrap_or_default()) " — " (description(s))
                }
            }
        }
        p class="empty" { "Rendered from " a href="/openapi.json" { "/openapi.json" } "." }
    })
}

/// The reference's index page.
pub fn index_page(doc: &Value) -> Markup {
    html! {
        p { a href="/docs" { "API documentation" } }
        h1 { "HTTP API reference" }
        p class="lead" { (description(&doc["info"])) }
        p {
            "The machine-readable document is " a href="/openapi.json" { "/openapi.json" }
            " (OpenAPI " (doc["openapi"].as_str().unwrap_or_default()) "); these pages are rendered from it."
        }
        div class="grid" {
            @for (name, about) in tags(doc) {
                a class="panel" href={ "/docs/http-api/" (name) } { h3 { (name) } p { (about) } }
            }
        }
    }
}

pub async fn index() -> Response {
    match document() {
        Ok(doc) => {
            Html(layout("HTTP API reference", None, index_page(&doc)).into_string()).into_response()
        }
        Err(e) => e.page(Fmt::Html),
    }
}

pub async fn tag(Path(tag): Path<String>) -> Response {
    let doc = match document() {
        Ok(d) => d,
        Err(e) => return e.page(Fmt::Html),
    };
    match tag_page(&doc, &tag) {
        Some(body) => {
            Html(layout(&format!("HTTP API: {tag}"), None, body).into_string()).into_response()
        }
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
            .map(|(t, _)| tag_page(&doc, t).expect("a page per tag").into_string())
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
            let page = tag_page(&doc, &t).expect("page").into_string();
            for part in page.split("href=\"#schema-").skip(1) {
                let name = &part[..part.find('"').expect("quote")];
                assert!(
                    page.contains(&format!("id=\"schema-{name}\"")),
                    "{t}: {name}"
                );
            }
        }
        assert!(tag_page(&doc, "nope").is_none());
        // Issue 52: every parameter says what it means, and bodies defined
        // in place are shown field by field.
        for (path, item) in doc["paths"].as_object().expect("paths") {
            let shared = item["parameters"].as_array().cloned().unwrap_or_default();
            for (method, op) in item.as_object().expect("item") {
                let own = op["parameters"].as_array().cloned().unwrap_or_default();
                for p in shared.iter().chain(&own) {
                    assert!(
                        p["description"].is_string(),
                        "{method} {path}: {}",
                        p["name"]
                    );
                }
            }
        }
        let bots = tag_page(&doc, "bots").expect("bots").into_string();
        let patch = &bots[bots
            .find("id=\"updateBot\"")
            .expect("PATCH /v1/bots/{name}")..];
        let patch = &patch[..patch.find("</section>").expect("its end")];
        assert!(!patch.contains("JSON: object"), "{patch}");
        assert!(patch.contains("<code>challenges</code>"), "{patch}");
    }

    #[test]
    fn descriptions_name_site_pages_not_repository_files() {
        assert!(!OPENAPI.contains("docs/protocol/"));
        assert!(!OPENAPI.contains(".md"));
        assert_eq!(
            linkify("See /docs/ladder.").into_string(),
            "See <a href=\"/docs/ladder\">/docs/ladder</a>."
        );
        assert_eq!(linkify("a <b>").into_string(), "a &lt;b&gt;");
        // Issue 52: a fragment stays in its link, Markdown renders, raw
        // HTML stays text, links elsewhere keep only their text.
        assert_eq!(
            linkify("limits: /api/#limits)").into_string(),
            "limits: <a href=\"/api/#limits\">/api/#limits</a>)"
        );
        assert_eq!(
            rich("with `{\"error\": reason}` and *see* /docs/ladder. <b>x</b> [t](https://x.example)")
                .into_string(),
            "with <code>{&quot;error&quot;: reason}</code> and <em>see</em> \
<a href=\"/docs/ladder\">/docs/ladder</a>. &lt;b&gt;x&lt;/b&gt; t"
        );
    }
}
