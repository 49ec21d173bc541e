//! Named queries against a real server: the derive's generated methods,
//! and `check_queries` finding every kind of drift in one report.

mod common;

use pgpipe::named::{check_queries, Query as _};
use pgpipe::{FromRow, Query};

const SCHEMA: &str = "
    CREATE SCHEMA app;
    CREATE TABLE app.users (id int8 PRIMARY KEY, name text NOT NULL, nick text, age int4 NOT NULL);
    CREATE TABLE app.logins (uid int8 NOT NULL, at timestamptz NOT NULL DEFAULT now());
";

#[derive(FromRow, Debug, PartialEq)]
struct User {
    id: i64,
    name: String,
    nick: Option<String>,
}

#[derive(FromRow, Debug)]
struct Name {
    #[allow(dead_code)]
    name: String,
}

#[derive(FromRow, Debug)]
struct Count {
    n: i64,
}

#[derive(FromRow, Debug)]
struct Age {
    #[allow(dead_code)]
    age: i16, // the column is int4
}

#[derive(FromRow, Debug)]
struct Id {
    #[allow(dead_code)]
    id: i64,
}

#[derive(FromRow, Debug)]
struct Nick {
    #[allow(dead_code)]
    nick: String, // the column is nullable
}

#[derive(Query)]
#[query(file = "tests/sql/check.sql", name = "user_by_id", row = User)]
struct UserById {
    id: i64,
}

#[derive(Query)]
#[query(file = "tests/sql/check.sql", name = "user_name", row = Name)]
struct UserName {
    id: i64,
}

#[derive(Query)]
#[query(file = "tests/sql/check.sql", name = "count_logins", row = Count, assume_not_null = "n")]
struct CountLogins {
    uid: i64,
}

#[derive(Query)]
#[query(file = "tests/sql/check.sql", name = "user_age", row = Age)]
struct UserAge {
    id: i64,
}

#[derive(Query)]
#[query(file = "tests/sql/check.sql", name = "users_by_age", row = Id)]
struct UsersByAge {
    age: String, // the column is int4
}

#[derive(Query)]
#[query(file = "tests/sql/check.sql", name = "nick_plain", row = Nick)]
struct NickPlain {
    id: i64,
}

#[derive(Query)]
#[query(file = "tests/sql/check.sql", name = "add_user")]
struct AddUser<'a> {
    id: i64,
    name: &'a str,
    nick: Option<&'a str>,
    age: i32,
}

#[tokio::test]
async fn generated_methods_run_on_client_and_pool() {
    common::bounded(async {
        let db = common::database("named_run");
        let client = common::connect(&db).await;
        client.batch_execute(SCHEMA).await.unwrap();
        let n = AddUser {
            id: 1,
            name: "ann",
            nick: None,
            age: 30,
        }
        .execute(&client)
        .await
        .unwrap();
        assert_eq!(n, 1);
        AddUser {
            id: 2,
            name: "bob",
            nick: Some("b"),
            age: 40,
        }
        .execute(&client)
        .await
        .unwrap();

        let user = UserById { id: 2 }.fetch_one(&client).await.unwrap();
        assert_eq!(
            user,
            User {
                id: 2,
                name: "bob".into(),
                nick: Some("b".into())
            }
        );
        assert!(UserById { id: 9 }
            .fetch_opt(&client)
            .await
            .unwrap()
            .is_none());

        let pool = pgpipe::Pool::connect(&db.url(pgpipe_testkit::AuthRole::Trust))
            .await
            .unwrap();
        let all = UserById { id: 1 }.fetch_all(&pool).await.unwrap();
        assert_eq!(all.len(), 1);
        assert_eq!(CountLogins { uid: 1 }.fetch_one(&pool).await.unwrap().n, 0);

        // A failure names the query and where it is defined.
        let e = UserById { id: 3 }.fetch_one(&client).await.unwrap_err();
        assert!(
            e.to_string().contains("user_by_id (tests/sql/check.sql:3)"),
            "{e}"
        );
        assert_eq!(
            UserById::INFO.sql,
            "SELECT id, name, nick FROM app.users WHERE id = $1"
        );
    })
    .await
}

