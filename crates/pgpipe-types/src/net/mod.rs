//! `inet`, `cidr`, `macaddr` and `macaddr8`.
//!
//! `std::net::IpAddr` is a host address: it is sent with the full prefix
//! length and reads an `inet` or `cidr` value only when its prefix is the
//! full length (a network such as `10.0.0.0/8` is an error, not a silently
//! dropped prefix). [`Inet`] and [`Cidr`] carry the prefix.

use pgpipe_proto::put::PutInline;
use std::fmt::{self, Write as _};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::str::FromStr;

use bytes::BytesMut;

use crate::{BoxError, Decode, Encode, IsNull, StaticType, Type, TypeRef};

mod mac;

pub use mac::{MacAddr, MacAddr8};

/// PostgreSQL's own address family numbers in the binary format
/// (`PGSQL_AF_INET`, `PGSQL_AF_INET6`).
const PGSQL_AF_INET: u8 = 2;
const PGSQL_AF_INET6: u8 = 3;

/// An invalid network address or MAC address: a prefix too long for the
/// address family, host bits set in a [`Cidr`], or text that does not parse.
///
/// ```
/// use pgpipe_types::Cidr;
///
/// let err = "10.1.0.0/8".parse::<Cidr>().unwrap_err();
/// assert_eq!(err.to_string(), "invalid cidr 10.1.0.0/8: bits are set to the right of the /8 prefix");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NetError {
    msg: String,
}

impl NetError {
    fn new(msg: impl Into<String>) -> NetError {
        NetError { msg: msg.into() }
    }
}

impl fmt::Display for NetError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.msg)
    }
}

impl std::error::Error for NetError {}

/// The full prefix length of the address's family (32 or 128).
fn max_prefix(addr: &IpAddr) -> u8 {
    match addr {
        IpAddr::V4(_) => 32,
        IpAddr::V6(_) => 128,
    }
}

/// The address with every bit after the first `prefix` cleared.
fn mask(addr: &IpAddr, prefix: u8) -> IpAddr {
    match addr {
        IpAddr::V4(a) => {
            let m = u32::MAX.checked_shl(32 - u32::from(prefix)).unwrap_or(0);
            IpAddr::V4(Ipv4Addr::from(u32::from(*a) & m))
        }
        IpAddr::V6(a) => {
            let m = u128::MAX.checked_shl(128 - u32::from(prefix)).unwrap_or(0);
            IpAddr::V6(Ipv6Addr::from(u128::from(*a) & m))
        }
    }
}

fn check_prefix(kind: &str, addr: &IpAddr, prefix: u8) -> Result<(), NetError> {
    if prefix > max_prefix(addr) {
        return Err(NetError::new(format!(
            "invalid {kind} prefix /{prefix} for {addr}: at most {}",
            max_prefix(addr)
        )));
    }
    Ok(())
}

/// An `inet` value: a host address with an optional network prefix length
/// (`192.168.0.1/24`: host 192.168.0.1 on network 192.168.0.0/24).
///
/// [`Display`](fmt::Display) and [`FromStr`] use PostgreSQL's text form: the
/// `/prefix` is shown only when it is shorter than the address.
///
/// ```
/// use pgpipe_types::Inet;
/// use std::net::IpAddr;
///
/// let i: Inet = "192.168.0.1/24".parse().unwrap();
/// assert_eq!(i.addr(), "192.168.0.1".parse::<IpAddr>().unwrap());
/// assert_eq!(i.prefix(), 24);
/// assert_eq!(i.network().to_string(), "192.168.0.0/24");
/// assert_eq!("::ffff:1.2.3.4/128".parse::<Inet>().unwrap().to_string(), "::ffff:1.2.3.4");
/// assert!(Inet::new("10.0.0.1".parse().unwrap(), 33).is_err());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Inet {
    addr: IpAddr,
    prefix: u8,
}

