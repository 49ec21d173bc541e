use pgpipe::PgEnum;

#[derive(PgEnum)]
#[pg(name = "shape")]
enum Shape {
    Circle,
    Square(f64),
}

fn main() {}
