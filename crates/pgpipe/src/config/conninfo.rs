//! libpq `key=value` connection strings:
//! `host=localhost port=5432 password='it\'s' options='-c geqo=off'`.
//!
//! Pairs are separated by whitespace, and whitespace around `=` is allowed.
//! A value is either bare (ending at whitespace) or single-quoted; in both,
//! a backslash makes the next character literal (`\'`, `\\`, `\ `).

use super::{assign, params, Config, ConfigError};

struct Pair {
    key: String,
    value: String,
    /// Byte offset of the key, for error messages.
    position: usize,
    quoted: bool,
}

pub(super) fn parse(s: &str) -> Result<Config, ConfigError> {
    let mut config = Config::new();
    // The key of the previous pair when it was an unquoted secret: a bad
    // "key" right after it is most likely the rest of a password that
    // contains a space, so errors about it must not echo it.
    let mut after_bare_secret: Option<String> = None;
    let mut tokenizer = Tokenizer {
        bytes: s.as_bytes(),
        pos: 0,
    };
    loop {
        let start = tokenizer.pos;
        let pair = match tokenizer.next_pair() {
            Ok(Some(pair)) => pair,
            Ok(None) => break,
            Err(e) => {
                return Err(match after_bare_secret {
                    Some(secret) => secret_tail_error(&secret, start),
                    None => e,
                })
            }
        };
        if let Err(e) = assign::assign(&mut config, &pair.key, &pair.value) {
            return Err(match after_bare_secret {
                Some(secret) if e.part() == pair.key => secret_tail_error(&secret, pair.position),
                _ => e,
            });
        }
        after_bare_secret =
            (params::is_secret(&pair.key) && !pair.quoted).then(|| pair.key.clone());
    }
    Ok(config)
}

fn secret_tail_error(secret: &str, position: usize) -> ConfigError {
    ConfigError::new(
        position.to_string(),
        format!(
            "invalid connection string after the value of \"{secret}\" (near position \
             {position}); quote values that contain spaces: {secret}='...'"
        ),
    )
}

struct Tokenizer<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl Tokenizer<'_> {
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    fn skip_whitespace(&mut self) {
        while self.peek().is_some_and(|b| b.is_ascii_whitespace()) {
            self.pos += 1;
        }
    }

    fn next_pair(&mut self) -> Result<Option<Pair>, ConfigError> {
        self.skip_whitespace();
        let start = self.pos;
        if self.peek().is_none() {
            return Ok(None);
        }
        while self
            .peek()
            .is_some_and(|b| b != b'=' && !b.is_ascii_whitespace())
        {
            self.pos += 1;
        }
        let key = lossy(&self.bytes[start..self.pos]);
        if key.is_empty() {
            return Err(ConfigError::new(
                "=",
                format!("missing parameter name before \"=\" at position {start}"),
            ));
        }
        self.skip_whitespace();
        if self.peek() != Some(b'=') {
            let message = format!("missing \"=\" after \"{key}\" at position {}", self.pos);
            return Err(ConfigError::new(key, message));
        }
        self.pos += 1;
        self.skip_whitespace();
        let quoted = self.peek() == Some(b'\'');
        let value = if quoted {
            self.pos += 1;
            self.quoted_value(&key)?
        } else {
            self.bare_value()
        };
        Ok(Some(Pair {
            key,
            value,
            position: start,
            quoted,
        }))
    }

    fn bare_value(&mut self) -> String {
        let mut out = Vec::new();
        while let Some(b) = self.peek() {
            if b.is_ascii_whitespace() {
                break;
            }
            self.pos += 1;
            if b == b'\\' {
                // libpq drops a trailing lone backslash.
                if let Some(escaped) = self.peek() {
                    out.push(escaped);
                    self.pos += 1;
                }
            } else {
                out.push(b);
            }
        }
        lossy(&out)
    }

    fn quoted_value(&mut self, key: &str) -> Result<String, ConfigError> {
        let mut out = Vec::new();
        loop {
            match self.peek() {
                None => {
                    return Err(ConfigError::new(
                        key,
                        format!("unterminated quoted value for \"{key}\""),
                    ))
                }
                Some(b'\'') => {
                    self.pos += 1;
                    return Ok(lossy(&out));
                }
                Some(b'\\') => {
                    self.pos += 1;
                    if let Some(escaped) = self.peek() {
                        out.push(escaped);
                        self.pos += 1;
                    }
                }
                Some(b) => {
                    out.push(b);
                    self.pos += 1;
                }
            }
        }
    }
}

/// Rebuilds text from bytes cut at ASCII delimiters of a `&str`, which is
/// always valid UTF-8; the lossy path only avoids a panic path.
fn lossy(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}
