//! One [`TlsSetup`] per TLS configuration and host, shared by every
//! connection that uses it: reading and parsing the certificate files and
//! building rustls' configuration is most of a TLS connect's client CPU
//! otherwise.
//!
//! An entry is keyed by every setting that goes into it (`sslmode`, the
//! host verify-full checks, each file setting, the home directory the
//! `~/.postgresql/` defaults come from), so different settings never share
//! one. It stays fresh by its files: each connect looks at the metadata
//! ([`FileStamp`]: modification and change time, size, inode) of the files
//! the setup was read from and rebuilds it when one changed, appeared or
//! went away, so rotated certificates are picked up by the next connect as before. The system
//! store (`sslrootcert=system`) has no single file to watch: an entry using
//! it is rebuilt after [`SYSTEM_ROOTS_MAX_AGE`].

use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::config::{Environment, FileStamp, ResolvedConfig, SslMode};
use crate::Error;

use super::{default_file_in, TlsSetup};

/// How long a setup built on the system's trusted roots is reused.
pub(crate) const SYSTEM_ROOTS_MAX_AGE: Duration = Duration::from_secs(300);

/// At most this many setups are kept (one per configuration and host); a
/// full cache is emptied rather than growing without bound.
const MAX_ENTRIES: usize = 1024;

/// Everything a setup is built from, borrowed from the connect's own
/// configuration: a hit copies nothing (the owned form is made only when
/// an entry is stored). Paths compare by their bytes, not by components:
/// two spellings of one file are two entries, never a wrong hit.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
struct KeyRef<'a> {
    mode: SslMode,
    host: &'a str,
    root_cert: Option<&'a [u8]>,
    cert: Option<&'a [u8]>,
    key: Option<&'a [u8]>,
    crl: Option<&'a [u8]>,
    crl_dir: Option<&'a [u8]>,
    home: Option<&'a [u8]>,
}

impl<'a> KeyRef<'a> {
    fn new(config: &'a ResolvedConfig, host: &'a str, home: Option<&'a Path>) -> KeyRef<'a> {
        let bytes = |p: &'a Option<PathBuf>| p.as_deref().map(path_bytes);
        KeyRef {
            mode: config.ssl_mode,
            host,
            root_cert: bytes(&config.ssl_root_cert),
            cert: bytes(&config.ssl_cert),
            key: bytes(&config.ssl_key),
            crl: bytes(&config.ssl_crl),
            crl_dir: bytes(&config.ssl_crl_dir),
            home: home.map(path_bytes),
        }
    }

    fn hash_value(&self) -> u64 {
        let mut hasher = DefaultHasher::new();
        self.hash(&mut hasher);
        hasher.finish()
    }

    fn to_owned(self) -> Key {
        let owned = |b: Option<&[u8]>| b.map(<[u8]>::to_vec);
        Key {
            mode: self.mode,
            host: self.host.to_owned(),
            root_cert: owned(self.root_cert),
            cert: owned(self.cert),
            key: owned(self.key),
            crl: owned(self.crl),
            crl_dir: owned(self.crl_dir),
            home: owned(self.home),
        }
    }
}

fn path_bytes(path: &Path) -> &[u8] {
    path.as_os_str().as_encoded_bytes()
}

/// The stored form of [`KeyRef`].
struct Key {
    mode: SslMode,
    host: String,
    root_cert: Option<Vec<u8>>,
    cert: Option<Vec<u8>>,
    key: Option<Vec<u8>>,
    crl: Option<Vec<u8>>,
    crl_dir: Option<Vec<u8>>,
    home: Option<Vec<u8>>,
}

impl Key {
    fn as_ref(&self) -> KeyRef<'_> {
        KeyRef {
            mode: self.mode,
            host: &self.host,
            root_cert: self.root_cert.as_deref(),
            cert: self.cert.as_deref(),
            key: self.key.as_deref(),
            crl: self.crl.as_deref(),
            crl_dir: self.crl_dir.as_deref(),
            home: self.home.as_deref(),
        }
    }
}

