//! The machinery behind the one table of connection parameters
//! (`fields.rs`): the macro that expands it, and the small functions its
//! rows name.
//!
//! Why a declarative macro and not a static table of field descriptors: the
//! parameters have different Rust types (host lists, durations, keyword
//! enums, secrets), so a runtime descriptor would have to erase them behind
//! `fn(&mut Config, &str)` pointers and still could not produce the struct's
//! fields or its typed accessors. The macro writes the fields, `new()`, the
//! setters and getters, the key and environment-variable dispatch and (by
//! deriving `Debug` over fields whose secrets are [`Secret`]s) the debug
//! output, all from the same row, so none of them can leave one out; a
//! mistake is a compile error, and nothing is looked up at run time.

use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::{Host, RequireAuth, Secret};

/// Expands the parameter table: see `fields.rs` for the row syntax.
macro_rules! config_table {
    (
        $(#[$struct_meta:meta])*
        pub struct Config {
            $(
                $(#[$set_doc:meta])*
                set $setter:ident($arg:ty) = $set:path;
                $(#[$get_doc:meta])*
                get $getter:ident -> $ret:ty = $get:path;
                $field:ident: $ty:ty = $default:expr,
                    key $key:literal $(| $alias:literal)*,
                    env [$($env:literal),*],
                    parse $parse:path;
            )*
            // Fields without a connection-string key, with hand-written
            // accessors.
            $( extra $xfield:ident: $xty:ty = $xdefault:expr; )*
        }
    ) => {
        $(#[$struct_meta])*
        #[derive(Clone, PartialEq, Eq, Debug)]
        pub struct Config {
            $( pub(super) $field: $ty, )*
            $( pub(super) $xfield: $xty, )*
        }

        impl Config {
            /// A configuration with nothing set: resolving it uses only the
            /// environment and the defaults.
            pub fn new() -> Config {
                Config {
                    $( $field: $default, )*
                    $( $xfield: $xdefault, )*
                }
            }

            $(
                $(#[$set_doc])*
                pub fn $setter(&mut self, value: $arg) -> &mut Config {
                    $set(&mut self.$field, value);
                    self
                }

                $(#[$get_doc])*
                pub fn $getter(&self) -> $ret {
                    $get(&self.$field)
                }
            )*
        }

        /// Sets the parameter named `key` from its text; `Ok(false)` when no
        /// parameter has that name.
        pub(super) fn set_by_key(
            config: &mut Config,
            key: &str,
            value: &str,
        ) -> Result<bool, ConfigError> {
            match key {
                $( k if k == $key $(|| k == $alias)* => config.$field = $parse(k, value)?, )*
                _ => return Ok(false),
            }
            Ok(true)
        }

        /// Puts the parameter named `key` back to its default; `false` when
        /// no parameter has that name.
        pub(super) fn unset_by_key(config: &mut Config, key: &str) -> bool {
            match key {
                $( k if k == $key $(|| k == $alias)* => config.$field = $default, )*
                _ => return false,
            }
            true
        }

        /// Fills every parameter left unset (or empty) from its `PG*`
        /// variable, parsed as the connection-string value would be; an
        /// invalid variable is an error naming it.
        pub(super) fn apply_env(
            config: &mut Config,
            var: &dyn Fn(&str) -> Option<String>,
        ) -> Result<(), ConfigError> {
            $(
                let names: &[&str] = &[$($env),*];
                for &name in names {
                    if $crate::config::table::Unset::is_unset(&config.$field) {
                        if let Some(value) = var(name) {
                            config.$field = $parse($key, &value).map_err(|e| e.in_env_var(name))?;
                        }
                    }
                }
            )*
            Ok(())
        }

        /// Every key of the table, for tests that walk all parameters.
        #[cfg(test)]
        pub(super) const KEYS: &[&str] = &[$($key, $($alias,)*)*];
    };
}

pub(super) use config_table;

/// Whether a setting counts as not given, so that its environment variable
/// applies. As in libpq, an empty string is the same as nothing.
pub(crate) trait Unset {
    fn is_unset(&self) -> bool;
}

impl<T> Unset for Vec<T> {
    fn is_unset(&self) -> bool {
        self.is_empty()
    }
}

impl<T: Blank> Unset for Option<T> {
    fn is_unset(&self) -> bool {
        self.as_ref().is_none_or(Blank::is_blank)
    }
}

/// A value that can be present yet empty.
pub(crate) trait Blank {
    fn is_blank(&self) -> bool;
}

macro_rules! blank {
    ($($ty:ty => |$v:ident| $e:expr;)*) => {
        $( impl Blank for $ty {
            fn is_blank(&self) -> bool {
                let $v = self;
                $e
            }
        } )*
    };
}

blank! {
    String => |s| s.is_empty();
    PathBuf => |p| p.as_os_str().is_empty();
    Secret<Vec<u8>> => |s| s.expose().is_empty();
    Secret<String> => |s| s.expose().is_empty();
    Duration => |_d| false;
    RequireAuth => |_r| false;
    u32 => |_n| false;
}

/// Settings that always hold a value (they have no environment variable,
/// but the table's environment layer looks at every row).
macro_rules! never_unset {
    ($($ty:ty),*) => {
        $( impl Unset for $ty {
            fn is_unset(&self) -> bool {
                false
            }
        } )*
    };
}

never_unset!(bool, u32, usize);

// ---- setters named by the table: each writes the field from the argument

pub(super) fn set_some<T, V: Into<T>>(field: &mut Option<T>, value: V) {
    *field = Some(value.into());
}

pub(super) fn set_path(field: &mut Option<PathBuf>, value: impl AsRef<Path>) {
    *field = Some(value.as_ref().to_path_buf());
}

pub(super) fn set_secret_bytes(field: &mut Option<Secret<Vec<u8>>>, value: impl AsRef<[u8]>) {
    *field = Some(Secret::new(value.as_ref().to_vec()));
}

pub(super) fn set_secret_string(field: &mut Option<Secret<String>>, value: impl Into<String>) {
    *field = Some(Secret::new(value.into()));
}

pub(super) fn set<T>(field: &mut T, value: T) {
    *field = value;
}

pub(super) fn push_host(field: &mut Vec<Host>, value: &str) {
    field.push(Host::from_entry(value));
}

pub(super) fn push_addr(field: &mut Vec<Option<IpAddr>>, value: IpAddr) {
    field.push(Some(value));
}

pub(super) fn push<T>(field: &mut Vec<T>, value: T) {
    field.push(value);
}

// ---- getters named by the table

pub(super) fn copied<T: Copy>(field: &T) -> T {
    *field
}

pub(super) fn exposed_bytes(field: &Option<Secret<Vec<u8>>>) -> Option<&[u8]> {
    field.as_ref().map(|s| s.expose().as_slice())
}

pub(super) fn exposed_str(field: &Option<Secret<String>>) -> Option<&str> {
    field.as_ref().map(|s| s.expose().as_str())
}
