//! Which network addresses a push bot may live at.
//!
//! A bot's owner chooses the URL the server POSTs to; without a guard, the
//! server could be pointed at itself, at its own private network or at a
//! cloud metadata service, and the fault texts would tell the owner what
//! answered there. When the organiser has not allowed private targets
//! (`croupier serve` without `--allow-private-bot-urls`), the HTTP client
//! only connects to public unicast addresses:
//!
//! - host names are resolved by [`PublicOnlyResolver`], which drops every
//!   address that is not public, on every new connection (so a name that
//!   later resolves elsewhere is checked again);
//! - IP-literal hosts bypass the resolver and are checked by
//!   [`check_url`] before any request;
//! - redirects are never followed (see `http.rs`).
//!
//! [`is_public`] is the one definition of "public".

use std::error::Error as StdError;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use reqwest::dns::{Addrs, Name, Resolve, Resolving};

/// Why a bot address was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AddrRefused {
    /// The host is (or resolves only to) a loopback, private, link-local,
    /// multicast or otherwise non-public address.
    #[error(
        "the bot's address is not a public internet address (loopback, private, link-local, \
         multicast and reserved addresses are refused; an organiser whose bots run on the \
         server's own machine or network starts it with `croupier serve --allow-private-bot-urls`)"
    )]
    NotPublic,
    /// The URL cannot be parsed or has no host.
    #[error("the bot's URL has no host")]
    NoHost,
}

/// True for addresses a server may call on an owner's behalf: global unicast
/// addresses only. IPv6 forms that embed an IPv4 address (v4-mapped,
/// v4-compatible, NAT64, 6to4) are judged by the embedded address; Teredo and
/// other tunnels whose target cannot be read are refused.
pub fn is_public(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => is_public_v4(v4),
        IpAddr::V6(v6) => is_public_v6(v6),
    }
}

fn is_public_v4(ip: Ipv4Addr) -> bool {
    let [a, b, c, _] = ip.octets();
    let refused = a == 0 // "this network", 0.0.0.0
        || a == 10 // private
        || a == 127 // loopback
        || (a == 100 && (64..128).contains(&b)) // shared address space (CGNAT)
        || (a == 169 && b == 254) // link-local, cloud metadata
        || (a == 172 && (16..32).contains(&b)) // private
        || (a == 192 && b == 0 && c == 0) // IETF protocol assignments
        || (a == 192 && b == 0 && c == 2) // documentation
        || (a == 192 && b == 88 && c == 99) // 6to4 relay anycast
        || (a == 192 && b == 168) // private
        || (a == 198 && (b == 18 || b == 19)) // benchmarking
        || (a == 198 && b == 51 && c == 100) // documentation
        || (a == 203 && b == 0 && c == 113) // documentation
        || a >= 224; // multicast, reserved, broadcast
    !refused
}

fn is_public_v6(ip: Ipv6Addr) -> bool {
    let s = ip.segments();
    let o = ip.octets();
    let embedded_v4 = |at: usize| Ipv4Addr::new(o[at], o[at + 1], o[at + 2], o[at + 3]);
    // ::ffff:a.b.c.d (v4-mapped) and ::a.b.c.d (v4-compatible, also :: and ::1)
    if s[..5] == [0; 5] && (s[5] == 0xffff || s[5] == 0) {
        return s[5] == 0xffff && is_public_v4(embedded_v4(12));
    }
    // NAT64 well-known prefix 64:ff9b::/96
    if s[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
        return is_public_v4(embedded_v4(12));
    }
    // 6to4 2002:AABB:CCDD::/48
    if s[0] == 0x2002 {
        return is_public_v4(embedded_v4(2));
    }
    // Only global unicast 2000::/3 is public ...
    if s[0] & 0xe000 != 0x2000 {
        return false; // ::/8 rest, 100::/64, fc00::/7, fe80::/10, ff00::/8, 64:ff9b:1::/48 ...
    }
    // ... minus its special-purpose blocks.
    // 2001::/23 (IETF: Teredo, ORCHID, benchmarking ...), 2001:db8::/32 and
    // 3fff::/20 (documentation).
    let refused = (s[0] == 0x2001 && (s[1] < 0x0200 || s[1] == 0x0db8)) || s[0] == 0x3fff;
    !refused
}

/// Checks a URL whose host is an IP literal (those bypass the resolver);
/// host names pass here and are checked by [`PublicOnlyResolver`] when
/// resolved.
pub fn check_url(url: &str) -> Result<(), AddrRefused> {
    let parsed = reqwest::Url::parse(url).map_err(|_| AddrRefused::NoHost)?;
    match parsed.host() {
        None => Err(AddrRefused::NoHost),
        Some(url::Host::Ipv4(v4)) if !is_public_v4(v4) => Err(AddrRefused::NotPublic),
        Some(url::Host::Ipv6(v6)) if !is_public_v6(v6) => Err(AddrRefused::NotPublic),
        Some(url::Host::Domain(d)) if is_local_name(d) => Err(AddrRefused::NotPublic),
        Some(_) => Ok(()),
    }
}

/// Names that always mean this machine, whatever the resolver says.
fn is_local_name(domain: &str) -> bool {
    let d = domain.trim_end_matches('.').to_ascii_lowercase();
    d == "localhost" || d.ends_with(".localhost")
}

