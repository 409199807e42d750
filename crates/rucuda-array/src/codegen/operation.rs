//! A small C lexer over user operations, and the analysis the generators need: how each
//! array argument is used (only as `x[i]`? read, written, or both?) and a rewrite of
//! those `x[i]` uses into other expressions (register tiles, strided offsets).

use std::ops::Range;

use super::{ArgSpec, CodegenError};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Ident,
    Number,
    Literal,
    Punct,
    Trivia,
}

#[derive(Debug, Clone)]
struct Token {
    kind: Kind,
    span: Range<usize>,
}

const PUNCT3: &[&str] = &["<<=", ">>=", "..."];
const PUNCT2: &[&str] = &[
    "==", "!=", "<=", ">=", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "++", "--", "&&", "||",
    "<<", ">>", "->", "::",
];

fn lex(src: &str) -> Vec<Token> {
    let b = src.as_bytes();
    let mut out = Vec::new();
    let mut k = 0;
    while k < b.len() {
        let start = k;
        let c = b[k];
        let kind = if c.is_ascii_whitespace() {
            while k < b.len() && b[k].is_ascii_whitespace() {
                k += 1;
            }
            Kind::Trivia
        } else if src[k..].starts_with("//") {
            while k < b.len() && b[k] != b'\n' {
                k += 1;
            }
            Kind::Trivia
        } else if src[k..].starts_with("/*") {
            k = src[k + 2..].find("*/").map_or(b.len(), |e| k + 2 + e + 2);
            Kind::Trivia
        } else if c.is_ascii_alphabetic() || c == b'_' {
            while k < b.len() && (b[k].is_ascii_alphanumeric() || b[k] == b'_') {
                k += 1;
            }
            Kind::Ident
        } else if c.is_ascii_digit() || (c == b'.' && b.get(k + 1).is_some_and(u8::is_ascii_digit))
        {
            while k < b.len() && (b[k].is_ascii_alphanumeric() || b[k] == b'.' || b[k] == b'_') {
                // exponent signs: 1e-5
                if (b[k] == b'e' || b[k] == b'E') && matches!(b.get(k + 1), Some(b'+' | b'-')) {
                    k += 1;
                }
                k += 1;
            }
            Kind::Number
        } else if c == b'"' || c == b'\'' {
            k += 1;
            while k < b.len() && b[k] != c {
                if b[k] == b'\\' {
                    k += 1;
                }
                k += 1;
            }
            k = (k + 1).min(b.len());
            Kind::Literal
        } else {
            let rest = &src[k..];
            let len = PUNCT3
                .iter()
                .chain(PUNCT2)
                .find(|p| rest.starts_with(**p))
                .map_or_else(
                    || rest.chars().next().map_or(1, char::len_utf8),
                    |p| p.len(),
                );
            k += len;
            Kind::Punct
        };
        out.push(Token {
            kind,
            span: start..k,
        });
    }
    out
}

/// True when the loop index `i` appears in `source` only as a subscript, `name[i]` (so a
/// kernel that visits the elements in another order than row-major computes the same
/// values): no `i + 1`, no `out[i] = i`.
///
/// ```
/// use rucuda_array::codegen::index_only_in_subscripts;
/// assert!(index_only_in_subscripts("z[i] = x[i] * 2; // i"));
/// assert!(!index_only_in_subscripts("z[i] = i"));
/// assert!(!index_only_in_subscripts("z[i] = x[i + 1]"));
/// ```
pub fn index_only_in_subscripts(source: &str) -> bool {
    let tokens = lex(source);
    let sig: Vec<&Token> = tokens.iter().filter(|t| t.kind != Kind::Trivia).collect();
    let text = |t: &Token| &source[t.span.clone()];
    sig.iter().enumerate().all(|(k, t)| {
        t.kind != Kind::Ident
            || text(t) != "i"
            || (k > 0 && text(sig[k - 1]) == "[" && sig.get(k + 1).is_some_and(|n| text(n) == "]"))
    })
}

