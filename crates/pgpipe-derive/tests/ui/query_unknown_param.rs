#[derive(pgpipe::FromRow)]
struct Message {
    mid: i64,
    subject: String,
}

#[derive(pgpipe::Query)]
#[query(file = "crates/pgpipe-derive/tests/ui/queries.sql", name = "get_messages", row = Message)]
struct GetMessages {
    user_id: i64,
    mids: Vec<i64>,
}

fn main() {}
