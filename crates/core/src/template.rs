//! RFC 6570 URI templates (levels 1-4) on std-uritemplate, plus the piece it does not offer:
//! the list of variable names a template declares. Resolving the expanded URL is url.rs's.

use std::borrow::Cow;
use std::collections::HashMap;
use std::ops::{Deref, Range};
use std::sync::Arc;

pub use stduritemplate::Value;

use crate::error::{Error, Result};
use crate::text::single_quoted;

/// Expand `template` with `variables`; a variable that is absent is undefined (RFC 6570 §2.3).
/// See `Parsed::expand`.
pub fn expand(template: &str, variables: &HashMap<String, Value>) -> Result<String> {
    Parsed::new(template)?.expand(variables)
}

/// The names of the variables of `template` that fill its path (`{v}`, `{+v}`, `{/v}` before
/// any `?` or `#`): the ones a `None` may not leave out.
pub fn path_variables(template: &str) -> Result<Vec<String>> {
    let parsed = Parsed::new(template)?;
    Ok(parsed.path_variables().map(str::to_owned).collect())
}

/// A template parsed once and kept: a link holds it for all its calls (`Parsed::new` ran on
/// every call, ~1,500 instructions of a warm follow). Owned, shared through an `Arc`.
#[derive(Debug)]
pub struct Template {
    text: String,
    expressions: Vec<Expression>,
}

impl Template {
    /// Parse `text` (the syntax checks of `Parsed::new`).
    pub fn new(text: String) -> Result<Template> {
        let expressions = parse(&text)?;
        Ok(Template { text, expressions })
    }

    /// The template as given.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// Its parsed form, for the checks and the expansion of one request.
    pub fn parsed(&self) -> Parsed<'_> {
        Parsed {
            template: &self.text,
            expressions: Cow::Borrowed(&self.expressions),
        }
    }
}

/// The template of a request: the caller's text, parsed when the request is prepared, or one
/// parsed before (a link's `Template`).
#[derive(Debug, Clone)]
pub enum Source {
    Text(String),
    Parsed(Arc<Template>),
}

impl Source {
    /// Parsed: once for a `Text`, no work for a `Parsed`.
    pub fn parsed(&self) -> Result<Parsed<'_>> {
        match self {
            Source::Text(text) => Parsed::new(text),
            Source::Parsed(template) => Ok(template.parsed()),
        }
    }
}

impl Deref for Source {
    type Target = str;

    fn deref(&self) -> &str {
        match self {
            Source::Text(text) => text,
            Source::Parsed(template) => template.as_str(),
        }
    }
}

/// A template parsed, for the checks and the expansion of one request (its expressions its own,
/// or a `Template`'s).
pub struct Parsed<'t> {
    template: &'t str,
    expressions: Cow<'t, [Expression]>,
}

impl<'t> Parsed<'t> {
    /// Parse `template` (our syntax checks; std-uritemplate's own run in `expand` and `check`).
    pub fn new(template: &'t str) -> Result<Self> {
        Ok(Parsed {
            template,
            expressions: Cow::Owned(parse(template)?),
        })
    }

