//! The `#[pgpipe_testkit::test]` attribute. Use it through
//! `pgpipe-testkit`, which documents it and holds everything it runs
//! (`pgpipe_testkit::run_test`); the generated code refers to
//! `::pgpipe_testkit` and `::pgpipe`, both dependencies of the crate
//! whose tests use it.

#![forbid(unsafe_code)]
#![warn(missing_debug_implementations)]
#![warn(unreachable_pub)]

use proc_macro::TokenStream;

mod args;
mod expand;

/// A test with a fresh database: see `pgpipe_testkit::test` for the
/// documentation.
#[proc_macro_attribute]
pub fn test(attr: TokenStream, item: TokenStream) -> TokenStream {
    let args = match args::parse(attr.into()) {
        Ok(args) => args,
        Err(e) => return e.into_compile_error().into(),
    };
    let function = syn::parse_macro_input!(item as syn::ItemFn);
    expand::expand(&args, function)
        .unwrap_or_else(syn::Error::into_compile_error)
        .into()
}
