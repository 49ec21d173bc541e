//! The generated test: a plain `#[test]` that hands the original async
//! function, renamed nothing and nested inside, to `pgpipe_testkit::run_test`.

use proc_macro2::TokenStream;
use quote::quote;
use syn::spanned::Spanned;
use syn::{FnArg, ItemFn, Type};

use crate::args::{fixture_path, Args};

/// What the test function receives, chosen by the argument's type name.
enum Receives {
    Pool,
    Client,
    Config,
    Url,
}

pub(crate) fn expand(args: &Args, function: ItemFn) -> syn::Result<TokenStream> {
    let sig = &function.sig;
    if sig.asyncness.is_none() {
        return Err(syn::Error::new(
            sig.fn_token.span(),
            "#[pgpipe_testkit::test] needs an `async fn`",
        ));
    }
    if !sig.generics.params.is_empty() || sig.generics.where_clause.is_some() {
        return Err(syn::Error::new(
            sig.generics.span(),
            "#[pgpipe_testkit::test] functions cannot be generic",
        ));
    }
    let receives = match sig.inputs.iter().collect::<Vec<_>>().as_slice() {
        [FnArg::Typed(arg)] => receives(&arg.ty)?,
        _ => {
            return Err(syn::Error::new(
                sig.inputs.span(),
                "#[pgpipe_testkit::test] functions take one argument: a pgpipe::Pool, \
                 pgpipe::Client, pgpipe::Config or String (the database's URL)",
            ))
        }
    };
    let name = &sig.ident;
    let attrs = &function.attrs;
    let vis = &function.vis;
    let migrations = args.migrations.as_ref().map(|dir| {
        quote! {
            .migrations(::std::path::Path::new(::core::env!("CARGO_MANIFEST_DIR")).join(#dir))
        }
    });
    let fixtures = args.fixtures.iter().map(|f| {
        let label = f.value();
        let path = syn::LitStr::new(&fixture_path(&label), f.span());
        quote! { .fixture(#label, ::core::include_str!(#path)) }
    });
    let failed = |what: &str| format!("pgpipe-testkit: cannot {what} for the test database: {{}}");
    let arg = match receives {
        Receives::Pool => {
            let msg = failed("open a pgpipe::Pool");
            quote! {
                ::pgpipe::Pool::connect(&__pgpipe_url)
                    .await
                    .unwrap_or_else(|e| ::core::panic!(#msg, e))
            }
        }
        Receives::Client => {
            let msg = failed("connect a pgpipe::Client");
            quote! {
                ::pgpipe::connect(&__pgpipe_url)
                    .await
                    .unwrap_or_else(|e| ::core::panic!(#msg, e))
            }
        }
        Receives::Config => {
            let msg = failed("parse a pgpipe::Config");
            quote! {
                __pgpipe_url
                    .parse::<::pgpipe::Config>()
                    .unwrap_or_else(|e| ::core::panic!(#msg, e))
            }
        }
        Receives::Url => quote! { __pgpipe_url },
    };
    let inner = ItemFn {
        attrs: Vec::new(),
        vis: syn::Visibility::Inherited,
        ..function.clone()
    };
    Ok(quote! {
        #[::core::prelude::v1::test]
        #(#attrs)*
        #vis fn #name() {
            #inner
            ::pgpipe_testkit::run_test(
                ::pgpipe_testkit::TestSpec::new(::core::concat!(
                    ::core::module_path!(), "::", ::core::stringify!(#name)
                ))
                #migrations
                #(#fixtures)*,
                |__pgpipe_url: ::std::string::String| async move {
                    let __pgpipe_arg = #arg;
                    #name(__pgpipe_arg).await
                },
            )
        }
    })
}

fn receives(ty: &Type) -> syn::Result<Receives> {
    let last = match ty {
        Type::Path(p) if p.qself.is_none() => p.path.segments.last(),
        _ => None,
    };
    match last.map(|s| (s.ident.to_string(), s.arguments.is_empty())) {
        Some((name, true)) if name == "Pool" => Ok(Receives::Pool),
        Some((name, true)) if name == "Client" => Ok(Receives::Client),
        Some((name, true)) if name == "Config" => Ok(Receives::Config),
        Some((name, true)) if name == "String" => Ok(Receives::Url),
        _ => Err(syn::Error::new(
            ty.span(),
            "#[pgpipe_testkit::test] passes a pgpipe::Pool, pgpipe::Client, pgpipe::Config \
             or String (the database's URL); name one of these types (by that name, not an alias)",
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use quote::quote;

    fn expand_str(attr: TokenStream, item: TokenStream) -> Result<String, String> {
        let args = crate::args::parse(attr).map_err(|e| e.to_string())?;
        let function: ItemFn = syn::parse2(item).map_err(|e| e.to_string())?;
        expand(&args, function)
            .map(|t| t.to_string())
            .map_err(|e| e.to_string())
    }

    #[test]
    fn the_argument_type_picks_the_connection() {
        for (ty, expect) in [
            (quote!(Pool), "Pool :: connect"),
            (quote!(pgpipe::Pool), "Pool :: connect"),
            (quote!(Client), ":: pgpipe :: connect"),
            (quote!(Config), "parse :: < :: pgpipe :: Config >"),
            (quote!(String), "let __pgpipe_arg = __pgpipe_url ;"),
        ] {
            let out = expand_str(quote!(), quote!(async fn t(x: #ty) {})).unwrap();
            assert!(out.contains(expect), "{ty}: {out}");
            assert!(out.contains("run_test"), "{out}");
        }
    }

    #[test]
    fn arguments_become_the_spec() {
        let out = expand_str(
            quote!(migrations = "migrations", fixtures("users")),
            quote!(
                #[ignore]
                async fn t(pool: Pool) -> Result<(), E> {
                    Ok(())
                }
            ),
        )
        .unwrap();
        assert!(out.contains(". migrations ("), "{out}");
        assert!(out.contains("\"migrations\""), "{out}");
        assert!(
            out.contains(
                ". fixture (\"users\" , :: core :: include_str ! (\"fixtures/users.sql\"))"
            ),
            "{out}"
        );
        assert!(out.contains("# [ignore]"), "{out}");
    }

    #[test]
    fn misuse_is_a_compile_error_that_says_what_to_write() {
        let cases = [
            (
                quote!(
                    fn t(pool: Pool) {}
                ),
                "needs an `async fn`",
            ),
            (
                quote!(
                    async fn t() {}
                ),
                "take one argument",
            ),
            (
                quote!(
                    async fn t(a: Pool, b: Pool) {}
                ),
                "take one argument",
            ),
            (
                quote!(
                    async fn t<T>(pool: T) {}
                ),
                "cannot be generic",
            ),
            (
                quote!(
                    async fn t(pool: &Pool) {}
                ),
                "passes a pgpipe::Pool",
            ),
            (
                quote!(
                    async fn t(pool: MyPool) {}
                ),
                "not an alias",
            ),
            (
                quote!(
                    async fn t(pool: Vec<Pool>) {}
                ),
                "passes a pgpipe::Pool",
            ),
        ];
        for (item, expect) in cases {
            let e = expand_str(quote!(), item.clone()).unwrap_err();
            assert!(e.contains(expect), "{item}: {e}");
        }
    }
}
