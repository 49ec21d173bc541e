//! Shared pieces of the derives: generics, lifetimes, field lists.

use proc_macro2::{Span, TokenStream};
use quote::quote;
use syn::{parse_quote, Data, DeriveInput, Fields, Generics, Lifetime};

/// The lifetime a derived `Decode<'x>` impl uses: the type's own lifetime
/// when it has one (borrowed fields such as `&'a str` point into the
/// row), else a fresh one added to the impl's generics.
pub(crate) struct DecodeLifetime {
    pub lifetime: Lifetime,
    pub generics: Generics,
}

pub(crate) fn decode_lifetime(input: &DeriveInput, what: &str) -> syn::Result<DecodeLifetime> {
    let lifetimes: Vec<_> = input.generics.lifetimes().collect();
    match lifetimes.len() {
        0 => {
            let lifetime = Lifetime::new("'__pg", Span::call_site());
            let mut generics = input.generics.clone();
            generics.params.insert(0, parse_quote!(#lifetime));
            Ok(DecodeLifetime { lifetime, generics })
        }
        1 => Ok(DecodeLifetime {
            lifetime: lifetimes[0].lifetime.clone(),
            generics: input.generics.clone(),
        }),
        _ => Err(syn::Error::new_spanned(
            &input.generics,
            format!(
                "#[derive({what})] supports at most one lifetime parameter: the lifetime of fields borrowed from the row (`&'a str`, `&'a [u8]`)"
            ),
        )),
    }
}

/// Adds `bound` for every field type to `generics`' where clause when the
/// type has type parameters (for concrete types, a missing impl is better
/// reported at the field than through a where clause).
pub(crate) fn bound_fields(
    generics: &mut Generics,
    field_types: &[&syn::Type],
    bound: TokenStream,
) {
    if generics.type_params().next().is_none() {
        return;
    }
    let wc = generics.make_where_clause();
    for ty in field_types {
        wc.predicates.push(parse_quote!(#ty: #bound));
    }
}

/// The fields of a struct, or an error naming the derive for enums and
/// unions.
pub(crate) fn struct_fields<'a>(
    input: &'a DeriveInput,
    what: &str,
    hint: &str,
) -> syn::Result<&'a Fields> {
    match &input.data {
        Data::Struct(s) => Ok(&s.fields),
        Data::Enum(e) => Err(syn::Error::new(
            e.enum_token.span,
            format!("#[derive({what})] is for structs, not enums{hint}"),
        )),
        Data::Union(u) => Err(syn::Error::new(
            u.union_token.span,
            format!("#[derive({what})] is for structs, not unions{hint}"),
        )),
    }
}

/// `stringify!`-like: the type's name as a string literal token.
pub(crate) fn type_name(input: &DeriveInput) -> TokenStream {
    let name = input.ident.to_string();
    quote!(#name)
}