impl Inet {
    /// An address with a prefix length, which must be at most 32 for IPv4
    /// and 128 for IPv6.
    pub fn new(addr: IpAddr, prefix: u8) -> Result<Inet, NetError> {
        check_prefix("inet", &addr, prefix)?;
        Ok(Inet { addr, prefix })
    }

    /// The address.
    pub fn addr(&self) -> IpAddr {
        self.addr
    }

    /// The network prefix length.
    pub fn prefix(&self) -> u8 {
        self.prefix
    }

    /// The network this address is on (`network()` in SQL).
    pub fn network(&self) -> Cidr {
        Cidr {
            addr: mask(&self.addr, self.prefix),
            prefix: self.prefix,
        }
    }
}

impl From<IpAddr> for Inet {
    /// A host address: the full prefix length.
    fn from(addr: IpAddr) -> Inet {
        Inet {
            addr,
            prefix: max_prefix(&addr),
        }
    }
}

impl From<Cidr> for Inet {
    fn from(c: Cidr) -> Inet {
        Inet {
            addr: c.addr,
            prefix: c.prefix,
        }
    }
}

/// A `cidr` value: a network, an address whose bits after the prefix
/// length are all zero.
///
/// [`Display`](fmt::Display) always shows the prefix, as PostgreSQL does.
/// [`FromStr`] takes `address/prefix`, or an address alone as a network of
/// one host (PostgreSQL's own input would guess a classful prefix for an
/// IPv4 address without one).
///
/// ```
/// use pgpipe_types::Cidr;
///
/// let c: Cidr = "2001:db8::/32".parse().unwrap();
/// assert_eq!(c.prefix(), 32);
/// assert_eq!(c.to_string(), "2001:db8::/32");
/// assert_eq!("10.0.0.1".parse::<Cidr>().unwrap().to_string(), "10.0.0.1/32");
/// assert!(Cidr::new("10.0.0.1".parse().unwrap(), 8).is_err());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Cidr {
    addr: IpAddr,
    prefix: u8,
}

impl Cidr {
    /// A network; fails if the prefix is too long for the family or a bit
    /// to the right of the prefix is set.
    pub fn new(addr: IpAddr, prefix: u8) -> Result<Cidr, NetError> {
        check_prefix("cidr", &addr, prefix)?;
        if mask(&addr, prefix) != addr {
            return Err(NetError::new(format!(
                "invalid cidr {addr}/{prefix}: bits are set to the right of the /{prefix} prefix"
            )));
        }
        Ok(Cidr { addr, prefix })
    }

    /// The network address.
    pub fn addr(&self) -> IpAddr {
        self.addr
    }

    /// The network prefix length.
    pub fn prefix(&self) -> u8 {
        self.prefix
    }
}

impl From<IpAddr> for Cidr {
    /// A network of one host: the full prefix length.
    fn from(addr: IpAddr) -> Cidr {
        Cidr {
            addr,
            prefix: max_prefix(&addr),
        }
    }
}

impl TryFrom<Inet> for Cidr {
    type Error = NetError;

    /// Fails when the `inet` has host bits set (use [`Inet::network`] to
    /// clear them).
    fn try_from(i: Inet) -> Result<Cidr, NetError> {
        Cidr::new(i.addr, i.prefix)
    }
}