    /// The template as given.
    pub fn template(&self) -> &'t str {
        self.template
    }

    /// The variable names it declares, in order of first appearance, without duplicates.
    pub fn variables(&self) -> Vec<&'t str> {
        unique_names(self.template, self.expressions.iter())
    }

    /// Whether it declares a variable `name` (no allocation: it runs for each variable of
    /// every call).
    pub fn declares(&self, name: &str) -> bool {
        let mut specs = self.expressions.iter().flat_map(|e| &e.specs);
        specs.any(|spec| spec.name_in(self.template) == name)
    }

    /// The names of the variables that fill its path (see `path_variables`).
    pub fn path_variables(&self) -> impl Iterator<Item = &'t str> {
        let in_path = self.expressions.iter().filter(|e| e.fills_path());
        unique_names(self.template, in_path).into_iter()
    }

    /// The names of the path variables a call must give (`{v}`, `{+v}` before any `?` or `#`):
    /// left out, they would address another resource (`/orders/{id}` the collection,
    /// `/orders/{id}/cancel` the path `/orders//cancel`); `{/v}` is its author's way to make a
    /// segment optional. In order, repeated as the template repeats them (no allocation: it
    /// runs every call).
    pub fn required_variables(&self) -> impl Iterator<Item = &'t str> + '_ {
        let template = self.template;
        self.expressions
            .iter()
            .filter(|e| e.needs_value())
            .flat_map(move |e| e.specs.iter().map(move |spec| spec.name_in(template)))
    }

    /// std-uritemplate's checks of its own (literals, modifiers), without expanding anything.
    pub fn check(&self) -> Result<()> {
        std_expand(self.template, &HashMap::new()).map(drop)
    }

    /// Its variable names, once the template passed [`Parsed::check`] (what [`variables`]
    /// gives for its text).
    pub fn checked_variables(&self) -> Result<Vec<String>> {
        self.check()?;
        Ok(self.variables().into_iter().map(str::to_owned).collect())
    }

    /// Expand with `variables`; a variable that is absent is undefined (RFC 6570 §2.3).
    ///
    /// A value never changes the structure of the path (docs/guarantees.md#template-values): a
    /// value that is exactly `.` or `..` in a path expansion, or a value that makes a `.`/`..`
    /// segment (also pct-encoded, as URL parsers read `%2e`) anywhere before the query, is refused
    /// with `Error::Template`.
    pub fn expand(&self, variables: &HashMap<String, Value>) -> Result<String> {
        self.expand_values(variables)
    }

    /// `expand`, with values read from any `Values`: the usual template is expanded from them
    /// as they are, and only another one builds the map that std-uritemplate takes.
    pub fn expand_values<V: Values + ?Sized>(&self, values: &V) -> Result<String> {
        let simple = self.expand_simple(values);
        match simple {
            Some(out) if !has_dot_segment(&out) => Ok(out),
            simple => self.expand_map(&values.to_map(), simple),
        }
    }

    /// `expand` from a map, given what `expand_simple` made of it.
    fn expand_map(
        &self,
        variables: &HashMap<String, Value>,
        simple: Option<String>,
    ) -> Result<String> {
        let (template, expressions) = (self.template, &self.expressions[..]);
        let out = match simple {
            Some(out) => out, // no dot value: `expand_simple` leaves those to the refusal below
            None => {
                let expanded = std_expand(template, variables)?;
                refuse_dot_values(template, expressions, variables)?;
                let piecewise = (template.contains("{+") || template.contains("{#"))
                    && has_lone_percent(variables);
                if piecewise {
                    // std-uritemplate loses a `%` that is followed by another before two hex
                    // digits in `+`/`#` expansions (`{+v}` with `%%41` gave `%41`). Expand
                    // expression by expression instead (RFC 6570 expands each on its own),
                    // with such a `%` written `%25`.
                    concat(&pieces(template, expressions, variables)?)
                } else {
                    encode_disallowed(expanded)
                }
            }
        };
        if has_dot_segment(&out) {
            // Rare: find which expression made it (a template may hold dot segments of its own).
            let pieces = pieces(template, expressions, variables)?;
            refuse_dot_segments(template, &pieces, expressions, variables)?;
        }
        Ok(out)
    }

    /// The expansion of the usual template (`/mandates/{id}`): simple expressions without
    /// modifiers (`{a}`, `{a,b}`) of plain names, string or integer values, and literals of
    /// characters a URI keeps as they are (no `%`), no value `.` or `..` in the path. `None`
    /// for anything else, which std-uritemplate expands. A differential test holds the two
    /// equal; this one skips std-uritemplate's own parse and its map of values (~5,000
    /// instructions a request).
    fn expand_simple<V: Values + ?Sized>(&self, variables: &V) -> Option<String> {
        let template = self.template;
        let mut out = String::with_capacity(template.len() + 16);
        let mut at = 0;
        for expression in self.expressions.iter() {
            let literal = &template[at..expression.span.start];
            if expression.operator.is_some() || !literal.bytes().all(kept_in_literal) {
                return None;
            }
            out.push_str(literal);
            let mut defined = 0;
            for spec in &expression.specs {
                let name = spec.name_in(template);
                let plain_name = name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
                if spec.prefix.is_some() || spec.explode || !plain_name {
                    return None;
                }
                let integer;
                let text = match variables.get(name) {
                    None => continue, // undefined: left out (RFC 6570 §3.2.1)
                    Some(Value::String(text)) => text.as_str(),
                    Some(Value::Integer(i)) => {
                        integer = i.to_string();
                        integer.as_str()
                    }
                    Some(_) => return None,
                };
                if expression.in_path && (text == "." || text == "..") {
                    return None; // refused by `refuse_dot_values`, with its message
                }
                if defined > 0 {
                    out.push(',');
                }
                defined += 1;
                encode_unreserved(text, &mut out);
            }
            at = expression.span.end;
        }
        let rest = &template[at..];
        rest.bytes().all(kept_in_literal).then(|| out + rest)
    }
}

/// Values by name, as an expansion reads them: a map, or a call's own list (`request::Variables`,
/// which builds no map for the usual template).
pub trait Values {
    /// The value of `name`; `None` when it is undefined.
    fn get(&self, name: &str) -> Option<&Value>;

    /// Every defined value, as std-uritemplate takes them.
    fn to_map(&self) -> Cow<'_, HashMap<String, Value>>;
}

impl Values for HashMap<String, Value> {
    fn get(&self, name: &str) -> Option<&Value> {
        HashMap::get(self, name)
    }

    fn to_map(&self) -> Cow<'_, HashMap<String, Value>> {
        Cow::Borrowed(self)
    }
}

/// Whether an expansion has a `.`/`..` segment before its query (see `is_dot_segment`).
fn has_dot_segment(expanded: &str) -> bool {
    // By bytes: a `char` pattern's searcher cost ~1,000 instructions a request here.
    let mut segments = path_of(expanded).as_bytes().split(|&b| b == b'/');
    segments.any(is_dot_segment)
}

