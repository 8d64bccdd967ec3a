//! Repeated slashes in request paths, as the 2014 server accepted them.
//!
//! The 2014 SkullWhist SDK's JavaScript bot appends `/jsonp/` to an API base
//! that already ends in `/api/`, and so asks for `/api//jsonp/?callback=…`;
//! the original web server collapsed the slashes. [`collapse_in_place`],
//! run by the front before the router, makes each run of slashes one
//! (`//api/status/` is `/api/status/`). It must run before the router
//! rather than be one of its layers: a router's layers run after the route
//! is chosen.

use axum::extract::Request;
use axum::http::uri::{PathAndQuery, Uri};

/// Makes each run of slashes in `request`'s path one, so that it is routed
/// as the 2014 server routed it (run first by [`crate::front`]).
pub fn collapse_in_place(request: &mut Request) {
    if let Some(uri) = collapsed(request.uri()) {
        *request.uri_mut() = uri;
    }
}

/// The URI with each run of slashes in its path made one, or `None` if it
/// has none (the query is kept as it is).
fn collapsed(uri: &Uri) -> Option<Uri> {
    let path = uri.path();
    if !path.contains("//") {
        return None;
    }
    let mut clean = String::with_capacity(path.len());
    for c in path.chars() {
        if !(c == '/' && clean.ends_with('/')) {
            clean.push(c);
        }
    }
    if let Some(query) = uri.query() {
        clean.push('?');
        clean.push_str(query);
    }
    let mut parts = uri.clone().into_parts();
    parts.path_and_query = Some(PathAndQuery::try_from(clean).ok()?);
    Uri::from_parts(parts).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn clean(text: &str) -> String {
        let uri: Uri = text.parse().expect("a valid uri");
        collapsed(&uri).map_or_else(|| text.to_string(), |u| u.to_string())
    }

    #[test]
    fn runs_of_slashes_in_the_path_become_one() {
        assert_eq!(clean("/api//jsonp/?callback=cb"), "/api/jsonp/?callback=cb");
        assert_eq!(clean("//api/status/"), "/api/status/");
        assert_eq!(clean("/api///login//"), "/api/login/");
        assert_eq!(
            clean("http://127.0.0.1:8080//api//status"),
            "http://127.0.0.1:8080/api/status"
        );
    }

    #[test]
    fn paths_without_repeated_slashes_and_queries_are_left_alone() {
        let uri: Uri = "/api/jsonp/?callback=cb&next=a//b".parse().expect("valid");
        assert!(collapsed(&uri).is_none());
        assert_eq!(
            clean("/api//jsonp/?callback=cb&next=a//b"),
            "/api/jsonp/?callback=cb&next=a//b"
        );
        assert_eq!(clean("/"), "/");
        assert_eq!(clean("/games/3"), "/games/3");
    }
}
