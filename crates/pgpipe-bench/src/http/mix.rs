//! Request mixes and the checks of their answers: a wrong answer is an
//! error of the run, not a fast response.

use bytes::Bytes;
use hyper::{Method, StatusCode};
use pgpipe_service::schema::{MAIL_PER_USER, MAIL_USERS};
use serde_json::Value;

use super::client::Req;

/// What a run sends.
#[derive(Debug, Clone, PartialEq)]
pub enum Mix {
    /// The key-value API: GET/PUT/DELETE percentages over `keys` keys,
    /// values of `value_size` bytes.
    Kv {
        /// Percent GET.
        get: u32,
        /// Percent PUT.
        put: u32,
        /// Percent DELETE.
        delete: u32,
        /// Key space: `k0` .. `k{keys-1}`.
        keys: u64,
        /// Value size in bytes.
        value_size: usize,
    },
    /// `/db`.
    Db,
    /// `/queries?queries=N`.
    Queries(usize),
    /// `/fortunes`.
    Fortunes,
    /// `/updates?queries=N`.
    Updates(usize),
    /// `/mail/{uid}/inbox`.
    Mail,
    /// `/plaintext` (no database: the HTTP stack's own ceiling).
    Plaintext,
    /// `/json` (no database).
    Json,
}

/// The names `--mix` accepts.
pub const NAMES: &str = "kv, db, queries-N, fortunes, updates-N, mail, plaintext, json";

impl Mix {
    /// Parses a mix name; `kv` takes its ratios from the arguments.
    pub fn parse(
        name: &str,
        kv: (u32, u32, u32),
        keys: u64,
        value_size: usize,
    ) -> Result<Mix, String> {
        let count = |s: &str| -> Result<usize, String> {
            s.parse::<usize>()
                .ok()
                .filter(|n| (1..=500).contains(n))
                .ok_or_else(|| format!("{name:?}: N must be 1..=500"))
        };
        Ok(match name {
            "kv" => {
                if kv.0 + kv.1 + kv.2 != 100 {
                    return Err(format!(
                        "--kv-get, --kv-put and --kv-delete must add up to 100, got {}",
                        kv.0 + kv.1 + kv.2
                    ));
                }
                if keys == 0 {
                    return Err("--keys must be at least 1".into());
                }
                Mix::Kv {
                    get: kv.0,
                    put: kv.1,
                    delete: kv.2,
                    keys,
                    value_size,
                }
            }
            "db" => Mix::Db,
            "fortunes" => Mix::Fortunes,
            "mail" => Mix::Mail,
            "plaintext" => Mix::Plaintext,
            "json" => Mix::Json,
            other => {
                if let Some(n) = other.strip_prefix("queries-") {
                    Mix::Queries(count(n)?)
                } else if let Some(n) = other.strip_prefix("updates-") {
                    Mix::Updates(count(n)?)
                } else {
                    return Err(format!("unknown mix {other:?}; valid mixes: {NAMES}"));
                }
            }
        })
    }

    /// The stable name of the mix (results are keyed by it).
    pub fn name(&self) -> String {
        match self {
            Mix::Kv {
                get, put, delete, ..
            } => {
                if *delete == 0 {
                    format!("kv-{get}get-{put}put")
                } else {
                    format!("kv-{get}get-{put}put-{delete}del")
                }
            }
            Mix::Db => "db".into(),
            Mix::Queries(n) => format!("queries-{n}"),
            Mix::Fortunes => "fortunes".into(),
            Mix::Updates(n) => format!("updates-{n}"),
            Mix::Mail => "mail".into(),
            Mix::Plaintext => "plaintext".into(),
            Mix::Json => "json".into(),
        }
    }
}

/// The value stored under key number `n`: deterministic, so that a GET's
/// body can be checked.
pub fn kv_value(n: u64, size: usize) -> Bytes {
    let seed = format!("value-of-k{n};");
    Bytes::from(seed.bytes().cycle().take(size).collect::<Vec<u8>>())
}

