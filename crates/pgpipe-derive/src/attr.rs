//! `#[pg(...)]` attributes.
//!
//! Every pgpipe derive reads the same `pg` attributes, so one type can derive
//! several (`#[derive(FromRow, Composite)]`). Each key is parsed here;
//! each derive then rejects the keys that make no sense for it
//! (`Used::reject`) and ignores the keys of another derive that the type
//! may also have (the container's `name` for `FromRow`, say).

use proc_macro2::Span;
use syn::spanned::Spanned;
use syn::{Attribute, LitStr};

use crate::case::{RenameRule, RULES};

/// A parsed attribute value with the span to point errors at.
pub(crate) struct At<T> {
    pub value: T,
    pub span: Span,
}

/// Container (struct or enum) attributes.
#[derive(Default)]
pub(crate) struct Container {
    pub name: Option<At<String>>,
    pub rename_all: Option<At<RenameRule>>,
}

/// Field and variant attributes.
#[derive(Default)]
pub(crate) struct Member {
    pub rename: Option<At<String>>,
    pub default: Option<Span>,
    pub flatten: Option<Span>,
    pub try_from: Option<At<syn::Type>>,
    pub with: Option<At<syn::Path>>,
}

fn set<T>(slot: &mut Option<T>, value: T, key: &str, span: Span) -> syn::Result<()> {
    if slot.is_some() {
        return Err(syn::Error::new(
            span,
            format!("duplicate #[pg({key})] attribute"),
        ));
    }
    *slot = Some(value);
    Ok(())
}

fn pg_attrs(attrs: &[Attribute]) -> impl Iterator<Item = &Attribute> {
    attrs.iter().filter(|a| a.path().is_ident("pg"))
}

impl Container {
    /// Parses the container's `#[pg(...)]` attributes; `what` names the
    /// derive for error messages.
    pub(crate) fn parse(attrs: &[Attribute], what: &str) -> syn::Result<Container> {
        let mut out = Container::default();
        for attr in pg_attrs(attrs) {
            attr.parse_nested_meta(|meta| {
                let span = meta.path.span();
                let key = meta.path.get_ident().map(|i| i.to_string()).unwrap_or_default();
                match key.as_str() {
                    "name" => {
                        let lit: LitStr = meta.value()?.parse()?;
                        let name = lit.value();
                        if name.is_empty() || name.split('.').any(str::is_empty) || name.matches('.').count() > 1 {
                            return Err(syn::Error::new(
                                lit.span(),
                                "the PostgreSQL type name must be \"type\" or \"schema.type\"",
                            ));
                        }
                        set(&mut out.name, At { value: name, span: lit.span() }, "name", span)
                    }
                    "rename_all" => {
                        let lit: LitStr = meta.value()?.parse()?;
                        let rule = RenameRule::parse(&lit.value()).ok_or_else(|| {
                            syn::Error::new(
                                lit.span(),
                                format!("unknown rename_all rule {:?}; use one of {RULES}", lit.value()),
                            )
                        })?;
                        set(&mut out.rename_all, At { value: rule, span: lit.span() }, "rename_all", span)
                    }
                    "transparent" => Err(meta.error(format!(
                        "#[pg(transparent)] is not needed: #[derive(Encode, Decode)] on a struct with one field always delegates to that field (unknown attribute on {what})"
                    ))),
                    "rename" | "default" | "flatten" | "try_from" | "with" => Err(meta.error(format!(
                        "#[pg({key})] belongs on a field or variant, not on the {what} itself"
                    ))),
                    _ => Err(meta.error(format!(
                        "unknown attribute #[pg({})] on {what}; the type-level attributes are `name = \"schema.type\"` (Composite, PgEnum) and `rename_all = \"...\"`",
                        path_string(&meta.path)
                    ))),
                }
            })?;
        }
        Ok(out)
    }
}