/// Checks a bot URL when it is registered: IP literals and `localhost` are
/// judged at once; a host name is resolved and refused when every address it
/// has is non-public. A name that does not resolve now is accepted (the
/// call-time check still applies on every connection).
pub async fn check_url_resolving(url: &str) -> Result<(), AddrRefused> {
    check_url(url)?;
    let parsed = reqwest::Url::parse(url).map_err(|_| AddrRefused::NoHost)?;
    let Some(url::Host::Domain(name)) = parsed.host() else {
        return Ok(());
    };
    let found = tokio::net::lookup_host((name, 0)).await;
    match found {
        Ok(addrs) => {
            let all: Vec<SocketAddr> = addrs.collect();
            if !all.is_empty() && all.iter().all(|a| !is_public(a.ip())) {
                Err(AddrRefused::NotPublic)
            } else {
                Ok(())
            }
        }
        Err(_) => Ok(()),
    }
}

/// A DNS resolver for reqwest that keeps only public addresses, so a host
/// name cannot lead the client to a loopback or private address.
#[derive(Debug, Clone, Copy, Default)]
pub struct PublicOnlyResolver;

impl Resolve for PublicOnlyResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let host = name.as_str().to_string();
        Box::pin(async move {
            if is_local_name(&host) {
                return Err(Box::new(AddrRefused::NotPublic) as Box<dyn StdError + Send + Sync>);
            }
            let public: Vec<SocketAddr> = tokio::net::lookup_host((host.as_str(), 0))
                .await?
                .filter(|a| is_public(a.ip()))
                .collect();
            if public.is_empty() {
                return Err(Box::new(AddrRefused::NotPublic) as Box<dyn StdError + Send + Sync>);
            }
            Ok(Box::new(public.into_iter()) as Addrs)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn non_public_addresses_are_refused() {
        for a in [
            "0.0.0.0",
            "0.1.2.3",
            "10.0.0.1",
            "10.255.255.255",
            "100.64.0.1",
            "100.127.255.254",
            "127.0.0.1",
            "127.8.9.10",
            "169.254.169.254",
            "172.16.0.1",
            "172.31.255.255",
            "192.0.0.8",
            "192.0.2.1",
            "192.88.99.1",
            "192.168.1.1",
            "198.18.0.1",
            "198.19.255.255",
            "198.51.100.7",
            "203.0.113.9",
            "224.0.0.1",
            "239.255.255.250",
            "240.0.0.1",
            "255.255.255.255",
            "::",
            "::1",
            "::127.0.0.1",
            "::8.8.8.8",
            "::ffff:127.0.0.1",
            "::ffff:10.1.2.3",
            "::ffff:169.254.169.254",
            "::ffff:0:0",
            "64:ff9b::7f00:1",
            "64:ff9b::a00:1",
            "64:ff9b:1::1",
            "100::1",
            "2001::1",
            "2001:0:4136:e378:8000:63bf:3fff:fdd2",
            "2001:10::1",
            "2001:db8::1",
            "2002:7f00:1::1",
            "2002:a9fe:a9fe::1",
            "2002:c0a8:101::1",
            "3fff::1",
            "fc00::1",
            "fd12:3456:789a::1",
            "fe80::1",
            "febf::1",
            "fec0::1",
            "ff02::1",
            "ff0e::1",
        ] {
            assert!(!is_public(ip(a)), "{a} must be refused");
        }
    }

    #[test]
    fn public_addresses_are_allowed() {
        for a in [
            "1.1.1.1",
            "8.8.8.8",
            "9.255.255.255",
            "11.0.0.1",
            "100.63.255.255",
            "100.128.0.1",
            "126.255.255.255",
            "128.0.0.1",
            "169.253.1.1",
            "172.15.255.255",
            "172.32.0.1",
            "192.0.1.1",
            "192.167.1.1",
            "192.169.0.1",
            "198.17.1.1",
            "198.20.0.1",
            "223.255.255.254",
            "::ffff:8.8.8.8",
            "64:ff9b::808:808",
            "2002:808:808::1",
            "2001:4860:4860::8888",
            "2606:4700:4700::1111",
            "2a00:1450:4001::1",
        ] {
            assert!(is_public(ip(a)), "{a} must be allowed");
        }
    }

    #[test]
    fn ip_literal_urls_are_checked_in_every_spelling() {
        for url in [
            "http://127.0.0.1:8080/bot",
            "http://127.1/",
            "http://0x7f.0.0.1/",
            "http://2130706433/",
            "http://017700000001/",
            "http://0/",
            "http://[::1]:9/",
            "http://[::ffff:127.0.0.1]/",
            "http://[::ffff:7f00:1]/",
            "https://169.254.169.254/latest/meta-data/",
            "http://10.0.0.1/",
            "http://[fe80::1]/",
            "http://localhost:8080/",
            "http://LOCALHOST./",
            "http://bot.localhost/",
        ] {
            assert_eq!(check_url(url), Err(AddrRefused::NotPublic), "{url}");
        }
        for url in [
            "http://8.8.8.8/",
            "https://[2606:4700:4700::1111]/play",
            "https://bots.example.org/play",
        ] {
            assert_eq!(check_url(url), Ok(()), "{url}");
        }
        assert_eq!(check_url("not a url"), Err(AddrRefused::NoHost));
    }

    #[tokio::test]
    async fn registration_resolves_names_to_loopback_and_refuses_them() {
        // `localhost` is answered from /etc/hosts: no packet leaves.
        assert!(check_url_resolving("http://localhost:1/").await.is_err());
        assert!(check_url_resolving("http://127.0.0.1:1/").await.is_err());
        assert_eq!(check_url_resolving("http://8.8.8.8/").await, Ok(()));
    }
}