/// A byte's class, by table: a template's literals and every value's bytes are classed, and
/// searching the lists of characters byte by byte cost ~30 instructions a byte.
const UNRESERVED: u8 = 1;
const RESERVED: u8 = 2;
const CLASSES: [u8; 256] = {
    let mut table = [0u8; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        // RFC 3986 §2.3 unreserved: ALPHA / DIGIT / "-" / "." / "_" / "~".
        if c.is_ascii_alphanumeric() || matches!(c, b'-' | b'.' | b'_' | b'~') {
            table[b] = UNRESERVED;
        }
        // RFC 3986 §2.2 reserved: gen-delims and sub-delims.
        if matches!(
            c,
            b':' | b'/'
                | b'?'
                | b'#'
                | b'['
                | b']'
                | b'@'
                | b'!'
                | b'$'
                | b'&'
                | b'\''
                | b'('
                | b')'
                | b'*'
                | b'+'
                | b','
                | b';'
                | b'='
        ) {
            table[b] = RESERVED;
        }
        b += 1;
    }
    table
};

/// RFC 3986 §2.3 unreserved: ALPHA / DIGIT / "-" / "." / "_" / "~".
fn is_unreserved(b: u8) -> bool {
    CLASSES[usize::from(b)] == UNRESERVED
}

/// A literal character of a template that expands as it is (RFC 6570 §3.1): unreserved or
/// reserved; a `%` (which must start a triplet) is left to std-uritemplate.
fn kept_in_literal(b: u8) -> bool {
    CLASSES[usize::from(b)] != 0
}

/// Append `text` with every byte but the unreserved ones pct-encoded (simple expansion,
/// RFC 6570 §3.2.2), in uppercase hex as std-uritemplate writes it.
fn encode_unreserved(text: &str, out: &mut String) {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    let mut rest = text;
    while !rest.is_empty() {
        // The run of unreserved bytes (ASCII, so a char boundary follows it) is copied whole.
        let run = rest
            .bytes()
            .position(|b| !is_unreserved(b))
            .unwrap_or(rest.len());
        out.push_str(&rest[..run]);
        let tail = &rest.as_bytes()[run..];
        let Some(&b) = tail.first() else { break };
        out.extend([
            '%',
            HEX[usize::from(b >> 4)] as char,
            HEX[usize::from(b & 15)] as char,
        ]);
        // One byte of a multi-byte char is not a boundary: go on by bytes to the next one.
        let mut next = run + 1;
        while next < rest.len() && !rest.is_char_boundary(next) {
            let b = rest.as_bytes()[next];
            out.extend([
                '%',
                HEX[usize::from(b >> 4)] as char,
                HEX[usize::from(b & 15)] as char,
            ]);
            next += 1;
        }
        rest = &rest[next..];
    }
}

/// The variable names of `expressions`, in order of first appearance, without duplicates.
fn unique_names<'e, 't>(
    template: &'t str,
    expressions: impl Iterator<Item = &'e Expression>,
) -> Vec<&'t str> {
    let mut names: Vec<&'t str> = Vec::new();
    for expression in expressions {
        for spec in &expression.specs {
            let name = spec.name_in(template);
            if !names.contains(&name) {
                names.push(name);
            }
        }
    }
    names
}

/// One `{...}` expression of a template.
#[derive(Debug, Clone)]
struct Expression {
    /// Where it is in the template, braces included.
    span: Range<usize>,
    operator: Option<u8>,
    specs: Vec<VarSpec>,
    /// Before any `?` or `#` of the template (literal, or a `{?`, `{&`, `{#` expression).
    in_path: bool,
}

#[derive(Debug, Clone)]
struct VarSpec {
    /// Where its name is in the template.
    name: Range<usize>,
    /// The `:n` prefix modifier, in characters.
    prefix: Option<usize>,
    /// The `*` explode modifier.
    explode: bool,
}

impl VarSpec {
    fn name_in<'t>(&self, template: &'t str) -> &'t str {
        &template[self.name.clone()]
    }
}

impl Expression {
    /// Simple, reserved or path-segment expansion in the path: each value is (part of) a
    /// path segment as it is. `{.v}` and `{;v}` add a `.`/`;v=` before it; query and fragment
    /// expansions cannot reach the path.
    fn fills_path(&self) -> bool {
        self.in_path && matches!(self.operator, None | Some(b'+' | b'/'))
    }

    /// Simple or reserved expansion in the path: left out, it leaves an empty segment or none.
    fn needs_value(&self) -> bool {
        self.in_path && matches!(self.operator, None | Some(b'+'))
    }
}

