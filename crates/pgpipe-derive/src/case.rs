//! `rename_all` rules: Rust field and variant names to PostgreSQL names.

/// A `#[pg(rename_all = "...")]` rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RenameRule {
    Snake,
    Camel,
    Pascal,
    ScreamingSnake,
    Lower,
    Upper,
    Kebab,
    ScreamingKebab,
}

/// The accepted spellings, for error messages.
pub(crate) const RULES: &str = "\"snake_case\", \"camelCase\", \"PascalCase\", \"SCREAMING_SNAKE_CASE\", \"lowercase\", \"UPPERCASE\", \"kebab-case\", \"SCREAMING-KEBAB-CASE\"";

impl RenameRule {
    pub(crate) fn parse(s: &str) -> Option<RenameRule> {
        Some(match s {
            "snake_case" => RenameRule::Snake,
            "camelCase" => RenameRule::Camel,
            "PascalCase" => RenameRule::Pascal,
            "SCREAMING_SNAKE_CASE" => RenameRule::ScreamingSnake,
            "lowercase" => RenameRule::Lower,
            "UPPERCASE" => RenameRule::Upper,
            "kebab-case" => RenameRule::Kebab,
            "SCREAMING-KEBAB-CASE" => RenameRule::ScreamingKebab,
            _ => return None,
        })
    }

    /// Applies the rule to a Rust identifier (a snake_case field or a
    /// PascalCase variant; either works, words are split on `_` and on case
    /// changes).
    pub(crate) fn apply(self, ident: &str) -> String {
        match self {
            // Like serde: a plain case mapping of the whole name.
            RenameRule::Lower => return ident.to_lowercase(),
            RenameRule::Upper => return ident.to_uppercase(),
            _ => {}
        }
        let words = words(ident);
        let capitalize = |w: &str| {
            let mut c = w.chars();
            match c.next() {
                Some(first) => first
                    .to_uppercase()
                    .chain(c.flat_map(char::to_lowercase))
                    .collect(),
                None => String::new(),
            }
        };
        match self {
            RenameRule::Snake => join(&words, "_", str::to_lowercase),
            RenameRule::Kebab => join(&words, "-", str::to_lowercase),
            RenameRule::ScreamingSnake => join(&words, "_", str::to_uppercase),
            RenameRule::ScreamingKebab => join(&words, "-", str::to_uppercase),
            RenameRule::Pascal => join(&words, "", capitalize),
            RenameRule::Camel => {
                let mut out = words.first().map(|w| w.to_lowercase()).unwrap_or_default();
                for w in words.iter().skip(1) {
                    out.push_str(&capitalize(w));
                }
                out
            }
            RenameRule::Lower | RenameRule::Upper => unreachable!("handled above"),
        }
    }
}

fn join(words: &[String], sep: &str, f: impl Fn(&str) -> String) -> String {
    words.iter().map(|w| f(w)).collect::<Vec<_>>().join(sep)
}

/// Splits an identifier into words: at underscores, before an uppercase
/// letter that follows a lowercase letter or digit, and before the last
/// capital of an acronym followed by lowercase (`HTTPServer` is `HTTP`,
/// `Server`).
fn words(ident: &str) -> Vec<String> {
    let chars: Vec<char> = ident.chars().collect();
    let mut words = Vec::new();
    let mut cur = String::new();
    for (i, &c) in chars.iter().enumerate() {
        if c == '_' {
            if !cur.is_empty() {
                words.push(std::mem::take(&mut cur));
            }
            continue;
        }
        if c.is_uppercase() && !cur.is_empty() {
            let prev = chars[i - 1];
            let next_lower = chars.get(i + 1).is_some_and(|n| n.is_lowercase());
            if prev.is_lowercase() || prev.is_ascii_digit() || (prev.is_uppercase() && next_lower) {
                words.push(std::mem::take(&mut cur));
            }
        }
        cur.push(c);
    }
    if !cur.is_empty() {
        words.push(cur);
    }
    words
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_on_fields_and_variants() {
        let cases = [
            ("user_id", RenameRule::Camel, "userId"),
            ("user_id", RenameRule::Pascal, "UserId"),
            ("user_id", RenameRule::ScreamingSnake, "USER_ID"),
            ("user_id", RenameRule::Kebab, "user-id"),
            ("user_id", RenameRule::Lower, "user_id"),
            ("user_id", RenameRule::Upper, "USER_ID"),
            ("user_id", RenameRule::Snake, "user_id"),
            ("VeryHappy", RenameRule::Snake, "very_happy"),
            ("VeryHappy", RenameRule::Lower, "veryhappy"),
            ("VeryHappy", RenameRule::Camel, "veryHappy"),
            ("VeryHappy", RenameRule::ScreamingKebab, "VERY-HAPPY"),
            ("HTTPServer", RenameRule::Snake, "http_server"),
            ("Utf8Text", RenameRule::Kebab, "utf8-text"),
            ("v2", RenameRule::Pascal, "V2"),
        ];
        for (input, rule, want) in cases {
            assert_eq!(rule.apply(input), want, "{input} with {rule:?}");
        }
        assert_eq!(RenameRule::parse("kebab-case"), Some(RenameRule::Kebab));
        assert_eq!(RenameRule::parse("kebab"), None);
    }
}
