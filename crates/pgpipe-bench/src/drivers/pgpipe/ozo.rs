//! pgpipe in the ozo rows: `pgpipe::connect` per request (`basic`), one
//! `Client` (`reuse`), and its `Pool` through `pool.query(..)` (its path
//! for single statements: pipelined on shared connections) with a pool
//! of N + 1 whose shared lane holds the N connections the row measures.

use pgpipe::{Client, Pool, Row};

use crate::drivers::with_param;
use crate::error::BenchError;
use crate::families::ozo::{
    check_count, check_simple, check_types, Expected, PgType, COMPLEX_SQL, SIMPLE_SQL, TYPMOD,
};
use crate::shape::OzoCase;

#[derive(Debug)]
enum Via {
    Connect(String),
    Client(Client),
    Pool(Pool),
}

/// pgpipe set up for one ozo row.
#[derive(Debug)]
pub struct Conn {
    via: Via,
    case: OzoCase,
    expected: Expected,
}

/// Decodes one `pg_type` row into the typed struct.
pub fn pg_type(r: &Row) -> Result<PgType, pgpipe::Error> {
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

impl Conn {
    /// Sets up `case` over `n` connections.
    pub async fn connect(
        url: &str,
        case: OzoCase,
        n: usize,
        expected: Expected,
    ) -> Result<Conn, BenchError> {
        // With --tls: verify-full against the run-time CA.
        let url = &crate::tls::url(url);
        let via = match case {
            OzoCase::Basic => Via::Connect(url.to_string()),
            OzoCase::Reuse => Via::Client(pgpipe::connect(url).await?),
            _ => {
                let mut u = with_param(url, "pool_max_size", n + 1);
                u = with_param(&u, "pool_shared_connections", n);
                u = with_param(&u, "pool_acquire_timeout", 30_000);
                Via::Pool(Pool::connect(&u).await?)
            }
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
                let client = pgpipe::connect(url).await?;
                let rows = client.query(SIMPLE_SQL, ()).await;
                client.close();
                rows?
            }
            Via::Client(c) => c.query(SIMPLE_SQL, ()).await?,
            Via::Pool(p) if complex => p.query(COMPLEX_SQL, (TYPMOD, true)).await?,
            Via::Pool(p) => p.query(SIMPLE_SQL, ()).await?,
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
