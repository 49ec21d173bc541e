//! `pgpipe-cli migrate apply|status`: refinery migrations from a folder
//! (`V{version}__{name}.sql`, as refinery names them), run through pgpipe
//! with refinery's own runner and schema history table, so the CLI, a
//! service's `embed_migrations!` and refinery's own tools agree on what is
//! applied.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use refinery_core::{load_sql_migrations, Migration, Runner, SchemaVersion, Target};

/// refinery's default history table.
const HISTORY_TABLE: &str = "refinery_schema_history";

#[derive(Debug, PartialEq)]
pub(crate) enum Migrate {
    /// Applies what is pending, up to `target` if given.
    Apply {
        url: String,
        dir: PathBuf,
        target: Option<SchemaVersion>,
        grouped: bool,
    },
    /// Lists every migration: applied (when), pending, changed since it
    /// was applied, or applied with no file.
    Status { url: String, dir: PathBuf },
}

/// Parses the arguments after `migrate`.
pub(crate) fn parse_args(args: &[String]) -> Result<Migrate, String> {
    let mut it = args.iter();
    let apply = match it.next().map(String::as_str) {
        Some("apply") => true,
        Some("status") => false,
        Some(other) => {
            return Err(format!(
                "unknown migrate command {other:?} (apply or status)"
            ))
        }
        None => return Err("migrate needs a command: apply or status".to_owned()),
    };
    let mut url = None;
    let mut dir = None;
    let mut target = None;
    let mut grouped = false;
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--url" => url = Some(it.next().ok_or("--url needs a value")?.clone()),
            s if s.starts_with("--url=") => url = Some(s["--url=".len()..].to_owned()),
            "--target" if apply => {
                let v = it.next().ok_or("--target needs a version")?;
                target = Some(
                    v.parse::<SchemaVersion>()
                        .map_err(|_| format!("--target {v:?} is not a version number"))?,
                );
            }
            "--grouped" if apply => grouped = true,
            s if s.starts_with("--") => return Err(format!("unknown option {s:?}")),
            s if dir.is_none() => dir = Some(PathBuf::from(s)),
            s => return Err(format!("one migrations folder only, got a second: {s:?}")),
        }
    }
    let url = match url {
        Some(u) => u,
        None => std::env::var("DATABASE_URL").map_err(|_| "no --url and no DATABASE_URL")?,
    };
    let dir = dir.ok_or("no migrations folder given")?;
    Ok(if apply {
        Migrate::Apply {
            url,
            dir,
            target,
            grouped,
        }
    } else {
        Migrate::Status { url, dir }
    })
}

pub(crate) async fn run(command: Migrate) -> ExitCode {
    match command {
        Migrate::Apply {
            url,
            dir,
            target,
            grouped,
        } => apply(&url, &dir, target, grouped).await,
        Migrate::Status { url, dir } => status(&url, &dir).await,
    }
}