/// How an operation touches one array argument.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ArgUsage {
    /// Spans of the `name[i]` uses in the operation (the whole `name [ i ]` text).
    pub indexed: Vec<Range<usize>>,
    /// Some `name[i]` is read (or read-modify-written: `+=`, `++`, `.re = `).
    pub read: bool,
    /// Some `name[i]` is assigned or modified.
    pub written: bool,
    /// The first use other than `name[i]` (`name[i+1]`, `name`, `&name[i]`), if any.
    pub other_use: Option<String>,
}

impl ArgUsage {
    /// True when every use is exactly `name[i]`.
    pub fn only_at_i(&self) -> bool {
        self.other_use.is_none()
    }
}

/// The analysis of an operation for a set of array names.
#[derive(Debug, Clone)]
pub struct OperationAnalysis {
    source: String,
    usages: Vec<(String, ArgUsage)>,
    /// The operation contains control flow (`if`, `?`, loops, `&&`, `||`, ...), so an
    /// assignment in it may not run for every element.
    pub has_control_flow: bool,
}

const CONTROL: &[&str] = &[
    "if", "else", "for", "while", "do", "switch", "case", "goto", "return", "break", "continue",
    "?", "&&", "||",
];

impl OperationAnalysis {
    /// Analyses `operation` for the array arguments `names`.
    ///
    /// ```
    /// use rucuda_array::codegen::OperationAnalysis;
    /// let a = OperationAnalysis::new("z[i] = a * x[i] + y[i + 1]", &["x", "y", "z"]);
    /// assert!(a.usage("x").unwrap().read && a.usage("x").unwrap().only_at_i());
    /// assert!(a.usage("z").unwrap().written && !a.usage("z").unwrap().read);
    /// assert_eq!(a.usage("y").unwrap().other_use.as_deref(), Some("y[i + 1]"));
    /// ```
    pub fn new(operation: &str, names: &[&str]) -> OperationAnalysis {
        let tokens = lex(operation);
        let sig: Vec<&Token> = tokens.iter().filter(|t| t.kind != Kind::Trivia).collect();
        let text = |t: &Token| &operation[t.span.clone()];
        let has_control_flow = sig
            .iter()
            .any(|t| matches!(t.kind, Kind::Ident | Kind::Punct) && CONTROL.contains(&text(t)));
        let mut usages: Vec<(String, ArgUsage)> = names
            .iter()
            .map(|n| (n.to_string(), ArgUsage::default()))
            .collect();
        for (k, t) in sig.iter().enumerate() {
            if t.kind != Kind::Ident {
                continue;
            }
            let Some((_, usage)) = usages.iter_mut().find(|(n, _)| n == text(t)) else {
                continue;
            };
            // Member access of something else (`s.x`, `p->x`) is not our argument.
            if k > 0 && matches!(text(sig[k - 1]), "." | "->" | "::") {
                continue;
            }
            let at_i = sig.get(k + 1).is_some_and(|t| text(t) == "[")
                && sig.get(k + 2).is_some_and(|t| text(t) == "i")
                && sig.get(k + 3).is_some_and(|t| text(t) == "]");
            let prev = if k > 0 { text(sig[k - 1]) } else { "" };
            if !at_i || prev == "&" && !is_binary_context(&sig, k, operation) {
                if usage.other_use.is_none() {
                    let end = sig.get(k + 3).map_or(t.span.end, |e| e.span.end);
                    let end = if at_i {
                        end
                    } else {
                        snippet_end(&sig, k, operation)
                    };
                    usage.other_use = Some(operation[t.span.start..end].to_string());
                }
                continue;
            }
            usage.indexed.push(t.span.start..sig[k + 3].span.end);
            let next = sig.get(k + 4).map_or("", |t| text(t));
            let pre_modify = matches!(prev, "++" | "--");
            // A member access (`x[i].re`, `p[i].pos.x`, `p[i].ids[2]`): the element is
            // written (and read: its other members stay) only when the member chain is
            // assigned or modified; otherwise it is only read.
            let next = if next == "." {
                let mut j = k + 4;
                loop {
                    match sig.get(j).map(|t| text(t)) {
                        Some("." | "->")
                            if sig.get(j + 1).is_some_and(|t| t.kind == Kind::Ident) =>
                        {
                            j += 2;
                        }
                        Some("[") => {
                            let mut depth = 0usize;
                            while let Some(t) = sig.get(j) {
                                match text(t) {
                                    "[" => depth += 1,
                                    "]" => depth -= 1,
                                    _ => {}
                                }
                                j += 1;
                                if depth == 0 {
                                    break;
                                }
                            }
                        }
                        _ => break,
                    }
                }
                match sig.get(j).map_or("", |t| text(t)) {
                    "=" | "+=" | "-=" | "*=" | "/=" | "%=" | "&=" | "|=" | "^=" | "<<=" | ">>="
                    | "++" | "--" => ".",
                    _ if pre_modify => ".",
                    _ => "",
                }
            } else {
                next
            };
            match next {
                "=" => usage.written = true,
                "+=" | "-=" | "*=" | "/=" | "%=" | "&=" | "|=" | "^=" | "<<=" | ">>=" | "++"
                | "--" | "." => {
                    usage.written = true;
                    usage.read = true;
                }
                _ if pre_modify => {
                    usage.written = true;
                    usage.read = true;
                }
                _ => usage.read = true,
            }
        }
        OperationAnalysis {
            source: operation.to_string(),
            usages,
            has_control_flow,
        }
    }

