//! Bind: the message that carries a statement's parameter values, and
//! [`ParamWriter`], which writes those values (and binary COPY tuples) one
//! length-prefixed value at a time.

use bytes::BytesMut;

use super::{check_count, check_cstr, Encoder, Fill, IsNull};
use crate::put::PutInline;
use crate::EncodeError;

/// Writes the parameter values of a Bind message, one length-prefixed value at a time.
pub struct ParamWriter<'a> {
    buf: &'a mut BytesMut,
    written: usize,
    /// Where the Bind message starts in `buf` (its type byte).
    start: usize,
    /// The encoder's maximum message length.
    max: usize,
}

impl<'a> ParamWriter<'a> {
    /// A writer for the fields of one binary COPY tuple, which have the
    /// same layout as Bind's values (an `i32` length, -1 for NULL, then the
    /// bytes). Values are appended to `buf`; the caller writes the tuple's
    /// `i16` field count first. A COPY stream is split into CopyData
    /// messages afterwards, so only each value's own `i32` limit applies.
    pub fn copy_tuple(buf: &'a mut BytesMut) -> ParamWriter<'a> {
        let start = buf.len();
        ParamWriter {
            buf,
            written: 0,
            start,
            max: usize::MAX,
        }
    }
}

impl ParamWriter<'_> {
    /// Writes one parameter: reserves its length prefix, lets `f` append the
    /// value, and patches the length (or -1 for NULL).
    ///
    /// On error nothing of this parameter stays in the buffer. An error of `f`
    /// becomes [`EncodeError::Parameter`]; a value too long for its `i32`
    /// prefix [`EncodeError::ValueTooLarge`]; a message growing past the
    /// encoder's maximum [`EncodeError::MessageTooLarge`], reported here
    /// rather than after the remaining parameters were encoded for nothing.
    #[inline]
    pub fn write<F>(&mut self, f: F) -> Result<(), EncodeError>
    where
        F: FnOnce(&mut BytesMut) -> Result<IsNull, Box<dyn std::error::Error + Send + Sync>>,
    {
        let before = self.buf.len();
        self.buf.put_i32_inline(0);
        let result = f(self.buf);
        self.finish_value(before, result)
    }

    /// Writes one parameter whose encoding has a size known before it is
    /// made (an integer, a float, a timestamp): the length prefix and the
    /// bytes go in directly, with no placeholder to patch. An error of
    /// `value` becomes [`EncodeError::Parameter`], as in
    /// [`write`](Self::write).
    // Always inlined: a binary COPY row calls this once per fixed-size
    // value, and as a call (with the `Result` passed in memory) it was the
    // largest item in the COPY writer's profile.
    #[inline(always)]
    pub fn write_fixed<const N: usize>(
        &mut self,
        value: Result<[u8; N], Box<dyn std::error::Error + Send + Sync>>,
    ) -> Result<(), EncodeError> {
        let bytes = match value {
            Ok(bytes) => bytes,
            Err(source) => return Err(self.parameter_failed(source)),
        };
        self.check_room(4 + N)?;
        if N <= 12 {
            // One append of prefix and value (a constant length, so a few
            // stores): each append re-reads and re-writes the buffer's
            // length, and a row of fixed-size values is a chain of them.
            let mut field = [0u8; 16];
            field[..4].copy_from_slice(&(N as i32).to_be_bytes());
            field[4..4 + N].copy_from_slice(&bytes);
            self.buf.extend_from_slice(&field[..4 + N]);
        } else {
            self.buf.reserve(4 + N);
            self.buf.put_i32_inline(N as i32);
            self.buf.extend_from_slice(&bytes);
        }
        self.written += 1;
        Ok(())
    }

    /// Writes one parameter whose bytes are already made (a string, a byte
    /// string): its length and the bytes, with no placeholder to patch.
    #[inline(always)]
    pub fn write_bytes(&mut self, bytes: &[u8]) -> Result<(), EncodeError> {
        if bytes.len() > i32::MAX as usize {
            return Err(self.too_large(bytes.len()));
        }
        self.check_room(4 + bytes.len())?;
        self.buf.reserve(4 + bytes.len());
        self.buf.put_i32_inline(bytes.len() as i32);
        self.buf.extend_from_slice(bytes);
        self.written += 1;
        Ok(())
    }

    /// Refuses `more` bytes that would take the message past the encoder's
    /// maximum.
    #[inline(always)]
    fn check_room(&self, more: usize) -> Result<(), EncodeError> {
        // `more` counts the length prefix, so this cannot go below zero.
        let so_far = self.buf.len() + more - self.start - 1;
        if so_far > self.max {
            return Err(self.message_too_large(so_far));
        }
        Ok(())
    }

    #[cold]
    #[inline(never)]
    fn parameter_failed(&self, source: Box<dyn std::error::Error + Send + Sync>) -> EncodeError {
        EncodeError::Parameter {
            index: self.written,
            source,
        }
    }

    #[cold]
    #[inline(never)]
    fn too_large(&self, len: usize) -> EncodeError {
        EncodeError::ValueTooLarge {
            index: self.written,
            len,
        }
    }

    #[cold]
    #[inline(never)]
    fn message_too_large(&self, len: usize) -> EncodeError {
        EncodeError::MessageTooLarge {
            message: "Bind",
            len,
            max: self.max,
        }
    }