fn load(dir: &Path) -> Result<Vec<Migration>, String> {
    if !dir.is_dir() {
        return Err(format!("{}: not a folder", dir.display()));
    }
    let mut migrations = load_sql_migrations(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    migrations.sort();
    Ok(migrations)
}

async fn apply(url: &str, dir: &Path, target: Option<SchemaVersion>, grouped: bool) -> ExitCode {
    let migrations = match load(dir) {
        Ok(m) => m,
        Err(e) => return usage_error(&e),
    };
    let mut client = match pgpipe::connect(url).await {
        Ok(c) => c,
        Err(e) => return failure(&format!("cannot connect: {e}")),
    };
    let runner = Runner::new(&migrations)
        .set_target(target.map_or(Target::Latest, Target::Version))
        .set_grouped(grouped)
        .set_abort_divergent(true);
    let (applied, error) = match runner.run_async(&mut client).await {
        Ok(report) => (report.applied_migrations().clone(), None),
        Err(e) => (
            e.report()
                .map(|r| r.applied_migrations().clone())
                .unwrap_or_default(),
            Some(e),
        ),
    };
    for m in &applied {
        println!("applied {m}");
    }
    match error {
        None => {
            println!("{} migration(s) applied", applied.len());
            ExitCode::SUCCESS
        }
        Some(e) => {
            let mut message = e.to_string();
            let mut source = std::error::Error::source(&e);
            while let Some(cause) = source {
                message.push_str(&format!(": {cause}"));
                source = cause.source();
            }
            failure(&message)
        }
    }
}

async fn status(url: &str, dir: &Path) -> ExitCode {
    let files = match load(dir) {
        Ok(m) => m,
        Err(e) => return usage_error(&e),
    };
    let mut client = match pgpipe::connect(url).await {
        Ok(c) => c,
        Err(e) => return failure(&format!("cannot connect: {e}")),
    };
    let exists = client
        .query_one("SELECT to_regclass($1) IS NOT NULL", (HISTORY_TABLE,))
        .await
        .map(|row| row.get::<bool, _>(0));
    let applied = match exists {
        Ok(false) => Vec::new(),
        Ok(true) => match Runner::new(&files)
            .get_applied_migrations_async(&mut client)
            .await
        {
            Ok(applied) => applied,
            Err(e) => return failure(&format!("cannot read {HISTORY_TABLE}: {e}")),
        },
        Err(e) => return failure(&format!("cannot read {HISTORY_TABLE}: {e}")),
    };
    let mut problems = 0;
    for line in status_lines(&files, &applied, &mut problems) {
        println!("{line}");
    }
    if problems == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// One line per migration, in version order; `problems` counts the
/// changed and the missing ones.
fn status_lines(files: &[Migration], applied: &[Migration], problems: &mut usize) -> Vec<String> {
    let mut lines = Vec::new();
    let mut versions: Vec<SchemaVersion> = files
        .iter()
        .chain(applied)
        .map(Migration::version)
        .collect();
    versions.sort_unstable();
    versions.dedup();
    for v in versions {
        let file = files.iter().find(|m| m.version() == v);
        let done = applied.iter().find(|m| m.version() == v);
        let line = match (file, done) {
            (Some(f), None) => format!("{f}  pending"),
            (Some(f), Some(a)) if f.checksum() == a.checksum() => format!(
                "{f}  applied {}",
                a.applied_on().map(|t| t.to_string()).unwrap_or_default()
            ),
            (Some(f), Some(_)) => {
                *problems += 1;
                format!("{f}  CHANGED since it was applied (checksum differs)")
            }
            (None, Some(a)) => {
                *problems += 1;
                format!("{a}  MISSING: applied, but no file in the folder")
            }
            (None, None) => continue,
        };
        lines.push(line);
    }
    lines
}

fn usage_error(message: &str) -> ExitCode {
    eprintln!("pgpipe-cli migrate: {message}");
    ExitCode::from(2)
}

fn failure(message: &str) -> ExitCode {
    eprintln!("pgpipe-cli migrate: {message}");
    ExitCode::FAILURE
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
            parse_args(&args(&[
                "apply",
                "--url",
                "postgres://x",
                "--target",
                "3",
                "m/"
            ]))
            .unwrap(),
            Migrate::Apply {
                url: "postgres://x".into(),
                dir: "m/".into(),
                target: Some(3),
                grouped: false
            }
        );
        assert_eq!(
            parse_args(&args(&["status", "--url=postgres://y", "m"])).unwrap(),
            Migrate::Status {
                url: "postgres://y".into(),
                dir: "m".into()
            }
        );
        let err = |a: &[&str]| parse_args(&args(a)).unwrap_err();
        assert!(err(&["apply", "--url", "u", "--target", "x", "m"]).contains("not a version"));
        assert!(err(&["status", "--url", "u", "--target", "3", "m"]).contains("unknown option"));
        assert!(err(&["apply", "--url", "u"]).contains("no migrations folder"));
        assert!(err(&["apply", "--url", "u", "a", "b"]).contains("one migrations folder"));
        assert!(err(&["undo"]).contains("apply or status"));
        assert!(err(&[]).contains("apply or status"));
    }

    #[test]
    fn status_names_pending_changed_and_missing() {
        let one = Migration::unapplied("V1__one", "SELECT 1").unwrap();
        let two = Migration::unapplied("V2__two", "SELECT 2").unwrap();
        let two_edited = Migration::unapplied("V2__two", "SELECT 22").unwrap();
        let gone = Migration::unapplied("V3__gone", "SELECT 3").unwrap();
        let mut problems = 0;
        let lines = status_lines(&[one.clone(), two_edited], &[one, two, gone], &mut problems);
        assert_eq!(lines.len(), 3, "{lines:?}");
        assert!(lines[0].starts_with("V1__one") && lines[0].contains("applied"));
        assert!(lines[1].contains("CHANGED"));
        assert!(lines[2].contains("MISSING"));
        assert_eq!(problems, 2);
    }
}
