//! `tsvector` against the real server: literals and `to_tsvector` output
//! decoded, sent back and compared (`IS NOT DISTINCT FROM` and as text),
//! quoting, weights, the position limits, arrays and NULL.

mod common;

use common::values::{literal, literal_round_trip, null, round_trip};
use common::{bounded, connect, database};
use pgpipe::types::{Lexeme, TsVector, Weight};

#[tokio::test]
async fn tsvectors_both_ways() {
    bounded(async {
        let db = database("tsvector");
        let client = connect(&db).await;
        let many: String = (1..=256)
            .map(|p| format!("{p}C"))
            .collect::<Vec<_>>()
            .join(",");
        let long = "x".repeat(2046);
        for (lit, text) in [
            ("''", String::new()),
            ("'a fat cat'", "'a' 'cat' 'fat'".into()),
            (
                "'a:1A fat:2B,4C cat:5D'",
                "'a':1A 'cat':5 'fat':2B,4C".into(),
            ),
            (
                r"$$'it''s' 'back\\slash' 'é—漢字'$$",
                r"'back\\slash' 'it''s' 'é—漢字'".into(),
            ),
            ("'z:16383A y:1'", "'y':1 'z':16383A".into()),
            (&format!("'w:{many}'"), format!("'w':{many}")),
            (&format!("'{long}'"), format!("'{long}'")),
        ] {
            let v: TsVector = literal_round_trip(&client, "tsvector", lit, &text, true).await;
            assert_eq!(v.to_string(), text, "{lit}");
            round_trip(&client, "tsvector", v, &text).await;
        }
        // Positions past the limit are stored as the limit by the server.
        let v = literal::<TsVector>(&client, "'a:20000'::tsvector").await;
        assert_eq!(
            v.lexemes()[0].positions,
            [(TsVector::MAX_POSITION, Weight::D)]
        );

        let v = literal::<TsVector>(
            &client,
            "to_tsvector('english', 'The quick brown foxes jumped over the lazy dogs')",
        )
        .await;
        let words: Vec<&str> = v.lexemes().iter().map(|l| l.word.as_str()).collect();
        assert_eq!(words, ["brown", "dog", "fox", "jump", "lazi", "quick"]);
        let fox = &v.lexemes()[2];
        assert_eq!(fox.positions, [(4, Weight::D)]);

        // Built in Rust in any order: the server stores what we send.
        let built = TsVector::new(vec![
            Lexeme::new("zebra").at([(3, Weight::A)]),
            Lexeme::new("apple"),
            Lexeme::new("Äpfel").at([(1, Weight::B), (2, Weight::C)]),
        ])
        .unwrap();
        let text = "'apple' 'zebra':3A 'Äpfel':1B,2C";
        assert_eq!(built.to_string(), text);
        round_trip(&client, "tsvector", built.clone(), text).await;
        let row = client
            .query_one(
                "SELECT $1::tsvector @@ 'zebra'::tsquery, $1::tsvector = $2::text::tsvector",
                (&built, text),
            )
            .await
            .unwrap();
        assert!(row.get::<bool, _>(0) && row.get::<bool, _>(1));

        let all = vec![built, TsVector::default()];
        let back = client
            .query_one("SELECT $1::tsvector[]", (&all,))
            .await
            .unwrap()
            .get::<Vec<TsVector>, _>(0);
        assert_eq!(back, all);
        null::<TsVector>(&client, "tsvector").await;
    })
    .await;
}
