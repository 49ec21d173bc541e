//! The query builder against a real server: values are always parameters,
//! identifiers always quoted, and the statement is exactly what was meant.

mod common;

use pgpipe::{ErrorKind, Ident, QueryBuilder, MAX_PARAMS};

const HOSTILE: &[&str] = &[
    "'",
    "''",
    "\"",
    "$1",
    "$$",
    "-- comment",
    "/* open",
    "x'; DROP TABLE items; --",
    "\\'; SELECT 1; --",
    ":param",
    "é\u{202e}",
];

#[tokio::test]
async fn a_ten_thousand_element_in_list_is_one_array_parameter() {
    common::bounded(async {
        let db = common::database("builder_in");
        let client = common::connect(&db).await;
        client
            .batch_execute(
                "CREATE TABLE items AS SELECT g::int8 AS id FROM generate_series(1, 20000) g",
            )
            .await
            .unwrap();
        let ids: Vec<i64> = (1..=20_000).step_by(2).collect();
        assert_eq!(ids.len(), 10_000);
        let mut q = QueryBuilder::new("SELECT id FROM items WHERE id");
        q.push_any(ids.clone()).push(" ORDER BY id");
        assert_eq!(q.param_count(), 1);
        let built = q.build().unwrap();
        assert_eq!(
            built.sql(),
            "SELECT id FROM items WHERE id = ANY($1) ORDER BY id"
        );
        let got: Vec<(i64,)> = built.query_as(&client).await.unwrap();
        assert_eq!(got.into_iter().map(|r| r.0).collect::<Vec<_>>(), ids);
    })
    .await
}

#[tokio::test]
async fn hostile_values_and_identifiers_never_change_the_statement() {
    common::bounded(async {
        let db = common::database("builder_hostile");
        let client = common::connect(&db).await;
        client
            .batch_execute("CREATE TABLE items (id int8 PRIMARY KEY, s text NOT NULL)")
            .await
            .unwrap();

        // Values: a multi-row insert of every hostile string.
        let rows: Vec<(i64, &str)> = HOSTILE
            .iter()
            .enumerate()
            .map(|(i, s)| (i as i64, *s))
            .collect();
        let mut q = QueryBuilder::new("INSERT INTO items (id, s) ");
        q.push_values(&rows, |mut row, (id, s)| {
            row.push_bind(*id).push_bind(*s);
        });
        let built = q.build().unwrap();
        let placeholders: Vec<String> = (0..HOSTILE.len())
            .map(|i| format!("(${}, ${})", 2 * i + 1, 2 * i + 2))
            .collect();
        let expected = format!(
            "INSERT INTO items (id, s) VALUES {}",
            placeholders.join(", ")
        );
        assert_eq!(built.sql(), expected);
        assert_eq!(built.execute(&client).await.unwrap(), HOSTILE.len() as u64);

        // Each one reads back as itself, by equality and inside an IN-list.
        for (i, s) in HOSTILE.iter().enumerate() {
            let mut q = QueryBuilder::new("SELECT id FROM items WHERE s = ");
            q.push_bind(*s);
            let got: Vec<(i64,)> = q.build().unwrap().query_as(&client).await.unwrap();
            assert_eq!(got, [(i as i64,)], "value {s:?}");
        }
        let mut q = QueryBuilder::new("SELECT count(*) FROM items WHERE s");
        q.push_any(
            HOSTILE
                .iter()
                .map(|s| s.to_string())
                .collect::<Vec<String>>(),
        );
        let (n,): (i64,) = client
            .query_one_as(
                q.build().unwrap().sql(),
                (HOSTILE.iter().map(|s| s.to_string()).collect::<Vec<_>>(),),
            )
            .await
            .unwrap();
        assert_eq!(n, HOSTILE.len() as i64);

        // A NUL byte is no text value PostgreSQL accepts: the server refuses
        // the value, and nothing else happens.
        let mut q = QueryBuilder::new("INSERT INTO items (id, s) VALUES (100, ");
        q.push_bind("a\0b; DROP TABLE items").push(")");
        let e = q.build().unwrap().execute(&client).await.unwrap_err();
        assert!(e.is_db(), "{e}");

        // Identifiers: a table and a column with hostile names.
        for (k, name) in HOSTILE.iter().enumerate() {
            let table = Ident::new(format!("t{k} {name}"));
            let column = Ident::new(*name);
            let mut q = QueryBuilder::new("CREATE TABLE ");
            q.push_ident(&table)
                .push(" (")
                .push_ident(&column)
                .push(" text)");
            q.build().unwrap().execute(&client).await.unwrap();
            let mut q = QueryBuilder::new("INSERT INTO ");
            q.push_ident(&table)
                .push(" (")
                .push_ident(&column)
                .push(") VALUES (");
            q.push_bind(*name).push(")");
            q.build().unwrap().execute(&client).await.unwrap();
            let mut q = QueryBuilder::new("SELECT ");
            q.push_ident(&column)
                .push(" FROM ")
                .push_ident(&Ident::qualified([
                    "public".to_string(),
                    format!("t{k} {name}"),
                ]));
            let got: Vec<(String,)> = q.build().unwrap().query_as(&client).await.unwrap();
            assert_eq!(got, [(name.to_string(),)]);
        }
        let mut q = QueryBuilder::new("SELECT 1 FROM ");
        q.push_ident(&Ident::new("items\0; DROP TABLE items"));
        let e = q.build().unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidUse);

        // The original table is intact.
        let (n,): (i64,) = client
            .query_one_as("SELECT count(*) FROM items", ())
            .await
            .unwrap();
        assert_eq!(n, HOSTILE.len() as i64);
    })
    .await
}

#[tokio::test]
async fn more_than_65535_parameters_are_refused_before_sending() {
    common::bounded(async {
        let db = common::database("builder_limit");
        let client = common::connect(&db).await;
        let mut q = QueryBuilder::new("SELECT ");
        let mut list = q.separated(" + ");
        for _ in 0..=MAX_PARAMS {
            list.push_bind(1i32);
        }
        let e = q.build().unwrap_err();
        assert_eq!(e.kind(), ErrorKind::ParameterCount);
        assert!(e.to_string().contains("65535"), "{e}");

        // The plain query path refuses too, without sending anything.
        let params = vec![1i32; MAX_PARAMS + 1];
        let sql = format!(
            "SELECT {}",
            (1..=MAX_PARAMS + 1)
                .map(|i| format!("${i}"))
                .collect::<Vec<_>>()
                .join(" + ")
        );
        let e = client.query(&sql, params.as_slice()).await.unwrap_err();
        assert_eq!(e.kind(), ErrorKind::ParameterCount, "{e}");
        assert_eq!(client.pending_requests(), 0);

        // Exactly the limit works.
        let mut q = QueryBuilder::new("SELECT array_length(ARRAY[");
        let mut list = q.separated(", ");
        for _ in 0..MAX_PARAMS {
            list.push_bind(1i32);
        }
        q.push("], 1)");
        let (n,): (i32,) = client
            .query_one_as(q.build().unwrap().sql(), vec![1i32; MAX_PARAMS].as_slice())
            .await
            .unwrap();
        assert_eq!(n as usize, MAX_PARAMS);
    })
    .await
}
