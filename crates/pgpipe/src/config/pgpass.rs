//! The password file (`~/.pgpass`, `PGPASSFILE`, `passfile=`).
//!
//! Each line is `hostname:port:database:username:password`. A field that
//! is exactly `*` matches anything; `\` makes the next character literal
//! (for `:` and `\` in values); lines starting with `#` are comments. The
//! first matching line wins.
//!
//! A host field of `localhost` also matches connections over a Unix socket.
//! libpq limits that to its compiled-in default socket directory; pgpipe has
//! no such default, and every Unix socket is local, so it matches them all.

use std::path::Path;

use super::Environment;

/// What a connection attempt looks like, for matching against the file.
pub(super) struct Query<'a> {
    /// The host name, numeric address or socket directory, as given.
    pub(super) host: &'a str,
    /// Whether `host` is a Unix-socket directory.
    pub(super) unix: bool,
    pub(super) port: u16,
    pub(super) dbname: &'a str,
    pub(super) user: &'a str,
}

/// A password file, parsed: its usable lines in order.
pub(super) struct PassFile {
    entries: Vec<Entry>,
}

/// Whether a file with these mode bits (`st_mode`, file-type bits optional)
/// may be used.
///
/// Not a regular file: skipped. One that others may read is ignored too
/// (libpq's rule): a password that has leaked to other users must not be
/// used quietly, and failing the connection would punish a harmless setup.
pub(super) fn usable_mode(mode: u32) -> bool {
    const TYPE_MASK: u32 = 0o170_000;
    const REGULAR: u32 = 0o100_000;
    let file_type = mode & TYPE_MASK;
    (file_type == 0 || file_type == REGULAR) && mode & 0o077 == 0
}

/// Reads and parses the password file through `env`, or returns `None`
/// when there is none to use. A missing or unreadable file is normal and
/// silently ignored, as is one [`usable_mode`] refuses.
pub(super) fn load(env: &dyn Environment, path: &Path) -> Option<PassFile> {
    if let Some(mode) = env.file_mode(path) {
        if !usable_mode(mode) {
            return None;
        }
    }
    env.read_file(path)
        .ok()
        .map(|contents| PassFile::parse(&contents))
}

impl PassFile {
    /// Parses a whole file; lines that are not entries are dropped.
    pub(super) fn parse(contents: &[u8]) -> PassFile {
        let entries = contents
            .split(|&b| b == b'\n')
            .map(|line| line.strip_suffix(b"\r").unwrap_or(line))
            .filter(|line| !line.is_empty() && line.first() != Some(&b'#'))
            .filter_map(Entry::parse)
            .collect();
        PassFile { entries }
    }

    /// Finds the password for `query`, if a line matches. A matching line
    /// with an empty password ends the search without a password, as the
    /// first match always wins.
    pub(super) fn lookup(&self, query: &Query<'_>) -> Option<Vec<u8>> {
        let port = query.port.to_string();
        let entry = self.entries.iter().find(|entry| {
            (entry.fields[0].matches(query.host.as_bytes())
                || (query.unix && entry.fields[0].matches(b"localhost")))
                && entry.fields[1].matches(port.as_bytes())
                && entry.fields[2].matches(query.dbname.as_bytes())
                && entry.fields[3].matches(query.user.as_bytes())
        })?;
        (!entry.password.is_empty()).then(|| entry.password.clone())
    }
}

struct Field {
    text: Vec<u8>,
    wildcard: bool,
}

impl Field {
    fn matches(&self, value: &[u8]) -> bool {
        self.wildcard || self.text == value
    }
}

struct Entry {
    fields: [Field; 4],
    password: Vec<u8>,
}

impl Entry {
    /// Splits one line; `None` for lines with fewer than five fields, which
    /// libpq skips too.
    fn parse(line: &[u8]) -> Option<Entry> {
        let mut rest = line;
        let mut next_field = || {
            let (text, raw_len, terminated) = unescape_until_colon(rest);
            let wildcard = &rest[..raw_len] == b"*";
            rest = rest.get(raw_len + 1..).unwrap_or(&[]);
            terminated.then_some(Field { text, wildcard })
        };
        let fields = [next_field()?, next_field()?, next_field()?, next_field()?];
        // libpq ends the password at an unescaped ':' as well.
        let (password, _, _) = unescape_until_colon(rest);
        Some(Entry { fields, password })
    }
}

/// Reads up to the first unescaped `:`. Returns the unescaped text, the
/// number of raw bytes before the `:`, and whether a `:` was found.
fn unescape_until_colon(raw: &[u8]) -> (Vec<u8>, usize, bool) {
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(&b) = raw.get(i) {
        match b {
            b':' => return (out, i, true),
            b'\\' => match raw.get(i + 1) {
                Some(&escaped) => {
                    out.push(escaped);
                    i += 2;
                }
                // A trailing lone backslash stays, as in libpq.
                None => {
                    out.push(b);
                    i += 1;
                }
            },
            _ => {
                out.push(b);
                i += 1;
            }
        }
    }
    (out, i, false)
}
