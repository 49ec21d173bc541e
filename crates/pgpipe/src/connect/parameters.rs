//! The server's parameters (ParameterStatus): what the startup collects
//! and the session keeps up to date.

/// Parameter names and values in one string, with a small index into it.
///
/// A server reports about fifteen parameters on every connect and later
/// changes one only when a `SET` touches a reported setting. A map of owned
/// strings cost two allocations and a SipHash per parameter, about a tenth
/// of a plain connect's client instructions; this costs two allocations in
/// all, and a lookup, which is rare, scans fifteen short names.
#[derive(Debug, Clone, Default)]
pub(crate) struct ServerParameters {
    text: String,
    entries: Vec<Entry>,
    /// A name was dropped for [`MAX_PARAMETERS`] (and the log said so).
    overflowed: bool,
}

/// `text[name_start..value_start]` is the name, `text[value_start..end]`
/// the value.
#[derive(Debug, Clone, Copy)]
struct Entry {
    name_start: usize,
    value_start: usize,
    end: usize,
}

/// The most distinct names kept. PostgreSQL reports about seventeen; the
/// bound keeps a server that floods the connection with new names from
/// costing more than a short scan per message (a lookup is linear).
const MAX_PARAMETERS: usize = 64;

/// Room for what PostgreSQL 15-18 report at startup (about 400 bytes,
/// 14-17 parameters), so the startup grows neither buffer.
const TEXT_CAPACITY: usize = 512;
const ENTRIES_CAPACITY: usize = 20;

impl ServerParameters {
    /// The value last reported for `name`.
    pub(crate) fn get(&self, name: &str) -> Option<&str> {
        self.position(name).map(|i| self.value_at(i))
    }

    /// Records a reported value, replacing the one before it. A new name
    /// beyond the first 64 is not kept (and said once in the log).
    pub(crate) fn set(&mut self, name: &str, value: &str) {
        if self.entries.capacity() == 0 {
            self.text.reserve(TEXT_CAPACITY);
            self.entries.reserve(ENTRIES_CAPACITY);
        }
        let Some(i) = self.position(name) else {
            if self.entries.len() >= MAX_PARAMETERS {
                if !self.overflowed {
                    self.overflowed = true;
                    tracing::warn!(
                        name,
                        "the server reported more than {MAX_PARAMETERS} distinct parameters; \
                         new ones are not kept"
                    );
                }
                return;
            }
            let name_start = self.text.len();
            self.text.push_str(name);
            let value_start = self.text.len();
            self.text.push_str(value);
            self.entries.push(Entry {
                name_start,
                value_start,
                end: self.text.len(),
            });
            return;
        };
        // Replaced in place, so that a connection whose session changes a
        // reported setting over and over keeps one copy of each value.
        let Entry {
            value_start, end, ..
        } = self.entries[i];
        self.text.replace_range(value_start..end, value);
        let new_end = value_start + value.len();
        self.entries[i].end = new_end;
        for later in &mut self.entries[i + 1..] {
            // Entries are in `text` order, so only later ones move.
            later.name_start = later.name_start + new_end - end;
            later.value_start = later.value_start + new_end - end;
            later.end = later.end + new_end - end;
        }
    }

    /// The parameters as reported, in the order first reported.
    #[cfg(test)]
    pub(crate) fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        (0..self.entries.len()).map(|i| (self.name_at(i), self.value_at(i)))
    }

    fn position(&self, name: &str) -> Option<usize> {
        (0..self.entries.len()).find(|&i| self.name_at(i) == name)
    }

    fn name_at(&self, i: usize) -> &str {
        let e = self.entries[i];
        &self.text[e.name_start..e.value_start]
    }

    fn value_at(&self, i: usize) -> &str {
        let e = self.entries[i];
        &self.text[e.value_start..e.end]
    }
}

#[cfg(test)]
mod tests {
    use super::ServerParameters;

    #[test]
    fn values_are_found_by_name_and_replaced_in_place() {
        let mut p = ServerParameters::default();
        assert_eq!(p.get("TimeZone"), None);
        p.set("server_version", "15.8");
        p.set("TimeZone", "UTC");
        p.set("application_name", "");
        p.set("in_hot_standby", "off");
        assert_eq!(p.get("TimeZone"), Some("UTC"));
        assert_eq!(p.get("application_name"), Some(""));
        assert_eq!(
            p.get("timezone"),
            None,
            "names are case-sensitive, as reported"
        );

        // Longer, shorter and equal replacements move the later entries.
        p.set("TimeZone", "Europe/Amsterdam");
        p.set("application_name", "mail-api");
        p.set("TimeZone", "UTC");
        p.set("in_hot_standby", "on");
        assert_eq!(
            p.iter().collect::<Vec<_>>(),
            [
                ("server_version", "15.8"),
                ("TimeZone", "UTC"),
                ("application_name", "mail-api"),
                ("in_hot_standby", "on"),
            ]
        );
    }

    #[test]
    fn a_setting_changed_many_times_keeps_one_copy() {
        let mut p = ServerParameters::default();
        p.set("server_version", "18.1");
        p.set("application_name", "a");
        for n in 0..10_000 {
            p.set("application_name", &format!("worker-{n}"));
        }
        assert_eq!(p.get("application_name"), Some("worker-9999"));
        assert_eq!(p.get("server_version"), Some("18.1"));
        assert!(p.text.len() < 64, "{} bytes kept", p.text.len());
    }

    #[test]
    fn a_flood_of_new_names_is_bounded_and_known_names_still_change() {
        let mut p = ServerParameters::default();
        p.set("server_version", "18.1");
        for n in 0..10_000 {
            p.set(&format!("flood_{n}"), "x");
        }
        assert_eq!(p.entries.len(), super::MAX_PARAMETERS);
        assert_eq!(p.get("flood_62"), Some("x"));
        assert_eq!(p.get("flood_63"), None);
        p.set("server_version", "18.2");
        p.set("flood_0", "changed");
        assert_eq!(p.get("server_version"), Some("18.2"));
        assert_eq!(p.get("flood_0"), Some("changed"));
        assert_eq!(p.get("flood_62"), Some("x"));
    }

    #[test]
    fn an_empty_name_is_a_name_like_any_other() {
        let mut p = ServerParameters::default();
        p.set("a", "1");
        p.set("", "empty");
        p.set("b", "2");
        p.set("", "changed");
        assert_eq!(p.get(""), Some("changed"));
        assert_eq!(p.get("a"), Some("1"));
        assert_eq!(p.get("b"), Some("2"));
    }

    #[test]
    fn names_are_not_confused_with_values_or_prefixes() {
        let mut p = ServerParameters::default();
        p.set("is_superuser", "off");
        p.set("is_super", "on");
        assert_eq!(p.get("is_super"), Some("on"));
        assert_eq!(p.get("is_superuser"), Some("off"));
        assert_eq!(p.get("off"), None);
        assert_eq!(p.get("is_superuseroff"), None);
    }
}
