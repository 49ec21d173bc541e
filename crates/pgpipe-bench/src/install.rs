//! PostgreSQL for the throwaway clusters: when its server programs are
//! missing, run the project's `scripts/ensure-postgres.sh` (it installs
//! them with apt-get as root on Debian/Ubuntu, or says what to install),
//! as the test command does.

use std::path::Path;
use std::process::Command;

/// Runs `scripts/ensure-postgres.sh` from the source tree this binary was
/// built from, when it is there; its messages go to stderr. Failures are
/// reported by the cluster start that follows.
pub fn ensure_postgres() {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/ensure-postgres.sh");
    if !script.is_file() {
        return;
    }
    match Command::new("bash").arg(&script).status() {
        Ok(s) if s.success() => {}
        Ok(s) => eprintln!("{} exited with {s}", script.display()),
        Err(e) => eprintln!("cannot run {}: {e}", script.display()),
    }
}
