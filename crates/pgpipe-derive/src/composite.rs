//! `#[derive(Composite)]`.

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{DeriveInput, Fields};

use crate::attr::{check_unique, pg_name, Container, Member};
use crate::util::{bound_fields, decode_lifetime, struct_fields, type_name};

pub(crate) fn expand(input: &DeriveInput) -> syn::Result<TokenStream> {
    let fields = struct_fields(
        input,
        "Composite",
        " (a PostgreSQL enum is #[derive(PgEnum)])",
    )?;
    let Fields::Named(named) = fields else {
        return Err(syn::Error::new(
            input.ident.span(),
            "#[derive(Composite)] needs a struct with named fields: they are matched to the composite type's fields by name",
        ));
    };
    let container = Container::parse(&input.attrs, "a Composite struct")?;
    let Some(name) = &container.name else {
        return Err(syn::Error::new(
            input.ident.span(),
            "#[derive(Composite)] needs the PostgreSQL type's name: add #[pg(name = \"schema.type\")] (or just \"type\" to use the search path)",
        ));
    };
    let pg_type = &name.value;
    let ident = &input.ident;
    let target = type_name(input);

    let mut idents = Vec::new();
    let mut names = Vec::new();
    let mut types = Vec::new();
    for field in &named.named {
        let member = Member::parse(&field.attrs, "field")?;
        // `default`, `flatten`, `try_from` and `with` belong to FromRow,
        // which the same struct may also derive; they do not change how
        // the composite value is sent or read.
        let field_ident = field.ident.as_ref().expect("named field");
        names.push((
            pg_name(field_ident, &member, &container),
            field_ident.span(),
        ));
        idents.push(field_ident);
        types.push(&field.ty);
    }
    check_unique(&names, "field")?;
    let count = idents.len();
    let labels: Vec<&String> = names.iter().map(|(n, _)| n).collect();

    // Encode + StaticType.
    let mut enc_generics = input.generics.clone();
    bound_fields(
        &mut enc_generics,
        &types,
        quote!(::pgpipe::types::Encode + ::pgpipe::types::StaticType),
    );
    let (impl_generics, ty_generics, where_clause) = enc_generics.split_for_impl();
    let encode_accepts = idents.iter().zip(&labels).map(
        |(f, label)| quote!(#label => ::pgpipe::types::Encode::accepts(&self.#f, &__field.type_)),
    );
    let writes = idents
        .iter()
        .zip(&labels)
        .map(|(f, label)| quote!(#label => __w.write(&self.#f)?));
    let encode = quote! {
        impl #impl_generics ::pgpipe::types::StaticType for #ident #ty_generics #where_clause {
            const TYPE: ::pgpipe::types::TypeRef = ::pgpipe::types::TypeRef::Named(#pg_type);
        }

        impl #impl_generics ::pgpipe::types::Encode for #ident #ty_generics #where_clause {
            fn type_ref(&self) -> ::pgpipe::types::TypeRef {
                ::pgpipe::types::TypeRef::Named(#pg_type)
            }

            fn accepts(&self, ty: &::pgpipe::types::Type) -> bool {
                match ::pgpipe::__private::composite_fields(ty) {
                    ::core::option::Option::Some(__fields) if __fields.len() == #count => {
                        __fields.iter().all(|__field| match __field.name.as_str() {
                            #(#encode_accepts,)*
                            _ => false,
                        })
                    }
                    _ => false,
                }
            }

            fn encode(
                &self,
                ty: &::pgpipe::types::Type,
                buf: &mut ::pgpipe::__private::BytesMut,
            ) -> ::core::result::Result<::pgpipe::types::IsNull, ::pgpipe::types::BoxError> {
                let mut __w = ::pgpipe::types::CompositeWriter::new(ty, buf)?;
                __w.expect_fields(#count, #target)?;
                while let ::core::option::Option::Some(__field) = __w.next_field() {
                    match __field.name.as_str() {
                        #(#writes,)*
                        _ => return ::core::result::Result::Err(__w.unknown_field(#target)),
                    }
                }
                __w.finish()
            }
        }
    };

    // Decode.
    let lt = decode_lifetime(input, "Composite")?;
    let lifetime = &lt.lifetime;
    let mut dec_generics = lt.generics.clone();
    bound_fields(
        &mut dec_generics,
        &types,
        quote!(::pgpipe::types::Decode<#lifetime>),
    );
    let (impl_generics, _, where_clause) = dec_generics.split_for_impl();
    let (_, ty_generics, _) = input.generics.split_for_impl();
    let vars: Vec<_> = (0..count).map(|k| format_ident!("__f{}", k)).collect();
    let decode_accepts = types.iter().zip(&labels).map(|(ty, label)| {
        quote_spanned!(ty.span()=> #label => <#ty as ::pgpipe::types::Decode<#lifetime>>::accepts(&__field.type_))
    });
    let slots = vars.iter().zip(&types).map(|(v, ty)| {
        quote_spanned!(ty.span()=> let mut #v: ::core::option::Option<#ty> = ::core::option::Option::None;)
    });
    let reads = vars.iter().zip(&types).zip(&labels).map(|((v, ty), label)| {
        quote_spanned!(ty.span()=> #label => #v = ::core::option::Option::Some(__field.decode::<#ty>()?))
    });
    let builds = vars.iter().zip(&idents).zip(&labels).map(|((v, f), label)| {
        quote! {
            #f: match #v {
                ::core::option::Option::Some(__v) => __v,
                ::core::option::Option::None => {
                    return ::core::result::Result::Err(::pgpipe::__private::missing_field(ty, #label, #target))
                }
            }
        }
    });
    let decode = quote! {
        impl #impl_generics ::pgpipe::types::Decode<#lifetime> for #ident #ty_generics #where_clause {
            fn accepts(ty: &::pgpipe::types::Type) -> bool {
                match ::pgpipe::__private::composite_fields(ty) {
                    ::core::option::Option::Some(__fields) if __fields.len() == #count => {
                        __fields.iter().all(|__field| match __field.name.as_str() {
                            #(#decode_accepts,)*
                            _ => false,
                        })
                    }
                    _ => false,
                }
            }

            fn decode(
                ty: &::pgpipe::types::Type,
                raw: &#lifetime [u8],
            ) -> ::core::result::Result<Self, ::pgpipe::types::BoxError> {
                let mut __r = ::pgpipe::types::CompositeReader::new(ty, raw)?;
                __r.expect_fields(#count, #target)?;
                #(#slots)*
                while let ::core::option::Option::Some(__field) = __r.next_field()? {
                    match __field.require_name(#target)? {
                        #(#reads,)*
                        _ => return ::core::result::Result::Err(__field.unknown(#target)),
                    }
                }
                __r.finish()?;
                ::core::result::Result::Ok(Self { #(#builds,)* })
            }
        }
    };
    Ok(quote!(#encode #decode))
}
