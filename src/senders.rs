//! Who sent a request, as the per-sender limits count it: what an outsider can send without a
//! token and that makes a Durable Object (a connect code, a tab's socket, whose key may be
//! self-made and so make a new pairing) or an outbound fetch (a client's metadata document,
//! fetched for `/authorize`) is limited per sender by the platform's rate-limiting bindings,
//! keyed here. How many each allows, and per how long, is said once, in `wrangler.toml`
//! (`[[ratelimits]]`), where the platform reads it.
//!
//! A limit that cannot count a request refuses it ([`Limit::said`]): one that names no sender
//! (pooled under one key, one outsider would spend every such request's allowance), and any
//! while the binding is missing from the deployment or fails (a limit that lets everything
//! through when it is not there is none). A missing binding is said once when the relay starts
//! ([`unbound`]).

/// What a sender is limited in, each by its own binding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limited {
    /// Asking for a connect code (`POST /authorize/code`): each makes a code's object.
    Code,
    /// Opening a tab's socket (`GET /tab`): a self-made key makes a pairing's object.
    Tab,
    /// `/authorize` with a client metadata document that is not kept: each fetches it.
    Document,
}

impl Limited {
    /// Every limit.
    pub const ALL: [Self; 3] = [Self::Code, Self::Tab, Self::Document];

    /// The name of its rate-limiting binding in `wrangler.toml`.
    #[must_use]
    pub fn binding(self) -> &'static str {
        match self {
            Self::Code => "CODE_SENDERS",
            Self::Tab => "TAB_SENDERS",
            Self::Document => "DOCUMENT_SENDERS",
        }
    }
}

/// What the per-sender limit makes of a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limit {
    /// Within its sender's limit: it goes on.
    Within,
    /// Past it: refused for now.
    Past,
    /// Not counted, so refused: it names no sender, or the binding did not answer.
    Uncounted,
}

impl Limit {
    /// What a request comes to from its sender (its [`sender_key`]; None: it names none) and,
    /// for a sender, what the binding answered (`Some(within)`; None: missing or failed).
    #[must_use]
    pub fn said(sender: Option<&str>, answer: Option<bool>) -> Self {
        match (sender, answer) {
            (Some(_), Some(true)) => Self::Within,
            (Some(_), Some(false)) => Self::Past,
            _ => Self::Uncounted,
        }
    }

    /// How a request is refused, its status and sentence (`past`: the limit's own, for a
    /// sender past it); None when it goes on.
    #[must_use]
    pub fn refusal(self, past: &'static str) -> Option<(u16, &'static str)> {
        match self {
            Self::Within => None,
            Self::Past => Some((429, past)),
            Self::Uncounted => Some((503, crate::sentences::SENDER_UNCOUNTED)),
        }
    }
}

/// Every limit's binding ([`Limited::binding`]), space-separated: the relay names each the
/// deployment lacks when it starts ([`crate::sentences::shell::LIMIT_UNBOUND`], then the name;
/// looked up by the platform's few lines, which cost less than Rust's).
pub const BINDINGS: &str = "CODE_SENDERS TAB_SENDERS DOCUMENT_SENDERS";

/// The key a sender is counted under, from the address the platform says it connected from
/// (`CF-Connecting-IP`). An IPv6 sender is counted by its /64, the block one subscriber gets
/// (its 2^64 addresses would otherwise be as many senders); an IPv4 one by its address. None
/// for a request without an address that reads as one (none reaches a deployed Worker from
/// outside without it; `wrangler dev` gives the one it connected from): it is refused, never
/// pooled with others ([`Limit::said`]).
#[must_use]
pub fn sender_key(connecting_ip: Option<&str>) -> Option<String> {
    // Read by hand: the standard library's address parsing costs the Worker about 5 KB.
    let ip = connecting_ip.map(str::trim).unwrap_or_default();
    let mapped = ip.get(..7).filter(|p| p.eq_ignore_ascii_case("::ffff:")).map(|_| &ip[7..]);
    if let Some([a, b, c, d]) = ipv4(mapped.unwrap_or(ip)) {
        return Some(format!("ip4:{a}.{b}.{c}.{d}"));
    }
    let [a, b, c, d, ..] = ipv6(ip)?;
    Some(format!("ip6:{a:x}:{b:x}:{c:x}:{d:x}::/64"))
}

/// The four numbers of a dotted IPv4 address.
fn ipv4(ip: &str) -> Option<[u8; 4]> {
    let mut out = [0u8; 4];
    let mut parts = ip.split('.');
    for n in &mut out {
        let part = parts.next()?;
        if part.is_empty() || part.len() > 3 || !part.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        *n = u8::try_from(part.parse::<u64>().ok()?).ok()?;
    }
    parts.next().is_none().then_some(out)
}

/// The eight groups of an IPv6 address written in hex groups, `::` standing for zeros once.
fn ipv6(ip: &str) -> Option<[u16; 8]> {
    let mut out = [0u16; 8];
    let Some((head, tail)) = crate::text::split_once(ip, "::") else {
        return (groups(ip, &mut out)? == 8).then_some(out);
    };
    let before = groups(head, &mut out)?;
    let mut after = [0u16; 8];
    let n = groups(tail, &mut after)?;
    if before + n >= 8 {
        return None;
    }
    out[8 - n..].copy_from_slice(&after[..n]);
    Some(out)
}

