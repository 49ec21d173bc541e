//! `#[derive(Encode)]` and `#[derive(Decode)]` for transparent newtypes.

use proc_macro2::TokenStream;
use quote::quote;
use syn::{DeriveInput, Fields};

use crate::attr::{Container, Member};
use crate::util::{bound_fields, decode_lifetime, struct_fields};

/// The one field of a newtype: its accessor (`0` or a name) and type.
struct Inner<'a> {
    member: syn::Member,
    ty: &'a syn::Type,
    named: bool,
}

fn inner<'a>(input: &'a DeriveInput, what: &str) -> syn::Result<Inner<'a>> {
    let fields = struct_fields(input, what, " (a PostgreSQL enum is #[derive(PgEnum)])")?;
    Container::parse(&input.attrs, &format!("a {what} newtype"))?;
    let one = match fields {
        Fields::Unnamed(f) if f.unnamed.len() == 1 => &f.unnamed[0],
        Fields::Named(f) if f.named.len() == 1 => &f.named[0],
        _ => {
            return Err(syn::Error::new(
                input.ident.span(),
                format!(
                    "#[derive({what})] is for newtypes with exactly one field (`struct UserId(i64);`), which are sent and read as that field; a struct of several fields is a composite type: #[derive(Composite)]"
                ),
            ))
        }
    };
    let member = Member::parse(&one.attrs, "field")?;
    member.reject(
        &[],
        &format!("has no meaning on the field of a {what} newtype"),
    )?;
    Ok(Inner {
        member: match &one.ident {
            Some(ident) => syn::Member::Named(ident.clone()),
            None => syn::Member::Unnamed(0.into()),
        },
        ty: &one.ty,
        named: one.ident.is_some(),
    })
}

pub(crate) fn expand_encode(input: &DeriveInput) -> syn::Result<TokenStream> {
    let inner = inner(input, "Encode")?;
    let ident = &input.ident;
    let (member, ty) = (&inner.member, inner.ty);
    let mut generics = input.generics.clone();
    bound_fields(
        &mut generics,
        &[ty],
        quote!(::pgpipe::types::Encode + ::pgpipe::types::StaticType),
    );
    let (impl_generics, ty_generics, where_clause) = generics.split_for_impl();
    Ok(quote! {
        impl #impl_generics ::pgpipe::types::StaticType for #ident #ty_generics #where_clause {
            const TYPE: ::pgpipe::types::TypeRef = <#ty as ::pgpipe::types::StaticType>::TYPE;
        }

        impl #impl_generics ::pgpipe::types::Encode for #ident #ty_generics #where_clause {
            fn type_ref(&self) -> ::pgpipe::types::TypeRef {
                ::pgpipe::types::Encode::type_ref(&self.#member)
            }

            fn accepts(&self, ty: &::pgpipe::types::Type) -> bool {
                ::pgpipe::types::Encode::accepts(&self.#member, ty)
            }

            fn accepts_all_values(&self, ty: &::pgpipe::types::Type) -> bool {
                ::pgpipe::types::Encode::accepts_all_values(&self.#member, ty)
            }

            fn encode(
                &self,
                ty: &::pgpipe::types::Type,
                buf: &mut ::pgpipe::__private::BytesMut,
            ) -> ::core::result::Result<::pgpipe::types::IsNull, ::pgpipe::types::BoxError> {
                ::pgpipe::types::Encode::encode(&self.#member, ty, buf)
            }
        }
    })
}

pub(crate) fn expand_decode(input: &DeriveInput) -> syn::Result<TokenStream> {
    let inner = inner(input, "Decode")?;
    let ident = &input.ident;
    let ty = inner.ty;
    let lt = decode_lifetime(input, "Decode")?;
    let lifetime = &lt.lifetime;
    let mut generics = lt.generics.clone();
    bound_fields(
        &mut generics,
        &[ty],
        quote!(::pgpipe::types::Decode<#lifetime>),
    );
    let (impl_generics, _, where_clause) = generics.split_for_impl();
    let (_, ty_generics, _) = input.generics.split_for_impl();
    let wrap = if inner.named {
        let member = &inner.member;
        quote!(|__v| Self { #member: __v })
    } else {
        quote!(Self)
    };
    Ok(quote! {
        impl #impl_generics ::pgpipe::types::Decode<#lifetime> for #ident #ty_generics #where_clause {
            fn accepts(ty: &::pgpipe::types::Type) -> bool {
                <#ty as ::pgpipe::types::Decode<#lifetime>>::accepts(ty)
            }

            fn decode(
                ty: &::pgpipe::types::Type,
                raw: &#lifetime [u8],
            ) -> ::core::result::Result<Self, ::pgpipe::types::BoxError> {
                <#ty as ::pgpipe::types::Decode<#lifetime>>::decode(ty, raw).map(#wrap)
            }

            fn decode_null(
                ty: &::pgpipe::types::Type,
            ) -> ::core::result::Result<Self, ::pgpipe::types::BoxError> {
                <#ty as ::pgpipe::types::Decode<#lifetime>>::decode_null(ty).map(#wrap)
            }
        }
    })
}
