//! `pg_lsn`, `tid`, `xid`, `xid8`, `cid` and `pg_snapshot`/`txid_snapshot`
//! against the real server: decoded from literals and from the server's
//! own functions, sent back and compared, extremes included; arrays; NULL;
//! and values the server would refuse, refused before sending.

mod common;

use common::values::{literal, literal_round_trip, null, round_trip};
use common::{bounded, connect, database};
use pgpipe::types::{Cid, PgLsn, PgSnapshot, Tid, Xid, Xid8};

#[tokio::test]
async fn pg_lsn_both_ways_and_server_arithmetic_agrees() {
    bounded(async {
        let db = database("sys_lsn");
        let client = connect(&db).await;
        for text in ["0/0", "0/1", "1/0", "16/B374D848", "FFFFFFFF/FFFFFFFF", "FFFFFFFF/0"] {
            let v: PgLsn =
                literal_round_trip(&client, "pg_lsn", &format!("'{text}'"), text, true).await;
            assert_eq!(v.to_string(), text);
            assert_eq!(text.parse::<PgLsn>().unwrap(), v);
            round_trip(&client, "pg_lsn", v, text).await;
        }
        // Lower-case and leading zeros read as the server reads them.
        let v = literal::<PgLsn>(&client, "'0000000a/0000000b'::pg_lsn").await;
        assert_eq!(v, "A/B".parse().unwrap());

        // The server's arithmetic and ordering are ours.
        let a: PgLsn = "1/FFFFFF00".parse().unwrap();
        let b = a.checked_add(0x200).unwrap();
        let row = client
            .query_one(
                "SELECT ($2::pg_lsn - $1::pg_lsn)::int8, $1::pg_lsn < $2::pg_lsn, current_setting('server_version_num')::int",
                (a, b),
            )
            .await
            .unwrap();
        assert_eq!(i128::from(row.get::<i64, _>(0)), b.diff(a));
        assert!(row.get::<bool, _>(1));
        // pg_lsn +/- numeric exist from PostgreSQL 14 on.
        if row.get::<i32, _>(2) >= 140_000 {
            let row = client
                .query_one("SELECT $1::pg_lsn + 512, $2::pg_lsn - 512::numeric", (a, b))
                .await
                .unwrap();
            assert_eq!(row.get::<PgLsn, _>(0), b);
            assert_eq!(row.get::<PgLsn, _>(1), a);
            // What the server calls out of range is None here.
            let err = client
                .query_one("SELECT 'FFFFFFFF/FFFFFFFF'::pg_lsn + 1", ())
                .await
                .unwrap_err();
            assert!(err.to_string().contains("out of range"), "{err}");
        }
        assert_eq!(PgLsn::MAX.checked_add(1), None);

        // The server's own LSN reads as one.
        let now = literal::<PgLsn>(&client, "pg_current_wal_lsn()").await;
        assert!(!now.is_invalid());

        let all = vec![PgLsn::INVALID, now, PgLsn::MAX];
        let row = client
            .query_one("SELECT $1::pg_lsn[], $1::pg_lsn[]::text", (&all,))
            .await
            .unwrap();
        assert_eq!(row.get::<Vec<PgLsn>, _>(0), all);
        assert_eq!(row.get::<&str, _>(1), format!("{{0/0,{now},FFFFFFFF/FFFFFFFF}}"));
        null::<PgLsn>(&client, "pg_lsn").await;
    })
    .await;
}

