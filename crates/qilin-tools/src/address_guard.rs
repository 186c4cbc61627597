//! Which network addresses `web_fetch` refuses unless the configuration allows them:
//! loopback, private, link-local and other addresses that do not lead to the public internet.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// True when `ip` is not a public internet address (loopback, private, link-local, shared,
/// unspecified, broadcast, multicast, documentation, IETF protocol assignments, unique-local),
/// or an IPv6 address that embeds an IPv4 one that is: IPv4-mapped (`::ffff:a.b.c.d`),
/// IPv4-compatible (`::a.b.c.d`), NAT64 (`64:ff9b::/96`, `64:ff9b:1::/48`) and 6to4
/// (`2002::/16`).
pub fn is_non_public(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => is_non_public_v4(v4),
        IpAddr::V6(v6) => {
            if let Some(v4) = embedded_v4(v6) {
                return is_non_public_v4(v4);
            }
            let segments = v6.segments();
            let first = segments[0];
            v6.is_loopback()
                || v6.is_unspecified()
                || v6.is_multicast()
                || (first == 0x0064 && segments[1] == 0xff9b && segments[2] == 0x0001)
                || (first & 0xfe00) == 0xfc00
                || (first & 0xffc0) == 0xfe80
                || (first == 0x2001 && segments[1] == 0x0db8)
        }
    }
}

/// The IPv4 address an IPv6 one carries, where the network would reach that IPv4 address:
/// mapped, compatible, NAT64 (the well-known prefix `64:ff9b::/96`) and 6to4.
fn embedded_v4(v6: Ipv6Addr) -> Option<Ipv4Addr> {
    let s = v6.segments();
    let low = Ipv4Addr::new((s[6] >> 8) as u8, s[6] as u8, (s[7] >> 8) as u8, s[7] as u8);
    if let Some(mapped) = v6.to_ipv4_mapped() {
        return Some(mapped);
    }
    if s[..6] == [0; 6] && !v6.is_loopback() && !v6.is_unspecified() {
        return Some(low);
    }
    if s[0] == 0x0064 && s[1] == 0xff9b && s[2..6] == [0; 4] {
        return Some(low);
    }
    if s[0] == 0x2002 {
        return Some(Ipv4Addr::new(
            (s[1] >> 8) as u8,
            s[1] as u8,
            (s[2] >> 8) as u8,
            s[2] as u8,
        ));
    }
    None
}

fn is_non_public_v4(v4: Ipv4Addr) -> bool {
    let [a, b, ..] = v4.octets();
    v4.is_loopback()
        || v4.is_private()
        || v4.is_link_local()
        || v4.is_unspecified()
        || v4.is_broadcast()
        || v4.is_multicast()
        || v4.is_documentation()
        || a == 0
        || (a == 100 && (64..128).contains(&b))
        || (a == 198 && (b == 18 || b == 19))
        || (a == 192 && b == 0 && v4.octets()[2] == 0)
        || a >= 240
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn private_loopback_and_link_local_are_non_public() {
        for ip in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "0.0.0.0",
            "::1",
            "fe80::1",
            "fd00::1",
            "::ffff:127.0.0.1",
            "::ffff:10.0.0.1",
            "::127.0.0.1",
            "::10.0.0.1",
            "64:ff9b::7f00:1",
            "64:ff9b::a9fe:a9fe",
            "64:ff9b:1::1:2",
            "2002:7f00:1::1",
            "2002:c0a8:101::",
            "192.0.0.1",
            "192.0.0.170",
        ] {
            assert!(is_non_public(ip.parse().unwrap()), "{ip}");
        }
        for ip in [
            "93.184.216.34",
            "1.1.1.1",
            "2606:4700::1111",
            "64:ff9b::101:101",
            "2002:101:101::1",
            "8.8.8.8",
        ] {
            assert!(!is_non_public(ip.parse().unwrap()), "{ip}");
        }
    }
}