/// Writes an address as PostgreSQL's `inet_net_ntop` does: dotted IPv4;
/// IPv6 in lowercase hex with the longest run (at least two) of zero groups,
/// the first on a tie, as `::`, and an IPv4-compatible (`::a.b.c.d`) or
/// IPv4-mapped (`::ffff:a.b.c.d`) address with its IPv4 part dotted.
fn write_addr(out: &mut String, addr: &IpAddr) {
    let v6 = match addr {
        IpAddr::V4(a) => {
            let _ = write!(out, "{a}");
            return;
        }
        IpAddr::V6(a) => a,
    };
    let words = v6.segments();
    let (mut best_base, mut best_len) = (usize::MAX, 0);
    let mut i = 0;
    while i < 8 {
        if words[i] == 0 {
            let start = i;
            while i < 8 && words[i] == 0 {
                i += 1;
            }
            if i - start > best_len {
                best_base = start;
                best_len = i - start;
            }
        } else {
            i += 1;
        }
    }
    if best_len < 2 {
        best_base = usize::MAX;
    }
    for (i, word) in words.iter().enumerate() {
        if best_base != usize::MAX && i >= best_base && i < best_base + best_len {
            if i == best_base {
                out.push(':');
            }
            continue;
        }
        if i != 0 {
            out.push(':');
        }
        if i == 6 && best_base == 0 && (best_len == 6 || (best_len == 5 && words[5] == 0xffff)) {
            let o = v6.octets();
            let _ = write!(out, "{}.{}.{}.{}", o[12], o[13], o[14], o[15]);
            return;
        }
        let _ = write!(out, "{word:x}");
    }
    if best_base != usize::MAX && best_base + best_len == 8 {
        out.push(':');
    }
}

impl fmt::Display for Inet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut s = String::with_capacity(48);
        write_addr(&mut s, &self.addr);
        if self.prefix != max_prefix(&self.addr) {
            let _ = write!(s, "/{}", self.prefix);
        }
        f.pad(&s)
    }
}

impl fmt::Display for Cidr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut s = String::with_capacity(48);
        write_addr(&mut s, &self.addr);
        let _ = write!(s, "/{}", self.prefix);
        f.pad(&s)
    }
}

/// Splits `addr[/prefix]`; without a prefix, the full length.
fn parse_net(kind: &str, s: &str) -> Result<(IpAddr, u8), NetError> {
    let invalid = |why: &str| NetError::new(format!("invalid {kind} {s:?}: {why}"));
    let (addr, prefix) = match s.split_once('/') {
        Some((a, p)) => (a, Some(p)),
        None => (s, None),
    };
    let addr: IpAddr = addr
        .parse()
        .map_err(|_| invalid("not an IPv4 or IPv6 address"))?;
    let prefix = match prefix {
        None => max_prefix(&addr),
        Some(p) if !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()) => p
            .parse()
            .map_err(|_| invalid("prefix length out of range"))?,
        Some(_) => return Err(invalid("the prefix length is not a number")),
    };
    Ok((addr, prefix))
}

impl FromStr for Inet {
    type Err = NetError;

    fn from_str(s: &str) -> Result<Inet, NetError> {
        let (addr, prefix) = parse_net("inet", s)?;
        Inet::new(addr, prefix)
    }
}

impl FromStr for Cidr {
    type Err = NetError;

    fn from_str(s: &str) -> Result<Cidr, NetError> {
        let (addr, prefix) = parse_net("cidr", s)?;
        Cidr::new(addr, prefix)
    }
}

/// Appends the binary `inet`/`cidr` format.
fn encode_net(addr: &IpAddr, prefix: u8, ty: &Type, buf: &mut BytesMut) {
    let is_cidr = u8::from(ty.is(&[Type::CIDR]));
    match addr {
        IpAddr::V4(a) => {
            buf.put_slice_inline(&[PGSQL_AF_INET, prefix, is_cidr, 4]);
            buf.put_slice_inline(&a.octets());
        }
        IpAddr::V6(a) => {
            buf.put_slice_inline(&[PGSQL_AF_INET6, prefix, is_cidr, 16]);
            buf.put_slice_inline(&a.octets());
        }
    }
}

