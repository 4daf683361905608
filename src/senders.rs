//! Who sent a request, as the per-sender limits count it: what an outsider can send without a
//! token and that makes a Durable Object (a connect code, a tab's socket, whose key may be
//! self-made and so make a new pairing) is limited per sender by the platform's rate-limiting
//! bindings, keyed here. How many each allows, and per how long, is said once, in
//! `wrangler.toml` (`[[ratelimits]]`), where the platform reads it.

/// What a sender is limited in, each by its own binding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limited {
    /// Asking for a connect code (`POST /authorize/code`): each makes a code's object.
    Code,
    /// Opening a tab's socket (`GET /tab`): a self-made key makes a pairing's object.
    Tab,
}

impl Limited {
    /// The name of its rate-limiting binding in `wrangler.toml`.
    #[must_use]
    pub fn binding(self) -> &'static str {
        match self {
            Self::Code => "CODE_SENDERS",
            Self::Tab => "TAB_SENDERS",
        }
    }
}

/// The key a sender is counted under, from the address the platform says it connected from
/// (`CF-Connecting-IP`). An IPv6 sender is counted by its /64, the block one subscriber gets
/// (its 2^64 addresses would otherwise be as many senders); an IPv4 one by its address. A
/// request without an address that reads as one (none reaches a deployed Worker from outside
/// without it) shares one key with all such requests.
#[must_use]
pub fn sender_key(connecting_ip: Option<&str>) -> String {
    let ip = connecting_ip.map(str::trim).unwrap_or_default();
    if let Ok(v4) = ip.parse::<std::net::Ipv4Addr>() {
        return format!("ip4:{v4}");
    }
    if let Ok(v6) = ip.parse::<std::net::Ipv6Addr>() {
        if let Some(v4) = v6.to_ipv4_mapped() {
            return format!("ip4:{v4}");
        }
        let s = v6.segments();
        return format!("ip6:{:x}:{:x}:{:x}:{:x}::/64", s[0], s[1], s[2], s[3]);
    }
    "unknown".into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sender_is_its_ipv4_address_or_its_ipv6_slash_64() {
        assert_eq!(sender_key(Some("203.0.113.7")), "ip4:203.0.113.7");
        assert_eq!(sender_key(Some(" 203.0.113.7 ")), "ip4:203.0.113.7");
        assert_ne!(sender_key(Some("203.0.113.7")), sender_key(Some("203.0.113.8")));
        assert_eq!(sender_key(Some("::ffff:203.0.113.7")), "ip4:203.0.113.7");
        let a = sender_key(Some("2001:db8:1:2:aaaa::1"));
        assert_eq!(a, "ip6:2001:db8:1:2::/64");
        assert_eq!(a, sender_key(Some("2001:0db8:0001:0002:ffff:ffff:ffff:ffff")), "one /64");
        assert_ne!(a, sender_key(Some("2001:db8:1:3::1")), "another /64 is another sender");
        for nothing in [None, Some(""), Some("unknown"), Some("203.0.113.7, 10.0.0.1")] {
            assert_eq!(sender_key(nothing), "unknown", "{nothing:?}");
        }
    }

    #[test]
    fn each_limit_has_its_binding_in_wrangler_toml() {
        let toml = include_str!("../wrangler.toml");
        for limited in [Limited::Code, Limited::Tab] {
            let entry = format!("name = \"{}\"", limited.binding());
            let at = toml.find(&entry).unwrap_or_else(|| panic!("{entry} in wrangler.toml"));
            let start = toml[..at].rfind("[[").unwrap_or_default();
            let end = toml[at..].find("[[").map_or(toml.len(), |i| at + i);
            let section = &toml[start..end];
            assert!(section.starts_with("[[ratelimits]]"), "{entry} is a rate-limiting binding");
            assert!(section.contains("simple = { limit = "), "{entry} says its limit");
        }
        assert_ne!(Limited::Code.binding(), Limited::Tab.binding());
    }
}
