//! `#[derive(ToRow)]`: a struct as one row of a typed binary COPY (its
//! fields as a `Params` list, and its column names).

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{DeriveInput, Fields};

use crate::attr::{check_unique, pg_name, Container, Member};
use crate::util::{bound_fields, struct_fields};

pub(crate) fn expand(input: &DeriveInput) -> syn::Result<TokenStream> {
    let fields = struct_fields(
        input,
        "ToRow",
        ": a row's values are a struct's fields (by column name) or a tuple struct's (by position)",
    )?;
    let container = Container::parse(&input.attrs, "a ToRow struct")?;
    let named = matches!(fields, Fields::Named(_));
    if !named {
        if let Some(rule) = &container.rename_all {
            return Err(syn::Error::new(
                rule.span,
                "#[pg(rename_all)] has no effect on a tuple struct: its fields are written by position",
            ));
        }
    }
    let mut names = Vec::new();
    for field in fields {
        let member = Member::parse(&field.attrs, "field")?;
        member.reject(
            &["rename"],
            "has no effect on a ToRow field: a field is written as its own type to the column of its name",
        )?;
        if let Some(field_ident) = &field.ident {
            names.push((
                pg_name(field_ident, &member, &container),
                field_ident.span(),
            ));
        } else if let Some(rename) = &member.rename {
            return Err(syn::Error::new(
                rename.span,
                "#[pg(rename)] has no effect on a tuple struct field: its fields are written by position",
            ));
        }
    }
    check_unique(&names, "field")?;

    let ident = &input.ident;
    let mut generics = input.generics.clone();
    let types: Vec<&syn::Type> = fields.iter().map(|f| &f.ty).collect();
    bound_fields(&mut generics, &types, quote!(::pgpipe::types::Encode));
    let (impl_generics, ty_generics, where_clause) = generics.split_for_impl();

    let count = fields.len();
    let access: Vec<TokenStream> = fields
        .iter()
        .enumerate()
        .map(|(i, f)| match &f.ident {
            Some(name) => quote!(self.#name),
            None => {
                let index = syn::Index::from(i);
                quote!(self.#index)
            }
        })
        .collect();
    let encode_ty: Vec<TokenStream> = types
        .iter()
        .map(|ty| quote_spanned!(ty.span()=> <#ty as ::pgpipe::types::Encode>))
        .collect();
    let oids = access
        .iter()
        .zip(&encode_ty)
        .map(|(a, e)| quote!(#e::type_ref(&#a).oid()));
    let refs = access
        .iter()
        .zip(&encode_ty)
        .map(|(a, e)| quote!(#e::type_ref(&#a)));
    let named_types = refs.clone().map(|r| quote!(#r.is_named()));
    let checks = access
        .iter()
        .zip(&encode_ty)
        .enumerate()
        .map(|(i, (a, e))| {
            quote! {
                if let ::std::option::Option::Some(__ty) = __types.get(#i) {
                    if !#e::accepts(&#a, __ty) {
                        return ::std::result::Result::Err((#i, #e::rust_type(&#a)));
                    }
                }
            }
        });
    let all_values = access
        .iter()
        .zip(&encode_ty)
        .enumerate()
        .map(|(i, (a, e))| quote!(&& #e::accepts_all_values(&#a, &__types[#i])));
    let encodes = access.iter().enumerate().map(|(i, a)| {
        quote! {
            ::pgpipe::__private::encode_param(&#a, #i, __types, __writer)?;
        }
    });
    let column_names = if named {
        let names = names.iter().map(|(n, _)| n);
        quote!(::std::option::Option::Some(&[#(#names),*]))
    } else {
        quote!(::std::option::Option::None)
    };

    Ok(quote! {
        impl #impl_generics ::pgpipe::Params for #ident #ty_generics #where_clause {
            fn len(&self) -> usize {
                #count
            }
            fn with_type_oids<__R>(
                &self,
                __f: impl ::std::ops::FnOnce(&[::pgpipe::types::Oid]) -> __R,
            ) -> __R {
                let __oids: [::pgpipe::types::Oid; #count] = [#(#oids),*];
                __f(&__oids)
            }
            #[allow(unused_variables)]
            fn check_types(
                &self,
                __types: &[::pgpipe::types::Type],
            ) -> ::std::result::Result<(), (usize, &'static str)> {
                #(#checks)*
                ::std::result::Result::Ok(())
            }
            #[allow(unused_variables)]
            fn accepts_all_values(&self, __types: &[::pgpipe::types::Type]) -> bool {
                __types.len() == #count #(#all_values)*
            }
            fn has_named_types(&self) -> bool {
                false #(|| #named_types)*
            }
            fn type_refs(&self) -> ::std::vec::Vec<::pgpipe::types::TypeRef> {
                ::std::vec![#(#refs),*]
            }
            #[allow(unused_variables)]
            fn encode(
                &self,
                __types: ::std::option::Option<&[::pgpipe::types::Type]>,
                __writer: &mut ::pgpipe::__private::ParamWriter<'_>,
            ) -> ::std::result::Result<(), ::pgpipe::__private::EncodeError> {
                #(#encodes)*
                ::std::result::Result::Ok(())
            }
            fn column_names() -> ::std::option::Option<&'static [&'static str]> {
                #column_names
            }
        }

        impl #impl_generics ::pgpipe::ToRow for #ident #ty_generics #where_clause {}
    })
}
