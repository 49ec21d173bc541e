//! `--profile FILE.svg`: a CPU flame graph of the whole service process,
//! sampled (pprof, SIGPROF at 499 Hz) from start-up until shutdown.

use std::path::{Path, PathBuf};

/// A running profiler; [`Profile::finish`] writes the flame graph.
pub struct Profile {
    guard: pprof::ProfilerGuard<'static>,
    path: PathBuf,
}

/// The output path; the profiler's sampling state has no useful `Debug`.
impl std::fmt::Debug for Profile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Profile")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

impl Profile {
    /// Starts sampling; the flame graph goes to `path` at [`finish`](Profile::finish).
    pub fn start(path: &Path) -> Result<Profile, String> {
        let guard = pprof::ProfilerGuardBuilder::default()
            .frequency(499)
            // Unwinding through these can deadlock inside the signal handler.
            .blocklist(&["libc", "libgcc", "pthread", "vdso"])
            .build()
            .map_err(|e| format!("cannot start the profiler: {e}"))?;
        Ok(Profile {
            guard,
            path: path.to_path_buf(),
        })
    }

    /// Stops sampling and writes the SVG.
    pub fn finish(self) -> Result<PathBuf, String> {
        let report = self
            .guard
            .report()
            .build()
            .map_err(|e| format!("cannot build the profile: {e}"))?;
        let file = std::fs::File::create(&self.path)
            .map_err(|e| format!("cannot create {}: {e}", self.path.display()))?;
        report
            .flamegraph(file)
            .map_err(|e| format!("cannot write {}: {e}", self.path.display()))?;
        Ok(self.path)
    }
}
