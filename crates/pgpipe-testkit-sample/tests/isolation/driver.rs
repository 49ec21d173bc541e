//! This test binary run again, the way cargo-nextest runs a test binary:
//! one process per test (`--exact <name>`), many at once, against this
//! process's server (`PGPIPE_TEST_URL`). Then the whole binary in one
//! process, twice, and the failing tests; after each run, the server holds
//! no database of the child processes but those of failed tests.

use std::collections::VecDeque;
use std::fs::File;
use std::io::Read;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use pgpipe_testkit::{test_server, Cluster, TestSpec};

use crate::failing::FAIL_VAR;
use crate::race::DIR_VAR;

/// Bound of one child process (a loaded CI machine runs 50 tests in it).
const CHILD_TIMEOUT: Duration = Duration::from_secs(300);
/// Child processes at once in the process-per-test run.
const PARALLEL: usize = 8;
/// Tests in `writes` and `features`: every test a child process runs.
const SAMPLE_TESTS: usize = 54;

fn server() -> &'static Cluster {
    test_server().unwrap_or_else(|e| panic!("no test server: {e}"))
}

struct Running {
    child: Child,
    out: tempfile::NamedTempFile,
    err: tempfile::NamedTempFile,
    started: Instant,
}

struct Finished {
    pid: u32,
    status: ExitStatus,
    /// stdout then stderr (libtest prints a failed test's captured output
    /// on stdout; the harness's own messages go to stderr).
    output: String,
    took: Duration,
}

/// This binary with `args`, its databases on this process's server.
fn spawn(args: &[&str], env: &[(&str, &str)]) -> Running {
    spawn_with("PGPIPE_TEST_URL", args, env)
}

/// Like [`spawn`], naming the server in `url_var` (`PGPIPE_TEST_URL` or
/// `DATABASE_URL`) and leaving the other unset.
fn spawn_with(url_var: &str, args: &[&str], env: &[(&str, &str)]) -> Running {
    let out = tempfile::NamedTempFile::new().unwrap();
    let err = tempfile::NamedTempFile::new().unwrap();
    let mut cmd = Command::new(std::env::current_exe().unwrap());
    cmd.args(args)
        .env_remove("PGPIPE_TEST_URL")
        .env_remove("DATABASE_URL")
        .env(url_var, server().superuser_url("postgres"))
        .stdin(Stdio::null())
        .stdout(out.reopen().unwrap())
        .stderr(err.reopen().unwrap());
    for (k, v) in env {
        cmd.env(k, v);
    }
    Running {
        child: cmd.spawn().unwrap(),
        out,
        err,
        started: Instant::now(),
    }
}