/// The expressions of `template`, its syntax checked (RFC 6570 §2).
fn parse(template: &str) -> Result<Vec<Expression>> {
    let malformed =
        |why: &str| Error::Template(format!("malformed URI template {template:?}: {why}"));
    let mut expressions = Vec::new();
    let mut in_path = true;
    let mut at = 0;
    while let Some(found) = template.as_bytes()[at..]
        .iter()
        .position(|&b| b == b'{' || b == b'}')
    {
        let open = at + found;
        if template.as_bytes()[open] == b'}' {
            return Err(malformed("'}' without '{'"));
        }
        in_path &= !template[at..open].contains(['?', '#']);
        let after = &template[open + 1..];
        let close = after.find('}').ok_or_else(|| malformed("unclosed '{'"))?;
        let body = &after[..close];
        if body.contains('{') {
            return Err(malformed("'{' inside an expression"));
        }
        let (operator, mut specs) = parse_expression(body).map_err(malformed)?;
        for spec in &mut specs {
            spec.name = open + 1 + spec.name.start..open + 1 + spec.name.end;
        }
        in_path &= !matches!(operator, Some(b'?' | b'&' | b'#'));
        expressions.push(Expression {
            span: open..open + close + 2,
            operator,
            specs,
            in_path,
        });
        at = open + close + 2;
    }
    Ok(expressions)
}
/// A value exactly `.` or `..` (after its `:n` prefix) where it fills the path. In `{+v}`,
/// pct-encoded triplets stay as they are, so `%2e%2E` is `..` to the server as well.
fn refuse_dot_values(
    template: &str,
    expressions: &[Expression],
    variables: &HashMap<String, Value>,
) -> Result<()> {
    for expression in expressions.iter().filter(|e| e.fills_path()) {
        for spec in &expression.specs {
            let name = spec.name_in(template);
            let items = match variables.get(name) {
                None => continue,
                Some(Value::List(items)) => items.as_slice(),
                Some(value) => std::slice::from_ref(value),
            };
            for item in items {
                let Value::String(text) = item else { continue };
                let text = match spec.prefix {
                    Some(n) => text
                        .char_indices()
                        .nth(n)
                        .map_or(text.as_str(), |(i, _)| &text[..i]),
                    None => text,
                };
                let dots = if expression.operator == Some(b'+') {
                    is_dot_segment(text.as_bytes())
                } else {
                    text == "." || text == ".."
                };
                if dots {
                    return Err(Error::Template(format!(
                        "URI template variable {} is {}: a value cannot be '.' or '..' in the \
                         path of {}, where it would address another resource",
                        single_quoted(name),
                        single_quoted(text),
                        single_quoted(template)
                    )));
                }
            }
        }
    }
    Ok(())
}

/// One part of an expansion: a literal, or what expression `expression` expanded to.
struct Piece {
    text: String,
    expression: Option<usize>,
}

fn concat(pieces: &[Piece]) -> String {
    pieces.iter().map(|p| p.text.as_str()).collect()
}

/// `template` expanded literal by literal and expression by expression.
fn pieces(
    template: &str,
    expressions: &[Expression],
    variables: &HashMap<String, Value>,
) -> Result<Vec<Piece>> {
    let lone_percent = has_lone_percent(variables);
    let expand =
        |part: &str, vars: &HashMap<String, Value>| std_expand(part, vars).map(encode_disallowed);
    let mut out = Vec::with_capacity(2 * expressions.len() + 1);
    let mut at = 0;
    for (i, expression) in expressions.iter().enumerate() {
        let literal = &template[at..expression.span.start];
        out.push(Piece {
            text: expand(literal, variables)?,
            expression: None,
        });
        let text = match expression.operator {
            Some(operator @ (b'+' | b'#')) if lone_percent => {
                let (rewritten, escaped) =
                    with_lone_percents_escaped(template, operator, expression, variables);
                expand(&rewritten, &escaped)?
            }
            _ => expand(&template[expression.span.clone()], variables)?,
        };
        out.push(Piece {
            text,
            expression: Some(i),
        });
        at = expression.span.end;
    }
    out.push(Piece {
        text: expand(&template[at..], variables)?,
        expression: None,
    });
    Ok(out)
}

/// A `+`/`#` expression and its values rewritten so that every lone `%` of a value is written
/// `%25`, which those expansions keep as it is. The `:n` prefix is applied first (to the value,
/// as RFC 6570 says, not to its escaped form: `{#a:3}` of `0%` is `#0%25`), so the rewritten
/// expression has none; its variables are renamed `v0`, `v1`... (`+`/`#` show no names).
fn with_lone_percents_escaped(
    template: &str,
    operator: u8,
    expression: &Expression,
    variables: &HashMap<String, Value>,
) -> (String, HashMap<String, Value>) {
    let mut specs = Vec::with_capacity(expression.specs.len());
    let mut escaped = HashMap::new();
    for (i, spec) in expression.specs.iter().enumerate() {
        let name = format!("v{i}");
        specs.push(format!("{name}{}", if spec.explode { "*" } else { "" }));
        if let Some(value) = variables.get(spec.name_in(template)) {
            let value = match spec.prefix {
                Some(n) => prefix_of(value, n),
                None => value.clone(),
            };
            escaped.insert(name, escape_lone_percent(&value));
        }
    }
    let rewritten = format!("{{{}{}}}", operator as char, specs.join(","));
    (rewritten, escaped)
}

/// The first `n` characters of a value (of each item of a list), as std-uritemplate takes
/// them; a map cannot have a prefix (the whole template was refused before).
fn prefix_of(value: &Value, n: usize) -> Value {
    let text = |s: &str| s.chars().take(n).collect::<String>();
    match value {
        Value::String(s) => Value::String(text(s)),
        Value::List(items) => Value::List(items.iter().map(|v| prefix_of(v, n)).collect()),
        Value::Integer(i) => Value::String(text(&i.to_string())),
        Value::Bool(b) => Value::String(text(&b.to_string())),
        other => other.clone(), // a map, or a float (never from Python, which sends its text)
    }
}

