//! Walking a buffer of whole messages (either direction: every message is a
//! type byte and a big-endian length that counts itself), without copying
//! or parsing their bodies.

/// One message of a buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Frame<'a> {
    /// The message type byte.
    pub tag: u8,
    /// The body, after the 5-byte header.
    pub body: &'a [u8],
    /// Where the message starts in the buffer.
    pub start: usize,
    /// Where the next message starts.
    pub end: usize,
}

/// The buffer does not split into whole messages: a length below 4, or a
/// message (or header) cut off at the end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BrokenFrame {
    /// Where the broken message starts.
    pub at: usize,
}

impl std::fmt::Display for BrokenFrame {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "no whole message at offset {}", self.at)
    }
}

impl std::error::Error for BrokenFrame {}

/// The messages of `buf` in order; a broken one ends the walk with an error.
pub fn frames(buf: &[u8]) -> Frames<'_> {
    Frames { buf, at: 0 }
}

/// Iterator of [`frames`].
#[derive(Debug, Clone)]
pub struct Frames<'a> {
    buf: &'a [u8],
    at: usize,
}

impl<'a> Frames<'a> {
    /// Where the next message starts (the buffer's length once walked).
    pub fn position(&self) -> usize {
        self.at
    }
}

impl<'a> Iterator for Frames<'a> {
    type Item = Result<Frame<'a>, BrokenFrame>;

    fn next(&mut self) -> Option<Self::Item> {
        let start = self.at;
        let rest = self.buf.get(start..)?;
        if rest.is_empty() {
            return None;
        }
        // A broken message ends the walk: nothing after it can be framed.
        self.at = self.buf.len();
        let header = rest.get(..5).ok_or(BrokenFrame { at: start });
        let header = match header {
            Ok(h) => h,
            Err(e) => return Some(Err(e)),
        };
        let len = u32::from_be_bytes([header[1], header[2], header[3], header[4]]) as usize;
        if len < 4 || rest.len() - 1 < len {
            return Some(Err(BrokenFrame { at: start }));
        }
        let end = start + 1 + len;
        self.at = end;
        Some(Ok(Frame {
            tag: header[0],
            body: &rest[5..1 + len],
            start,
            end,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn msg(t: u8, body: &[u8]) -> Vec<u8> {
        let mut m = vec![t];
        m.extend_from_slice(&(body.len() as u32 + 4).to_be_bytes());
        m.extend_from_slice(body);
        m
    }

    #[test]
    fn whole_messages_are_walked_and_broken_ones_end_the_walk() {
        let mut buf = msg(b'C', b"SELECT 1\0");
        buf.extend(msg(b'Z', b"I"));
        let walked: Vec<_> = frames(&buf).collect();
        assert_eq!(walked.len(), 2);
        let last = walked[1].unwrap();
        assert_eq!(
            (last.tag, last.body, last.end),
            (b'Z', &b"I"[..], buf.len())
        );
        assert_eq!(frames(&[]).count(), 0);
        // Cut off, too short a length, a partial header.
        for broken in [&buf[..buf.len() - 1], &[b'Z', 0, 0, 0, 3][..], &buf[..12]] {
            let last = frames(broken).last().unwrap();
            assert!(last.is_err(), "{broken:?}");
        }
    }
}