/// Reads the binary `inet`/`cidr` format; for a `cidr` column also checks
/// that no host bit is set.
fn decode_net(ty: &Type, raw: &[u8]) -> Result<(IpAddr, u8), BoxError> {
    let [family, bits, _is_cidr, nb, addr @ ..] = raw else {
        return Err(format!(
            "invalid binary {ty} value: expected at least 4 bytes, got {}",
            raw.len()
        )
        .into());
    };
    let addr = match (*family, *nb) {
        (PGSQL_AF_INET, 4) | (PGSQL_AF_INET6, 16) if addr.len() != usize::from(*nb) => {
            return Err(format!(
                "invalid binary {ty} value: the header says {nb} address bytes but {} follow",
                addr.len()
            )
            .into())
        }
        (PGSQL_AF_INET, 4) => IpAddr::V4(Ipv4Addr::new(addr[0], addr[1], addr[2], addr[3])),
        (PGSQL_AF_INET6, 16) => {
            let octets: [u8; 16] = addr.try_into().expect("length checked");
            IpAddr::V6(Ipv6Addr::from(octets))
        }
        (PGSQL_AF_INET | PGSQL_AF_INET6, _) => {
            return Err(format!(
                "invalid binary {ty} value: address length {nb} does not match family {family}"
            )
            .into())
        }
        _ => {
            return Err(
                format!("invalid binary {ty} value: unknown address family {family}").into(),
            )
        }
    };
    if *bits > max_prefix(&addr) {
        return Err(format!(
            "invalid binary {ty} value: prefix length {bits} is too long for {addr}"
        )
        .into());
    }
    if ty.is(&[Type::CIDR]) && mask(&addr, *bits) != addr {
        return Err(format!(
            "invalid binary cidr value: {addr}/{bits} has bits set to the right of the prefix"
        )
        .into());
    }
    Ok((addr, *bits))
}

impl StaticType for IpAddr {
    const TYPE: TypeRef = TypeRef::Oid(869);
}

impl Encode for IpAddr {
    fn type_ref(&self) -> TypeRef {
        TypeRef::Oid(869)
    }
    /// A host address is a valid `inet` and a valid `cidr`.
    fn accepts(&self, ty: &Type) -> bool {
        ty.is(&[Type::INET, Type::CIDR])
    }
    fn encode(&self, ty: &Type, buf: &mut BytesMut) -> Result<IsNull, BoxError> {
        encode_net(self, max_prefix(self), ty, buf);
        Ok(IsNull::No)
    }
}

impl<'a> Decode<'a> for IpAddr {
    fn accepts(ty: &Type) -> bool {
        ty.is(&[Type::INET, Type::CIDR])
    }
    /// Fails for a value with a network prefix shorter than the address.
    fn decode(ty: &Type, raw: &'a [u8]) -> Result<Self, BoxError> {
        let (addr, prefix) = decode_net(ty, raw)?;
        if prefix != max_prefix(&addr) {
            return Err(format!(
                "{ty} value {addr}/{prefix} has a network prefix; read it as pgpipe_types::Inet \
                 or Cidr instead of IpAddr"
            )
            .into());
        }
        Ok(addr)
    }
}

impl StaticType for Inet {
    const TYPE: TypeRef = TypeRef::Oid(869);
}

impl Encode for Inet {
    fn type_ref(&self) -> TypeRef {
        TypeRef::Oid(869)
    }
    fn accepts(&self, ty: &Type) -> bool {
        ty.is(&[Type::INET])
    }
    fn encode(&self, ty: &Type, buf: &mut BytesMut) -> Result<IsNull, BoxError> {
        encode_net(&self.addr, self.prefix, ty, buf);
        Ok(IsNull::No)
    }
}

impl<'a> Decode<'a> for Inet {
    /// Every `cidr` value is also an `inet` value.
    fn accepts(ty: &Type) -> bool {
        ty.is(&[Type::INET, Type::CIDR])
    }
    fn decode(ty: &Type, raw: &'a [u8]) -> Result<Self, BoxError> {
        let (addr, prefix) = decode_net(ty, raw)?;
        Ok(Inet { addr, prefix })
    }
}

impl StaticType for Cidr {
    const TYPE: TypeRef = TypeRef::Oid(650);
}

impl Encode for Cidr {
    fn type_ref(&self) -> TypeRef {
        TypeRef::Oid(650)
    }
    /// Every `cidr` value is also an `inet` value.
    fn accepts(&self, ty: &Type) -> bool {
        ty.is(&[Type::CIDR, Type::INET])
    }
    fn encode(&self, ty: &Type, buf: &mut BytesMut) -> Result<IsNull, BoxError> {
        encode_net(&self.addr, self.prefix, ty, buf);
        Ok(IsNull::No)
    }
}

