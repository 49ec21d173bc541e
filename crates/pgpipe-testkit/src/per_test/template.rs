//! The template database of a migrations folder: built once per server
//! and folder contents, whatever the number of test threads and processes
//! asking for it at once.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::addresses::Addresses;
use crate::error::TestkitError;
use crate::mini_client::MiniClient;
use crate::per_test::migrations::{self, Migration};
use crate::roles::{quote_ident, quote_literal};

/// How long a process waits for another one to finish a template.
const BUILD_WAIT: Duration = Duration::from_secs(300);
/// Polling interval while another process builds.
const POLL: Duration = Duration::from_millis(25);
/// Prefix of template names (`pgpipe_tpl_<hash>`), also used to find them.
pub(crate) const TEMPLATE_PREFIX: &str = "pgpipe_tpl_";
/// Hex digits of the content hash in the name (96 bits: no collisions).
const HASH_CHARS: usize = 24;
/// SQLSTATE `55006` object_in_use: "database is being accessed by other users".
const OBJECT_IN_USE: &str = "55006";

/// Templates this process already has, by (server, folder): later tests
/// neither read the folder again nor ask the server.
static KNOWN: Mutex<Option<HashMap<(String, PathBuf), String>>> = Mutex::new(None);

/// The name of the template holding `dir`'s migrations on `addr`'s server,
/// building it first if no process has.
///
/// Threads of one process wait on a mutex; processes take a session
/// advisory lock keyed by the content hash, and the template appears under
/// its final name only once every migration went in (built under a private
/// name, then renamed), so a crashed or failed build never leaves a
/// half-migrated template for others to copy.
pub(crate) fn template_for(addr: &Addresses, dir: &Path) -> Result<String, TestkitError> {
    let key = (
        format!("{}:{}/{}", addr.host, addr.port, addr.admin_db),
        dir.to_path_buf(),
    );
    let mut known = KNOWN.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(name) = known.get_or_insert_with(HashMap::new).get(&key) {
        return Ok(name.clone());
    }
    let found = migrations::read_dir(dir)?;
    let hash = migrations::content_hash(&found);
    let name = name_for(&hash);
    ensure(addr, &name, &hash, &found)
        .map_err(|e| e.context(format!("preparing template {name} from {}", dir.display())))?;
    known
        .get_or_insert_with(HashMap::new)
        .insert(key, name.clone());
    Ok(name)
}

/// `pgpipe_tpl_<hash>` for the content hash of a folder.
pub(crate) fn name_for(hash: &str) -> String {
    format!("{TEMPLATE_PREFIX}{}", &hash[..HASH_CHARS])
}

/// The template's name for `dir`'s current contents, without touching a server.
pub(crate) fn name_of(dir: &Path) -> Result<String, TestkitError> {
    Ok(name_for(&migrations::content_hash(&migrations::read_dir(
        dir,
    )?)))
}

fn ensure(
    addr: &Addresses,
    name: &str,
    hash: &str,
    found: &[Migration],
) -> Result<(), TestkitError> {
    // The first 16 hex digits as the advisory lock key.
    let lock_key = u64::from_str_radix(&hash[..16], 16)
        .map_err(|_| TestkitError::new("content hash is not hex"))? as i64;
    let deadline = Instant::now() + BUILD_WAIT;
    let mut admin = addr.connect(&addr.admin_db)?;
    loop {
        if exists(&mut admin, name)? {
            return Ok(());
        }
        let locked = admin.simple_query(&format!("SELECT pg_try_advisory_lock({lock_key})"))?;
        if first(&locked) == Some("t") {
            // Someone may have finished between the check and the lock.
            let result = if exists(&mut admin, name)? {
                Ok(())
            } else {
                build(addr, &mut admin, name, found)
            };
            admin.simple_query(&format!("SELECT pg_advisory_unlock({lock_key})"))?;
            return result;
        }
        if Instant::now() >= deadline {
            return Err(TestkitError::new(format!(
                "another process held the build lock of {name} for {} s",
                BUILD_WAIT.as_secs()
            )));
        }
        std::thread::sleep(POLL);
    }
}

fn build(
    addr: &Addresses,
    admin: &mut MiniClient,
    name: &str,
    found: &[Migration],
) -> Result<(), TestkitError> {
    let building = format!("{name}_{}", std::process::id());
    let ident = quote_ident(&building);
    // A leftover of a crashed process that had this pid.
    if exists(admin, &building)? {
        discard(addr, admin, &building)?;
    }
    admin.simple_query(&format!("CREATE DATABASE {ident}"))?;
    let result = migrate(addr, &building, found).and_then(|()| publish(admin, &building, name));
    if result.is_err() {
        if let Err(e) = discard(addr, admin, &building) {
            eprintln!("pgpipe-testkit: could not drop the unfinished template {building}: {e}");
        }
    }
    result
}

fn migrate(addr: &Addresses, db: &str, found: &[Migration]) -> Result<(), TestkitError> {
    let mut client = addr.connect(db)?;
    for m in found {
        client
            .simple_query(&m.sql)
            .map_err(|e| e.context(format!("applying migration {}", m.file_name)))?;
    }
    Ok(())
}

/// Marks the finished database a template closed to connections (a
/// session in a template makes `CREATE DATABASE ... TEMPLATE` fail), then
/// gives it the name others look for.
fn publish(admin: &mut MiniClient, building: &str, name: &str) -> Result<(), TestkitError> {
    admin.simple_query(&format!(
        "ALTER DATABASE {} WITH IS_TEMPLATE true ALLOW_CONNECTIONS false",
        quote_ident(building)
    ))?;
    admin.simple_query(&format!(
        "COMMENT ON DATABASE {} IS {}",
        quote_ident(building),
        quote_literal("pgpipe-testkit template: migrations applied once, copied for every test"),
    ))?;
    let rename = format!(
        "ALTER DATABASE {} RENAME TO {}",
        quote_ident(building),
        quote_ident(name)
    );
    // The migration session has said goodbye, but its backend may not have
    // exited yet; the rename waits for it (bounded).
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        match admin.simple_query(&rename) {
            Ok(_) => return Ok(()),
            Err(e) if e.code() == Some(OBJECT_IN_USE) && Instant::now() < deadline => {
                std::thread::sleep(POLL)
            }
            Err(e) => return Err(e),
        }
    }
}

/// Drops an unfinished template (a template must be unmarked first).
fn discard(addr: &Addresses, admin: &mut MiniClient, building: &str) -> Result<(), TestkitError> {
    admin.simple_query(&format!(
        "ALTER DATABASE {} WITH IS_TEMPLATE false",
        quote_ident(building)
    ))?;
    crate::database::drop_database(addr, building)
}

fn exists(admin: &mut MiniClient, name: &str) -> Result<bool, TestkitError> {
    let rows = admin.simple_query(&format!(
        "SELECT count(*) FROM pg_database WHERE datname = {}",
        quote_literal(name)
    ))?;
    Ok(first(&rows) == Some("1"))
}

fn first(rows: &[Vec<Option<String>>]) -> Option<&str> {
    rows.first()?.first()?.as_deref()
}
