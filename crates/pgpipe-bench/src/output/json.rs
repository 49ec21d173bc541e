//! The JSON document: `machine` and `results` (see the README of the tool).

use std::path::Path;

use crate::error::BenchError;
use crate::suite::Report;

/// The report as pretty JSON.
pub fn to_string(report: &Report) -> Result<String, BenchError> {
    Ok(serde_json::to_string_pretty(report)?)
}

/// Writes the report to `path`, creating its directory.
pub fn write(report: &Report, path: &Path) -> Result<(), BenchError> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)?;
    }
    std::fs::write(path, to_string(report)?)
        .map_err(|e| BenchError::new(format!("cannot write {}: {e}", path.display())))
}
