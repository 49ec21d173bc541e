//! `tsvector`: [`TsVector`], a document prepared for full-text search.

use std::fmt;

use bytes::BytesMut;
use pgpipe_proto::put::PutInline;

use crate::cursor::Cursor;
use crate::{BoxError, Decode, Encode, IsNull, StaticType, Type, TypeRef};

/// The weight of a lexeme position: `A` is the highest, `D` the default
/// (not shown in the text form).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub enum Weight {
    /// `A`.
    A,
    /// `B`.
    B,
    /// `C`.
    C,
    /// `D`, the default.
    #[default]
    D,
}

impl Weight {
    /// The two high bits of a position on the wire (`A` = 3 ... `D` = 0).
    fn bits(self) -> u16 {
        match self {
            Weight::A => 3,
            Weight::B => 2,
            Weight::C => 1,
            Weight::D => 0,
        }
    }

    fn from_bits(bits: u16) -> Weight {
        match bits & 3 {
            3 => Weight::A,
            2 => Weight::B,
            1 => Weight::C,
            _ => Weight::D,
        }
    }
}

/// The largest lexeme position PostgreSQL keeps.
const MAX_POSITION: u16 = TsVector::MAX_POSITION;
/// The most positions one lexeme holds.
const MAX_POSITIONS: usize = 256;
/// The longest lexeme, in bytes.
const MAX_LEXEME_LEN: usize = 2046;
/// The most lexeme bytes one `tsvector` holds.
const MAX_TOTAL_LEN: usize = (1 << 20) - 1;

/// One word of a [`TsVector`] with the positions where it occurs.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Lexeme {
    /// The normalised word.
    pub word: String,
    /// Where it occurs (1 to [`TsVector::MAX_POSITION`], strictly increasing) with
    /// the weight of each occurrence; may be empty.
    pub positions: Vec<(u16, Weight)>,
}

impl Lexeme {
    /// A lexeme without positions.
    pub fn new(word: impl Into<String>) -> Lexeme {
        Lexeme {
            word: word.into(),
            positions: Vec::new(),
        }
    }

    /// The lexeme with these positions.
    pub fn at(mut self, positions: impl IntoIterator<Item = (u16, Weight)>) -> Lexeme {
        self.positions = positions.into_iter().collect();
        self
    }
}

/// A PostgreSQL `tsvector`: distinct lexemes in byte order, each with its
/// positions and weights, as `to_tsvector` makes it.
///
/// [`TsVector::new`] checks what the server's input checks and sorts the
/// lexemes as the server stores them, so what is sent reads back equal.
/// [`Display`](fmt::Display) writes PostgreSQL's text form.
///
/// ```
/// use pgpipe_types::{Lexeme, TsVector, Weight};
///
/// let v = TsVector::new(vec![
///     Lexeme::new("fat").at([(2, Weight::B), (4, Weight::D)]),
///     Lexeme::new("cat"),
///     Lexeme::new("it's"),
/// ])
/// .unwrap();
/// assert_eq!(v.to_string(), "'cat' 'fat':2B,4 'it''s'");
/// assert_eq!(v.lexemes()[0].word, "cat");
/// assert!(TsVector::new(vec![Lexeme::new("a"), Lexeme::new("a")]).is_err());
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct TsVector {
    lexemes: Vec<Lexeme>,
}

/// A `tsvector` the server would refuse or change (see [`TsVector::new`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TsVectorError {
    msg: String,
}

impl fmt::Display for TsVectorError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.msg)
    }
}

impl std::error::Error for TsVectorError {}

impl TsVector {
    /// The largest lexeme position PostgreSQL keeps (its text input stores
    /// larger ones as this).
    pub const MAX_POSITION: u16 = 16383;