    /// Patches the length prefix reserved at `before` once the value is
    /// written. The usual outcomes (a value that fits, or NULL) stay inline;
    /// every error is built out of line.
    #[inline]
    fn finish_value(
        &mut self,
        before: usize,
        result: Result<IsNull, Box<dyn std::error::Error + Send + Sync>>,
    ) -> Result<(), EncodeError> {
        let value_start = before + 4;
        let end = self.buf.len();
        let fits = end >= value_start
            && end - value_start <= i32::MAX as usize
            && end - self.start - 1 <= self.max;
        let len_field = match result {
            Ok(IsNull::No) if fits => (end - value_start) as i32,
            Ok(IsNull::Yes) if fits => {
                self.buf.truncate(value_start);
                -1
            }
            other => return Err(self.value_failed(before, other)),
        };
        if let Some(prefix) = self.buf.get_mut(before..value_start) {
            prefix.copy_from_slice(&len_field.to_be_bytes());
        }
        self.written += 1;
        Ok(())
    }

    /// Why the value reserved at `before` cannot stay; removes what it
    /// wrote.
    #[cold]
    #[inline(never)]
    fn value_failed(
        &mut self,
        before: usize,
        result: Result<IsNull, Box<dyn std::error::Error + Send + Sync>>,
    ) -> EncodeError {
        let index = self.written;
        let value_start = before + 4;
        let end = self.buf.len();
        self.buf.truncate(before);
        if let Err(source) = result {
            return EncodeError::Parameter { index, source };
        }
        // `f` holds the whole buffer; if it cut into bytes it did not write,
        // the length prefix is gone and the message cannot be completed.
        if end < value_start {
            return EncodeError::Parameter {
                index,
                source: "the value's encoder removed bytes it had not written".into(),
            };
        }
        let len = end - value_start;
        if i32::try_from(len).is_err() && matches!(result, Ok(IsNull::No)) {
            return EncodeError::ValueTooLarge { index, len };
        }
        EncodeError::MessageTooLarge {
            message: "Bind",
            len: end - self.start - 1,
            max: self.max,
        }
    }

    /// How many parameters have been written so far.
    pub fn written(&self) -> usize {
        self.written
    }
}

impl std::fmt::Debug for ParamWriter<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ParamWriter")
            .field("written", &self.written)
            .finish_non_exhaustive()
    }
}

impl Encoder {
    /// Bind. `write_params` must write exactly `param_count` values through the
    /// [`ParamWriter`]; otherwise [`EncodeError::ParameterCountMismatch`].
    #[allow(clippy::too_many_arguments)]
    pub fn bind<F>(
        &self,
        portal: &str,
        statement: &str,
        param_formats: &[i16],
        param_count: usize,
        write_params: F,
        result_formats: &[i16],
        buf: &mut BytesMut,
    ) -> Result<(), EncodeError>
    where
        F: FnOnce(&mut ParamWriter<'_>) -> Result<(), EncodeError>,
    {
        const MSG: &str = "Bind";
        check_cstr(portal.as_bytes(), MSG, "portal name")?;
        check_cstr(statement.as_bytes(), MSG, "statement name")?;
        let format_count = check_count(param_formats.len(), MSG, "parameter formats")?;
        let count = check_count(param_count, MSG, "parameters")?;
        let result_count = check_count(result_formats.len(), MSG, "result formats")?;

        // Everything but the parameter values: a lower bound that lets an
        // oversized message be refused before anything is written, and the
        // amount to reserve (values reserve for themselves as they grow).
        let fixed_len = (4 + 2 + 2 + 2)
            + portal.len()
            + 1
            + statement.len()
            + 1
            + 2 * param_formats.len()
            + 4 * param_count
            + 2 * result_formats.len();
        self.check_len(MSG, fixed_len)?;

        let start = buf.len();
        buf.reserve(1 + fixed_len);
        // The header in one step: grow once, then fill in place (each field
        // a fixed-size copy the compiler inlines, rather than a call into
        // `bytes` per field). The length is patched at the end.
        let head_len =
            1 + 4 + portal.len() + 1 + statement.len() + 1 + 2 + 2 * param_formats.len() + 2;
        buf.resize(start + head_len, 0);
        let mut head = Fill::new(&mut buf[start..]);
        head.bytes(b"B");
        head.skip(4);
        head.cstr(portal.as_bytes());
        head.cstr(statement.as_bytes());
        head.bytes(&format_count.to_be_bytes());
        for &format in param_formats {
            head.bytes(&format.to_be_bytes());
        }
        head.bytes(&count.to_be_bytes());

        let mut writer = ParamWriter {
            buf: &mut *buf,
            written: 0,
            start,
            max: self.max(),
        };
        let result = write_params(&mut writer);
        let written = writer.written;
        if let Err(e) = result {
            buf.truncate(start);
            return Err(e);
        }
        if written != param_count {
            buf.truncate(start);
            return Err(EncodeError::ParameterCountMismatch {
                expected: param_count,
                actual: written,
            });
        }

        let tail = buf.len();
        buf.resize(tail + 2 + 2 * result_formats.len(), 0);
        let mut out = Fill::new(&mut buf[tail..]);
        out.bytes(&result_count.to_be_bytes());
        for &format in result_formats {
            out.bytes(&format.to_be_bytes());
        }
        let len = match self.check_len(MSG, buf.len() - start - 1) {
            Ok(len) => len,
            Err(e) => {
                buf.truncate(start);
                return Err(e);
            }
        };
        buf[start + 1..start + 5].copy_from_slice(&len.to_be_bytes());
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn param_writer_debug_does_not_dump_the_buffer() {
        let mut buf = BytesMut::new();
        let w = ParamWriter {
            buf: &mut buf,
            written: 2,
            start: 0,
            max: 10,
        };
        assert_eq!(format!("{w:?}"), "ParamWriter { written: 2, .. }");
    }
}
