use pgpipe::FromRow;

#[derive(FromRow)]
union Bits {
    int: i32,
    float: f32,
}

fn main() {}
