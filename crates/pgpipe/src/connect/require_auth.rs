//! Enforcing `require_auth` and `channel_binding` during authentication:
//! each check runs when the server's request arrives, before the client
//! answers it, so a refused method never sees the password.

use crate::config::{AuthMethod, ChannelBinding, ResolvedConfig};
use crate::error::ErrorKind;
use crate::Error;

/// What the server asked for, in libpq's words.
fn requested(method: AuthMethod) -> &'static str {
    match method {
        AuthMethod::Password => "server requested a cleartext password",
        AuthMethod::Md5 => "server requested a hashed password",
        AuthMethod::Gss => "server requested GSSAPI authentication",
        AuthMethod::Sspi => "server requested SSPI authentication",
        AuthMethod::ScramSha256 => "server requested SASL authentication",
        AuthMethod::None => "server did not complete authentication",
    }
}

/// Checks a request of `method` (or, for [`AuthMethod::None`], an
/// AuthenticationOk without any exchange) against the configuration.
pub(crate) fn check(config: &ResolvedConfig, method: AuthMethod) -> Result<(), Error> {
    if !config.require_auth.allows(method) {
        return Err(Error::new(
            ErrorKind::Auth,
            format!(
                "authentication method requirement \"{}\" failed: {}",
                config.require_auth.describe(),
                requested(method)
            ),
        ));
    }
    // Only SCRAM-SHA-256-PLUS can bind the channel; it is checked when the
    // mechanism is chosen.
    if config.channel_binding == ChannelBinding::Require && method != AuthMethod::ScramSha256 {
        return Err(Error::new(
            ErrorKind::Auth,
            match method {
                AuthMethod::None => {
                    "channel binding required, but server authenticated client without channel \
                     binding (channel_binding=require)"
                }
                _ => {
                    "channel binding required, but the server asked for an authentication method \
                     that cannot bind the channel (channel_binding=require)"
                }
            },
        ));
    }
    Ok(())
}