/// A `.`/`..` segment before the query that a value made (wholly or with the literal around
/// it: `/.{v}` with `v = "."`); the template's own dot segments are its author's business.
fn refuse_dot_segments(
    template: &str,
    pieces: &[Piece],
    expressions: &[Expression],
    variables: &HashMap<String, Value>,
) -> Result<()> {
    let mut text = String::new();
    let mut made_by: Vec<(Range<usize>, usize)> = Vec::new();
    for piece in pieces {
        let start = text.len();
        text.push_str(&piece.text);
        if let Some(expression) = piece.expression {
            made_by.push((start..text.len(), expression));
        }
    }
    let mut start = 0;
    for segment in path_of(&text).split('/') {
        let range = start..start + segment.len();
        start = range.end + 1;
        if !is_dot_segment(segment.as_bytes()) {
            continue;
        }
        let mut names: Vec<String> = Vec::new();
        for (made, expression) in &made_by {
            if made.start < range.end && range.start < made.end {
                for spec in &expressions[*expression].specs {
                    let name = spec.name_in(template);
                    let quoted = single_quoted(name);
                    if variables.contains_key(name) && !names.contains(&quoted) {
                        names.push(quoted);
                    }
                }
            }
        }
        if !names.is_empty() {
            return Err(Error::Template(format!(
                "URI template variable {} makes a {} segment in the path of {}: a value \
                 cannot add '.' or '..' segments, which would address another resource",
                names.join(", "),
                single_quoted(segment),
                single_quoted(template)
            )));
        }
    }
    Ok(())
}

/// What comes before the query or the fragment.
fn path_of(url: &str) -> &str {
    let end = url.bytes().position(|b| b == b'?' || b == b'#');
    &url[..end.unwrap_or(url.len())]
}

/// `.` or `..`, also pct-encoded: URL parsers (WHATWG, the `url` crate) read `%2e` as `.` there.
fn is_dot_segment(segment: &[u8]) -> bool {
    // Compared without a lowercase copy: every segment of every request's path comes here.
    const DOTS: [&[u8]; 6] = [b".", b"..", b"%2e", b".%2e", b"%2e.", b"%2e%2e"];
    segment.len() <= 6 && DOTS.iter().any(|dots| segment.eq_ignore_ascii_case(dots))
}

fn std_expand(template: &str, variables: &HashMap<String, Value>) -> Result<String> {
    stduritemplate::expand(template, variables)
        .map_err(|e| Error::Template(format!("malformed URI template {template:?}: {e}")))
}

/// A `%` that does not start a pct-encoded triplet (`%4`, `%%`, `50%`).
fn lone_percents(s: &str) -> impl Iterator<Item = usize> + '_ {
    let bytes = s.as_bytes();
    (0..bytes.len()).filter(move |&i| {
        bytes[i] == b'%'
            && !bytes
                .get(i + 1..i + 3)
                .is_some_and(|h| h.iter().all(u8::is_ascii_hexdigit))
    })
}

fn has_lone_percent(variables: &HashMap<String, Value>) -> bool {
    fn value(v: &Value) -> bool {
        match v {
            Value::String(s) => lone_percents(s).next().is_some(),
            Value::List(items) => items.iter().any(value),
            Value::Map(pairs) => pairs
                .iter()
                .any(|(k, v)| lone_percents(k).next().is_some() || value(v)),
            Value::Bool(_) | Value::Integer(_) | Value::Float(_) => false,
        }
    }
    variables.values().any(value)
}

