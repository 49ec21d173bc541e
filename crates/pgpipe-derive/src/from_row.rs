//! `#[derive(FromRow)]`.

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{DeriveInput, Fields};

use crate::attr::{check_unique, pg_name, Container, Member};
use crate::util::{bound_fields, struct_fields, type_name};

pub(crate) fn expand(input: &DeriveInput) -> syn::Result<TokenStream> {
    let fields = struct_fields(
        input,
        "FromRow",
        ": a row maps to a struct's fields (by column name) or a tuple struct's (by position)",
    )?;
    if let Some(lt) = input.generics.lifetimes().next() {
        return Err(syn::Error::new_spanned(
            lt,
            "#[derive(FromRow)] types cannot borrow from the row: use owned field types (String, Vec<u8>) and drop the lifetime parameter",
        ));
    }
    let container = Container::parse(&input.attrs, "a FromRow struct")?;
    match fields {
        Fields::Named(_) | Fields::Unit => named(input, fields, &container),
        Fields::Unnamed(_) => {
            if let Some(rule) = &container.rename_all {
                return Err(syn::Error::new(
                    rule.span,
                    "#[pg(rename_all)] has no effect on a tuple struct: its fields read columns by position",
                ));
            }
            positional(input, fields)
        }
    }
}

/// How one field is read.
enum Plan<'a> {
    /// A column by name.
    Column {
        column: String,
        default: bool,
        try_from: Option<&'a syn::Type>,
        with: Option<&'a syn::Path>,
    },
    /// A nested `FromRow` reading the same row.
    Flatten,
}

