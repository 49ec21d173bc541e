//! [`FileStamp`]: what a file looked like, so that something read from it
//! can be kept until the file changes (the password file here, the TLS
//! setup's certificate files in `connect::tls::cache`).

use std::fs::Metadata;
#[cfg(feature = "tls")]
use std::path::Path;
use std::time::SystemTime;

/// A file's modification and change times, size and inode; `None`: the
/// file could not be examined (absent). Two equal stamps mean the file was
/// not replaced, rewritten or changed in size in between, as far as the file
/// system's clock can tell.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FileStamp(Option<Parts>);

#[derive(Debug, Clone, PartialEq, Eq)]
struct Parts {
    modified: SystemTime,
    len: u64,
    inode: u64,
    // The change time also moves on an in-place rewrite that keeps the
    // modification time (`touch -r`) and on a rename onto the file.
    changed: (i64, i64),
}

impl FileStamp {
    /// Looks at `path` now (following symlinks, as reading it does). Only
    /// the TLS file cache looks at files by path.
    #[cfg(feature = "tls")]
    pub(crate) fn of(path: &Path) -> FileStamp {
        FileStamp(std::fs::metadata(path).ok().as_ref().map(Parts::of))
    }

    /// The stamp of metadata already read.
    pub(crate) fn of_metadata(metadata: &Metadata) -> FileStamp {
        FileStamp(Some(Parts::of(metadata)))
    }
}

impl Parts {
    fn of(m: &Metadata) -> Parts {
        #[cfg(unix)]
        let (inode, changed) = {
            use std::os::unix::fs::MetadataExt;
            (m.ino(), (m.ctime(), m.ctime_nsec()))
        };
        #[cfg(not(unix))]
        let (inode, changed) = (0, (0, 0));
        Parts {
            modified: m.modified().unwrap_or(SystemTime::UNIX_EPOCH),
            len: m.len(),
            inode,
            changed,
        }
    }
}
