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
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::config::{Environment, FileStamp, ResolvedConfig, SslMode};
use crate::Error;

use super::{default_file, TlsSetup};

/// How long a setup built on the system's trusted roots is reused.
pub(crate) const SYSTEM_ROOTS_MAX_AGE: Duration = Duration::from_secs(300);

/// At most this many setups are kept (one per configuration and host); a
/// full cache is emptied rather than growing without bound.
const MAX_ENTRIES: usize = 1024;

/// Everything a setup is built from.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Key {
    mode: SslMode,
    host: String,
    root_cert: Option<PathBuf>,
    cert: Option<PathBuf>,
    key: Option<PathBuf>,
    crl: Option<PathBuf>,
    crl_dir: Option<PathBuf>,
    home: Option<PathBuf>,
}

struct Entry {
    setup: Arc<TlsSetup>,
    stamps: Vec<(PathBuf, FileStamp)>,
    built: Instant,
    system_roots: bool,
}

/// The cache: one per process ([`shared`]), or a private one in tests.
#[derive(Default)]
pub(crate) struct TlsCache {
    entries: Mutex<HashMap<Key, Entry>>,
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
        let key = Key {
            mode: config.ssl_mode,
            host: host.to_owned(),
            root_cert: config.ssl_root_cert.clone(),
            cert: config.ssl_cert.clone(),
            key: config.ssl_key.clone(),
            crl: config.ssl_crl.clone(),
            crl_dir: config.ssl_crl_dir.clone(),
            home: env.home_dir(),
        };
        let system_roots = config
            .ssl_root_cert
            .as_deref()
            .is_some_and(|p| p.as_os_str() == "system");
        let stamps = stamps(config, env, system_roots);
        if let Some(entry) = self.lock().get(&key) {
            let fresh = entry.stamps == stamps
                && !(entry.system_roots && entry.built.elapsed() >= SYSTEM_ROOTS_MAX_AGE);
            if fresh {
                return Ok(entry.setup.clone());
            }
        }
        // Built outside the lock: file reads must not hold up other connects.
        let setup = Arc::new(TlsSetup::with_env(config, host, env)?);
        let mut entries = self.lock();
        if entries.len() >= MAX_ENTRIES && !entries.contains_key(&key) {
            entries.clear();
        }
        entries.insert(
            key,
            Entry {
                setup: setup.clone(),
                stamps,
                built: Instant::now(),
                system_roots,
            },
        );
        Ok(setup)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<Key, Entry>> {
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
    env: &dyn Environment,
    system_roots: bool,
) -> Vec<(PathBuf, FileStamp)> {
    let mut paths: Vec<PathBuf> = Vec::with_capacity(5);
    let or_default =
        |set: &Option<PathBuf>, name: &str| set.clone().or_else(|| default_file(env, name));
    if !system_roots {
        paths.extend(or_default(&config.ssl_root_cert, "root.crt"));
    }
    paths.extend(or_default(&config.ssl_cert, "postgresql.crt"));
    paths.extend(or_default(&config.ssl_key, "postgresql.key"));
    if config.ssl_crl.is_none() && config.ssl_crl_dir.is_none() {
        paths.extend(default_file(env, "root.crl"));
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

    struct Home(PathBuf);

    impl Environment for Home {
        fn var(&self, _: &str) -> Option<String> {
            None
        }
        fn home_dir(&self) -> Option<PathBuf> {
            Some(self.0.clone())
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

    fn temp_home(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("pgpipe-tls-cache-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("temp dir");
        dir
    }

    fn root_pem() -> Vec<u8> {
        let pki = pgpipe_testkit::test_pki().expect("test PKI");
        std::fs::read(pki.root_cert()).expect("root certificate")
    }

    #[test]
    fn one_configuration_shares_one_setup() {
        let home = Home(temp_home("shared"));
        let root = home.0.join("root.pem");
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
        let root = home.0.join("root.pem");
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
        let root = home.0.join("root.pem");
        std::fs::write(&root, root_pem()).expect("write root");
        let cache = TlsCache::default();
        let config = resolved(
            &format!("sslmode=verify-ca&sslrootcert={}", root.display()),
            &home,
        );
        let first = cache.get(&config, "localhost", &home).expect("first");
        // Rotation by rename: a new file (new inode, another size).
        let next = home.0.join("root.pem.new");
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
        std::fs::create_dir_all(home.0.join(".postgresql")).expect("dir");
        let require = resolved("sslmode=require", &home);
        let plain = cache.get(&require, "localhost", &home).expect("require");
        assert!(plain.root_source.is_none());
        std::fs::write(home.0.join(".postgresql").join("root.crt"), root_pem()).expect("root.crt");
        let verified = cache.get(&require, "localhost", &home).expect("require");
        assert!(!Arc::ptr_eq(&plain, &verified));
        assert!(verified.root_source.is_some(), "root.crt not picked up");
        // A broken file is an error, and is not cached over.
        std::fs::write(home.0.join(".postgresql").join("root.crt"), b"junk").expect("junk");
        assert!(cache.get(&require, "localhost", &home).is_err());
    }
}
