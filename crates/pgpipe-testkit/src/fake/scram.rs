//! The server side of SCRAM-SHA-256 for fake-server scripts.
//!
//! Every function accepts either the bare SCRAM message or the body of the
//! frontend message carrying it (SASLInitialResponse: mechanism, length,
//! data; SASLResponse: data), so a [`Step::Respond`](crate::Step::Respond)
//! closure can pass its argument straight through. Bad input never panics:
//! it yields messages a correct client rejects.

use sha2::{Digest, Sha256};

use crate::auth::{self, attribute, b64, hmac, salted_password, server_signature, unb64};

/// Builds the server-first-message answering `client_first`:
/// `r=<client nonce><server nonce>,s=<base64 salt>,i=<iterations>`,
/// and returns it with the combined nonce.
///
/// If `client_first` cannot be parsed (no gs2 header or no `r=`), the
/// client nonce is taken as empty, so the client sees a nonce that does not
/// extend its own.
pub fn server_first(client_first: &[u8], salt: &[u8], iterations: u32) -> (Vec<u8>, String) {
    let client_nonce = bare(client_first)
        .and_then(|b| attribute(&b, 'r').map(str::to_string))
        .unwrap_or_default();
    let nonce = format!("{client_nonce}{}", auth::nonce());
    let message = format!("r={nonce},s={},i={iterations}", b64(salt));
    (message.into_bytes(), nonce)
}

/// Builds the server-final-message `v=<signature>` a real server would send
/// for `password`, given the exchange so far. With the wrong password this
/// is a signature the client must refuse.
pub fn server_final(
    password: &str,
    salt: &[u8],
    iterations: u32,
    client_first: &[u8],
    server_first: &[u8],
    client_final: &[u8],
) -> Vec<u8> {
    let salted = salted_password(password, salt, iterations);
    let auth_message = auth_message(client_first, server_first, client_final).unwrap_or_default();
    format!("v={}", server_signature(&salted, &auth_message)).into_bytes()
}

/// Checks the client's proof in `client_final` as a real server would:
/// true if the client knew `password`.
pub fn client_proof_is_valid(
    password: &str,
    salt: &[u8],
    iterations: u32,
    client_first: &[u8],
    server_first: &[u8],
    client_final: &[u8],
) -> bool {
    let Some(auth_message) = auth_message(client_first, server_first, client_final) else {
        return false;
    };
    let Some(proof) = std::str::from_utf8(client_final)
        .ok()
        .and_then(|f| attribute(f, 'p'))
        .and_then(unb64)
    else {
        return false;
    };
    let salted = salted_password(password, salt, iterations);
    let client_key = hmac(&salted, b"Client Key");
    let stored_key: [u8; 32] = Sha256::digest(client_key).into();
    let signature = hmac(&stored_key, auth_message.as_bytes());
    proof.len() == 32
        && proof
            .iter()
            .zip(signature.iter())
            .zip(client_key.iter())
            .all(|((p, s), k)| p ^ s == *k)
}

/// client-first-bare , server-first , client-final-without-proof.
fn auth_message(client_first: &[u8], server_first: &[u8], client_final: &[u8]) -> Option<String> {
    let bare = bare(client_first)?;
    let server_first = std::str::from_utf8(server_first).ok()?;
    let client_final = std::str::from_utf8(client_final).ok()?;
    let without_proof = client_final
        .rsplit_once(",p=")
        .map_or(client_final, |(w, _)| w);
    Some(format!("{bare},{server_first},{without_proof}"))
}

/// client-first-message-bare: the message after its gs2 header
/// (`n,,` / `y,,` / `p=<cb>,` plus optional authzid), from either the
/// message itself or a SASLInitialResponse body.
fn bare(input: &[u8]) -> Option<String> {
    let message = sasl_initial_data(input).unwrap_or(input);
    let text = std::str::from_utf8(message).ok()?;
    let mut parts = text.splitn(3, ',');
    let flag = parts.next()?;
    if !(flag == "n" || flag == "y" || flag.starts_with("p=")) {
        return None;
    }
    parts.next()?; // authzid, usually empty
    parts.next().map(str::to_string)
}

