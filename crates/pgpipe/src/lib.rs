//! pgpipe client.