#[tokio::test]
async fn startup_check_reports_every_mismatch_at_once() {
    common::bounded(async {
        let db = common::database("named_check");
        let client = common::connect(&db).await;
        client.batch_execute(SCHEMA).await.unwrap();

        // The correct set passes, without warnings.
        let good = [
            UserById::INFO,
            UserName::INFO,
            CountLogins::INFO,
            AddUser::INFO,
        ];
        let report = check_queries(&client, &good).await.unwrap();
        assert!(report.is_ok(), "{report}");
        assert!(report.warnings.is_empty(), "{report}");
        assert_eq!(report.checked, 4);

        // The database drifts: a column renamed, a table dropped.
        client
            .batch_execute(
                "ALTER TABLE app.users RENAME COLUMN name TO full_name; DROP TABLE app.logins",
            )
            .await
            .unwrap();
        let all = [
            UserById::INFO,
            UserName::INFO,
            CountLogins::INFO,
            UserAge::INFO,
            UsersByAge::INFO,
            NickPlain::INFO,
        ];
        let report = check_queries(&client, &all).await.unwrap();
        let errors: Vec<String> = report.errors.iter().map(ToString::to_string).collect();
        let find = |query: &str, line: u32| {
            let at = format!("tests/sql/check.sql:{line}: query {query}:");
            errors
                .iter()
                .find(|e| e.starts_with(&at))
                .unwrap_or_else(|| panic!("no error for {query} at line {line} in {errors:#?}"))
                .clone()
        };
        // Renamed column.
        assert!(find("user_name", 6).contains("column \"name\" does not exist"));
        assert!(find("user_by_id", 3).contains("42703"));
        // Dropped table.
        assert!(find("count_logins", 9).contains("42P01"));
        // int4 column into i16.
        let age = find("user_age", 12);
        assert!(
            age.contains("Age") && age.contains("i16") && age.contains("int4"),
            "{age}"
        );
        // A parameter of the wrong type.
        let param = find("users_by_age", 15);
        assert!(
            param.contains(":age") && param.contains("String") && param.contains("int4"),
            "{param}"
        );
        assert_eq!(report.errors.len(), 5, "{report}");
        // A nullable column into a non-Option field is a warning.
        assert_eq!(report.warnings.len(), 1, "{report}");
        let w = report.warnings[0].to_string();
        assert!(
            w.starts_with("tests/sql/check.sql:18: query nick_plain:"),
            "{w}"
        );
        assert!(w.contains("\"nick\"") && w.contains("Nick.nick"), "{w}");
        // And the whole report is one startup error.
        let e = report.clone().into_result().unwrap_err();
        assert!(e.to_string().contains("5 error(s), 1 warning(s)"), "{e}");
        // The connection is still fine after all that.
        assert_eq!(
            client
                .query_one("SELECT 1::int4", ())
                .await
                .unwrap()
                .get::<i32, _>(0),
            1
        );
    })
    .await
}

#[tokio::test]
async fn files_check_without_rust_types() {
    common::bounded(async {
        let db = common::database("named_files");
        let client = common::connect(&db).await;
        client.batch_execute(SCHEMA).await.unwrap();
        let text =
            std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/sql/check.sql"))
                .unwrap();
        let file = pgpipe::named::parse(&text).unwrap();
        let files = vec![("check.sql".to_owned(), file)];
        let report = pgpipe::named::check_files(&client, &files).await.unwrap();
        assert!(report.is_ok(), "{report}");
        assert_eq!(report.checked, 7);
        client.batch_execute("DROP TABLE app.logins").await.unwrap();
        let report = pgpipe::named::check_files(&client, &files).await.unwrap();
        assert_eq!(report.errors.len(), 1, "{report}");
        assert!(report.errors[0]
            .to_string()
            .starts_with("check.sql:9: query count_logins:"));
    })
    .await
}