/// A fast per-connection random sequence (splitmix64).
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A sequence from `seed`.
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0xD1B5_4A32_D192_ED03)
    }

    /// The next number.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (n > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n.max(1)
    }
}

/// What an answer must look like.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expect {
    /// A KV GET of key `n`: 200 with its value (or 404 when deletes run).
    KvGet(u64),
    /// 201.
    Created,
    /// 202.
    Accepted,
    /// A world object.
    World,
    /// An array of N world objects.
    Worlds(usize),
    /// The Fortunes page.
    Fortunes,
    /// A seeded inbox.
    Inbox,
    /// `Hello, World!`.
    Plaintext,
    /// `{"message":"Hello, World!"}`.
    Json,
}

impl Mix {
    /// The next request and what its answer must be.
    pub fn next(&self, rng: &mut Rng) -> (Req, Expect) {
        let get = |path: String| Req {
            method: Method::GET,
            path,
            body: Bytes::new(),
        };
        match self {
            Mix::Kv {
                get: g,
                put,
                keys,
                value_size,
                ..
            } => {
                let key = rng.below(*keys);
                let roll = rng.below(100) as u32;
                let path = format!("/v0/entity?id=k{key}");
                if roll < *g {
                    (get(path), Expect::KvGet(key))
                } else if roll < g + put {
                    let req = Req {
                        method: Method::PUT,
                        path,
                        body: kv_value(key, *value_size),
                    };
                    (req, Expect::Created)
                } else {
                    let req = Req {
                        method: Method::DELETE,
                        path,
                        body: Bytes::new(),
                    };
                    (req, Expect::Accepted)
                }
            }
            Mix::Db => (get("/db".into()), Expect::World),
            Mix::Queries(n) => (get(format!("/queries?queries={n}")), Expect::Worlds(*n)),
            Mix::Updates(n) => (get(format!("/updates?queries={n}")), Expect::Worlds(*n)),
            Mix::Fortunes => (get("/fortunes".into()), Expect::Fortunes),
            Mix::Mail => {
                let uid = 1 + rng.below(MAIL_USERS as u64);
                (get(format!("/mail/{uid}/inbox")), Expect::Inbox)
            }
            Mix::Plaintext => (get("/plaintext".into()), Expect::Plaintext),
            Mix::Json => (get("/json".into()), Expect::Json),
        }
    }

