// The statement on `client` would wait behind the transaction that this
// same task holds: it must not compile.
async fn same_task(mut client: pgpipe::Client) -> Result<(), pgpipe::Error> {
    let tx = client.transaction().await?;
    client.query_one("SELECT 2", ()).await?;
    tx.commit().await
}

fn main() {
    let _ = same_task;
}
