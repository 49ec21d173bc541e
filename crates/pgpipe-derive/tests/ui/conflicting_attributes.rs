use pgpipe::FromRow;

#[derive(FromRow)]
struct Age {
    #[pg(try_from = "i32", with = "read_age")]
    age: u8,
}

fn main() {}
