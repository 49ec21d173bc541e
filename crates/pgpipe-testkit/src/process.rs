//! Child processes that cannot outlive the test process, bounded waits, and
//! dropping root privileges (initdb and postgres refuse to run as root).

use std::ffi::CStr;
use std::io::{self, Read};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::sync::mpsc;
use std::sync::{Mutex, OnceLock};
use std::thread;
use std::time::{Duration, Instant};

use crate::error::TestkitError;

/// A user to run the server as when the test process is root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RunAs {
    pub name: String,
    pub uid: u32,
    pub gid: u32,
}

/// `None` when not root (run the server as ourselves); otherwise the
/// `postgres` user, or `nobody` when there is none.
pub(crate) fn server_user() -> Result<Option<RunAs>, TestkitError> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Ok(None);
    }
    for name in ["postgres", "nobody"] {
        if let Some(user) = lookup_user(name) {
            return Ok(Some(user));
        }
    }
    Err(TestkitError::new(
        "running as root, but neither a `postgres` nor a `nobody` user exists to run the \
         server as (initdb and postgres refuse to run as root). Create one: \
         `sudo useradd --system postgres`, or run the tests as a regular user",
    ))
}

/// getpwnam_r: the reentrant form, because tests call this from many threads.
fn lookup_user(name: &str) -> Option<RunAs> {
    let cname = std::ffi::CString::new(name).ok()?;
    let mut buf = vec![0 as libc::c_char; 16 * 1024];
    // SAFETY: all-zero is a valid `passwd` (pointers null, ids 0); it is only
    // read after getpwnam_r reports success.
    let mut pwd: libc::passwd = unsafe { std::mem::zeroed() };
    let mut result: *mut libc::passwd = std::ptr::null_mut();
    // SAFETY: every pointer is valid for the call and buf's length is passed.
    let rc = unsafe {
        libc::getpwnam_r(
            cname.as_ptr(),
            &mut pwd,
            buf.as_mut_ptr(),
            buf.len(),
            &mut result,
        )
    };
    if rc != 0 || result.is_null() {
        return None;
    }
    // SAFETY: on success pw_name points into buf, NUL-terminated.
    let found = unsafe { CStr::from_ptr(pwd.pw_name) }
        .to_string_lossy()
        .into_owned();
    Some(RunAs {
        name: found,
        uid: pwd.pw_uid,
        gid: pwd.pw_gid,
    })
}

type SpawnRequest = (Command, mpsc::Sender<io::Result<Child>>);

/// Requests to the spawner thread.
static SPAWNER: OnceLock<Mutex<mpsc::Sender<SpawnRequest>>> = OnceLock::new();

fn spawner() -> &'static Mutex<mpsc::Sender<SpawnRequest>> {
    SPAWNER.get_or_init(|| {
        let (tx, rx) = mpsc::channel::<SpawnRequest>();
        // PR_SET_PDEATHSIG fires when the *thread* that forked the child exits,
        // not the process. Test threads come and go, so children are forked
        // from this thread, which lives until the process dies (the sender
        // sits in a static and is never dropped).
        let spawned = thread::Builder::new()
            .name("pgpipe-testkit-spawner".into())
            .spawn(move || {
                while let Ok((mut cmd, reply)) = rx.recv() {
                    let _ = reply.send(cmd.spawn());
                }
            });
        if let Err(e) = spawned {
            // Leave the receiver dropped: every spawn request then fails with
            // this explanation instead of panicking here.
            eprintln!("pgpipe-testkit: cannot start the spawner thread: {e}");
        }
        Mutex::new(tx)
    })
}

/// Spawns `cmd` so that it receives SIGQUIT when the test process dies, however
/// it dies (panic, abort, SIGKILL): a throwaway server must never outlive its tests.
pub(crate) fn spawn_tied(cmd: Command) -> io::Result<Child> {
    spawn_tied_with(cmd, libc::SIGQUIT)
}

