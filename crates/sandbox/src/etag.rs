//! Strong entity tags for what the sandbox serves (RFC 9110 §8.8.3) and the `If-Match`
//! precondition of a PATCH (§13.1.1, strong comparison).
//!
//! An ETag is derived from the bytes served: equal representations get equal tags, and any
//! change of a representation changes its tag, without a version to keep per resource.

use std::hash::Hasher;

/// The quoted strong ETag of a representation: its length and a 64-bit hash, in hex.
pub fn of(body: &[u8]) -> String {
    // SipHash with fixed keys: the same bytes give the same tag for the life of the process,
    // which is all a client can rely on (tags are opaque).
    let mut hasher = std::hash::DefaultHasher::new();
    hasher.write(body);
    format!("\"{:x}-{:016x}\"", body.len(), hasher.finish())
}

/// How an `If-Match` precondition came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Precondition {
    /// No `If-Match` header: nothing to check.
    Absent,
    Met,
    /// The reason, for the 412's message.
    Failed(&'static str),
}

/// Evaluate the `If-Match` field lines of a request against the current ETag of the target
/// (`None`: it has no current representation). Several lines form one list.
pub fn if_match<'a>(
    lines: impl IntoIterator<Item = &'a str>,
    current: Option<&str>,
) -> Precondition {
    let mut lines = lines.into_iter().peekable();
    if lines.peek().is_none() {
        return Precondition::Absent;
    }
    let value = lines.collect::<Vec<_>>().join(",");
    if value.trim() == "*" {
        return match current {
            Some(_) => Precondition::Met,
            None => Precondition::Failed("If-Match: * but the resource does not exist"),
        };
    }
    let Some(tags) = entity_tags(&value) else {
        return Precondition::Failed(
            "If-Match is not \"*\" nor a list of quoted entity-tags (e.g. \"abc\", W/\"abc\")",
        );
    };
    let Some(current) = current else {
        return Precondition::Failed("the resource does not exist");
    };
    // Strong comparison: a weak tag never matches, even with the same opaque value.
    if tags.iter().any(|(weak, tag)| !weak && *tag == current) {
        Precondition::Met
    } else {
        Precondition::Failed("If-Match matches no current ETag of the resource")
    }
}

/// `#entity-tag` as `(weak, "opaque-tag" with its quotes)`, or `None` when malformed. Commas
/// may appear inside a tag, so the list is scanned rather than split.
fn entity_tags(value: &str) -> Option<Vec<(bool, &str)>> {
    let mut tags = Vec::new();
    let mut rest = value;
    loop {
        rest = rest.trim_start_matches([' ', '\t', ',']);
        if rest.is_empty() {
            return Some(tags);
        }
        let weak = rest.starts_with("W/");
        if weak {
            rest = &rest[2..];
        }
        let body = rest.strip_prefix('"')?;
        // etagc: %x21 / %x23-7E / obs-text (every byte but controls, space, '"' and DEL).
        let end = body.find(|c: char| c == '"' || c.is_ascii_control() || c == ' ')?;
        if !body[end..].starts_with('"') {
            return None;
        }
        tags.push((weak, &rest[..end + 2]));
        rest = &body[end + 1..];
        // Between tags: only optional whitespace, then a comma or the end.
        let after = rest.trim_start_matches([' ', '\t']);
        if !(after.is_empty() || after.starts_with(',')) {
            return None;
        }
        rest = after;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TAG: &str = "\"3-abc\"";

    #[test]
    fn tags_are_quoted_and_follow_the_bytes() {
        let a = of(b"{\"a\":1}");
        assert!(a.starts_with('"') && a.ends_with('"') && a.len() > 2, "{a}");
        assert_eq!(a, of(b"{\"a\":1}"));
        assert_ne!(a, of(b"{\"a\":2}"));
        assert_ne!(of(b""), of(b" "));
        assert!(a[1..a.len() - 1]
            .chars()
            .all(|c| c.is_ascii_hexdigit() || c == '-'));
    }

    #[test]
    fn if_match_is_a_strong_comparison_against_a_list() {
        use Precondition::*;
        let current = Some(TAG);
        let check = |lines: &[&str]| if_match(lines.iter().copied(), current);
        assert_eq!(if_match([], current), Absent);
        assert_eq!(check(&[TAG]), Met);
        assert_eq!(check(&["\"x\", \"3-abc\""]), Met);
        assert_eq!(
            check(&["\"x\"", " \"3-abc\" "]),
            Met,
            "several lines: one list"
        );
        assert_eq!(check(&["\"x,y\",\"3-abc\""]), Met, "a comma inside a tag");
        assert!(matches!(check(&["\"3-abd\""]), Failed(_)));
        assert!(
            matches!(check(&["W/\"3-abc\""]), Failed(_)),
            "weak never matches"
        );
        assert!(
            matches!(check(&["3-abc"]), Failed(_)),
            "unquoted is malformed"
        );
        assert!(matches!(check(&["\"3-abc"]), Failed(_)));
        assert!(matches!(check(&["\"3-abc\" x"]), Failed(_)));
        assert!(
            matches!(check(&[""]), Failed(_)),
            "present but empty matches nothing"
        );
        assert!(matches!(check(&["\"a b\""]), Failed(_)));
        assert_eq!(check(&["*"]), Met);
        assert_eq!(check(&[" * "]), Met);
        assert!(matches!(check(&["*, \"3-abc\""]), Failed(_)));
        assert!(matches!(if_match(["*"], None), Failed(_)));
        assert!(matches!(if_match([TAG], None), Failed(_)));
        assert_eq!(if_match([], None), Absent);
    }
}