fn named(input: &DeriveInput, fields: &Fields, container: &Container) -> syn::Result<TokenStream> {
    let ident = &input.ident;
    let target = type_name(input);
    let mut members = Vec::new();
    for field in fields {
        members.push(Member::parse(&field.attrs, "field")?);
    }
    let mut plans = Vec::new();
    let mut names = Vec::new();
    for (field, member) in fields.iter().zip(&members) {
        member.conflicts(&[
            ("try_from", "with"),
            ("flatten", "rename"),
            ("flatten", "default"),
            ("flatten", "try_from"),
            ("flatten", "with"),
        ])?;
        let field_ident = field.ident.as_ref().expect("named field");
        if member.flatten.is_some() {
            plans.push(Plan::Flatten);
            continue;
        }
        let column = pg_name(field_ident, member, container);
        names.push((column.clone(), field_ident.span()));
        plans.push(Plan::Column {
            column,
            default: member.default.is_some(),
            try_from: member.try_from.as_ref().map(|t| &t.value),
            with: member.with.as_ref().map(|w| &w.value),
        });
    }
    check_unique(&names, "field")?;

    let mut generics = input.generics.clone();
    let decoded: Vec<&syn::Type> = fields
        .iter()
        .zip(&plans)
        .filter_map(|(f, p)| match p {
            Plan::Column {
                try_from: None,
                with: None,
                ..
            } => Some(&f.ty),
            _ => None,
        })
        .collect();
    bound_fields(
        &mut generics,
        &decoded,
        quote!(for<'__r> ::pgpipe::types::Decode<'__r>),
    );
    let flattened: Vec<&syn::Type> = fields
        .iter()
        .zip(&plans)
        .filter_map(|(f, p)| matches!(p, Plan::Flatten).then_some(&f.ty))
        .collect();
    bound_fields(
        &mut generics,
        &flattened,
        quote!(::pgpipe::__private::FromRow),
    );
    let (impl_generics, ty_generics, where_clause) = generics.split_for_impl();

    let mut column_types = Vec::new();
    let mut checks = Vec::new();
    let mut decodes = Vec::new();
    let mut non_nulls = Vec::new();
    for (k, (field, plan)) in fields.iter().zip(&plans).enumerate() {
        let field_ident = field.ident.as_ref().expect("named field");
        let field_name = field_ident.to_string();
        let field_name = field_name.strip_prefix("r#").unwrap_or(&field_name);
        let ty = &field.ty;
        let slot = syn::Index::from(k);
        let var = format_ident!("__c{}", k);
        match plan {
            Plan::Flatten => {
                column_types.push(
                    quote_spanned!(ty.span()=> <#ty as ::pgpipe::__private::FromRow>::Columns),
                );
                checks.push(quote_spanned! {ty.span()=>
                    let #var = <#ty as ::pgpipe::__private::FromRow>::check(columns)?;
                });
                decodes.push(quote_spanned! {ty.span()=>
                    #field_ident: <#ty as ::pgpipe::__private::FromRow>::decode(row, &columns.#slot)?
                });
                non_nulls.push(quote_spanned! {ty.span()=>
                    __out.extend(<#ty as ::pgpipe::__private::FromRow>::non_null_columns(columns, &plan.#slot));
                });
            }
            Plan::Column {
                column,
                default,
                try_from,
                with,
            } => {
                let check_type = match (try_from, with) {
                    (_, Some(_)) => quote!(),
                    (Some(src), None) => quote_spanned! {src.span()=>
                        ::pgpipe::__private::check_column::<#src>(columns, __i, #field_name, #target)?;
                    },
                    (None, None) => quote_spanned! {ty.span()=>
                        ::pgpipe::__private::check_column::<#ty>(columns, __i, #field_name, #target)?;
                    },
                };
                let read_ty = match (try_from, with) {
                    (_, Some(_)) => None,
                    (Some(src), None) => Some(*src),
                    (None, None) => Some(ty),
                };
                let non_null = |i: TokenStream| match read_ty {
                    Some(t) => quote_spanned! {t.span()=>
                        ::pgpipe::__private::non_null::<#t>(columns, #i, #field_name, &mut __out);
                    },
                    None => quote!(),
                };
                let read = |i: TokenStream| match (try_from, with) {
                    (_, Some(path)) => quote_spanned! {path.span()=>
                        #path(row, #i).map_err(|e| ::pgpipe::__private::in_field(e, #target, #field_name))?
                    },
                    (Some(src), None) => quote_spanned! {src.span()=>
                        ::pgpipe::__private::try_from_column::<#src, #ty>(row, #i, #target, #field_name)?
                    },
                    (None, None) => quote_spanned! {ty.span()=>
                        row.try_get::<#ty, usize>(#i)
                            .map_err(|e| ::pgpipe::__private::in_field(e, #target, #field_name))?
                    },
                };
                if *default {
                    let check_null = non_null(quote!(__i));
                    non_nulls.push(quote! {
                        if let ::core::option::Option::Some(__i) = plan.#slot {
                            #check_null
                        }
                    });
                    column_types.push(quote!(::core::option::Option<usize>));
                    checks.push(quote! {
                        let #var = match ::pgpipe::__private::find_column(columns, #column) {
                            ::core::option::Option::Some(__i) => {
                                #check_type
                                ::core::option::Option::Some(__i)
                            }
                            ::core::option::Option::None => ::core::option::Option::None,
                        };
                    });
                    let read = read(quote!(__i));
                    decodes.push(quote_spanned! {ty.span()=>
                        #field_ident: match columns.#slot {
                            ::core::option::Option::Some(__i) => #read,
                            ::core::option::Option::None => <#ty as ::core::default::Default>::default(),
                        }
                    });
                } else {
                    non_nulls.push(non_null(quote!(plan.#slot)));
                    column_types.push(quote!(usize));
                    checks.push(quote! {
                        let #var = {
                            let __i = ::pgpipe::__private::column_index(columns, #column, #field_name, #target)?;
                            #check_type
                            __i
                        };
                    });
                    let read = read(quote!(columns.#slot));
                    decodes.push(quote!(#field_ident: #read));
                }
            }
        }
    }
    let vars = (0..plans.len()).map(|k| format_ident!("__c{}", k));
    Ok(quote! {
        impl #impl_generics ::pgpipe::__private::FromRow for #ident #ty_generics #where_clause {
            type Columns = (#(#column_types,)*);

            fn check(
                columns: &[::pgpipe::__private::Column],
            ) -> ::core::result::Result<Self::Columns, ::pgpipe::__private::Error> {
                #(#checks)*
                ::core::result::Result::Ok((#(#vars,)*))
            }

            #[allow(unused_variables)]
            fn decode(
                row: &::pgpipe::__private::Row,
                columns: &Self::Columns,
            ) -> ::core::result::Result<Self, ::pgpipe::__private::Error> {
                ::core::result::Result::Ok(Self { #(#decodes,)* })
            }

            #[allow(unused_variables, unused_mut)]
            fn non_null_columns(
                columns: &[::pgpipe::__private::Column],
                plan: &Self::Columns,
            ) -> ::std::vec::Vec<(usize, ::std::string::String)> {
                let mut __out = ::std::vec::Vec::new();
                #(#non_nulls)*
                __out
            }
        }
    })
}

fn positional(input: &DeriveInput, fields: &Fields) -> syn::Result<TokenStream> {
    let ident = &input.ident;
    let target = type_name(input);
    let mut members = Vec::new();
    for field in fields {
        let member = Member::parse(&field.attrs, "field")?;
        member.reject(
            &["try_from", "with"],
            "has no effect on a tuple struct field: tuple structs read columns by position (use a struct with named fields)",
        )?;
        member.conflicts(&[("try_from", "with")])?;
        members.push(member);
    }
    let count = fields.len();
    let mut generics = input.generics.clone();
    let decoded: Vec<&syn::Type> = fields
        .iter()
        .zip(&members)
        .filter(|(_, m)| m.try_from.is_none() && m.with.is_none())
        .map(|(f, _)| &f.ty)
        .collect();
    bound_fields(
        &mut generics,
        &decoded,
        quote!(for<'__r> ::pgpipe::types::Decode<'__r>),
    );
    let (impl_generics, ty_generics, where_clause) = generics.split_for_impl();
    let mut checks = Vec::new();
    let mut decodes = Vec::new();
    let mut non_nulls = Vec::new();
    for (i, (field, member)) in fields.iter().zip(&members).enumerate() {
        let ty = &field.ty;
        let field_name = i.to_string();
        match (&member.try_from, &member.with) {
            (_, Some(path)) => {
                let path = &path.value;
                decodes.push(quote_spanned! {path.span()=>
                    #path(row, #i).map_err(|e| ::pgpipe::__private::in_field(e, #target, #field_name))?
                });
            }
            (Some(src), None) => {
                let src = &src.value;
                non_nulls.push(quote_spanned! {src.span()=>
                    ::pgpipe::__private::non_null::<#src>(columns, #i, #field_name, &mut __out);
                });
                checks.push(quote_spanned! {src.span()=>
                    ::pgpipe::__private::check_column::<#src>(columns, #i, #field_name, #target)?;
                });
                decodes.push(quote_spanned! {src.span()=>
                    ::pgpipe::__private::try_from_column::<#src, #ty>(row, #i, #target, #field_name)?
                });
            }
            (None, None) => {
                non_nulls.push(quote_spanned! {ty.span()=>
                    ::pgpipe::__private::non_null::<#ty>(columns, #i, #field_name, &mut __out);
                });
                checks.push(quote_spanned! {ty.span()=>
                    ::pgpipe::__private::check_column::<#ty>(columns, #i, #field_name, #target)?;
                });
                decodes.push(quote_spanned! {ty.span()=>
                    row.try_get::<#ty, usize>(#i)
                        .map_err(|e| ::pgpipe::__private::in_field(e, #target, #field_name))?
                });
            }
        }
    }
    Ok(quote! {
        impl #impl_generics ::pgpipe::__private::FromRow for #ident #ty_generics #where_clause {
            type Columns = ();

            fn check(
                columns: &[::pgpipe::__private::Column],
            ) -> ::core::result::Result<(), ::pgpipe::__private::Error> {
                ::pgpipe::__private::column_count(columns, #count, #target)?;
                #(#checks)*
                ::core::result::Result::Ok(())
            }

            fn decode(
                row: &::pgpipe::__private::Row,
                _: &(),
            ) -> ::core::result::Result<Self, ::pgpipe::__private::Error> {
                ::core::result::Result::Ok(Self(#(#decodes,)*))
            }

            #[allow(unused_mut)]
            fn non_null_columns(
                columns: &[::pgpipe::__private::Column],
                _: &(),
            ) -> ::std::vec::Vec<(usize, ::std::string::String)> {
                let mut __out = ::std::vec::Vec::new();
                #(#non_nulls)*
                __out
            }
        }
    })
}