impl<'a> Decode<'a> for Cidr {
    fn accepts(ty: &Type) -> bool {
        ty.is(&[Type::CIDR])
    }
    fn decode(ty: &Type, raw: &'a [u8]) -> Result<Self, BoxError> {
        let (addr, prefix) = decode_net(ty, raw)?;
        Ok(Cidr::new(addr, prefix)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn enc<T: Encode>(v: &T, ty: &Type) -> Vec<u8> {
        let mut buf = BytesMut::new();
        v.encode(ty, &mut buf).unwrap();
        buf.to_vec()
    }

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn binary_layout() {
        assert_eq!(
            enc(&ip("192.168.0.1"), &Type::INET),
            [2, 32, 0, 4, 192, 168, 0, 1]
        );
        let c: Cidr = "10.0.0.0/8".parse().unwrap();
        assert_eq!(enc(&c, &Type::CIDR), [2, 8, 1, 4, 10, 0, 0, 0]);
        let v6 = enc(&"::1/64".parse::<Inet>().unwrap(), &Type::INET);
        assert_eq!(&v6[..4], &[3, 64, 0, 16]);
        assert_eq!(v6.len(), 20);
        assert_eq!(
            Inet::decode(&Type::INET, &v6).unwrap(),
            Inet::new(ip("::1"), 64).unwrap()
        );
        assert_eq!(
            Cidr::decode(&Type::CIDR, &[2, 8, 1, 4, 10, 0, 0, 0]).unwrap(),
            c
        );
    }

    #[test]
    fn ipaddr_needs_the_full_prefix() {
        assert_eq!(
            IpAddr::decode(&Type::INET, &[2, 32, 0, 4, 1, 2, 3, 4]).unwrap(),
            ip("1.2.3.4")
        );
        assert_eq!(
            IpAddr::decode(&Type::CIDR, &[2, 32, 1, 4, 1, 2, 3, 4]).unwrap(),
            ip("1.2.3.4")
        );
        let err = IpAddr::decode(&Type::INET, &[2, 24, 0, 4, 1, 2, 3, 4]).unwrap_err();
        assert!(
            err.to_string().contains("1.2.3.4/24 has a network prefix"),
            "{err}"
        );
    }

    #[test]
    fn malformed_binary_is_an_error() {
        for (raw, want) in [
            (&[2u8, 32, 0][..], "at least 4 bytes, got 3"),
            (&[2, 32, 0, 4, 1, 2, 3], "4 address bytes but 3 follow"),
            (
                &[2, 32, 0, 4, 1, 2, 3, 4, 5],
                "4 address bytes but 5 follow",
            ),
            (
                &[2, 32, 0, 16, 1, 2, 3, 4],
                "address length 16 does not match family 2",
            ),
            (&[9, 32, 0, 4, 1, 2, 3, 4], "unknown address family 9"),
            (&[2, 33, 0, 4, 1, 2, 3, 4], "prefix length 33 is too long"),
        ] {
            let err = Inet::decode(&Type::INET, raw).unwrap_err().to_string();
            assert!(err.contains(want), "{err:?} vs {want:?}");
        }
        let err = Cidr::decode(&Type::CIDR, &[2, 8, 1, 4, 10, 0, 0, 1]).unwrap_err();
        assert!(err.to_string().contains("bits set to the right"), "{err}");
        assert!(MacAddr::decode(&Type::MACADDR, &[0; 8]).is_err());
        assert!(MacAddr8::decode(&Type::MACADDR8, &[0; 6]).is_err());
    }

    #[test]
    fn text_forms_match_postgres() {
        // Left: input; right: PostgreSQL 15's inet output.
        for (input, output) in [
            ("192.168.0.1", "192.168.0.1"),
            ("192.168.0.1/24", "192.168.0.1/24"),
            ("0.0.0.0/0", "0.0.0.0/0"),
            ("::", "::"),
            ("::1", "::1"),
            ("1::", "1::"),
            ("2001:DB8:0:0:1:0:0:1", "2001:db8::1:0:0:1"),
            ("2001:db8:0:1:1:1:1:1", "2001:db8:0:1:1:1:1:1"),
            ("::ffff:1.2.3.4", "::ffff:1.2.3.4"),
            ("::1.2.3.4", "::1.2.3.4"),
            ("::2:3", "::0.2.0.3"),
            ("1:0:0:1:0:0:0:1/100", "1:0:0:1::1/100"),
            ("fe80::/10", "fe80::/10"),
        ] {
            assert_eq!(
                input.parse::<Inet>().unwrap().to_string(),
                output,
                "{input}"
            );
        }
        assert_eq!(
            "10.0.0.0/8".parse::<Cidr>().unwrap().to_string(),
            "10.0.0.0/8"
        );
        assert_eq!("::/0".parse::<Cidr>().unwrap().to_string(), "::/0");
        for bad in [
            "",
            "1.2.3",
            "1.2.3.4/",
            "1.2.3.4/x",
            "1.2.3.4/33",
            "::1/129",
            "1.2.3.4/-1",
        ] {
            assert!(bad.parse::<Inet>().is_err(), "{bad}");
        }
    }

    #[test]
    fn cidr_and_inet_conversions() {
        let i: Inet = "192.168.7.9/16".parse().unwrap();
        assert_eq!(i.network(), "192.168.0.0/16".parse().unwrap());
        assert!(Cidr::try_from(i).is_err());
        assert_eq!(Inet::from(i.network()).to_string(), "192.168.0.0/16");
        assert_eq!(Inet::from(ip("::1")).prefix(), 128);
        assert_eq!(
            Inet::new(ip("1.2.3.4"), 0).unwrap().network().to_string(),
            "0.0.0.0/0"
        );
        assert!(Cidr::new(ip("::1"), 0).is_err());
    }

    #[test]
    fn mac_text_forms() {
        let want = MacAddr([0x08, 0x00, 0x2b, 0x01, 0x02, 0x03]);
        for s in [
            "08:00:2b:01:02:03",
            "08-00-2b-01-02-03",
            "08002b:010203",
            "08002b-010203",
            "0800.2b01.0203",
            "0800-2b01-0203",
            "08002B010203",
        ] {
            assert_eq!(s.parse::<MacAddr>().unwrap(), want, "{s}");
        }
        for bad in [
            "",
            "08:00:2b:01:02",
            "08:00-2b:01:02:03",
            "0800:2b01:0203",
            "08002b01020",
            "zz:00:2b:01:02:03",
            "08.00.2b.01.02.03",
        ] {
            assert!(bad.parse::<MacAddr>().is_err(), "{bad}");
        }
        assert_eq!(want.to_string(), "08:00:2b:01:02:03");
        let m8: MacAddr8 = "08:00:2b:01:02:03:04:05".parse().unwrap();
        assert_eq!(m8.to_string(), "08:00:2b:01:02:03:04:05");
        assert_eq!("08002b0102030405".parse::<MacAddr8>().unwrap(), m8);
        assert_eq!("0800.2b01.0203.0405".parse::<MacAddr8>().unwrap(), m8);
        for bad in [
            "",
            "08:00:2b:01:02:03:04",
            "08:00:2b:01:02:03:04:05:06",
            "0:800:2b:01:02:03:04:05",
            "08:00-2b:01:02:03:04:05",
            "08::00:2b:01:02:03:04",
        ] {
            assert!(bad.parse::<MacAddr8>().is_err(), "{bad}");
        }
        assert_eq!(enc(&m8, &Type::MACADDR8), m8.0);
        assert_eq!(MacAddr::decode(&Type::MACADDR, &want.0).unwrap(), want);
    }
}
