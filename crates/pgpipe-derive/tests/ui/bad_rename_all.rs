use pgpipe::PgEnum;

#[derive(PgEnum)]
#[pg(name = "mood", rename_all = "snakecase")]
enum Mood {
    Sad,
    VeryHappy,
}

fn main() {}