    /// A `tsvector` of these lexemes, sorted by their bytes as the server
    /// keeps them. Fails for a repeated or empty word, a word with a NUL
    /// or longer than 2046 bytes (the server's text input limit), more than 1 MB of words, more than 256
    /// positions for one word, or positions that are not strictly
    /// increasing within 1 to [`TsVector::MAX_POSITION`].
    pub fn new(mut lexemes: Vec<Lexeme>) -> Result<TsVector, TsVectorError> {
        let err = |word: &str, why: String| TsVectorError {
            msg: format!("invalid tsvector lexeme {word:?}: {why}"),
        };
        lexemes.sort_by(|a, b| a.word.as_bytes().cmp(b.word.as_bytes()));
        let mut total = 0usize;
        for (i, l) in lexemes.iter().enumerate() {
            let w = &l.word;
            if w.is_empty() {
                return Err(err(w, "empty".into()));
            }
            if w.len() > MAX_LEXEME_LEN {
                return Err(err(
                    w,
                    format!("{} bytes, more than {MAX_LEXEME_LEN}", w.len()),
                ));
            }
            if w.contains('\0') {
                return Err(err(w, "holds a NUL character".into()));
            }
            if i > 0 && lexemes[i - 1].word == *w {
                return Err(err(
                    w,
                    "appears twice (give it all its positions once)".into(),
                ));
            }
            if l.positions.len() > MAX_POSITIONS {
                return Err(err(
                    w,
                    format!("{} positions, more than {MAX_POSITIONS}", l.positions.len()),
                ));
            }
            let mut last = 0;
            for &(pos, _) in &l.positions {
                if pos == 0 || pos > MAX_POSITION || pos <= last {
                    return Err(err(
                        w,
                        format!("position {pos} (positions are 1 to {MAX_POSITION}, strictly increasing)"),
                    ));
                }
                last = pos;
            }
            total += w.len();
        }
        if total > MAX_TOTAL_LEN {
            return Err(TsVectorError {
                msg: format!(
                    "invalid tsvector: {total} bytes of lexemes, more than {MAX_TOTAL_LEN}"
                ),
            });
        }
        Ok(TsVector { lexemes })
    }

    /// The lexemes in the server's order.
    pub fn lexemes(&self) -> &[Lexeme] {
        &self.lexemes
    }

    /// The lexemes, owned.
    pub fn into_lexemes(self) -> Vec<Lexeme> {
        self.lexemes
    }
}

impl fmt::Display for TsVector {
    /// PostgreSQL's `tsvectorout`: each word in single quotes (`'` and `\`
    /// doubled), then `:` and its positions with weights other than `D`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, l) in self.lexemes.iter().enumerate() {
            if i > 0 {
                f.write_str(" ")?;
            }
            f.write_str("'")?;
            for c in l.word.chars() {
                if c == '\'' || c == '\\' {
                    write!(f, "{c}")?;
                }
                write!(f, "{c}")?;
            }
            f.write_str("'")?;
            for (j, (pos, weight)) in l.positions.iter().enumerate() {
                f.write_str(if j == 0 { ":" } else { "," })?;
                write!(f, "{pos}")?;
                if *weight != Weight::D {
                    write!(f, "{weight:?}")?;
                }
            }
        }
        Ok(())
    }
}

impl StaticType for TsVector {
    const TYPE: TypeRef = TypeRef::Oid(3614);
}

impl Encode for TsVector {
    fn type_ref(&self) -> TypeRef {
        Self::TYPE
    }
    fn accepts(&self, ty: &Type) -> bool {
        ty.is(&[Type::TSVECTOR])
    }
    fn accepts_all_values(&self, ty: &Type) -> bool {
        // Which values fit depends on the type alone.
        self.accepts(ty)
    }
    fn encode(&self, _: &Type, buf: &mut BytesMut) -> Result<IsNull, BoxError> {
        // `new` bounds every count far below the wire's limits.
        buf.put_i32_inline(self.lexemes.len() as i32);
        for l in &self.lexemes {
            buf.put_slice_inline(l.word.as_bytes());
            buf.put_u8_inline(0);
            buf.put_u16_inline(l.positions.len() as u16);
            for &(pos, weight) in &l.positions {
                buf.put_u16_inline(weight.bits() << 14 | pos);
            }
        }
        Ok(IsNull::No)
    }
}