impl Member {
    /// Parses a field's or variant's `#[pg(...)]` attributes.
    pub(crate) fn parse(attrs: &[Attribute], what: &str) -> syn::Result<Member> {
        let mut out = Member::default();
        for attr in pg_attrs(attrs) {
            attr.parse_nested_meta(|meta| {
                let span = meta.path.span();
                let key = meta.path.get_ident().map(|i| i.to_string()).unwrap_or_default();
                match key.as_str() {
                    "rename" => {
                        let lit: LitStr = meta.value()?.parse()?;
                        if lit.value().is_empty() {
                            return Err(syn::Error::new(lit.span(), "#[pg(rename)] needs a non-empty name"));
                        }
                        set(&mut out.rename, At { value: lit.value(), span: lit.span() }, "rename", span)
                    }
                    "default" => set(&mut out.default, span, "default", span),
                    "flatten" => set(&mut out.flatten, span, "flatten", span),
                    "try_from" => {
                        let lit: LitStr = meta.value()?.parse()?;
                        let ty: syn::Type = lit.parse().map_err(|e| {
                            syn::Error::new(lit.span(), format!("#[pg(try_from = \"...\")] needs a Rust type: {e}"))
                        })?;
                        set(&mut out.try_from, At { value: ty, span: lit.span() }, "try_from", span)
                    }
                    "with" => {
                        let lit: LitStr = meta.value()?.parse()?;
                        let path: syn::Path = lit.parse().map_err(|e| {
                            syn::Error::new(lit.span(), format!("#[pg(with = \"...\")] needs the path of a function: {e}"))
                        })?;
                        set(&mut out.with, At { value: path, span: lit.span() }, "with", span)
                    }
                    "name" | "rename_all" => Err(meta.error(format!(
                        "#[pg({key})] belongs on the type, not on a {what}"
                    ))),
                    _ => Err(meta.error(format!(
                        "unknown attribute #[pg({})] on a {what}; the {what} attributes are `rename = \"...\"`, `default`, `flatten`, `try_from = \"Type\"` and `with = \"path::to::fn\"`",
                        path_string(&meta.path)
                    ))),
                }
            })?;
        }
        Ok(out)
    }

    /// Errors for each attribute that is set but not in `allowed`, with
    /// `why` saying which derive rejects it.
    pub(crate) fn reject(&self, allowed: &[&str], why: &str) -> syn::Result<()> {
        let set: [(&str, Option<Span>); 5] = [
            ("rename", self.rename.as_ref().map(|s| s.span)),
            ("default", self.default),
            ("flatten", self.flatten),
            ("try_from", self.try_from.as_ref().map(|s| s.span)),
            ("with", self.with.as_ref().map(|s| s.span)),
        ];
        for (key, span) in set {
            if let Some(span) = span {
                if !allowed.contains(&key) {
                    return Err(syn::Error::new(span, format!("#[pg({key})] {why}")));
                }
            }
        }
        Ok(())
    }

    /// Errors when two attributes that cannot be combined are both set.
    pub(crate) fn conflicts(&self, pairs: &[(&str, &str)]) -> syn::Result<()> {
        let get = |key: &str| -> Option<Span> {
            match key {
                "rename" => self.rename.as_ref().map(|s| s.span),
                "default" => self.default,
                "flatten" => self.flatten,
                "try_from" => self.try_from.as_ref().map(|s| s.span),
                "with" => self.with.as_ref().map(|s| s.span),
                _ => None,
            }
        };
        for (a, b) in pairs {
            if let (Some(_), Some(span)) = (get(a), get(b)) {
                return Err(syn::Error::new(
                    span,
                    format!("#[pg({a})] and #[pg({b})] cannot be combined on one field"),
                ));
            }
        }
        Ok(())
    }
}

fn path_string(path: &syn::Path) -> String {
    path.segments
        .iter()
        .map(|s| s.ident.to_string())
        .collect::<Vec<_>>()
        .join("::")
}

/// The PostgreSQL name of a field or variant: its `rename`, else the
/// container's `rename_all` applied to the identifier (without `r#`), else
/// the identifier.
pub(crate) fn pg_name(ident: &syn::Ident, member: &Member, container: &Container) -> String {
    if let Some(rename) = &member.rename {
        return rename.value.clone();
    }
    let raw = ident.to_string();
    let name = raw.strip_prefix("r#").unwrap_or(&raw);
    match &container.rename_all {
        Some(rule) => rule.value.apply(name),
        None => name.to_owned(),
    }
}

/// Errors if two members map to the same PostgreSQL name.
pub(crate) fn check_unique(names: &[(String, Span)], what: &str) -> syn::Result<()> {
    for (i, (name, span)) in names.iter().enumerate() {
        if names[..i].iter().any(|(n, _)| n == name) {
            return Err(syn::Error::new(
                *span,
                format!("two {what}s map to the PostgreSQL name {name:?}; rename one with #[pg(rename = \"...\")]"),
            ));
        }
    }
    Ok(())
}