/// The data of a SASLInitialResponse body (`mechanism\0`, i32 length, data);
/// `None` if `input` is not shaped like one.
fn sasl_initial_data(input: &[u8]) -> Option<&[u8]> {
    let nul = input.iter().position(|&b| b == 0)?;
    let mechanism = &input[..nul];
    if mechanism.is_empty() || !mechanism.iter().all(|b| b.is_ascii_graphic()) {
        return None;
    }
    let len = input.get(nul + 1..nul + 5)?;
    let len = i32::from_be_bytes([len[0], len[1], len[2], len[3]]);
    let data = &input[nul + 5..];
    (usize::try_from(len).ok() == Some(data.len())).then_some(data)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pgpipe_proto::auth::scram::{ChannelBinding, ScramSha256};

    fn initial_response(data: &str) -> Vec<u8> {
        let mut body = b"SCRAM-SHA-256\0".to_vec();
        body.extend_from_slice(&(data.len() as i32).to_be_bytes());
        body.extend_from_slice(data.as_bytes());
        body
    }

    #[test]
    fn server_first_extends_the_client_nonce() {
        let (msg, nonce) = server_first(b"n,,n=,r=abc", b"salt", 4096);
        let msg = String::from_utf8(msg).unwrap();
        assert!(nonce.starts_with("abc") && nonce.len() > 3, "{nonce}");
        assert_eq!(msg, format!("r={nonce},s=c2FsdA==,i=4096"));
        // Same from a SASLInitialResponse body.
        let (msg2, nonce2) = server_first(&initial_response("n,,n=,r=abc"), b"salt", 1);
        assert!(nonce2.starts_with("abc"));
        assert!(String::from_utf8(msg2).unwrap().ends_with(",i=1"));
    }

    #[test]
    fn garbage_gives_an_unextended_nonce() {
        for input in [
            &b""[..],
            b"\xff\xfe",
            b"x,,r=abc",
            b"n,,n=user",
            b"SCRAM\0\0\0\0\x09",
        ] {
            let (_, nonce) = server_first(input, b"s", 1);
            assert!(!nonce.starts_with("abc"));
        }
    }

    /// Runs pgpipe-proto's client up to client-final against these helpers;
    /// returns the client, client-first, server-first and client-final.
    fn exchange(salt: &[u8]) -> (ScramSha256, Vec<u8>, Vec<u8>, Vec<u8>) {
        let mut client = ScramSha256::new(b"pencil", ChannelBinding::Unsupported);
        let first = client.message().to_vec();
        let body = initial_response(std::str::from_utf8(&first).unwrap());
        let (sfirst, _) = server_first(&body, salt, 4096);
        client.update(&sfirst).unwrap();
        let cfinal = client.message().to_vec();
        (client, first, sfirst, cfinal)
    }

    #[test]
    fn full_exchange_against_pgpipe_proto() {
        let salt = b"0123456789abcdef";
        let (mut client, first, sfirst, cfinal) = exchange(salt);
        assert!(client_proof_is_valid(
            "pencil", salt, 4096, &first, &sfirst, &cfinal
        ));
        assert!(!client_proof_is_valid(
            "wrong", salt, 4096, &first, &sfirst, &cfinal
        ));
        let sfinal = server_final("pencil", salt, 4096, &first, &sfirst, &cfinal);
        client.finish(&sfinal).unwrap();

        // A server that does not know the password is refused.
        let (mut client, first, sfirst, cfinal) = exchange(salt);
        let bad = server_final("wrong", salt, 4096, &first, &sfirst, &cfinal);
        assert!(client.finish(&bad).is_err());
    }

    #[test]
    fn rfc7677_vector() {
        // RFC 7677 section 3, user "user", password "pencil".
        let client_first = b"n,,n=user,r=rOprNGfwEbeRWgbNEkqO";
        let server_first = b"r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096";
        let client_final = b"c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=";
        let salt = unb64("W22ZaJ0SNY7soEsUEjb6gQ==").unwrap();
        assert!(client_proof_is_valid(
            "pencil",
            &salt,
            4096,
            client_first,
            server_first,
            client_final
        ));
        assert!(!client_proof_is_valid(
            "pencil2",
            &salt,
            4096,
            client_first,
            server_first,
            client_final
        ));
        assert_eq!(
            server_final(
                "pencil",
                &salt,
                4096,
                client_first,
                server_first,
                client_final
            ),
            b"v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4="
        );
    }
}