impl<'a> Decode<'a> for TsVector {
    fn accepts(ty: &Type) -> bool {
        ty.is(&[Type::TSVECTOR])
    }
    /// Reads the lexemes as the server sent them (in its order).
    fn decode(_: &Type, raw: &'a [u8]) -> Result<Self, BoxError> {
        let mut c = Cursor::new("tsvector", raw);
        let n = c.i32()?;
        // Each lexeme takes at least 3 bytes: checked before reserving.
        if n < 0 || n as usize > c.remaining() / 3 {
            return Err(format!(
                "invalid binary tsvector value: {n} lexemes in {} bytes",
                c.remaining()
            )
            .into());
        }
        let mut lexemes = Vec::with_capacity(n as usize);
        for _ in 0..n {
            let word = std::str::from_utf8(c.c_string()?)
                .map_err(|e| format!("invalid UTF-8 in a tsvector lexeme: {e}"))?
                .to_owned();
            let npos = usize::from(c.u16()?);
            if npos > c.remaining() / 2 {
                return Err(format!(
                    "invalid binary tsvector value: {npos} positions in {} bytes",
                    c.remaining()
                )
                .into());
            }
            let mut positions = Vec::with_capacity(npos);
            for _ in 0..npos {
                let p = c.u16()?;
                positions.push((p & 0x3fff, Weight::from_bits(p >> 14)));
            }
            lexemes.push(Lexeme { word, positions });
        }
        c.finish()?;
        Ok(TsVector { lexemes })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wire_format() {
        let v = TsVector::new(vec![
            Lexeme::new("b").at([(1, Weight::A), (16383, Weight::D)]),
            Lexeme::new("a"),
        ])
        .unwrap();
        let mut buf = BytesMut::new();
        v.encode(&Type::TSVECTOR, &mut buf).unwrap();
        assert_eq!(
            &buf[..],
            &[0, 0, 0, 2, b'a', 0, 0, 0, b'b', 0, 0, 2, 0xc0, 1, 0x3f, 0xff]
        );
        assert_eq!(TsVector::decode(&Type::TSVECTOR, &buf).unwrap(), v);
        assert_eq!(v.to_string(), "'a' 'b':1A,16383");
    }

    #[test]
    fn refuses_what_the_server_refuses_or_changes() {
        for bad in [
            vec![Lexeme::new("")],
            vec![Lexeme::new("a\0b")],
            vec![Lexeme::new("x".repeat(2047))],
            vec![Lexeme::new("a"), Lexeme::new("a")],
            vec![Lexeme::new("a").at([(0, Weight::D)])],
            vec![Lexeme::new("a").at([(16384, Weight::D)])],
            vec![Lexeme::new("a").at([(2, Weight::D), (2, Weight::A)])],
            vec![Lexeme::new("a").at((1..=257).map(|p| (p, Weight::D)))],
        ] {
            let err = TsVector::new(bad).unwrap_err();
            assert!(err.to_string().starts_with("invalid tsvector"), "{err}");
        }
        assert!(
            TsVector::new(vec![Lexeme::new("a").at((1..=256).map(|p| (p, Weight::C)))]).is_ok()
        );
    }

    #[test]
    fn hostile_bytes_are_errors() {
        for raw in [
            &[0u8, 0, 0][..],
            &[0, 0, 0, 1, b'a'],
            &[0, 0, 0, 1, b'a', 0, 0],
            &[0, 0, 0, 1, b'a', 0, 0, 1, 0],
            &[0x7f, 0xff, 0xff, 0xff, 0, 0, 0],
            &[0xff, 0xff, 0xff, 0xff],
            &[0, 0, 0, 1, 0xff, 0, 0, 0],
            &[0, 0, 0, 0, 1],
        ] {
            assert!(TsVector::decode(&Type::TSVECTOR, raw).is_err(), "{raw:?}");
        }
        assert_eq!(
            TsVector::decode(&Type::TSVECTOR, &[0, 0, 0, 0]).unwrap(),
            TsVector::default()
        );
    }
}
