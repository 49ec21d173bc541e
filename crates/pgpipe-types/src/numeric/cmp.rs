//! How numerics compare and hash: by value, as PostgreSQL orders them
//! (`-Infinity` < finite < `Infinity` < `NaN`), the display scale ignored.

use std::cmp::Ordering;
use std::hash::{Hash, Hasher};

use super::{Finite, Inner, Numeric};

impl Ord for Numeric {
    fn cmp(&self, other: &Numeric) -> Ordering {
        fn rank(n: &Numeric) -> u8 {
            match n.inner {
                Inner::NegInf => 0,
                Inner::Finite(_) => 1,
                Inner::PosInf => 2,
                Inner::NaN => 3,
            }
        }
        let (a, b) = match (&self.inner, &other.inner) {
            (Inner::Finite(a), Inner::Finite(b)) => (a, b),
            _ => return rank(self).cmp(&rank(other)),
        };
        let signum = |f: &Finite| match (f.digits.is_empty(), f.negative) {
            (true, _) => 0i8,
            (false, true) => -1,
            (false, false) => 1,
        };
        let (sa, sb) = (signum(a), signum(b));
        if sa != sb || sa == 0 {
            return sa.cmp(&sb);
        }
        let magnitude = a
            .weight
            .cmp(&b.weight)
            .then_with(|| a.digits.cmp(&b.digits));
        if sa < 0 {
            magnitude.reverse()
        } else {
            magnitude
        }
    }
}

impl PartialOrd for Numeric {
    fn partial_cmp(&self, other: &Numeric) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for Numeric {
    fn eq(&self, other: &Numeric) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Numeric {}

impl Hash for Numeric {
    /// Consistent with `Eq`: the display scale is not hashed.
    fn hash<H: Hasher>(&self, state: &mut H) {
        match &self.inner {
            Inner::NaN => state.write_u8(0),
            Inner::PosInf => state.write_u8(1),
            Inner::NegInf => state.write_u8(2),
            Inner::Finite(f) => {
                state.write_u8(3);
                f.negative.hash(state);
                f.weight.hash(state);
                f.digits.hash(state);
            }
        }
    }
}
