//! Small text helpers for error messages: quoting untrusted strings without letting a huge or
//! multi-line value take over the message, and the edit distance behind "did you mean".

use std::fmt::Write as _;

/// Longest part of a quoted string shown in a message, in characters.
const MAX_QUOTED_CHARS: usize = 100;

/// `"text"` with control characters escaped, cut to a readable length.
pub(crate) fn double_quoted(text: &str) -> String {
    quoted(text, '"')
}

/// `'text'` (the way Python shows names), control characters escaped, cut to a readable length.
pub fn single_quoted(text: &str) -> String {
    quoted(text, '\'')
}

fn quoted(text: &str, quote: char) -> String {
    let text = &*without_userinfo(text);
    let mut out = String::with_capacity(text.len().min(MAX_QUOTED_CHARS) + 4);
    out.push(quote);
    for (i, c) in text.chars().enumerate() {
        if i == MAX_QUOTED_CHARS {
            out.push('…');
            break;
        }
        if c == quote || c == '\\' || c.is_control() {
            // `escape_debug` writes `\n`, `\u{1b}`, `\'`, ...; writing to a String cannot fail.
            let _ = write!(out, "{}", c.escape_debug());
        } else {
            out.push(c);
        }
    }
    out.push(quote);
    out
}

/// `text` with the userinfo of a URL in it (`scheme://user:password@host`) left out: a message
/// never quotes a password, even one a server put in an href or a `Location`.
pub fn without_userinfo(text: &str) -> std::borrow::Cow<'_, str> {
    let Some(start) = text.find("://").map(|i| i + 3) else {
        return text.into();
    };
    let rest = &text[start..];
    let authority = rest
        .find(['/', '?', '#', '\\'])
        .map_or(rest, |end| &rest[..end]);
    match authority.rfind('@') {
        Some(at) => format!("{}{}", &text[..start], &rest[at + 1..]).into(),
        None => text.into(),
    }
}

/// Edit distance with adjacent transpositions (optimal string alignment), so that `slef` is one
/// edit from `self`. Returns `None` as soon as the distance is known to exceed `limit`.
pub(crate) fn edit_distance(a: &str, b: &str, limit: usize) -> Option<usize> {
    // The distance is at least the difference in length: most candidates stop here, unallocated.
    if a.chars().count().abs_diff(b.chars().count()) > limit {
        return None;
    }
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    // Three rows of the dynamic-programming table: two back (for transpositions), one back, now.
    let mut before: Vec<usize> = vec![0; b.len() + 1];
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    let mut current: Vec<usize> = vec![0; b.len() + 1];
    for i in 1..=a.len() {
        current[0] = i;
        let mut row_min = i;
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (previous[j] + 1)
                .min(current[j - 1] + 1)
                .min(previous[j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(before[j - 2] + 1);
            }
            current[j] = best;
            row_min = row_min.min(best);
        }
        if row_min > limit {
            return None;
        }
        std::mem::swap(&mut before, &mut previous);
        std::mem::swap(&mut previous, &mut current);
    }
    let distance = previous[b.len()];
    (distance <= limit).then_some(distance)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_never_quote_a_urls_userinfo() {
        assert_eq!(
            without_userinfo("http://u:pw@h:1/a@b?c@d"),
            "http://h:1/a@b?c@d"
        );
        assert_eq!(without_userinfo("x http://a@b@h\\p"), "x http://h\\p");
        assert_eq!(without_userinfo("/relative@x"), "/relative@x");
        assert_eq!(double_quoted("https://u:pw@[bad"), "\"https://[bad\"");
    }

    #[test]
    fn quotes_escape_and_cut() {
        assert_eq!(double_quoted("self"), "\"self\"");
        assert_eq!(single_quoted("it's"), "'it\\'s'");
        assert_eq!(double_quoted("a\"b\nc"), "\"a\\\"b\\nc\"");
        let long = "é".repeat(500);
        let shown = double_quoted(&long);
        assert_eq!(shown.chars().count(), MAX_QUOTED_CHARS + 3);
        assert!(shown.ends_with("…\""));
    }

    #[test]
    fn edit_distances() {
        let d = |a, b| edit_distance(a, b, 10);
        assert_eq!(d("", ""), Some(0));
        assert_eq!(d("self", "self"), Some(0));
        assert_eq!(d("slef", "self"), Some(1));
        assert_eq!(d("get_creditorz", "get_creditors"), Some(1));
        assert_eq!(d("get_creditorz", "get-creditors"), Some(2));
        assert_eq!(d("kitten", "sitting"), Some(3));
        assert_eq!(d("", "abc"), Some(3));
        assert_eq!(d("abc", ""), Some(3));
        assert_eq!(d("ça", "ca"), Some(1));
        assert_eq!(edit_distance("kitten", "sitting", 2), None);
        assert_eq!(edit_distance("a", "abcdef", 2), None);
    }
}
