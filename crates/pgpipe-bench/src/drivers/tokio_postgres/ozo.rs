//! tokio-postgres in the ozo rows: a connection per request (`basic`,
//! `query(&str)`: prepare + execute on the fresh connection), one client
//! with the statement prepared once (`reuse`), and deadpool-postgres (a
//! pool of N + 1, `get()` + `prepare_cached` per request) for the pooled
//! rows.

use std::time::Duration;

use deadpool_postgres::{Manager, ManagerConfig, RecyclingMethod};
use tokio_postgres::{Client, NoTls, Row, Statement};

use crate::error::BenchError;
use crate::families::ozo::{
    check_count, check_simple, check_types, Expected, PgType, COMPLEX_SQL, SIMPLE_SQL, TYPMOD,
};
use crate::shape::OzoCase;

#[derive(Debug)]
enum Via {
    Connect(String),
    Client(Client, Statement),
    Pool(deadpool_postgres::Pool),
}

/// tokio-postgres (or deadpool-postgres) set up for one ozo row.
#[derive(Debug)]
pub struct Conn {
    via: Via,
    case: OzoCase,
    expected: Expected,
}

/// Decodes one `pg_type` row into the typed struct.
pub fn pg_type(r: &Row) -> Result<PgType, tokio_postgres::Error> {
    Ok(PgType {
        typname: r.try_get(0)?,
        typnamespace: r.try_get(1)?,
        typowner: r.try_get(2)?,
        typlen: r.try_get(3)?,
        typbyval: r.try_get(4)?,
        typcategory: r.try_get(5)?,
        typispreferred: r.try_get(6)?,
        typisdefined: r.try_get(7)?,
        typdelim: r.try_get(8)?,
        typrelid: r.try_get(9)?,
        typelem: r.try_get(10)?,
        typarray: r.try_get(11)?,
    })
}

/// With `--tls`: over tokio-postgres-rustls, its connector built once.
async fn connect_client(url: &str) -> Result<Client, BenchError> {
    crate::tls::tokio_postgres_connect(url).await
}

fn pool(url: &str, max_size: usize) -> Result<deadpool_postgres::Pool, BenchError> {
    let config: tokio_postgres::Config = crate::tls::tokio_postgres_url(url)
        .parse()
        .map_err(|e| BenchError::new(format!("deadpool-postgres: bad url: {e}")))?;
    let manager_config = ManagerConfig {
        recycling_method: RecyclingMethod::Fast,
    };
    let manager = match crate::tls::tokio_postgres_rustls()? {
        Some(tls) => Manager::from_config(config, tls, manager_config),
        None => Manager::from_config(config, NoTls, manager_config),
    };
    deadpool_postgres::Pool::builder(manager)
        .max_size(max_size)
        .runtime(deadpool_postgres::Runtime::Tokio1)
        .wait_timeout(Some(Duration::from_secs(30)))
        .create_timeout(Some(Duration::from_secs(30)))
        .build()
        .map_err(|e| BenchError::new(format!("deadpool-postgres: {e}")))
}

impl Conn {
    /// Sets up `case` over `n` connections.
    pub async fn connect(
        url: &str,
        case: OzoCase,
        n: usize,
        expected: Expected,
    ) -> Result<Conn, BenchError> {
        let via = match case {
            OzoCase::Basic => Via::Connect(url.to_string()),
            OzoCase::Reuse => {
                let client = connect_client(url).await?;
                let stmt = client.prepare(SIMPLE_SQL).await?;
                Via::Client(client, stmt)
            }
            _ => Via::Pool(pool(url, n + 1)?),
        };
        let c = Conn {
            via,
            case,
            expected,
        };
        c.op().await?;
        Ok(c)
    }

    /// One checked request; returns rows read.
    pub async fn op(&self) -> Result<u64, BenchError> {
        let complex = matches!(self.case, OzoCase::ComplexRaw | OzoCase::ComplexParsed);
        let rows = match &self.via {
            Via::Connect(url) => {
                let client = connect_client(url).await?;
                client.query(SIMPLE_SQL, &[]).await?
            }
            Via::Client(c, stmt) => c.query(stmt, &[]).await?,
            Via::Pool(p) => {
                let client = p.get().await?;
                if complex {
                    let stmt = client.prepare_cached(COMPLEX_SQL).await?;
                    client.query(&stmt, &[&TYPMOD, &true]).await?
                } else {
                    let stmt = client.prepare_cached(SIMPLE_SQL).await?;
                    client.query(&stmt, &[]).await?
                }
            }
        };
        match self.case {
            OzoCase::Parsed => {
                let v = rows
                    .iter()
                    .map(|r| r.try_get(0).map(|x: i32| (x,)))
                    .collect::<Result<Vec<_>, _>>()?;
                check_simple(&v)
            }
            OzoCase::ComplexParsed => {
                let v = rows.iter().map(pg_type).collect::<Result<Vec<_>, _>>()?;
                check_types(&v, &self.expected)
            }
            case => check_count(case, rows.len() as u64, &self.expected),
        }
    }
}
