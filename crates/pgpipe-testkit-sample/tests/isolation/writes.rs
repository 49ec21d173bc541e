//! 50 tests, each writing to its own database while the others write to
//! theirs: each sees its own notes only. They take each argument type the
//! attribute offers, and all copy the migrations' template at once (in one
//! process, or in as many processes as tests).

use pgpipe::{Client, Config, Pool, PoolConfig};
use pgpipe_testkit_sample::{add_note, authors, notes_by};

/// Notes each test writes.
const NOTES: i64 = 10;

async fn writes_only_its_own(pool: &Pool, test: &str) -> Result<(), pgpipe::Error> {
    let db: String = pool
        .query_one("SELECT current_database()", ())
        .await?
        .get(0);
    assert!(
        db.starts_with(&format!("pgpipe_{test}_")),
        "{test} runs in {db}"
    );
    assert_eq!(authors(pool).await?, vec![], "{test}: a fresh database");
    for i in 0..NOTES {
        add_note(pool, test, &format!("{test} #{i}")).await?;
        if i == NOTES / 2 {
            // Overlap with the other tests' writes.
            pool.execute("SELECT pg_sleep(0.02)", ()).await?;
        }
    }
    assert_eq!(authors(pool).await?, vec![(test.to_string(), NOTES)]);
    let bodies = notes_by(pool, test).await?;
    assert_eq!(
        bodies.first().map(String::as_str),
        Some(&*format!("{test} #0"))
    );
    assert_eq!(bodies.len() as i64, NOTES);
    Ok(())
}

macro_rules! with_pool {
    ($($name:ident)*) => {$(
        #[pgpipe_testkit::test(migrations = "migrations")]
        async fn $name(pool: Pool) -> Result<(), pgpipe::Error> {
            writes_only_its_own(&pool, stringify!($name)).await
        }
    )*};
}

macro_rules! with_client {
    ($($name:ident)*) => {$(
        #[pgpipe_testkit::test(migrations = "migrations")]
        async fn $name(client: Client) {
            let test = stringify!($name);
            for i in 0..NOTES {
                add_note(&client, test, &format!("{test} #{i}")).await.unwrap();
            }
            assert_eq!(authors(&client).await.unwrap(), vec![(test.to_string(), NOTES)]);
        }
    )*};
}

macro_rules! with_url {
    ($($name:ident)*) => {$(
        #[pgpipe_testkit::test(migrations = "migrations")]
        async fn $name(url: String) -> Result<(), pgpipe::Error> {
            let pool = Pool::connect(&url).await?;
            writes_only_its_own(&pool, stringify!($name)).await
        }
    )*};
}

macro_rules! with_config {
    ($($name:ident)*) => {$(
        #[pgpipe_testkit::test(migrations = "migrations")]
        async fn $name(config: Config) -> Result<(), pgpipe::Error> {
            let pool = Pool::connect_with_config(config, PoolConfig::new().max_size(2)).await?;
            writes_only_its_own(&pool, stringify!($name)).await
        }
    )*};
}

with_pool! {
    w01 w02 w03 w04 w05 w06 w07 w08 w09 w10
    w11 w12 w13 w14 w15 w16 w17 w18 w19 w20
    w21 w22 w23 w24 w25 w26 w27 w28 w29 w30
    w31 w32 w33 w34 w35 w36 w37 w38 w39 w40
}
with_client! { c41 c42 c43 c44 c45 c46 }
with_url! { u47 u48 }
with_config! { g49 g50 }
