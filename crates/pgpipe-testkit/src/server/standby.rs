//! Streaming standbys: a base backup of a running primary, its recovery
//! settings, and the standby started from it.

use std::fs::{self, OpenOptions};
use std::path::Path;
use std::process::Command;

use super::{clean_env, last_lines, make_root, Server, BASEBACKUP_TIMEOUT, START_TIMEOUT};
use crate::error::TestkitError;
use crate::process::{run_as, run_bounded};
use crate::roles::SUPERUSER;
use crate::versions;

impl Server {
    /// A streaming standby of `primary` (which must be running): a base
    /// backup of it (`pg_basebackup -X stream -R`, so it carries
    /// `standby.signal` and a `primary_conninfo` pointing at the primary's
    /// socket) in a directory of its own, started on its own free port and
    /// socket directory. Returns once it accepts connections and is in
    /// recovery.
    pub(crate) fn create_standby(primary: &Server) -> Result<Server, TestkitError> {
        if !primary.is_running() {
            return Err(TestkitError::new(format!(
                "cannot start a standby of the server on port {}: it is stopped",
                primary.port
            )));
        }
        let run_as = primary.run_as.clone();
        let (root, socket_dir) = make_root(run_as.as_ref())?;
        let data_dir = root.path().join("data");
        base_backup(primary, root.path(), &data_dir)?;
        let server = Server::new(primary.bindir.clone(), run_as, root, socket_dir, data_dir);
        let server = server.start_on_free_port()?;
        server
            .wait_recovery(true, START_TIMEOUT)
            .map_err(|e| e.context("starting a standby"))?;
        Ok(server)
    }
}

/// `pg_basebackup` of `primary` into `data_dir`, as the server user, over
/// the primary's Unix socket, then `standby.signal` and a `primary_conninfo`
/// following it over that socket. The copied configuration holds no port or
/// socket setting: the standby's own come from its command line.
///
/// The Maven builds of other majors carry no `pg_basebackup`: one of
/// another installation of at least the primary's major is used. Its `-R`
/// would write every connection option its own libpq knows into
/// `primary_conninfo`, which an older server's walreceiver refuses, so the
/// recovery settings are written here (the same for every major since 12).
fn base_backup(primary: &Server, root: &Path, data_dir: &Path) -> Result<(), TestkitError> {
    let major = versions::server_major(&primary.version).unwrap_or(0);
    let program =
        versions::client_tool(&primary.bindir, "pg_basebackup", major).ok_or_else(|| {
            TestkitError::new(format!(
                "no pg_basebackup of PostgreSQL {major} or newer is installed (the Maven \
                 builds have none); `{}` installs the one of 18",
                versions::INSTALL_SCRIPT
            ))
        })?;
    let mut cmd = Command::new(&program);
    cmd.arg("-D")
        .arg(data_dir)
        .arg("-h")
        .arg(&primary.socket_dir)
        .args([
            "-p",
            &primary.port.to_string(),
            "-U",
            SUPERUSER,
            "-X",
            "stream",
            // An immediate checkpoint: a spread one would take minutes.
            "--checkpoint=fast",
            "--no-sync",
            "--no-password",
        ])
        .current_dir(root);
    clean_env(&mut cmd);
    run_as(&mut cmd, primary.run_as.as_ref());
    let out = run_bounded(cmd, BASEBACKUP_TIMEOUT)
        .map_err(|e| TestkitError::io(format!("running {}", program.display()), e))?;
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let _ = fs::write(root.join("basebackup.log"), &text);
    if !out.status.success() {
        return Err(TestkitError::new(format!(
            "pg_basebackup failed ({}) copying the server on port {} to {}:\n{}\nprimary's server log:\n{}",
            out.status,
            primary.port,
            data_dir.display(),
            last_lines(&text, 30),
            primary.log_tail(20),
        )));
    }
    write_standby_config(primary, data_dir)
}

/// `standby.signal` and `primary_conninfo` (in `postgresql.auto.conf`,
/// which `ALTER SYSTEM` and pg_basebackup's `-R` also use).
fn write_standby_config(primary: &Server, data_dir: &Path) -> Result<(), TestkitError> {
    let conninfo = format!(
        "host={} port={} user={SUPERUSER} application_name=pgpipe_standby",
        conninfo_value(&primary.socket_dir.to_string_lossy()),
        primary.port
    );
    let setting = format!(
        "\n# Written by pgpipe-testkit for a standby.\nprimary_conninfo = '{}'\n",
        conninfo.replace('\'', "''")
    );
    let auto_conf = data_dir.join("postgresql.auto.conf");
    OpenOptions::new()
        .append(true)
        .create(true)
        .open(&auto_conf)
        .and_then(|mut f| std::io::Write::write_all(&mut f, setting.as_bytes()))
        .map_err(|e| TestkitError::io(format!("writing {}", auto_conf.display()), e))?;
    let signal_file = data_dir.join("standby.signal");
    fs::write(&signal_file, "")
        .map_err(|e| TestkitError::io(format!("writing {}", signal_file.display()), e))?;
    if let Some(user) = &primary.run_as {
        for path in [&auto_conf, &signal_file] {
            std::os::unix::fs::chown(path, Some(user.uid), Some(user.gid))
                .map_err(|e| TestkitError::io(format!("chown of {}", path.display()), e))?;
        }
    }
    Ok(())
}

/// A libpq conninfo value, quoted when it needs to be.
fn conninfo_value(value: &str) -> String {
    if !value.is_empty() && !value.contains([' ', '\'', '\\']) {
        return value.to_string();
    }
    format!("'{}'", value.replace('\\', "\\\\").replace('\'', "\\'"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conninfo_values_are_quoted_only_when_needed() {
        assert_eq!(conninfo_value("/tmp/pgpipe-x/sock"), "/tmp/pgpipe-x/sock");
        assert_eq!(conninfo_value("/a b"), "'/a b'");
        assert_eq!(conninfo_value("it's\\"), "'it\\'s\\\\'");
        assert_eq!(conninfo_value(""), "''");
    }
}
