use pgpipe::Composite;

#[derive(Composite)]
struct Attach {
    filename: String,
    size: i64,
}

fn main() {}
