// A transaction has its own life cycle, nothing connection-wide: closing
// the connection or starting an unrelated transaction from it must not
// compile.
async fn misuse(mut client: pgpipe::Client) -> Result<(), pgpipe::Error> {
    let tx = client.transaction().await?;
    tx.close();
    let _ = tx.build_transaction();
    tx.commit().await
}

fn main() {
    let _ = misuse;
}
