//! `#[derive(PgEnum)]`.

use proc_macro2::TokenStream;
use quote::quote;
use syn::{Data, DeriveInput, Fields};

use crate::attr::{check_unique, pg_name, Container, Member};
use crate::util::{decode_lifetime, type_name};

pub(crate) fn expand(input: &DeriveInput) -> syn::Result<TokenStream> {
    let data = match &input.data {
        Data::Enum(e) => e,
        Data::Struct(s) => {
            return Err(syn::Error::new(
                s.struct_token.span,
                "#[derive(PgEnum)] is for enums with unit variants (a composite type is #[derive(Composite)], a newtype #[derive(Encode, Decode)])",
            ))
        }
        Data::Union(u) => {
            return Err(syn::Error::new(
                u.union_token.span,
                "#[derive(PgEnum)] is for enums with unit variants, not unions",
            ))
        }
    };
    let container = Container::parse(&input.attrs, "a PgEnum enum")?;
    let Some(name) = &container.name else {
        return Err(syn::Error::new(
            input.ident.span(),
            "#[derive(PgEnum)] needs the PostgreSQL enum type's name: add #[pg(name = \"schema.type\")] (or just \"type\" to use the search path)",
        ));
    };
    if data.variants.is_empty() {
        return Err(syn::Error::new(
            input.ident.span(),
            "#[derive(PgEnum)] needs at least one variant: a PostgreSQL enum value is one of its labels",
        ));
    }
    let pg_type = &name.value;
    let ident = &input.ident;
    let target = type_name(input);

    let mut variants = Vec::new();
    let mut labels = Vec::new();
    for variant in &data.variants {
        if !matches!(variant.fields, Fields::Unit) {
            return Err(syn::Error::new_spanned(
                &variant.fields,
                format!(
                    "#[derive(PgEnum)] variants cannot carry data: a PostgreSQL enum value is only a label; make `{}` a unit variant",
                    variant.ident
                ),
            ));
        }
        let member = Member::parse(&variant.attrs, "variant")?;
        member.reject(
            &["rename"],
            "has no meaning on an enum variant; variants take only #[pg(rename = \"label\")]",
        )?;
        labels.push((
            pg_name(&variant.ident, &member, &container),
            variant.ident.span(),
        ));
        variants.push(&variant.ident);
    }
    check_unique(&labels, "variant")?;
    let labels: Vec<&String> = labels.iter().map(|(l, _)| l).collect();

    let (impl_generics, ty_generics, where_clause) = input.generics.split_for_impl();
    let lt = decode_lifetime(input, "PgEnum")?;
    let lifetime = &lt.lifetime;
    let (dec_impl_generics, _, _) = lt.generics.split_for_impl();

    Ok(quote! {
        impl #impl_generics #ident #ty_generics #where_clause {
            #[doc(hidden)]
            const __PG_LABELS: &'static [&'static str] = &[#(#labels),*];
        }

        impl #impl_generics ::pgpipe::types::StaticType for #ident #ty_generics #where_clause {
            const TYPE: ::pgpipe::types::TypeRef = ::pgpipe::types::TypeRef::Named(#pg_type);
        }

        impl #impl_generics ::pgpipe::types::Encode for #ident #ty_generics #where_clause {
            fn type_ref(&self) -> ::pgpipe::types::TypeRef {
                ::pgpipe::types::TypeRef::Named(#pg_type)
            }

            fn accepts(&self, ty: &::pgpipe::types::Type) -> bool {
                ::pgpipe::__private::enum_accepts(ty, #pg_type, Self::__PG_LABELS)
            }

            fn accepts_all_values(&self, ty: &::pgpipe::types::Type) -> bool {
                // Which enum fits depends on the type alone.
                ::pgpipe::types::Encode::accepts(self, ty)
            }

            fn encode(
                &self,
                ty: &::pgpipe::types::Type,
                buf: &mut ::pgpipe::__private::BytesMut,
            ) -> ::core::result::Result<::pgpipe::types::IsNull, ::pgpipe::types::BoxError> {
                let label = match self {
                    #(Self::#variants => #labels,)*
                };
                ::pgpipe::__private::encode_enum_label(ty, label, #target, buf)
            }
        }

        impl #dec_impl_generics ::pgpipe::types::Decode<#lifetime> for #ident #ty_generics #where_clause {
            fn accepts(ty: &::pgpipe::types::Type) -> bool {
                ::pgpipe::__private::enum_accepts(ty, #pg_type, Self::__PG_LABELS)
            }

            fn decode(
                ty: &::pgpipe::types::Type,
                raw: &#lifetime [u8],
            ) -> ::core::result::Result<Self, ::pgpipe::types::BoxError> {
                match ::pgpipe::__private::decode_enum_label(ty, raw)? {
                    #(#labels => ::core::result::Result::Ok(Self::#variants),)*
                    __other => ::core::result::Result::Err(
                        ::pgpipe::__private::unknown_enum_label(ty, __other, #target),
                    ),
                }
            }
        }
    })
}