struct Entry {
    key: Key,
    setup: Arc<TlsSetup>,
    /// The files the setup was read from, each as it looked just before.
    stamps: Vec<(PathBuf, FileStamp)>,
    built: Instant,
    system_roots: bool,
}

impl Entry {
    /// Whether every file the setup was read from looks as it did then.
    /// The paths are the entry's own: they follow from its key, so a hit
    /// builds none. A file added to the revocation directory changes the
    /// directory's own stamp, which is among them.
    fn is_fresh(&self) -> bool {
        if self.system_roots && self.built.elapsed() >= SYSTEM_ROOTS_MAX_AGE {
            return false;
        }
        self.stamps
            .iter()
            .all(|(path, stamp)| FileStamp::of(path) == *stamp)
    }
}

/// The entries by the hash of their key; entries whose keys share a hash
/// sit side by side and are told apart by the whole key.
type Entries = HashMap<u64, Vec<Arc<Entry>>>;

/// The cache: one per process ([`shared`]), or a private one in tests.
#[derive(Default)]
pub(crate) struct TlsCache {
    entries: Mutex<Entries>,
}

/// The process's cache.
pub(crate) fn shared() -> &'static TlsCache {
    static CACHE: std::sync::OnceLock<TlsCache> = std::sync::OnceLock::new();
    CACHE.get_or_init(TlsCache::default)
}