    /// The usage of one array name.
    pub fn usage(&self, name: &str) -> Option<&ArgUsage> {
        self.usages.iter().find(|(n, _)| n == name).map(|(_, u)| u)
    }

    /// Analyses `operation` for the array arguments among `args`.
    pub(crate) fn of_arrays(operation: &str, args: &[ArgSpec]) -> OperationAnalysis {
        let names: Vec<&str> = args
            .iter()
            .filter(|a| a.is_vector())
            .map(ArgSpec::name)
            .collect();
        OperationAnalysis::new(operation, &names)
    }

    /// Refuses a variant of `kernel` that reads the arrays `names` as `x[i]` only (through
    /// register tiles or strides) when the operation uses one of them otherwise.
    pub(crate) fn require_only_at_i<'n>(
        &self,
        kernel: &str,
        names: impl IntoIterator<Item = &'n str>,
    ) -> Result<(), CodegenError> {
        for name in names {
            if let Some(usage) = self.usage(name).and_then(|u| u.other_use.clone()) {
                return Err(CodegenError::StridedUnsupported {
                    kernel: kernel.to_string(),
                    name: name.to_string(),
                    usage,
                });
            }
        }
        Ok(())
    }

    /// The operation with each `name[i]` replaced by `replace(name)` for the names that
    /// `replace` answers; other text unchanged.
    ///
    /// ```
    /// use rucuda_array::codegen::OperationAnalysis;
    /// let a = OperationAnalysis::new("z[i] = x[i]*x [ i ]; // x[i]", &["x", "z"]);
    /// let r = a.rewrite(|n| (n == "x").then(|| "xt[k]".to_string()));
    /// assert_eq!(r, "z[i] = xt[k]*xt[k]; // x[i]");
    /// ```
    pub fn rewrite(&self, replace: impl Fn(&str) -> Option<String>) -> String {
        let mut edits: Vec<(Range<usize>, String)> = Vec::new();
        for (name, usage) in &self.usages {
            if let Some(with) = replace(name) {
                for span in &usage.indexed {
                    edits.push((span.clone(), with.clone()));
                }
            }
        }
        edits.sort_by_key(|(s, _)| s.start);
        let mut out = String::with_capacity(self.source.len());
        let mut at = 0;
        for (span, with) in edits {
            out.push_str(&self.source[at..span.start]);
            out.push_str(&with);
            at = span.end;
        }
        out.push_str(&self.source[at..]);
        out
    }
}

/// `a & x[i]` is a bitwise and, not an address-of: the token before `&` ends an operand.
fn is_binary_context(sig: &[&Token], k: usize, src: &str) -> bool {
    if k < 2 {
        return false;
    }
    let before = sig[k - 2];
    matches!(before.kind, Kind::Ident | Kind::Number | Kind::Literal)
        || matches!(&src[before.span.clone()], ")" | "]")
}

