//! What a generated key looks like: a URL, an e-mail address, or an IPv4 or IPv6 address.
//!
//! A profile names its shape (`shape = url|email|ipv4|ipv6`; `url` when it says none), and the generator
//! writes keys of that shape. Each shape has its own index space: members are the indices below
//! [`Shape::member_limit`], non-members as many again above them, and every index of that space gives a
//! distinct key (see `keys::generator` for how each shape keeps that promise).

use std::fmt;

/// The shape of the keys a profile generates.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Shape {
    /// `https://host/path-token?query` (or bare `host/path-token`).
    #[default]
    Url,
    /// `local-part@domain`.
    Email,
    /// A dotted quad outside the special-purpose ranges.
    Ipv4,
    /// A global unicast address in RFC 5952 canonical text.
    Ipv6,
}

impl Shape {
    /// Every shape, in the order error messages list them.
    pub const ALL: [Shape; 4] = [Shape::Url, Shape::Email, Shape::Ipv4, Shape::Ipv6];

    /// The name a profile file uses.
    pub fn name(self) -> &'static str {
        match self {
            Shape::Url => "url",
            Shape::Email => "email",
            Shape::Ipv4 => "ipv4",
            Shape::Ipv6 => "ipv6",
        }
    }

    /// The shape named `name`, or a message listing the names there are.
    pub fn parse(name: &str) -> Result<Shape, String> {
        Shape::ALL
            .into_iter()
            .find(|s| s.name() == name)
            .ok_or_else(|| {
                let names: Vec<&str> = Shape::ALL.iter().map(|s| s.name()).collect();
                format!("'{name}' is not one of {}", names.join(", "))
            })
    }

    /// Members are the indices below this; non-member j is index `member_limit + j`, for j below it too.
    ///
    /// URLs and IPv6 addresses carry a 48-bit scramble of the index, so they reach 2^47 members
    /// ([`crate::keys::NON_MEMBER_BASE`]). An e-mail address carries a 36-bit one in its local part: 2^35
    /// members (3.4·10¹⁰, past the 6·10⁹ of the largest suite). An IPv4 address is one of the
    /// 3,702,258,432 addresses outside the special-purpose ranges, so half of them are members.
    pub fn member_limit(self) -> u64 {
        match self {
            Shape::Url | Shape::Ipv6 => crate::keys::NON_MEMBER_BASE,
            Shape::Email => crate::keys::generator::EMAIL_MEMBER_LIMIT,
            Shape::Ipv4 => crate::keys::generator::IPV4_MEMBER_LIMIT,
        }
    }
}

impl fmt::Display for Shape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_shape_parses_from_its_name_and_nothing_else_does() {
        for shape in Shape::ALL {
            assert_eq!(Shape::parse(shape.name()), Ok(shape));
            assert_eq!(shape.to_string(), shape.name());
        }
        assert_eq!(Shape::default(), Shape::Url);
        for bad in ["URL", "e-mail", "ip", "ipv5", ""] {
            let err = Shape::parse(bad).unwrap_err();
            assert!(err.contains("url, email, ipv4, ipv6"), "{err}");
        }
    }

    #[test]
    fn member_limits_leave_room_for_as_many_non_members() {
        for shape in Shape::ALL {
            let limit = shape.member_limit();
            assert!(limit >= 1 << 30, "{shape}: {limit}");
            assert!(limit <= crate::keys::NON_MEMBER_BASE, "{shape}: {limit}");
        }
        assert_eq!(Shape::Email.member_limit(), 1 << 35);
        assert_eq!(Shape::Ipv4.member_limit(), 3_702_258_432 / 2);
    }
}