/// [`spawn_tied`] with another signal: a supervisor such as Patroni must get
/// one it handles (SIGTERM: it stops its postgres), not one that kills it
/// and leaves its children behind.
pub(crate) fn spawn_tied_with(mut cmd: Command, death_signal: libc::c_int) -> io::Result<Child> {
    let death_signal = death_signal as libc::c_ulong;
    // SAFETY: the closure only calls prctl, which is async-signal-safe. It runs
    // after std has switched uid/gid (a credential change would clear the setting).
    #[cfg(target_os = "linux")]
    unsafe {
        cmd.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, death_signal) != 0 {
                return Err(io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let (reply_tx, reply_rx) = mpsc::channel();
    {
        let tx = spawner().lock().unwrap_or_else(|p| p.into_inner());
        tx.send((cmd, reply_tx))
            .map_err(|_| io::Error::other("the testkit's spawner thread is not running"))?;
    }
    reply_rx
        .recv_timeout(Duration::from_secs(60))
        .map_err(|_| {
            io::Error::new(
                io::ErrorKind::TimedOut,
                "the testkit's spawner thread did not answer in 60 s",
            )
        })?
}

/// Switches the child to `user` (gid first: after setuid we could not).
/// std also drops root's supplementary groups when uid is set by root.
pub(crate) fn run_as(cmd: &mut Command, user: Option<&RunAs>) {
    if let Some(user) = user {
        cmd.gid(user.gid).uid(user.uid);
        // The child's HOME would be root's, which it cannot read.
        cmd.env("HOME", "/tmp");
    }
}

/// Polls `child` until it exits or `timeout` passes; `Ok(None)` on timeout.
pub(crate) fn wait_bounded(child: &mut Child, timeout: Duration) -> io::Result<Option<ExitStatus>> {
    let deadline = Instant::now() + timeout;
    let mut pause = Duration::from_millis(5);
    loop {
        if let Some(status) = child.try_wait()? {
            return Ok(Some(status));
        }
        if Instant::now() >= deadline {
            return Ok(None);
        }
        thread::sleep(pause);
        pause = (pause * 2).min(Duration::from_millis(50));
    }
}

/// Sends `signal` to `pid` (ignoring "no such process").
pub(crate) fn signal(pid: u32, signal: libc::c_int) {
    if let Ok(pid) = libc::pid_t::try_from(pid) {
        // SAFETY: kill has no memory-safety preconditions.
        unsafe {
            libc::kill(pid, signal);
        }
    }
}

/// Stops `child`: `first` signal, then SIGKILL after `grace`; always reaps it.
pub(crate) fn stop_child(child: &mut Child, first: libc::c_int, grace: Duration) {
    if let Ok(Some(_)) = child.try_wait() {
        return;
    }
    signal(child.id(), first);
    if let Ok(Some(_)) = wait_bounded(child, grace) {
        return;
    }
    let _ = child.kill();
    let _ = wait_bounded(child, Duration::from_secs(10));
}

/// Runs `cmd` to completion with captured output, killing it after `timeout`.
pub(crate) fn run_bounded(mut cmd: Command, timeout: Duration) -> io::Result<Output> {
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = spawn_tied(cmd)?;
    // Readers on their own threads, so a chatty child never blocks on a full pipe.
    let out = reader(child.stdout.take());
    let err = reader(child.stderr.take());
    let status = match wait_bounded(&mut child, timeout)? {
        Some(status) => status,
        None => {
            let _ = child.kill();
            let _ = wait_bounded(&mut child, Duration::from_secs(5));
            return Err(io::Error::new(
                io::ErrorKind::TimedOut,
                format!("did not finish within {} s", timeout.as_secs()),
            ));
        }
    };
    Ok(Output {
        status,
        stdout: out.join().unwrap_or_default(),
        stderr: err.join().unwrap_or_default(),
    })
}

fn reader(pipe: Option<impl Read + Send + 'static>) -> thread::JoinHandle<Vec<u8>> {
    thread::spawn(move || {
        let mut buf = Vec::new();
        if let Some(mut pipe) = pipe {
            let _ = pipe.read_to_end(&mut buf);
        }
        buf
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_bounded_captures_output() {
        let mut cmd = Command::new("sh");
        cmd.args(["-c", "echo out; echo err >&2; exit 3"]);
        let out = run_bounded(cmd, Duration::from_secs(10)).unwrap();
        assert_eq!(out.stdout, b"out\n");
        assert_eq!(out.stderr, b"err\n");
        assert_eq!(out.status.code(), Some(3));
    }

    #[test]
    fn run_bounded_kills_on_timeout() {
        let mut cmd = Command::new("sleep");
        cmd.arg("30");
        let started = Instant::now();
        let err = run_bounded(cmd, Duration::from_millis(200)).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::TimedOut);
        assert!(started.elapsed() < Duration::from_secs(10));
    }

    #[test]
    fn root_runs_the_server_as_someone_else() {
        let user = server_user().unwrap();
        // SAFETY: no preconditions.
        let root = unsafe { libc::geteuid() } == 0;
        assert_eq!(user.is_some(), root);
        if let Some(user) = user {
            assert_ne!(user.uid, 0);
        }
    }
}