/// A short piece of the operation starting at token `k`, for error messages.
fn snippet_end(sig: &[&Token], k: usize, _src: &str) -> usize {
    let last = (k + 5).min(sig.len() - 1);
    sig[last].span.end
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn member_access_reads_unless_the_member_is_assigned() {
        let a = OperationAnalysis::new(
            "out[i] = p[i].pos.x * s.x + q[i].ids[2]; r[i].mass = 1; t[i].v.x += 2; ++u[i].n",
            &["out", "p", "q", "r", "t", "u"],
        );
        let rw = |n: &str| {
            let u = a.usage(n).unwrap();
            (u.read, u.written)
        };
        assert_eq!(rw("p"), (true, false));
        assert_eq!(rw("q"), (true, false));
        assert_eq!(rw("r"), (true, true));
        assert_eq!(rw("t"), (true, true));
        assert_eq!(rw("u"), (true, true));
        assert_eq!(rw("out"), (false, true));
        assert!(a.usage("p").unwrap().only_at_i());
    }

    #[test]
    fn reads_writes_and_modifications() {
        let a = OperationAnalysis::new(
            "z[i] = x[i]; w[i] += 1; ++v[i]; u[i].re = 2; t[i]++; s[i] == 3",
            &["x", "z", "w", "v", "u", "t", "s"],
        );
        let rw = |n| {
            let u = a.usage(n).unwrap();
            (u.read, u.written)
        };
        assert_eq!(rw("z"), (false, true));
        assert_eq!(rw("x"), (true, false));
        assert_eq!(rw("w"), (true, true));
        assert_eq!(rw("v"), (true, true));
        assert_eq!(rw("u"), (true, true));
        assert_eq!(rw("t"), (true, true));
        assert_eq!(rw("s"), (true, false));
        assert!(!a.has_control_flow);
        assert!(a.usages.iter().all(|(_, u)| u.only_at_i()));
    }

    #[test]
    fn other_uses_are_reported() {
        let a = OperationAnalysis::new(
            "z[i] = x[i - 1] + f(y) + *(&w[i]) + q.x + (a & v[i])",
            &["x", "y", "z", "w", "v"],
        );
        assert_eq!(a.usage("x").unwrap().other_use.as_deref(), Some("x[i - 1]"));
        assert!(a.usage("y").unwrap().other_use.is_some());
        assert!(a.usage("w").unwrap().other_use.is_some());
        // `q.x` is a member, not the argument x; `a & v[i]` is a bitwise and.
        assert!(a.usage("v").unwrap().only_at_i());
        assert!(a.usage("z").unwrap().only_at_i());
    }

    #[test]
    fn comments_strings_and_control_flow() {
        let a = OperationAnalysis::new(
            "/* x[i+1] */ if (x[i] > 0) z[i] = 1.5e-3; // y[2]\n printf(\"x[i]\")",
            &["x", "y", "z"],
        );
        assert!(a.has_control_flow);
        assert!(a.usage("x").unwrap().only_at_i());
        assert_eq!(a.usage("x").unwrap().indexed.len(), 1);
        assert!(a.usage("y").unwrap().indexed.is_empty());
        assert!(OperationAnalysis::new("z[i] = c ? x[i] : 0", &["x"]).has_control_flow);
        assert!(OperationAnalysis::new("z[i] = c && x[i]", &["x"]).has_control_flow);
        assert!(!OperationAnalysis::new("z[i] = iff(x[i])", &["x"]).has_control_flow);
    }

    #[test]
    fn rewrite_replaces_only_named_uses() {
        let a = OperationAnalysis::new("z[i] = a*x[i] + y[i]", &["x", "y", "z"]);
        let r = a.rewrite(|n| Some(format!("{n}_t[k]")));
        assert_eq!(r, "z_t[k] = a*x_t[k] + y_t[k]");
        let r = a.rewrite(|n| (n != "z").then(|| format!("{n}[{n}_off]")));
        assert_eq!(r, "z[i] = a*x[x_off] + y[y_off]");
    }
}
