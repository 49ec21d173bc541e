//! The tables the service reads, created idempotently (`pgpipe-service
//! --init`, the tests and `pgpipe-bench http` call [`ensure`]): `kv`,
//! TechEmpower's `world` and `fortune` (the same definitions as the
//! bench's fixtures) and the mail schema of the ozo example, seeded with
//! [`MAIL_USERS`] users' messages.

use crate::techempower::WORLD_ROWS;

/// Users with seeded inboxes: uids 1..=MAIL_USERS.
pub const MAIL_USERS: i64 = 1_000;
/// Inbox messages per seeded user.
pub const MAIL_PER_USER: i64 = 10;

/// TechEmpower's 12 fortunes (ids 1..=12, in order).
pub const FORTUNES: [&str; 12] = [
    "fortune: No such file or directory",
    "A computer scientist is someone who fixes things that aren't broken.",
    "After enough decimal places, nobody gives a damn.",
    "A bad random number generator: 1, 1, 1, 1, 1, 4.33e+67, 1, 1, 1",
    "A computer program does what you tell it to do, not what you want it to do.",
    "Emacs is a nice operating system, but I prefer UNIX. \u{2014} Tom Christaensen",
    "Any program that runs right is obsolete.",
    "A list is only as strong as its weakest link. \u{2014} Donald Knuth",
    "Feature: A bug with seniority.",
    "Computers make very fast, very accurate mistakes.",
    "<script>alert(\"This should not be displayed in a browser alert box.\");</script>",
    "\u{30d5}\u{30ec}\u{30fc}\u{30e0}\u{30ef}\u{30fc}\u{30af}\u{306e}\u{30d9}\u{30f3}\u{30c1}\u{30de}\u{30fc}\u{30af}",
];

const CREATE: &str = "
    CREATE TABLE IF NOT EXISTS kv (k text PRIMARY KEY, v bytea NOT NULL);
    CREATE TABLE IF NOT EXISTS world (id int4 PRIMARY KEY, randomnumber int4 NOT NULL);
    CREATE TABLE IF NOT EXISTS fortune (id int4 PRIMARY KEY, message text NOT NULL);
    CREATE SCHEMA IF NOT EXISTS mail;
    DO $$ BEGIN
        CREATE TYPE mail.attach AS (filename text, type text, size bigint);
    EXCEPTION WHEN duplicate_object THEN NULL;
    END $$;
    CREATE TABLE IF NOT EXISTS mail.message (
        id bigint PRIMARY KEY,
        owner bigint NOT NULL,
        folder text NOT NULL,
        subject text NOT NULL,
        attachments mail.attach[] NOT NULL
    );
    CREATE INDEX IF NOT EXISTS message_owner_folder ON mail.message (owner, folder, id);
";

fn fills() -> Vec<(&'static str, i64, String)> {
    let fortunes: Vec<String> = FORTUNES
        .iter()
        .enumerate()
        .map(|(i, m)| format!("({}, '{}')", i + 1, m.replace('\'', "''")))
        .collect();
    vec![
        (
            "world",
            WORLD_ROWS as i64,
            format!(
                "INSERT INTO world SELECT g, 1 + floor(random() * {WORLD_ROWS})::int4 \
                 FROM generate_series(1, {WORLD_ROWS}) g"
            ),
        ),
        (
            "fortune",
            FORTUNES.len() as i64,
            format!("INSERT INTO fortune VALUES {}", fortunes.join(", ")),
        ),
        (
            "mail.message",
            MAIL_USERS * MAIL_PER_USER,
            // Message g belongs to user (g - 1) / MAIL_PER_USER + 1 and has
            // g % 4 attachments.
            format!(
                "INSERT INTO mail.message \
                 SELECT g, (g - 1) / {MAIL_PER_USER} + 1, 'inbox', 'message ' || g, \
                        ARRAY(SELECT ROW('file-' || g || '-' || a || '.pdf', \
                                         'application/pdf', g * 100 + a)::mail.attach \
                              FROM generate_series(1, g % 4) a ORDER BY a) \
                 FROM generate_series(1, {}) g",
                MAIL_USERS * MAIL_PER_USER
            ),
        ),
    ]
}

/// The advisory lock key [`ensure`] holds while it creates and fills.
const SCHEMA_LOCK: i64 = 0x7067_7069_7065_5f73; // "pgpipe_s"

/// Creates what is missing and refills any table whose row count is wrong.
/// Running it twice changes nothing, also at once: two services starting
/// together on a fresh database take turns (a session advisory lock, freed
/// when the connection closes), where `CREATE ... IF NOT EXISTS` alone lets
/// both create a table and one fail on the catalog's unique index.
pub async fn ensure(url: &str) -> Result<(), pgpipe::Error> {
    let client = pgpipe::connect(url).await?;
    client
        .execute("SELECT pg_advisory_lock($1)", (SCHEMA_LOCK,))
        .await?;
    client.batch_execute(CREATE).await?;
    for (table, rows, fill) in fills() {
        let count: i64 = client
            .query_one(format!("SELECT count(*) FROM {table}").as_str(), ())
            .await?
            .try_get(0)?;
        if count != rows {
            client
                .batch_execute(&format!(
                    "BEGIN; TRUNCATE {table}; {fill}; COMMIT; ANALYZE {table}"
                ))
                .await?;
        }
    }
    client.close();
    Ok(())
}
