//! `pgpipe-cli check --url postgres://... sql/ [more.sql ...]`
//!
//! Parses every `.sql` file given (directories are searched recursively)
//! as a named-query file and asks the server to prepare every query:
//! syntax, tables, columns and parameter inference are checked against the
//! database the service really talks to. Prints every problem with
//! `file:line` and exits with status 1 if there is any (2 for bad usage),
//! so a CI job can run it after migrations.
//!
//! `pgpipe-cli migrate apply [--url URL] [--target VERSION] [--grouped] DIR`
//! and `pgpipe-cli migrate status [--url URL] DIR` run a folder of
//! refinery migrations (see `migrate.rs`).
//!
//! The URL may also come from `DATABASE_URL`.

#![warn(missing_debug_implementations)]
#![warn(unreachable_pub)]

use std::path::{Path, PathBuf};
use std::process::ExitCode;

mod migrate;

const USAGE: &str = "usage: pgpipe-cli check [--url URL] PATH...\n\
  \x20      pgpipe-cli migrate apply [--url URL] [--target VERSION] [--grouped] DIR\n\
  \x20      pgpipe-cli migrate status [--url URL] DIR\n\
  PATH: .sql files or directories of them (searched recursively)\n\
  DIR: a folder of refinery migrations, V{version}__{name}.sql\n\
  URL: a postgres:// URL (default: $DATABASE_URL)";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match parse_args(&args) {
        Ok(Command::Check { url, paths }) => run_check(&url, &paths),
        Ok(Command::Migrate(command)) => match runtime() {
            Ok(rt) => rt.block_on(migrate::run(command)),
            Err(code) => code,
        },
        Ok(Command::Help) => {
            println!("{USAGE}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("pgpipe-cli: {e}\n{USAGE}");
            ExitCode::from(2)
        }
    }
}

#[derive(Debug, PartialEq)]
enum Command {
    Check { url: String, paths: Vec<PathBuf> },
    Migrate(migrate::Migrate),
    Help,
}

fn parse_args(args: &[String]) -> Result<Command, String> {
    let mut it = args.iter();
    match it.next().map(String::as_str) {
        Some("check") => {}
        Some("migrate") => return migrate::parse_args(&args[1..]).map(Command::Migrate),
        Some("-h" | "--help" | "help") => return Ok(Command::Help),
        Some(other) => return Err(format!("unknown command {other:?}")),
        None => return Err("no command given".to_owned()),
    }
    let mut url = None;
    let mut paths = Vec::new();
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--url" => url = Some(it.next().ok_or("--url needs a value")?.clone()),
            s if s.starts_with("--url=") => url = Some(s["--url=".len()..].to_owned()),
            s if s.starts_with("--") => return Err(format!("unknown option {s:?}")),
            s => paths.push(PathBuf::from(s)),
        }
    }
    let url = match url {
        Some(u) => u,
        None => std::env::var("DATABASE_URL").map_err(|_| "no --url and no DATABASE_URL")?,
    };
    if paths.is_empty() {
        return Err("no .sql file or directory given".to_owned());
    }
    Ok(Command::Check { url, paths })
}

/// Every `.sql` file under `paths`, sorted for stable output.
fn sql_files(paths: &[PathBuf]) -> Result<Vec<PathBuf>, String> {
    let mut out = Vec::new();
    for p in paths {
        collect(p, &mut out).map_err(|e| format!("{}: {e}", p.display()))?;
    }
    out.sort();
    out.dedup();
    Ok(out)
}

fn collect(path: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    if path.is_dir() {
        for entry in std::fs::read_dir(path)? {
            let entry = entry?.path();
            if entry.is_dir() || entry.extension().is_some_and(|e| e == "sql") {
                collect(&entry, out)?;
            }
        }
    } else {
        std::fs::metadata(path)?;
        out.push(path.to_owned());
    }
    Ok(())
}

fn run_check(url: &str, paths: &[PathBuf]) -> ExitCode {
    let files = match sql_files(paths) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("pgpipe-cli: {e}");
            return ExitCode::from(2);
        }
    };
    let mut parsed = Vec::new();
    let mut broken = 0;
    for path in &files {
        let shown = path.display().to_string();
        match std::fs::read_to_string(path)
            .map_err(|e| e.to_string())
            .and_then(|text| {
                pgpipe::named::parse(&text).map_err(|e| format!("line {}: {}", e.line, e.message))
            }) {
            Ok(file) => parsed.push((shown, file)),
            Err(e) => {
                broken += 1;
                println!("error: {shown}: {e}");
            }
        }
    }
    let runtime = match runtime() {
        Ok(rt) => rt,
        Err(code) => return code,
    };
    let report = runtime.block_on(async {
        let client = pgpipe::connect(url).await?;
        pgpipe::named::check_files(&client, &parsed).await
    });
    match report {
        Ok(report) => {
            println!("{} file(s): {report}", files.len());
            if report.is_ok() && broken == 0 {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            }
        }
        Err(e) => {
            eprintln!("pgpipe-cli: {e}");
            ExitCode::FAILURE
        }
    }
}

fn runtime() -> Result<tokio::runtime::Runtime, ExitCode> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| {
            eprintln!("pgpipe-cli: cannot start a runtime: {e}");
            ExitCode::FAILURE
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &[&str]) -> Vec<String> {
        s.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn arguments() {
        assert_eq!(
            parse_args(&args(&["check", "--url", "postgres://x", "sql/"])).unwrap(),
            Command::Check {
                url: "postgres://x".into(),
                paths: vec!["sql/".into()]
            }
        );
        assert_eq!(
            parse_args(&args(&["check", "--url=postgres://y", "a.sql", "b"])).unwrap(),
            Command::Check {
                url: "postgres://y".into(),
                paths: vec!["a.sql".into(), "b".into()]
            }
        );
        assert!(parse_args(&args(&["check", "--url", "postgres://x"]))
            .unwrap_err()
            .contains("no .sql"));
        assert!(parse_args(&args(&["frobnicate"]))
            .unwrap_err()
            .contains("unknown command"));
        assert!(parse_args(&args(&["check", "--bogus"]))
            .unwrap_err()
            .contains("unknown option"));
        assert!(parse_args(&args(&["check", "--url"]))
            .unwrap_err()
            .contains("needs a value"));
        assert_eq!(parse_args(&args(&["--help"])).unwrap(), Command::Help);
    }
}
