//! Capturing a workload's real answer once (per server URL and workload).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use bytes::Bytes;

use crate::drivers::raw::RawConn;
use crate::error::BenchError;
use crate::workload::Workload;

/// A captured answer: what the replay server sends back.
#[derive(Debug, Clone)]
pub struct Capture {
    /// RowDescription for a statement Describe (format codes 0).
    pub statement_desc: Bytes,
    /// RowDescription for a portal Describe (format codes 1: binary).
    pub portal_desc: Bytes,
    /// Every DataRow and the CommandComplete of one Execute.
    pub rows: Bytes,
}

/// Captures by (server URL, workload name).
type Captures = HashMap<(String, &'static str), Arc<Capture>>;

/// Sets the format code of every field of a RowDescription message.
fn with_formats(desc: &[u8], format: i16) -> Result<Vec<u8>, BenchError> {
    let bad = || BenchError::new("replay: malformed RowDescription");
    let mut out = desc.to_vec();
    let n = i16::from_be_bytes([*out.get(5).ok_or_else(bad)?, *out.get(6).ok_or_else(bad)?]);
    let mut pos = 7;
    for _ in 0..n.max(0) {
        let name_end = out[pos..].iter().position(|&c| c == 0).ok_or_else(bad)?;
        // name \0, table oid (4), column (2), type oid (4), len (2), typmod (4), format (2)
        let fmt_at = pos + name_end + 1 + 16;
        out.get_mut(fmt_at..fmt_at + 2)
            .ok_or_else(bad)?
            .copy_from_slice(&format.to_be_bytes());
        pos = fmt_at + 2;
    }
    Ok(out)
}

/// Captures `workload`'s answer from the real server at `url` (once per
/// URL and workload in this process; later calls reuse it).
pub async fn capture_for(url: &str, workload: Workload) -> Result<Arc<Capture>, BenchError> {
    static CACHE: OnceLock<Mutex<Captures>> = OnceLock::new();
    let key = (url.to_string(), workload.name());
    let cache = CACHE.get_or_init(Default::default);
    if let Some(c) = cache.lock().ok().and_then(|m| m.get(&key).cloned()) {
        return Ok(c);
    }
    let mut conn = RawConn::connect(url, workload).await?;
    let (desc, rows) = conn.capture().await?;
    let capture = Arc::new(Capture {
        statement_desc: Bytes::from(with_formats(&desc, 0)?),
        portal_desc: Bytes::from(with_formats(&desc, 1)?),
        rows: Bytes::from(rows),
    });
    if let Ok(mut m) = cache.lock() {
        m.insert(key, capture.clone());
    }
    Ok(capture)
}
