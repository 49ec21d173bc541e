//! The notes that say what a row of the newer workloads measured.

use crate::catalog::{DriverKind, Variant};
use crate::shape::{OzoCase, Shape, TeCase};
use crate::variants::TE_TASKS;

/// What `driver` does in `variant`, for the ozo, techempower, stream and
/// replay rows (`None` for the others).
pub fn shape_note(driver: DriverKind, variant: &Variant) -> Option<String> {
    use DriverKind as D;
    let n = variant.connections;
    Some(match (variant.shape, driver) {
        (Shape::Ozo(OzoCase::Basic), D::Pgpipe) => {
            "connect + query(\"SELECT 1\") + close per request".into()
        }
        (Shape::Ozo(OzoCase::Basic), _) => {
            "connect + query(\"SELECT 1\") (prepare + execute) + drop per request".into()
        }
        (Shape::Ozo(OzoCase::Reuse), D::Pgpipe) => {
            "one Client, query(\"SELECT 1\") (statement cache)".into()
        }
        (Shape::Ozo(OzoCase::Reuse), _) => "one client, prepared statement".into(),
        (Shape::Ozo(case), D::Pgpipe) => format!(
            "Pool max_size {}, shared lane {n}, {n} task(s): pool.query(..){}",
            n + 1,
            parsed(case)
        ),
        (Shape::Ozo(case), _) => format!(
            "pool max_size {}, {n} task(s): get() + prepare_cached + query{}",
            n + 1,
            parsed(case)
        ),
        (Shape::Te(TeCase::Fortunes), D::Raw) => format!(
            "{TE_TASKS} operations in flight on one connection; pre-encoded Bind/Execute/Sync, 12 rows counted"
        ),
        (Shape::Te(_), D::Raw) => format!(
            "{TE_TASKS} operations in flight on one connection; 20 pre-encoded Bind/Execute/Sync each, ids checked"
        ),
        (Shape::Te(case), D::Sqlx) => format!(
            "{TE_TASKS} tasks take turns on one connection; {} one statement at a time",
            te(case)
        ),
        (Shape::Te(case), _) => {
            format!("{TE_TASKS} tasks on one connection; {} pipelined", te(case))
        }
        (Shape::Stream { rows }, _) => {
            format!("{rows} rows in a child process; ops/s are rows/s; connect included")
        }
        (Shape::Replay, _) => "answered by the in-tool replay server (captured response)".into(),
        _ => return None,
    })
}

fn parsed(case: OzoCase) -> &'static str {
    match case {
        OzoCase::Parsed => ", rows into Vec<(i32,)>",
        OzoCase::ComplexParsed => ", rows into Vec<PgType> (12 typed columns)",
        _ => ", rows counted",
    }
}

fn te(case: TeCase) -> &'static str {
    match case {
        TeCase::Fortunes => "12 rows into structs + 1, sorted;",
        TeCase::Queries => "20 point selects per op,",
        TeCase::Updates => "20 selects then 20 updates per op,",
    }
}
