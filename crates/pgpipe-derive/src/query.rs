//! `#[derive(Query)]`: binds a parameter struct to a named query of a
//! `.sql` file, checked at compile time.

use std::path::{Path, PathBuf};

use proc_macro2::{Span, TokenStream};
use quote::{quote, ToTokens};
use syn::spanned::Spanned;
use syn::{DeriveInput, Fields, LitStr};

use pgpipe_queryfile::Kind;

/// The `#[query(...)]` attribute.
struct Attr {
    file: LitStr,
    name: LitStr,
    row: Option<syn::Type>,
    assume_not_null: Vec<String>,
}

fn parse_attr(input: &DeriveInput) -> syn::Result<Attr> {
    let mut file = None;
    let mut name = None;
    let mut row = None;
    let mut assume_not_null = Vec::new();
    let mut found = false;
    for attr in input.attrs.iter().filter(|a| a.path().is_ident("query")) {
        found = true;
        attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("file") {
                file = Some(meta.value()?.parse::<LitStr>()?);
            } else if meta.path.is_ident("name") {
                name = Some(meta.value()?.parse::<LitStr>()?);
            } else if meta.path.is_ident("row") {
                row = Some(meta.value()?.parse::<syn::Type>()?);
            } else if meta.path.is_ident("assume_not_null") {
                let list = meta.value()?.parse::<LitStr>()?;
                assume_not_null.extend(
                    list.value()
                        .split(',')
                        .map(str::trim)
                        .filter(|s| !s.is_empty())
                        .map(str::to_owned),
                );
            } else {
                return Err(meta.error(
                    "unknown #[query] key; expected `file = \"path.sql\"`, `name = \"query_name\"`, `row = RowType` or `assume_not_null = \"col, ...\"`",
                ));
            }
            Ok(())
        })?;
    }
    if !found {
        return Err(syn::Error::new(
            Span::call_site(),
            "#[derive(Query)] needs #[query(file = \"sql/queries.sql\", name = \"query_name\")] (and `row = RowType` for a query that returns rows)",
        ));
    }
    let file = file.ok_or_else(|| {
        syn::Error::new(
            Span::call_site(),
            "#[query] needs `file = \"path/to/queries.sql\"` (relative to the crate's Cargo.toml)",
        )
    })?;
    let name = name.ok_or_else(|| {
        syn::Error::new(
            Span::call_site(),
            "#[query] needs `name = \"query_name\"` (a `-- name:` block of the file)",
        )
    })?;
    Ok(Attr {
        file,
        name,
        row,
        assume_not_null,
    })
}

/// Finds the file: relative to the crate's directory, else to the first
/// directory above it that has it (the workspace root, for example).
fn locate(relative: &str) -> Result<PathBuf, String> {
    let path = Path::new(relative);
    let Some(dir) = std::env::var_os("CARGO_MANIFEST_DIR") else {
        return Err("CARGO_MANIFEST_DIR is not set (build with cargo)".to_owned());
    };
    let dir = PathBuf::from(dir);
    if path.is_absolute() {
        return path
            .is_file()
            .then(|| path.to_owned())
            .ok_or_else(|| format!("cannot find the query file `{relative}`"));
    }
    for base in dir.ancestors() {
        let candidate = base.join(path);
        if candidate.is_file() {
            return Ok(candidate);
        }
    }
    // The message names the path as the user wrote it, not the absolute
    // directory: that depends on where the crate is built (trybuild builds
    // under the target directory) and would make the message unstable.
    Err(format!(
        "cannot find the query file `{relative}` (looked relative to the directory of the crate's Cargo.toml and the directories above it)"
    ))
}