/// The value with every lone `%` written `%25`, which `+`/`#` expansion keeps as it is.
fn escape_lone_percent(v: &Value) -> Value {
    let text = |s: &str| {
        let lone: Vec<usize> = lone_percents(s).collect();
        let mut out = String::with_capacity(s.len() + 2 * lone.len());
        let mut last = 0;
        for i in lone {
            out.push_str(&s[last..i]);
            out.push_str("%25");
            last = i + 1;
        }
        out.push_str(&s[last..]);
        out
    };
    match v {
        Value::String(s) => Value::String(text(s)),
        Value::List(items) => Value::List(items.iter().map(escape_lone_percent).collect()),
        Value::Map(pairs) => Value::Map(
            pairs
                .iter()
                .map(|(k, v)| (text(k), escape_lone_percent(v)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// Percent-encode what may not appear in a URI. std-uritemplate copies every ASCII character
/// but space as it is in `{+var}` and `{#var}` expansions (`<`, `"`, `{`, `|`, CR, LF, ...);
/// RFC 6570 §3.2.3 allows only unreserved and reserved characters and pct-encoded triplets.
fn encode_disallowed(expanded: String) -> String {
    let allowed = |c: char| c.is_ascii() && (kept_in_literal(c as u8) || c == '%');
    if expanded.chars().all(allowed) {
        return expanded;
    }
    let mut out = String::with_capacity(expanded.len() + 16);
    for c in expanded.chars() {
        if allowed(c) {
            out.push(c);
        } else {
            let mut buf = [0u8; 4];
            for byte in c.encode_utf8(&mut buf).bytes() {
                out.push_str(&format!("%{byte:02X}"));
            }
        }
    }
    out
}

/// The variable names a template declares, in order of first appearance, without duplicates.
///
/// Also checks the syntax of every expression, so a malformed template is reported even when
/// no variable is given.
pub fn variables(template: &str) -> Result<Vec<String>> {
    Parsed::new(template)?.checked_variables()
}

/// The operator and variables of one `{...}` expression (without braces); each name's range is
/// in `expression`.
fn parse_expression(
    expression: &str,
) -> std::result::Result<(Option<u8>, Vec<VarSpec>), &'static str> {
    let (operator, body) = match expression.as_bytes().first() {
        None => return Err("empty expression"),
        Some(&op @ (b'+' | b'#' | b'.' | b'/' | b';' | b'?' | b'&')) => {
            (Some(op), &expression[1..])
        }
        Some(b'=' | b',' | b'!' | b'@' | b'|') => return Err("reserved operator"),
        Some(_) => (None, expression),
    };
    let mut specs = Vec::new();
    let mut at = expression.len() - body.len();
    for spec in body.split(',') {
        let (name, prefix) = if let Some(name) = spec.strip_suffix('*') {
            (name, None)
        } else if let Some((name, length)) = spec.split_once(':') {
            let valid = !length.is_empty()
                && length.len() <= 4
                && !length.starts_with('0')
                && length.bytes().all(|b| b.is_ascii_digit());
            if !valid {
                return Err("prefix length must be 1 to 9999");
            }
            (name, length.parse().ok())
        } else {
            (spec, None)
        };
        if !is_varname(name) {
            return Err("invalid variable name");
        }
        specs.push(VarSpec {
            name: at..at + name.len(), // a name starts its spec
            prefix,
            explode: spec.ends_with('*'),
        });
        at += spec.len() + 1;
    }
    Ok((operator, specs))
}

/// varname = varchar *( ["."] varchar ); varchar = ALPHA / DIGIT / "_" / pct-encoded
fn is_varname(name: &str) -> bool {
    let bytes = name.as_bytes();
    if bytes.is_empty() || bytes[0] == b'.' || bytes[bytes.len() - 1] == b'.' {
        return false;
    }
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' => {
                let hex = bytes.get(i + 1..i + 3);
                if !hex.is_some_and(|h| h.iter().all(u8::is_ascii_hexdigit)) {
                    return false;
                }
                i += 3;
                continue;
            }
            b'.' if bytes[i - 1] == b'.' => return false,
            b if b.is_ascii_alphanumeric() || b == b'_' || b == b'.' => {}
            _ => return false,
        }
        i += 1;
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn simple_expansion_equals_std_uritemplate() {
        use rand::{rngs::StdRng, Rng, SeedableRng};
        let mut rng = StdRng::seed_from_u64(6570);
        let literal_chars: Vec<char> = "aZ09-._~:/?#[]@!$&'()*+,;=% é\"<>|^`".chars().collect();
        let value_chars: Vec<char> = "aZ09-._~:/?#[]@!$&'()*+,;=% é€😀\"<>\\\n{}"
            .chars()
            .collect();
        let names = ["id", "a", "B_2", "x.y", "a%20b"];
        let pick = |rng: &mut StdRng, chars: &[char], max: usize| -> String {
            let n = rng.random_range(0..=max);
            (0..n)
                .map(|_| chars[rng.random_range(0..chars.len())])
                .collect()
        };
        let mut simple = 0;
        for _ in 0..20_000 {
            let mut template = pick(&mut rng, &literal_chars, 4);
            for _ in 0..rng.random_range(0..3) {
                let k = rng.random_range(1..3);
                let specs: Vec<String> = (0..k)
                    .map(|_| {
                        let name = names[rng.random_range(0..names.len())];
                        let modifier = ["", "", "", "*", ":2"][rng.random_range(0..5)];
                        format!("{name}{modifier}")
                    })
                    .collect();
                let op = ["", "", "", "+", "/", "?"][rng.random_range(0..6)];
                template += &format!("{{{op}{}}}", specs.join(","));
                template += &pick(&mut rng, &literal_chars, 3);
            }
            let mut variables = HashMap::new();
            for name in names {
                match rng.random_range(0..5) {
                    0 => {}
                    1 => drop(
                        variables.insert(name.into(), Value::Integer(rng.random_range(-99..999))),
                    ),
                    2 => drop(
                        variables.insert(name.into(), Value::List(vec![Value::String("l".into())])),
                    ),
                    _ => drop(
                        variables
                            .insert(name.into(), Value::String(pick(&mut rng, &value_chars, 5))),
                    ),
                }
            }
            let Ok(parsed) = Parsed::new(&template) else {
                continue;
            };
            let Some(fast) = parsed.expand_simple(&variables) else {
                continue;
            };
            simple += 1;
            let slow = std_expand(&template, &variables).map(encode_disallowed);
            let slow = slow.unwrap_or_else(|e| panic!("{template:?}: short path {fast:?}, {e}"));
            assert_eq!(fast, slow, "{template:?} with {variables:?}");
        }
        assert!(
            simple > 2_000,
            "only {simple} templates took the short path"
        );
        let parsed = Parsed::new("/mandates/{id}").unwrap();
        let id = vars(&[("id", Value::String("MD 1/é".into()))]);
        assert_eq!(
            parsed.expand_simple(&id).as_deref(),
            Some("/mandates/MD%201%2F%C3%A9")
        );
    }

    fn vars(pairs: &[(&str, Value)]) -> HashMap<String, Value> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), v.clone()))
            .collect()
    }

    #[test]
    fn expands_levels() {
        let v = vars(&[
            ("reference", Value::String("demo creditor".into())),
            ("size", Value::Integer(50)),
            (
                "list",
                Value::List(vec![Value::String("a".into()), Value::String("b".into())]),
            ),
        ]);
        assert_eq!(
            expand("/creditors{?reference}", &v).unwrap(),
            "/creditors?reference=demo%20creditor"
        );
        assert_eq!(expand("/m{?size,page}", &v).unwrap(), "/m?size=50");
        assert_eq!(expand("/x{/list*}", &v).unwrap(), "/x/a/b");
    }

    #[test]
    fn reserved_expansion_encodes_what_is_neither_reserved_nor_unreserved() {
        // Found by the Hypothesis reference test: `<` came out as it is, and `{`, CR, LF too.
        let v = vars(&[(
            "v",
            Value::String("a<b>\"{c}|\r\n^`\\/?#[]@!$&'()*+,;=%41 é".into()),
        )]);
        assert_eq!(
            expand("{+v}", &v).unwrap(),
            "a%3Cb%3E%22%7Bc%7D%7C%0D%0A%5E%60%5C/?#[]@!$&'()*+,;=%41%20%C3%A9"
        );
        assert_eq!(
            expand("/x{#v}", &v).unwrap(),
            "/x#a%3Cb%3E%22%7Bc%7D%7C%0D%0A%5E%60%5C/?#[]@!$&'()*+,;=%41%20%C3%A9"
        );
    }

    #[test]
    fn reserved_expansion_keeps_every_lone_percent() {
        // Found by the Hypothesis reference test: `%%` came out as `%25`, `%%41` as `%41`.
        let v = vars(&[
            ("v", Value::String("%%41%4%zz50%".into())),
            (
                "m",
                Value::Map(vec![("%%".into(), Value::String("%".into()))]),
            ),
        ]);
        assert_eq!(
            expand("/a{+v}/{v}{#m*}", &v).unwrap(),
            "/a%25%41%254%25zz50%25/%25%2541%254%25zz50%25#%25%25=%25"
        );
        assert_eq!(expand("{+v}", &vars(&[])).unwrap(), "");
    }

    fn refused(template: &str, name: &str, value: Value) -> String {
        match expand(template, &vars(&[(name, value)])) {
            Err(Error::Template(message)) => {
                assert!(message.contains(&format!("'{name}'")), "{message}");
                message
            }
            other => panic!("{template} with {name}: expected a refusal, got {other:?}"),
        }
    }

    fn text(s: &str) -> Value {
        Value::String(s.into())
    }

    #[test]
    fn dot_values_cannot_fill_the_path() {
        for dots in [".", ".."] {
            let message = refused("/creditors/{ref}/orders", "ref", text(dots));
            assert!(message.contains("cannot be '.' or '..'"), "{message}");
            refused("/orders/{id}/cancel", "id", text(dots));
            refused("/orders{/id}", "id", text(dots));
            refused("{+id}", "id", text(dots));
            refused("/files/{name}.json", "name", text(dots)); // not a whole segment: refused too
            refused("/x{/ids*}", "ids", Value::List(vec![text("a"), text(dots)]));
            refused("/x/{ids}", "ids", Value::List(vec![text(dots)]));
        }
        refused("/orders/{id:2}", "id", text("..x")); // the prefix is what is sent
        refused("/orders/{id:1}", "id", text("..")); // the prefix is what is sent
                                                     // In `{+v}` pct-encoded triplets stay: `%2e` is a dot to the server.
        for dots in ["%2e%2E", ".%2e", "%2E.", "%2e"] {
            refused("/orders/{+id}/cancel", "id", text(dots));
        }
        // `{+v}` may add segments, but no dot segment.
        let message = refused("{+path}/x", "path", text("a/../../admin"));
        assert!(message.contains("makes a '..' segment"), "{message}");
        refused("/a/{+p}", "p", text("b/%2E%2e"));
        refused("https://h/{+p}?q", "p", text("./b"));
        // A value joined with the literal around it.
        refused("/a/.{v}", "v", text("."));
        refused("/a/{.v}", "v", text(""));
        refused("/a/{.v}", "v", text("."));
        refused("/a/{x}{y}/b", "y", text("."));
        // After a query expansion that expanded to nothing, a value is still in the path.
        refused("/o/{?x}{v}", "v", text(".."));
    }

    #[test]
    fn dot_values_are_harmless_elsewhere() {
        let ok =
            |template: &str, value: &str| expand(template, &vars(&[("v", text(value))])).unwrap();
        // Simple and path-segment expansion encode `%` and `/`: the server sees no dot segment.
        assert_eq!(ok("/o/{v}/c", "%2e%2e"), "/o/%252e%252e/c");
        assert_eq!(ok("/o/{v}/c", "../../admin"), "/o/..%2F..%2Fadmin/c");
        assert_eq!(ok("/o{/v}", "a/.."), "/o/a%2F..");
        assert_eq!(ok("/o/{v}", "..."), "/o/...");
        assert_eq!(ok("/o/{v}", ".a"), "/o/.a");
        // Query, fragment, label and parameter expansions do not fill a path segment.
        assert_eq!(ok("/o{?v}", ".."), "/o?v=..");
        assert_eq!(ok("/o?q={v}", ".."), "/o?q=..");
        assert_eq!(ok("/o{?x}{v}", ".."), "/o..");
        assert_eq!(ok("/o#{v}", ".."), "/o#..");
        assert_eq!(ok("/o{#v}", "/../"), "/o#/../");
        assert_eq!(ok("/o/x{.v}", ".."), "/o/x...");
        assert_eq!(ok("/o{;v}", ".."), "/o;v=..");
        assert_eq!(ok("/o/{+v}", "a/b?c=/../"), "/o/a/b?c=/../");
        // The template's own dot segments are its author's.
        assert_eq!(ok("/a/../{v}", "b"), "/a/../b");
        assert_eq!(ok("{+v}/orders", "https://h/v1"), "https://h/v1/orders");
    }

    #[test]
    fn path_variables_are_those_before_the_query() {
        assert_eq!(
            path_variables("/o/{id}{/sub}{.fmt}{;p}{?q}{+r}").unwrap(),
            ["id", "sub"]
        );
        assert_eq!(
            path_variables("{+base}/o/{a,b}/x{.f}").unwrap(),
            ["base", "a", "b"]
        );
        assert!(path_variables("/a?x={y}").unwrap().is_empty());
        assert!(path_variables("/a{?q}/{y}").unwrap().is_empty());
        assert!(path_variables("/a{#f}{y}").unwrap().is_empty());
        assert!(path_variables("/a{&q}{y}").unwrap().is_empty());
        assert!(matches!(path_variables("/a{"), Err(Error::Template(_))));
    }

    fn required_variables(template: &str) -> Result<Vec<&str>> {
        Ok(Parsed::new(template)?.required_variables().collect())
    }

    #[test]
    fn required_variables_are_the_simple_and_reserved_ones_before_the_query() {
        assert_eq!(
            required_variables("/o/{id}{/sub}{.fmt}{;p}{?q}{+r}").unwrap(),
            ["id"]
        );
        assert_eq!(
            required_variables("{+base}/o/{a,b}/x{.f}{/c}").unwrap(),
            ["base", "a", "b"]
        );
        assert_eq!(required_variables("/o/{id}/x/{id}").unwrap(), ["id", "id"]);
        assert!(required_variables("/o{/id}{#f}").unwrap().is_empty());
        assert!(required_variables("/a?x={y}").unwrap().is_empty());
        assert!(required_variables("/a{?q}/{y}{+z}").unwrap().is_empty());
        assert!(required_variables("/a#{y}").unwrap().is_empty());
        assert!(required_variables("/a{&q}{y}").unwrap().is_empty());
        assert!(matches!(required_variables("/a{"), Err(Error::Template(_))));
    }

    #[test]
    fn a_prefix_applies_to_the_value_before_its_lone_percents_are_escaped() {
        // Found by the Hypothesis reference test: `{#a:3}` of `0%` gave `#0%252`.
        let v = vars(&[
            ("a", text("0%")),
            ("b", text("%%")),
            ("c", text("%41")),
            ("l", Value::List(vec![text("%%x"), text("ab")])),
            ("n", Value::Integer(12345)),
            ("t", Value::Bool(true)),
        ]);
        assert_eq!(expand("{#a:3}", &v).unwrap(), "#0%25");
        assert_eq!(expand("{+b:2}", &v).unwrap(), "%25%25");
        assert_eq!(expand("{+c:2}/{+c}", &v).unwrap(), "%254/%41");
        assert_eq!(
            expand("{+l:2}|{#l*}", &v).unwrap(),
            "%25%25,ab%7C#%25%25x,ab"
        );
        assert_eq!(expand("{+n:2,t:1}", &v).unwrap(), "12,t");
    }

    #[test]
    fn lists_variables_in_order_without_duplicates() {
        assert_eq!(
            variables("https://h/orders{?creditorReference,reference}").unwrap(),
            vec!["creditorReference", "reference"]
        );
        assert_eq!(
            variables("/{id}/x{?id,list*,name:3}{&a.b}").unwrap(),
            vec!["id", "list", "name", "a.b"]
        );
        assert!(variables("/plain").unwrap().is_empty());
    }

    #[test]
    fn malformed_templates_are_errors() {
        for bad in [
            "{/id*",
            "/id*}",
            "{}",
            "{var:0}",
            "{var:01}",
            "{with space}",
            "{!x}",
            "{a{b}}",
            "{=path}",
            "{var:prefix}",
            "{hello:2*}",
            "/{default-graph-uri}",
            "{a..b}",
        ] {
            assert!(matches!(variables(bad), Err(Error::Template(_))), "{bad}");
        }
    }
}
