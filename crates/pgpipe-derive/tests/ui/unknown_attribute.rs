use pgpipe::FromRow;

#[derive(FromRow)]
struct User {
    id: i64,
    #[pg(renamed = "email_address")]
    email: String,
}

fn main() {}