pub(crate) fn expand(input: &DeriveInput) -> syn::Result<TokenStream> {
    let fields = match &input.data {
        syn::Data::Struct(s) => &s.fields,
        _ => {
            return Err(syn::Error::new_spanned(
                &input.ident,
                "#[derive(Query)] works on a struct whose fields are the query's parameters",
            ))
        }
    };
    let named: Vec<&syn::Field> =
        match fields {
            Fields::Named(f) => f.named.iter().collect(),
            Fields::Unit => Vec::new(),
            Fields::Unnamed(_) => return Err(syn::Error::new_spanned(
                &input.ident,
                "#[derive(Query)] needs named fields: each field is the `:param` of the same name",
            )),
        };
    let attr = parse_attr(input)?;
    let ident = &input.ident;
    let type_name = ident.to_string();
    let file_name = attr.file.value();
    let at_file = |msg: String| syn::Error::new(attr.file.span(), msg);
    let path = locate(&file_name).map_err(at_file)?;
    let text = std::fs::read_to_string(&path)
        .map_err(|e| at_file(format!("cannot read the query file `{file_name}`: {e}")))?;
    let parsed = pgpipe_queryfile::parse(&text)
        .map_err(|e| at_file(format!("{file_name}:{}: {}", e.line, e.message)))?;
    let wanted = attr.name.value();
    let Some(query) = parsed.get(&wanted) else {
        return Err(syn::Error::new(
            attr.name.span(),
            format!(
                "{file_name}: no query named `{wanted}`; the file defines: {}",
                parsed.names().join(", ")
            ),
        ));
    };
    let location = format!("{file_name}:{}", query.line);

    // Every `:param` is a field, every field a `:param`.
    let field_names: Vec<String> = named
        .iter()
        .map(|f| {
            let s = f
                .ident
                .as_ref()
                .map(ToString::to_string)
                .unwrap_or_default();
            s.strip_prefix("r#").map(str::to_owned).unwrap_or(s)
        })
        .collect();
    let mut errors: Option<syn::Error> = None;
    let mut push = |e: syn::Error| match &mut errors {
        Some(all) => all.combine(e),
        None => errors = Some(e),
    };
    for p in &query.params {
        if !field_names.contains(&p.name) {
            push(syn::Error::new(
                attr.name.span(),
                format!(
                    "{file_name}:{}: query `{wanted}` uses `:{}`, which is not a field of {type_name} (fields: {})",
                    p.line,
                    p.name,
                    if field_names.is_empty() { "none".to_owned() } else { field_names.join(", ") }
                ),
            ));
        }
    }
    for (field, name) in named.iter().zip(&field_names) {
        if !query.params.iter().any(|p| &p.name == name) {
            push(syn::Error::new(
                field.ident.span(),
                format!(
                    "field `{name}` of {type_name} is not used by query `{wanted}` ({location}): the query has no `:{name}`"
                ),
            ));
        }
    }
    match (query.kind, &attr.row) {
        (Kind::Exec | Kind::ExecRows, Some(row)) => push(syn::Error::new(
            row.span(),
            format!(
                "query `{wanted}` ({location}) is :{}: it returns no rows, so it takes no `row` type",
                query.kind.as_str()
            ),
        )),
        (Kind::One | Kind::Stream, None) => push(syn::Error::new(
            attr.name.span(),
            format!(
                "query `{wanted}` ({location}) is :{}: name its row type with `row = RowType`",
                query.kind.as_str()
            ),
        )),
        _ => {}
    }
    if let Some(e) = errors {
        return Err(e);
    }

    // Fields in `$n` order.
    let ordered: Vec<&syn::Field> = query
        .params
        .iter()
        .map(|p| {
            named[field_names
                .iter()
                .position(|n| n == &p.name)
                .expect("checked above")]
        })
        .collect();
    let (impl_generics, ty_generics, where_clause) = input.generics.split_for_impl();
    let param_infos = ordered.iter().zip(&query.params).map(|(f, p)| {
        let ty = &f.ty;
        let pname = &p.name;
        let rust = ty.to_token_stream().to_string().replace(' ', "");
        quote! {
            ::pgpipe::named::ParamInfo {
                name: #pname,
                type_ref: <#ty as ::pgpipe::types::StaticType>::TYPE,
                rust_type: #rust,
            }
        }
    });
    let members: Vec<_> = ordered
        .iter()
        .map(|f| f.ident.as_ref().expect("named field"))
        .collect();
    let params = if members.is_empty() {
        quote!(())
    } else if members.len() <= 16 {
        quote!((#(&self.#members,)*))
    } else {
        quote!([#(&self.#members as &(dyn ::pgpipe::types::Encode + ::core::marker::Sync),)*])
    };
    let kind = match query.kind {
        Kind::One => quote!(One),
        Kind::Many => quote!(Many),
        Kind::Exec => quote!(Exec),
        Kind::ExecRows => quote!(ExecRows),
        Kind::Stream => quote!(Stream),
    };
    let line = u32::try_from(query.line).unwrap_or(u32::MAX);
    let sql = &query.sql;
    let not_null = &attr.assume_not_null;
    let (row_ty, row_info) = match &attr.row {
        Some(row) => {
            let rust = row.to_token_stream().to_string().replace(' ', "");
            (
                quote!(#row),
                quote!(::core::option::Option::Some(::pgpipe::named::RowInfo {
                    rust_type: #rust,
                    check: ::pgpipe::named::check_row::<#row>,
                })),
            )
        }
        None => (quote!(()), quote!(::core::option::Option::None)),
    };
    let path_str = path.to_string_lossy().into_owned();
    let doc_all = format!("Runs `{wanted}` ({location}) and reads every row.");
    let row_methods = attr.row.as_ref().map(|row| {
        let doc_one = format!("Runs `{wanted}` ({location}), which must return exactly one row.");
        let doc_opt = format!("Runs `{wanted}` ({location}), which must return at most one row.");
        let doc_stream = format!("Streams the rows of `{wanted}` ({location}).");
        quote! {
            #[doc = #doc_all]
            pub async fn fetch_all<E: ::pgpipe::GenericClient + ?::core::marker::Sized>(
                &self,
                on: &E,
            ) -> ::core::result::Result<::std::vec::Vec<#row>, ::pgpipe::Error> {
                ::pgpipe::named::fetch_all(self, on).await
            }

            #[doc = #doc_one]
            pub async fn fetch_one<E: ::pgpipe::GenericClient + ?::core::marker::Sized>(
                &self,
                on: &E,
            ) -> ::core::result::Result<#row, ::pgpipe::Error> {
                ::pgpipe::named::fetch_one(self, on).await
            }

            #[doc = #doc_opt]
            pub async fn fetch_opt<E: ::pgpipe::GenericClient + ?::core::marker::Sized>(
                &self,
                on: &E,
            ) -> ::core::result::Result<::core::option::Option<#row>, ::pgpipe::Error> {
                ::pgpipe::named::fetch_opt(self, on).await
            }

            #[doc = #doc_stream]
            pub async fn stream<E: ::pgpipe::GenericClient + ?::core::marker::Sized>(
                &self,
                on: &E,
            ) -> ::core::result::Result<::pgpipe::RowStream, ::pgpipe::Error> {
                ::pgpipe::named::stream(self, on).await
            }
        }
    });
    let doc_exec = format!("Runs `{wanted}` ({location}) and returns the number of rows affected.");
    Ok(quote! {
        // Rebuild when the query file changes.
        const _: &[u8] = ::core::include_bytes!(#path_str);

        impl #impl_generics ::pgpipe::named::Query for #ident #ty_generics #where_clause {
            type Row = #row_ty;

            const INFO: &'static ::pgpipe::named::QueryInfo = &::pgpipe::named::QueryInfo {
                name: #wanted,
                file: #file_name,
                line: #line,
                kind: ::pgpipe::named::Kind::#kind,
                sql: #sql,
                params: &[#(#param_infos),*],
                row: #row_info,
                assume_not_null: &[#(#not_null),*],
                rust_type: #type_name,
            };

            fn params(&self) -> impl ::pgpipe::types::Params + ::core::marker::Send + ::core::marker::Sync + '_ {
                #params
            }
        }

        impl #impl_generics #ident #ty_generics #where_clause {
            #row_methods

            #[doc = #doc_exec]
            pub async fn execute<E: ::pgpipe::GenericClient + ?::core::marker::Sized>(
                &self,
                on: &E,
            ) -> ::core::result::Result<u64, ::pgpipe::Error> {
                ::pgpipe::named::execute(self, on).await
            }
        }
    })
}
