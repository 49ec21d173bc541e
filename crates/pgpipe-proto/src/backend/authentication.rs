//! Authentication request messages (`'R'`).

use bytes::{Buf, Bytes};

use super::reader::{malformed, Reader};
use super::Message;
use crate::DecodeErrorKind;

/// The SASL mechanisms listed by AuthenticationSASL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SaslMechanisms {
    /// The list after the authentication code: UTF-8 names, each
    /// NUL-terminated, then an empty name.
    body: Bytes,
}

impl SaslMechanisms {
    /// Mechanism names, in the server's order.
    pub fn iter(&self) -> impl Iterator<Item = &str> + '_ {
        super::reader::cstrs(&self.body).take_while(|name| !name.is_empty())
    }

    /// Whether the server offers the mechanism `name` (e.g. `"SCRAM-SHA-256-PLUS"`).
    pub fn contains(&self, name: &str) -> bool {
        self.iter().any(|m| m == name)
    }
}

pub(super) fn parse(mut body: Bytes) -> Result<Message, DecodeErrorKind> {
    let mut r = Reader::new(&body);
    let code = r.i32("authentication code")?;
    // Codes without data must carry none: a longer body means the server and
    // this decoder disagree about the message, which is not safe to ignore.
    let no_data = |r: &Reader<'_>, message: Message| {
        r.finish("authentication code")?;
        Ok(message)
    };
    match code {
        0 => no_data(&r, Message::AuthenticationOk),
        2 => no_data(&r, Message::AuthenticationKerberosV5),
        3 => no_data(&r, Message::AuthenticationCleartextPassword),
        5 => {
            let salt = r.array::<4>("MD5 salt")?;
            r.finish("MD5 salt")?;
            Ok(Message::AuthenticationMd5Password { salt })
        }
        6 => no_data(&r, Message::AuthenticationScmCredential),
        7 => no_data(&r, Message::AuthenticationGss),
        8 => {
            body.advance(4);
            Ok(Message::AuthenticationGssContinue(body))
        }
        9 => no_data(&r, Message::AuthenticationSspi),
        10 => {
            let mut i = 0usize;
            loop {
                if r.remaining() == 0 {
                    return Err(malformed(
                        "the SASL mechanism list is not terminated by an empty name".into(),
                    ));
                }
                if r.str(format_args!("SASL mechanism name {i}"))?.is_empty() {
                    break;
                }
                i += 1;
            }
            r.finish("SASL mechanism list")?;
            body.advance(4);
            Ok(Message::AuthenticationSasl(SaslMechanisms { body }))
        }
        11 => {
            body.advance(4);
            Ok(Message::AuthenticationSaslContinue(body))
        }
        12 => {
            body.advance(4);
            Ok(Message::AuthenticationSaslFinal(body))
        }
        code => Err(DecodeErrorKind::UnknownAuthentication { code }),
    }
}