fn finish(mut running: Running) -> Finished {
    let deadline = running.started + CHILD_TIMEOUT;
    let status = loop {
        if let Some(status) = running.child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = running.child.kill();
            let _ = running.child.wait();
            panic!("a child test process ran longer than {CHILD_TIMEOUT:?}");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let mut output = String::new();
    for file in [&running.out, &running.err] {
        File::open(file.path())
            .unwrap()
            .read_to_string(&mut output)
            .unwrap();
    }
    Finished {
        pid: running.child.id(),
        status,
        output,
        took: running.started.elapsed(),
    }
}

/// `--list --format terse` prints `name: test` per test, as nextest reads it.
fn list(extra: &[&str]) -> Vec<String> {
    let mut args = vec!["--list", "--format", "terse"];
    args.extend_from_slice(extra);
    let done = finish(spawn(&args, &[]));
    assert!(done.status.success(), "{}", done.output);
    done.output
        .lines()
        .filter_map(|l| l.strip_suffix(": test"))
        .map(str::to_string)
        .collect()
}

/// The databases a child process created that are still there (their
/// names end in `_<pid>_<n>`).
fn databases_of(pid: u32) -> Vec<String> {
    server()
        .query(
            "postgres",
            &format!("SELECT datname FROM pg_database WHERE datname ~ '_{pid}_[0-9]+$' ORDER BY 1"),
        )
        .unwrap()
        .into_iter()
        .map(|row| row[0].clone().unwrap())
        .collect()
}

/// The databases whose names start with `prefix`.
fn named_like(prefix: &str) -> Vec<String> {
    server()
        .query(
            "postgres",
            &format!("SELECT datname FROM pg_database WHERE starts_with(datname, '{prefix}')"),
        )
        .unwrap()
        .into_iter()
        .map(|row| row[0].clone().unwrap())
        .collect()
}

#[test]
fn one_process_per_test_like_nextest() {
    let spec =
        TestSpec::new("driver").migrations(concat!(env!("CARGO_MANIFEST_DIR"), "/migrations"));
    let template = spec.template_name().unwrap().unwrap();
    let ignored = list(&["--ignored"]);
    let tests: Vec<String> = list(&[])
        .into_iter()
        .filter(|t| !t.starts_with("driver::") && !ignored.contains(t))
        .collect();
    assert_eq!(tests.len(), SAMPLE_TESTS, "{tests:?}");
    assert_eq!(
        ignored,
        [
            "failing::panics",
            "failing::returns_err",
            "race::copies_the_template_of_a_new_folder"
        ]
    );

    let started = Instant::now();
    let mut queue = tests.iter();
    let mut running: VecDeque<(String, Running)> = VecDeque::new();
    let mut finished: Vec<(String, Finished)> = Vec::new();
    loop {
        while running.len() < PARALLEL {
            let Some(test) = queue.next() else { break };
            running.push_back((test.clone(), spawn(&["--exact", test], &[])));
        }
        // Wait for the oldest, then start the next.
        let Some((test, oldest)) = running.pop_front() else {
            break;
        };
        finished.push((test, finish(oldest)));
    }
    let wall = started.elapsed();
    for (test, done) in &finished {
        assert!(done.status.success(), "{test}:\n{}", done.output);
        assert!(
            done.output.contains("test result: ok. 1 passed"),
            "{test} did not run alone:\n{}",
            done.output
        );
        assert_eq!(databases_of(done.pid), Vec::<String>::new(), "{test}");
    }
    assert_eq!(finished.len(), SAMPLE_TESTS);
    // The children shared one template, and left no unfinished build
    // (`<template>_<pid>`) behind.
    assert_eq!(named_like(&template), [template]);
    let mean = finished.iter().map(|(_, d)| d.took).sum::<Duration>() / finished.len() as u32;
    eprintln!(
        "{SAMPLE_TESTS} tests in {SAMPLE_TESTS} processes, {PARALLEL} at a time: {wall:?} \
         wall, {mean:?} per process (start, one test, exit)"
    );
}

#[test]
fn the_whole_binary_twice_leaves_no_databases() {
    for round in 1..=2 {
        let done = finish(spawn(&["--skip", "driver::", "--test-threads", "8"], &[]));
        assert!(done.status.success(), "round {round}:\n{}", done.output);
        assert!(
            done.output.contains(&format!(
                "test result: ok. {SAMPLE_TESTS} passed; 0 failed; 3 ignored"
            )),
            "round {round}:\n{}",
            done.output
        );
        assert_eq!(
            databases_of(done.pid),
            Vec::<String>::new(),
            "round {round}"
        );
        eprintln!(
            "round {round}: {SAMPLE_TESTS} tests in one process in {:?}",
            done.took
        );
    }
}

#[test]
fn failing_tests_keep_their_databases() {
    // The kept database being on this server also shows that the child
    // used the server named by DATABASE_URL when PGPIPE_TEST_URL is unset.
    for (test, why, url_var) in [
        ("failing::panics", "failing on purpose", "DATABASE_URL"),
        (
            "failing::returns_err",
            "division by zero",
            "PGPIPE_TEST_URL",
        ),
    ] {
        let done = finish(spawn_with(
            url_var,
            &["--ignored", "--exact", test],
            &[(FAIL_VAR, "1")],
        ));
        assert!(!done.status.success(), "{test} passed:\n{}", done.output);
        assert!(done.output.contains(why), "{test}:\n{}", done.output);
        assert!(done.output.contains("1 failed"), "{test}:\n{}", done.output);
        let kept = databases_of(done.pid);
        assert_eq!(kept.len(), 1, "{test}: {kept:?}\n{}", done.output);
        let db = &kept[0];
        let note = format!(
            "pgpipe-testkit: test isolation::{test} failed; its database {db} is kept: postgres://"
        );
        assert!(
            done.output.contains(&note),
            "{test}: no `{note}` in\n{}",
            done.output
        );
        // What the test wrote is there to look at.
        let author = test.rsplit("::").next().unwrap();
        let rows = server()
            .query(db, "SELECT author, body FROM notes")
            .unwrap();
        assert_eq!(
            rows,
            vec![vec![
                Some(author.to_string()),
                Some("written before the failure".to_string())
            ]]
        );
        server()
            .execute("postgres", &format!("DROP DATABASE \"{db}\" WITH (FORCE)"))
            .unwrap();
    }
}

#[test]
fn processes_racing_for_a_new_template_build_it_once() {
    // A folder no process has a template for; its slow migration keeps the
    // build going while the other processes arrive.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("V1__slow.sql"),
        format!(
            "-- {:?}\nSELECT pg_sleep(0.5); CREATE TABLE raced (x int)",
            dir.path()
        ),
    )
    .unwrap();
    let template = TestSpec::new("race")
        .migrations(dir.path())
        .template_name()
        .unwrap()
        .unwrap();
    let path = dir.path().to_str().unwrap();
    let racers: Vec<Running> = (0..6)
        .map(|_| {
            spawn(
                &[
                    "--ignored",
                    "--exact",
                    "race::copies_the_template_of_a_new_folder",
                ],
                &[(DIR_VAR, path)],
            )
        })
        .collect();
    for done in racers.into_iter().map(finish) {
        assert!(done.status.success(), "{}", done.output);
        assert!(done.output.contains("1 passed"), "{}", done.output);
        assert_eq!(databases_of(done.pid), Vec::<String>::new());
    }
    // One template, no unfinished builds (`<template>_<pid>`).
    assert_eq!(named_like(&template), std::slice::from_ref(&template));
    for sql in ["ALTER DATABASE {} IS_TEMPLATE false", "DROP DATABASE {}"] {
        server()
            .execute("postgres", &sql.replace("{}", &template))
            .unwrap();
    }
}