    /// Checks an answer: always the status; the body too when `body` is
    /// set (a sample of the requests, to keep the load tool's own CPU low).
    pub fn check(
        &self,
        expect: Expect,
        status: StatusCode,
        data: &[u8],
        body: bool,
    ) -> Result<(), String> {
        let deletes = matches!(self, Mix::Kv { delete, .. } if *delete > 0);
        let want = match expect {
            Expect::Created => StatusCode::CREATED,
            Expect::Accepted => StatusCode::ACCEPTED,
            Expect::KvGet(_) if deletes && status == StatusCode::NOT_FOUND => return Ok(()),
            _ => StatusCode::OK,
        };
        if status != want {
            return Err(format!(
                "status {status} (wanted {want}): {}",
                String::from_utf8_lossy(&data[..data.len().min(200)])
            ));
        }
        if !body {
            return Ok(());
        }
        let json = || -> Result<Value, String> {
            serde_json::from_slice(data).map_err(|e| format!("not JSON ({e})"))
        };
        let world = |v: &Value| -> Result<(), String> {
            let ok = v.as_object().is_some_and(|o| {
                o.len() == 2
                    && o.get("id")
                        .and_then(Value::as_i64)
                        .is_some_and(|x| (1..=10_000).contains(&x))
                    && o.get("randomNumber")
                        .and_then(Value::as_i64)
                        .is_some_and(|x| (1..=10_000).contains(&x))
            });
            ok.then_some(())
                .ok_or_else(|| format!("not a world object: {v}"))
        };
        match expect {
            Expect::KvGet(n) => {
                let size = match self {
                    Mix::Kv { value_size, .. } => *value_size,
                    _ => 0,
                };
                if data != kv_value(n, size) {
                    return Err(format!("GET k{n}: wrong value ({} bytes)", data.len()));
                }
            }
            Expect::Created | Expect::Accepted => {}
            Expect::World => world(&json()?)?,
            Expect::Worlds(n) => {
                let v = json()?;
                let list = v.as_array().ok_or("not a JSON array")?;
                if list.len() != n {
                    return Err(format!("{} worlds, wanted {n}", list.len()));
                }
                list.iter().try_for_each(world)?;
            }
            Expect::Fortunes => {
                let html = std::str::from_utf8(data).map_err(|_| "fortunes: not UTF-8")?;
                let rows = html.matches("<tr>").count();
                if rows != 14 || !html.contains("&lt;script&gt;") || html.contains("<script>") {
                    return Err(format!("fortunes: {rows} rows or unescaped script"));
                }
            }
            Expect::Inbox => {
                let v = json()?;
                let list = v.as_array().ok_or("not a JSON array")?;
                let ok = list.len() as i64 == MAIL_PER_USER
                    && list.iter().all(|m| {
                        let id = m["id"].as_i64().unwrap_or(-1);
                        m["attachments"].as_array().map(Vec::len) == Some((id % 4) as usize)
                    });
                if !ok {
                    return Err(format!(
                        "inbox: {} messages or wrong attachments",
                        list.len()
                    ));
                }
            }
            Expect::Plaintext => {
                if data != b"Hello, World!" {
                    return Err("plaintext: wrong body".into());
                }
            }
            Expect::Json => {
                if json()? != serde_json::json!({"message": "Hello, World!"}) {
                    return Err("json: wrong body".into());
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_and_round_trip() {
        for name in [
            "db",
            "queries-20",
            "fortunes",
            "updates-20",
            "mail",
            "plaintext",
            "json",
        ] {
            assert_eq!(Mix::parse(name, (80, 20, 0), 10, 8).unwrap().name(), name);
        }
        assert_eq!(
            Mix::parse("kv", (80, 20, 0), 10, 8).unwrap().name(),
            "kv-80get-20put"
        );
        assert!(Mix::parse("kv", (80, 30, 0), 10, 8)
            .unwrap_err()
            .contains("100"));
        assert!(Mix::parse("queries-0", (80, 20, 0), 10, 8).is_err());
        assert!(Mix::parse("queries-501", (80, 20, 0), 10, 8).is_err());
        assert!(Mix::parse("nope", (80, 20, 0), 10, 8)
            .unwrap_err()
            .contains("fortunes"));
    }

    #[test]
    fn kv_mix_follows_its_ratio_and_checks_values() {
        let mix = Mix::parse("kv", (80, 20, 0), 100, 16).unwrap();
        let mut rng = Rng::new(1);
        let gets = (0..10_000)
            .filter(|_| mix.next(&mut rng).0.method == Method::GET)
            .count();
        assert!((7_500..8_500).contains(&gets), "{gets}");
        let v = kv_value(5, 16);
        assert_eq!(v.len(), 16);
        assert!(mix
            .check(Expect::KvGet(5), StatusCode::OK, &v, true)
            .is_ok());
        assert!(mix
            .check(Expect::KvGet(6), StatusCode::OK, &v, true)
            .is_err());
        assert!(mix
            .check(Expect::KvGet(5), StatusCode::NOT_FOUND, b"", true)
            .is_err());
        assert!(mix
            .check(Expect::Created, StatusCode::OK, b"", false)
            .is_err());
        let w = br#"[{"id":1,"randomNumber":2},{"id":3,"randomNumber":4}]"#;
        assert!(Mix::Queries(2)
            .check(Expect::Worlds(2), StatusCode::OK, w, true)
            .is_ok());
        assert!(Mix::Queries(3)
            .check(Expect::Worlds(3), StatusCode::OK, w, true)
            .is_err());
    }
}
