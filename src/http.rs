//! Small pure helpers over HTTP values: a URL's origin, path and query, cookies, the bearer.

/// CORS headers for the MCP endpoint and the OAuth endpoints a browser-based client calls.
/// They authenticate by bearer header, never by cookie, so any origin may read them.
pub const CORS_HEADERS: [(&str, &str); 4] = [
    ("access-control-allow-origin", "*"),
    ("access-control-allow-methods", "GET, POST, DELETE, OPTIONS"),
    (
        "access-control-allow-headers",
        "authorization, content-type, accept, mcp-protocol-version, mcp-session-id, mcp-method, mcp-name, last-event-id",
    ),
    ("access-control-expose-headers", "www-authenticate, mcp-session-id, mcp-protocol-version"),
];

/// Whether a path's answers carry [`CORS_HEADERS`]: the API routes, not the pages or the tab.
#[must_use]
pub fn is_cors_path(path: &str) -> bool {
    matches!(path, "/" | "/register" | "/token" | "/revoke" | "/health")
        || path.starts_with("/.well-known/")
}

/// The origin (`scheme://host[:port]`) of an absolute URL.
#[must_use]
pub fn origin_of(url: &str) -> &str {
    let after_scheme = url.find("://").map_or(0, |i| i + 3);
    let end = url[after_scheme..].find(['/', '?', '#']).map_or(url.len(), |i| after_scheme + i);
    &url[..end]
}

/// The path of an absolute URL (`/` when it has none).
#[must_use]
pub fn path_of(url: &str) -> &str {
    let rest = &url[origin_of(url).len()..];
    let end = rest.find(['?', '#']).unwrap_or(rest.len());
    if end == 0 {
        "/"
    } else {
        &rest[..end]
    }
}

/// The decoded query parameters of an absolute URL, in order.
#[must_use]
pub fn query_of(url: &str) -> Vec<(String, String)> {
    let Some((_, q)) = url.split_once('?') else { return Vec::new() };
    let q = q.split('#').next().unwrap_or_default();
    form_urlencoded::parse(q.as_bytes()).into_owned().collect()
}

/// The value of a cookie in a `Cookie` header.
#[must_use]
pub fn cookie<'a>(header: Option<&'a str>, name: &str) -> Option<&'a str> {
    header?.split(';').map(str::trim).find_map(|c| c.strip_prefix(name)?.strip_prefix('='))
}

/// The token of an `Authorization: Bearer …` header.
#[must_use]
pub fn bearer(header: Option<&str>) -> Option<&str> {
    let h = header?.trim();
    let (scheme, token) = h.split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then(|| token.trim()).filter(|t| !t.is_empty())
}

/// Text safe inside HTML text and quoted attributes.
#[must_use]
pub fn escape_html(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_split_into_origin_path_and_query() {
        let u = "http://127.0.0.1:8787/authorize?client_id=a%20b&x=1#f";
        assert_eq!(origin_of(u), "http://127.0.0.1:8787");
        assert_eq!(path_of(u), "/authorize");
        assert_eq!(query_of(u), vec![("client_id".into(), "a b".into()), ("x".into(), "1".into())]);
        assert_eq!(path_of("https://relay.example"), "/");
        assert_eq!(path_of("https://relay.example/?x"), "/");
    }

    #[test]
    fn cookies_bearers_and_html() {
        assert_eq!(cookie(Some("a=1; tr_x=abc; b=2"), "tr_x"), Some("abc"));
        assert_eq!(cookie(Some("tr_xy=abc"), "tr_x"), None);
        assert_eq!(bearer(Some("Bearer abc")), Some("abc"));
        assert_eq!(bearer(Some("bearer  abc ")), Some("abc"));
        assert_eq!(bearer(Some("Basic abc")), None);
        assert_eq!(bearer(Some("Bearer ")), None);
        assert_eq!(
            escape_html(r#"<a href="x">'&'</a>"#),
            "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;"
        );
    }
}