impl TlsCache {
    /// The setup for `config` and `host`: the one built before if its
    /// settings and files are unchanged, else a new one (then kept).
    pub(crate) fn get(
        &self,
        config: &ResolvedConfig,
        host: &str,
        env: &dyn Environment,
    ) -> Result<Arc<TlsSetup>, Error> {
        // `$HOME` is read once per connect: it names the default files and
        // is part of the key.
        let home = env.home_dir();
        let key = KeyRef::new(config, host, home.as_deref());
        let hash = key.hash_value();
        let found = self
            .lock()
            .get(&hash)
            .and_then(|slot| slot.iter().find(|entry| entry.key.as_ref() == key).cloned());
        // Looked at outside the lock: file system calls must not hold up
        // other connects.
        if let Some(entry) = found.filter(|entry| entry.is_fresh()) {
            return Ok(entry.setup.clone());
        }
        let system_roots = config
            .ssl_root_cert
            .as_deref()
            .is_some_and(|p| p.as_os_str() == "system");
        // Stamped before the files are read, so that a change while they
        // are read is seen by the next connect.
        let stamps = stamps(config, home.as_deref(), system_roots);
        let setup = Arc::new(TlsSetup::with_env(config, host, env)?);
        let entry = Arc::new(Entry {
            key: key.to_owned(),
            setup: setup.clone(),
            stamps,
            built: Instant::now(),
            system_roots,
        });
        let mut entries = self.lock();
        let held: usize = entries.values().map(Vec::len).sum();
        if held >= MAX_ENTRIES {
            entries.clear();
        }
        let slot = entries.entry(hash).or_default();
        slot.retain(|old| old.key.as_ref() != key);
        slot.push(entry);
        Ok(setup)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Entries> {
        // A panic while holding the lock leaves a map that is still whole.
        self.entries
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// The metadata of every file the loaders would read for `config`: the
/// root certificate (unless the system store), the client certificate and
/// key, the revocation list and the files of the revocation directory,
/// each configured or its `~/.postgresql/` default.
fn stamps(
    config: &ResolvedConfig,
    home: Option<&Path>,
    system_roots: bool,
) -> Vec<(PathBuf, FileStamp)> {
    let default_file = |name: &str| default_file_in(home, name);
    let or_default = |set: &Option<PathBuf>, name: &str| set.clone().or_else(|| default_file(name));
    let mut paths: Vec<PathBuf> = Vec::with_capacity(5);
    if !system_roots {
        paths.extend(or_default(&config.ssl_root_cert, "root.crt"));
    }
    paths.extend(or_default(&config.ssl_cert, "postgresql.crt"));
    paths.extend(or_default(&config.ssl_key, "postgresql.key"));
    if config.ssl_crl.is_none() && config.ssl_crl_dir.is_none() {
        paths.extend(default_file("root.crl"));
    }
    paths.extend(config.ssl_crl.clone());
    if let Some(dir) = &config.ssl_crl_dir {
        paths.push(dir.clone());
        if let Ok(entries) = std::fs::read_dir(dir) {
            let mut files: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
            files.sort();
            paths.extend(files);
        }
    }
    paths
        .into_iter()
        .map(|p| {
            let stamp = FileStamp::of(&p);
            (p, stamp)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;

    /// A home directory of its own, deleted when the test ends.
    struct Home(tempfile::TempDir);

    impl Environment for Home {
        fn var(&self, _: &str) -> Option<String> {
            None
        }
        fn home_dir(&self) -> Option<PathBuf> {
            Some(self.0.path().to_path_buf())
        }
        fn read_file(&self, path: &std::path::Path) -> std::io::Result<Vec<u8>> {
            std::fs::read(path)
        }
        fn file_mode(&self, _: &std::path::Path) -> Option<u32> {
            None
        }
    }

    fn resolved(query: &str, env: &Home) -> ResolvedConfig {
        Config::parse(&format!("postgres://u@localhost:5432/d?{query}"))
            .expect("config")
            .resolve(env)
            .expect("resolved")
    }

    fn temp_home(name: &str) -> tempfile::TempDir {
        tempfile::Builder::new()
            .prefix(&format!("pgpipe-tls-cache-{name}-"))
            .tempdir()
            .expect("temp dir")
    }

    fn root_pem() -> Vec<u8> {
        let pki = pgpipe_testkit::test_pki().expect("test PKI");
        std::fs::read(pki.root_cert()).expect("root certificate")
    }

    #[test]
    fn one_configuration_shares_one_setup() {
        let home = Home(temp_home("shared"));
        let root = home.0.path().join("root.pem");
        std::fs::write(&root, root_pem()).expect("write root");
        let cache = TlsCache::default();
        let config = resolved(
            &format!("sslmode=verify-full&sslrootcert={}", root.display()),
            &home,
        );
        let first = cache.get(&config, "localhost", &home).expect("first");
        let second = cache.get(&config, "localhost", &home).expect("second");
        assert!(Arc::ptr_eq(&first, &second), "rebuilt for the same config");
        // A parsed-again equal configuration shares it too.
        let again = resolved(
            &format!("sslmode=verify-full&sslrootcert={}", root.display()),
            &home,
        );
        let third = cache.get(&again, "localhost", &home).expect("third");
        assert!(Arc::ptr_eq(&first, &third));
    }

    #[test]
    fn different_settings_do_not_share() {
        let home = Home(temp_home("keyed"));
        let root = home.0.path().join("root.pem");
        std::fs::write(&root, root_pem()).expect("write root");
        let cache = TlsCache::default();
        let full = resolved(
            &format!("sslmode=verify-full&sslrootcert={}", root.display()),
            &home,
        );
        let ca = resolved(
            &format!("sslmode=verify-ca&sslrootcert={}", root.display()),
            &home,
        );
        let require = resolved("sslmode=require", &home);
        let a = cache.get(&full, "localhost", &home).expect("verify-full");
        let b = cache.get(&ca, "localhost", &home).expect("verify-ca");
        let c = cache.get(&full, "127.0.0.1", &home).expect("other host");
        let d = cache.get(&require, "localhost", &home).expect("require");
        for (x, y) in [(&a, &b), (&a, &c), (&a, &d), (&b, &d)] {
            assert!(!Arc::ptr_eq(x, y), "{x:?} shared with {y:?}");
        }
        assert_eq!(a.mode, SslMode::VerifyFull);
        assert_eq!(b.mode, SslMode::VerifyCa);
        assert_eq!(d.mode, SslMode::Require);
    }

    #[test]
    fn a_changed_file_is_read_again() {
        let home = Home(temp_home("rotated"));
        let root = home.0.path().join("root.pem");
        std::fs::write(&root, root_pem()).expect("write root");
        let cache = TlsCache::default();
        let config = resolved(
            &format!("sslmode=verify-ca&sslrootcert={}", root.display()),
            &home,
        );
        let first = cache.get(&config, "localhost", &home).expect("first");
        // Rotation by rename: a new file (new inode, another size).
        let next = home.0.path().join("root.pem.new");
        let mut pem = root_pem();
        pem.extend_from_slice(b"\n");
        std::fs::write(&next, pem).expect("write new root");
        std::fs::rename(&next, &root).expect("rotate");
        let second = cache.get(&config, "localhost", &home).expect("second");
        assert!(
            !Arc::ptr_eq(&first, &second),
            "a rotated root was not re-read"
        );
        // A default file appearing in ~/.postgresql counts as a change too.
        std::fs::create_dir_all(home.0.path().join(".postgresql")).expect("dir");
        let require = resolved("sslmode=require", &home);
        let plain = cache.get(&require, "localhost", &home).expect("require");
        assert!(plain.root_source.is_none());
        std::fs::write(
            home.0.path().join(".postgresql").join("root.crt"),
            root_pem(),
        )
        .expect("root.crt");
        let verified = cache.get(&require, "localhost", &home).expect("require");
        assert!(!Arc::ptr_eq(&plain, &verified));
        assert!(verified.root_source.is_some(), "root.crt not picked up");
        // A broken file is an error, and is not cached over.
        std::fs::write(home.0.path().join(".postgresql").join("root.crt"), b"junk").expect("junk");
        assert!(cache.get(&require, "localhost", &home).is_err());
    }

    #[test]
    fn a_file_added_to_the_revocation_directory_is_read_again() {
        let home = Home(temp_home("crldir"));
        let pki = pgpipe_testkit::test_pki().expect("test PKI");
        let root = home.0.path().join("root.pem");
        std::fs::write(&root, root_pem()).expect("write root");
        let dir = home.0.path().join("crls");
        std::fs::create_dir_all(&dir).expect("crl dir");
        let crl = pki
            .crl_pem(pgpipe_testkit::CrlIssuer::Root, &[])
            .expect("crl");
        std::fs::write(dir.join("0a1b2c3d.r0"), &crl).expect("first crl");
        let cache = TlsCache::default();
        let config = resolved(
            &format!(
                "sslmode=verify-ca&sslrootcert={}&sslcrldir={}",
                root.display(),
                dir.display()
            ),
            &home,
        );
        let first = cache.get(&config, "localhost", &home).expect("first");
        let again = cache.get(&config, "localhost", &home).expect("again");
        assert!(Arc::ptr_eq(&first, &again), "rebuilt with nothing changed");
        // A second list: the directory's own stamp moves, the setup is
        // read again and holds both lists.
        std::fs::write(dir.join("0a1b2c3d.r1"), &crl).expect("second crl");
        let second = cache.get(&config, "localhost", &home).expect("second");
        assert!(!Arc::ptr_eq(&first, &second), "the new list was not read");
        // A file in it rewritten in place with junk: an error, not the
        // cached setup.
        std::fs::write(dir.join("0a1b2c3d.r0"), b"junk").expect("junk");
        assert!(cache.get(&config, "localhost", &home).is_err());
    }

    #[test]
    fn keys_that_differ_only_in_one_path_do_not_share() {
        // Each path setting is part of the key by its own bytes: swapping
        // two settings' values must not find the other's entry.
        let home = Home(temp_home("swapped"));
        let root = home.0.path().join("root.pem");
        std::fs::write(&root, root_pem()).expect("write root");
        let other = home.0.path().join("other.pem");
        std::fs::write(&other, root_pem()).expect("write other");
        let cache = TlsCache::default();
        let a = resolved(
            &format!("sslmode=verify-ca&sslrootcert={}", root.display()),
            &home,
        );
        let b = resolved(
            &format!("sslmode=verify-ca&sslrootcert={}", other.display()),
            &home,
        );
        let first = cache.get(&a, "localhost", &home).expect("a");
        let second = cache.get(&b, "localhost", &home).expect("b");
        assert!(!Arc::ptr_eq(&first, &second));
        assert_eq!(
            second.root_source,
            Some(format!("\"{}\"", other.display())),
            "the entry of another root file was used"
        );
        let first_again = cache.get(&a, "localhost", &home).expect("a again");
        assert!(Arc::ptr_eq(&first, &first_again));
    }
}