#[tokio::test]
async fn tid_xid_xid8_cid_extremes() {
    bounded(async {
        let db = database("sys_ids");
        let client = connect(&db).await;
        for (block, offset) in [(0u32, 0u16), (0, 1), (4_294_967_295, 65_535), (7, 42)] {
            let text = format!("({block},{offset})");
            let v: Tid =
                literal_round_trip(&client, "tid", &format!("'{text}'"), &text, true).await;
            assert_eq!(v, Tid::new(block, offset));
            assert_eq!(v.to_string(), text);
        }
        for n in [0u32, 1, 3, 2_147_483_648, u32::MAX] {
            let text = n.to_string();
            let v: Xid = literal_round_trip(&client, "xid", &format!("'{n}'"), &text, true).await;
            assert_eq!(v, Xid(n));
            let v: Cid = literal_round_trip(&client, "cid", &format!("'{n}'"), &text, true).await;
            assert_eq!(v, Cid(n));
        }
        for n in [0u64, 1, 1 << 32, u64::MAX] {
            let text = n.to_string();
            let v: Xid8 = literal_round_trip(&client, "xid8", &format!("'{n}'"), &text, true).await;
            assert_eq!(v, Xid8(n));
        }
        // Real system columns and the current transaction.
        client.execute("CREATE TABLE t (v int)", ()).await.unwrap();
        client
            .execute("INSERT INTO t VALUES (1)", ())
            .await
            .unwrap();
        let row = client
            .query_one("SELECT ctid, xmin, cmin, xmin::text::xid8 FROM t", ())
            .await
            .unwrap();
        assert_eq!(row.get::<Tid, _>(0), Tid::new(0, 1));
        let xmin: Xid = row.get(1);
        assert_eq!(row.get::<Cid, _>(2), Cid(0));
        assert_eq!(row.get::<Xid8, _>(3).xid(), xmin);
        let row = client
            .query_one(
                "SELECT * FROM t WHERE ctid = $1 AND xmin = $2",
                (Tid::new(0, 1), xmin),
            )
            .await
            .unwrap();
        assert_eq!(row.get::<i32, _>(0), 1);
        let cur = literal::<Xid8>(&client, "pg_current_xact_id()").await;
        assert!(cur.0 > 0);

        let tids = vec![Tid::new(0, 1), Tid::new(u32::MAX, u16::MAX)];
        let row = client
            .query_one(
                "SELECT $1::tid[], $2::xid[], $3::xid8[], $4::cid[]",
                (
                    &tids,
                    vec![Xid(1), Xid(u32::MAX)],
                    vec![Xid8(u64::MAX)],
                    vec![Cid(0)],
                ),
            )
            .await
            .unwrap();
        assert_eq!(row.get::<Vec<Tid>, _>(0), tids);
        assert_eq!(row.get::<Vec<Xid>, _>(1), [Xid(1), Xid(u32::MAX)]);
        assert_eq!(row.get::<Vec<Xid8>, _>(2), [Xid8(u64::MAX)]);
        assert_eq!(row.get::<Vec<Cid>, _>(3), [Cid(0)]);
        null::<Tid>(&client, "tid").await;
        null::<Xid>(&client, "xid").await;
        null::<Xid8>(&client, "xid8").await;
        null::<Cid>(&client, "cid").await;

        // An xid column is not an oid, nor an xid8 an int8.
        let row = client
            .query_one("SELECT '5'::xid, '5'::xid8", ())
            .await
            .unwrap();
        assert!(row.try_get::<u32, _>(0).is_err());
        assert!(row.try_get::<i64, _>(1).is_err());
    })
    .await;
}

#[tokio::test]
async fn snapshots_both_types() {
    bounded(async {
        let db = database("sys_snapshot");
        let client = connect(&db).await;
        for (text, xmin, xmax, xip) in [
            ("1:1:", 1, 1, vec![]),
            ("10:20:10,14,19", 10, 20, vec![10, 14, 19]),
            (
                "18446744073709551614:18446744073709551615:",
                u64::MAX - 1,
                u64::MAX,
                vec![],
            ),
        ] {
            for ty in ["pg_snapshot", "txid_snapshot"] {
                let v: PgSnapshot =
                    literal_round_trip(&client, ty, &format!("'{text}'"), text, false).await;
                assert_eq!(v, PgSnapshot::new(xmin, xmax, xip.clone()).unwrap());
                assert_eq!(v.to_string(), text);
            }
            // As SQL text, a PgSnapshot declares pg_snapshot (txid_snapshot's
            // successor; it has no cast to the old type).
            let v = PgSnapshot::new(xmin, xmax, xip).unwrap();
            round_trip(&client, "pg_snapshot", v, text).await;
        }
        // The server removes duplicates in text input; we read what it keeps.
        let v = literal::<PgSnapshot>(&client, "'10:20:12,12,13'::pg_snapshot").await;
        assert_eq!(v.xip(), [12, 13]);

        let snap = literal::<PgSnapshot>(&client, "pg_current_snapshot()").await;
        let cur = literal::<Xid8>(&client, "pg_current_xact_id()").await;
        // A later transaction's snapshot; the server and we agree on what it sees.
        let row = client
            .query_one(
                "SELECT pg_visible_in_snapshot($2::xid8, $1::pg_snapshot), $1::pg_snapshot::text",
                (&snap, cur),
            )
            .await
            .unwrap();
        assert_eq!(row.get::<bool, _>(0), snap.is_visible(cur.0));
        assert_eq!(row.get::<&str, _>(1), snap.to_string());
        let old = literal::<PgSnapshot>(&client, "txid_current_snapshot()").await;
        assert!(old.xmin() >= 1);

        let all = vec![snap.clone(), PgSnapshot::new(5, 9, vec![6]).unwrap()];
        let back = client
            .query_one("SELECT $1::pg_snapshot[]", (&all,))
            .await
            .unwrap()
            .get::<Vec<PgSnapshot>, _>(0);
        assert_eq!(back, all);
        null::<PgSnapshot>(&client, "pg_snapshot").await;
    })
    .await;
}
