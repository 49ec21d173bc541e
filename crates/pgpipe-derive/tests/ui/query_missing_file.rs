#[derive(pgpipe::FromRow)]
struct Message {
    mid: i64,
    subject: String,
}

#[derive(pgpipe::Query)]
#[query(file = "sql/no_such_file.sql", name = "get_messages", row = Message)]
struct GetMessages {
    uid: i64,
    mids: Vec<i64>,
}

fn main() {}
