//! The attribute's arguments: `migrations = "dir"`, `fixtures("name", ...)`.

use proc_macro2::TokenStream;
use syn::parse::Parser;
use syn::punctuated::Punctuated;
use syn::{LitStr, Token};

/// What the attribute was given.
#[derive(Default)]
pub(crate) struct Args {
    /// Relative to the crate's manifest directory (or absolute).
    pub migrations: Option<LitStr>,
    /// As written; resolved by [`fixture_path`].
    pub fixtures: Vec<LitStr>,
}

pub(crate) fn parse(tokens: TokenStream) -> syn::Result<Args> {
    let mut args = Args::default();
    let parser = syn::meta::parser(|meta| {
        if meta.path.is_ident("migrations") {
            if args.migrations.is_some() {
                return Err(meta.error("`migrations` given twice"));
            }
            args.migrations = Some(meta.value()?.parse()?);
            Ok(())
        } else if meta.path.is_ident("fixtures") {
            let content;
            syn::parenthesized!(content in meta.input);
            let names = Punctuated::<LitStr, Token![,]>::parse_terminated(&content)?;
            args.fixtures.extend(names);
            Ok(())
        } else {
            Err(meta.error(
                "unknown argument; expected `migrations = \"dir\"` or `fixtures(\"name\", ...)`",
            ))
        }
    });
    parser.parse2(tokens)?;
    Ok(args)
}

/// `"users"` -> `fixtures/users.sql`; a name with a `/` or ending in
/// `.sql` is a path as given. Either is relative to the test's source file
/// (it goes to `include_str!`), as with `#[sqlx::test]`.
pub(crate) fn fixture_path(name: &str) -> String {
    if name.contains('/') || name.ends_with(".sql") {
        name.to_string()
    } else {
        format!("fixtures/{name}.sql")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use quote::quote;

    #[test]
    fn reads_migrations_and_fixtures() {
        let args = parse(quote!(
            migrations = "db/migrations",
            fixtures("users", "a/b.sql")
        ))
        .unwrap();
        assert_eq!(args.migrations.unwrap().value(), "db/migrations");
        let names: Vec<String> = args.fixtures.iter().map(LitStr::value).collect();
        assert_eq!(names, ["users", "a/b.sql"]);
        let none = parse(quote!()).unwrap();
        assert!(none.migrations.is_none() && none.fixtures.is_empty());
    }

    #[test]
    fn refuses_what_it_does_not_know() {
        let e = parse(quote!(migration = "x")).err().unwrap().to_string();
        assert!(e.contains("unknown argument"), "{e}");
        let e = parse(quote!(migrations = "a", migrations = "b"))
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("twice"), "{e}");
        assert!(parse(quote!(migrations = 3)).is_err());
        assert!(parse(quote!(fixtures(users))).is_err());
    }

    #[test]
    fn fixture_names_resolve_like_sqlx() {
        assert_eq!(fixture_path("users"), "fixtures/users.sql");
        assert_eq!(fixture_path("seed.sql"), "seed.sql");
        assert_eq!(fixture_path("../shared/users"), "../shared/users");
    }
}