/// Reads the hex groups of `s` (colon-separated; none when empty) into `out`: how many.
fn groups(s: &str, out: &mut [u16; 8]) -> Option<usize> {
    if s.is_empty() {
        return Some(0);
    }
    let mut n = 0;
    for g in s.split(':') {
        if n == out.len()
            || g.is_empty()
            || g.len() > 4
            || !g.bytes().all(|b| b.is_ascii_hexdigit())
        {
            return None;
        }
        out[n] = u16::from_str_radix(g, 16).ok()?;
        n += 1;
    }
    Some(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sender_is_its_ipv4_address_or_its_ipv6_slash_64() {
        let sender_key = |ip| super::sender_key(ip).unwrap_or_else(|| "unknown".into());
        assert_eq!(sender_key(Some("203.0.113.7")), "ip4:203.0.113.7");
        assert_eq!(sender_key(Some(" 203.0.113.7 ")), "ip4:203.0.113.7");
        assert_ne!(sender_key(Some("203.0.113.7")), sender_key(Some("203.0.113.8")));
        assert_eq!(sender_key(Some("::ffff:203.0.113.7")), "ip4:203.0.113.7");
        let a = sender_key(Some("2001:db8:1:2:aaaa::1"));
        assert_eq!(a, "ip6:2001:db8:1:2::/64");
        assert_eq!(a, sender_key(Some("2001:0db8:0001:0002:ffff:ffff:ffff:ffff")), "one /64");
        assert_ne!(a, sender_key(Some("2001:db8:1:3::1")), "another /64 is another sender");
        assert_eq!(sender_key(Some("::1")), "ip6:0:0:0:0::/64");
        assert_eq!(sender_key(Some("2001:DB8:1:2::")), "ip6:2001:db8:1:2::/64");
        for nothing in [
            None,
            Some(""),
            Some("unknown"),
            Some("203.0.113.7, 10.0.0.1"),
            Some("203.0.113.256"),
            Some("203.0.113"),
            Some("1.2.3.4.5"),
            Some("2001:db8::1::2"),
            Some("2001:db8:1:2:3:4:5:6:7"),
            Some("12345::1"),
            Some(":::"),
            Some("::ffff:1.2.3"),
        ] {
            assert_eq!(sender_key(nothing), "unknown", "{nothing:?}");
        }
    }

    #[test]
    fn the_hand_reading_agrees_with_the_standard_librarys() {
        let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for _ in 0..5000 {
            let n = next();
            let v6 = std::net::Ipv6Addr::from(u128::from(n) << 64 | u128::from(next() & 0xffff));
            let v4 = std::net::Ipv4Addr::from((n >> 32) as u32);
            for written in [v6.to_string(), format!("{v6:?}").to_uppercase()] {
                let s = v6.segments();
                let want = match v6.to_ipv4_mapped() {
                    Some(v4) => format!("ip4:{v4}"),
                    None => format!("ip6:{:x}:{:x}:{:x}:{:x}::/64", s[0], s[1], s[2], s[3]),
                };
                assert_eq!(sender_key(Some(&written)), Some(want), "{written}");
            }
            assert_eq!(sender_key(Some(&v4.to_string())), Some(format!("ip4:{v4}")));
        }
    }

    #[test]
    fn each_limit_has_its_binding_in_wrangler_toml() {
        let toml = include_str!("../wrangler.toml");
        for limited in Limited::ALL {
            let entry = format!("name = \"{}\"", limited.binding());
            let at = toml.find(&entry).unwrap_or_else(|| panic!("{entry} in wrangler.toml"));
            let start = toml[..at].rfind("[[").unwrap_or_default();
            let end = toml[at..].find("[[").map_or(toml.len(), |i| at + i);
            let section = &toml[start..end];
            assert!(section.starts_with("[[ratelimits]]"), "{entry} is a rate-limiting binding");
            assert!(section.contains("simple = { limit = "), "{entry} says its limit");
        }
        assert_ne!(Limited::Code.binding(), Limited::Tab.binding());
        assert_ne!(Limited::Tab.binding(), Limited::Document.binding());
    }

    /// A request with no sender address is refused, not pooled with every other such request
    /// under one key; and so is every request while the binding does not answer (missing from
    /// the deployment, or failing), not let through.
    #[test]
    fn a_request_the_limit_cannot_count_is_refused() {
        let sender = sender_key(Some("203.0.113.7"));
        assert_eq!(Limit::said(sender.as_deref(), Some(true)), Limit::Within);
        assert_eq!(Limit::said(sender.as_deref(), Some(false)), Limit::Past);
        assert_eq!(Limit::said(sender.as_deref(), None), Limit::Uncounted, "no binding");
        for nobody in [None, Some(""), Some("unknown"), Some("203.0.113.7, 10.0.0.1")] {
            let key = sender_key(nobody);
            assert_eq!(key, None, "{nobody:?}");
            assert_eq!(Limit::said(key.as_deref(), Some(true)), Limit::Uncounted, "{nobody:?}");
        }
    }

    /// A deployment without a binding says so once, at start, naming each missing one.
    #[test]
    fn a_missing_binding_is_said_at_start() {
        let named: Vec<&str> = Limited::ALL.into_iter().map(Limited::binding).collect();
        assert_eq!(BINDINGS.split(' ').collect::<Vec<_>>(), named, "every binding, once");
        let line = crate::sentences::shell::LIMIT_UNBOUND;
        assert!(line.contains("refusing") && line.contains("binding"), "{line}");
    }
}
