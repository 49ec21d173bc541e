//! The COPY and upsert methods of [`Client`]: the definitions every handle
//! shares (`copy/generic.rs`, `transaction/upsert.rs`).

use super::Client;

impl Client {
    crate::copy::delegate_copy!();

    crate::transaction::delegate_upsert!();
}
