//! `Provider`: anything that hands out a connection.

use std::future::Future;
use std::ops::Deref;
use std::sync::Arc;

use super::guard::PooledClient;
use super::pool::Pool;
use crate::{Client, Error};

/// Something that gives you a connection: a [`Client`] gives itself, a
/// [`Pool`] checks one out. Write application code against
/// `impl Provider` and let the caller decide between a dedicated
/// connection, a pool, or a test double.
///
/// ```no_run
/// use pgpipe::{Error, Provider};
///
/// async fn user_count(db: &impl Provider) -> Result<i64, Error> {
///     let conn = db.connection().await?;
///     let row = conn.query_one("SELECT count(*) FROM users", ()).await?;
///     Ok(row.get(0))
/// }
///
/// # async fn f() -> Result<(), Error> {
/// let client = pgpipe::connect("postgres://app@localhost/app").await?;
/// let pool = pgpipe::Pool::connect("postgres://app@localhost/app").await?;
/// let a = user_count(&client).await?;
/// let b = user_count(&pool).await?;
/// # Ok(()) }
/// ```
///
/// The connection borrows the provider (`Conn<'a>`), which lets a
/// `Client` lend itself without a clone; a pool's guard borrows nothing.
pub trait Provider: Send + Sync {
    /// The connection handed out: dereferences to a [`Client`]; dropping
    /// it gives it back (for a pool).
    type Conn<'a>: Deref<Target = Client> + Send + Sync
    where
        Self: 'a;

    /// Gets a connection.
    ///
    /// # Errors
    ///
    /// Whatever getting one can fail with: a closed client or pool
    /// ([`Closed`](crate::ErrorKind::Closed)), an exhausted pool
    /// ([`Timeout`](crate::ErrorKind::Timeout)), a failed connect.
    fn connection(&self) -> impl Future<Output = Result<Self::Conn<'_>, Error>> + Send;
}

impl Provider for Client {
    type Conn<'a> = &'a Client;

    /// Lends this client, or fails if its connection is closed.
    fn connection(&self) -> impl Future<Output = Result<&Client, Error>> + Send {
        std::future::ready(if self.is_closed() {
            Err(Error::closed())
        } else {
            Ok(self)
        })
    }
}

impl Provider for Pool {
    type Conn<'a> = PooledClient;

    /// Checks out a connection (see [`Pool::get`]).
    fn connection(&self) -> impl Future<Output = Result<PooledClient, Error>> + Send {
        self.get()
    }
}

impl<P: Provider + ?Sized> Provider for &P {
    type Conn<'a>
        = P::Conn<'a>
    where
        Self: 'a;

    fn connection(&self) -> impl Future<Output = Result<Self::Conn<'_>, Error>> + Send {
        (**self).connection()
    }
}

impl<P: Provider + ?Sized> Provider for Arc<P> {
    type Conn<'a>
        = P::Conn<'a>
    where
        Self: 'a;

    fn connection(&self) -> impl Future<Output = Result<Self::Conn<'_>, Error>> + Send {
        (**self).connection()
    }
}
