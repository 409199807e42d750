//! PyCUDA's C argument strings (`"float a, float *x, const double *y"`) parsed into
//! [`ArgSpec`]s, with errors that point at the bad token.
//!
//! Grammar of one argument: `[const] TYPE [const] [* [const|__restrict__|restrict]] NAME`
//! where TYPE is one of the spellings [`c_type_to_dtype`] knows. Pointers to pointers,
//! arrays and function pointers are refused.

use crate::dtype::DType;

use super::{ArgParseError, ArgSpec};

/// The element type of a C type spelling (whitespace-normalised), or `None`.
///
/// ```
/// use rucuda_array::codegen::c_type_to_dtype;
/// use rucuda_array::DType;
/// assert_eq!(c_type_to_dtype("unsigned long long"), Some(DType::U64));
/// assert_eq!(c_type_to_dtype("pycuda::complex<float>"), Some(DType::C64));
/// assert_eq!(c_type_to_dtype("__half"), Some(DType::F16));
/// assert_eq!(c_type_to_dtype("quaternion"), None);
/// ```
pub fn c_type_to_dtype(spelling: &str) -> Option<DType> {
    use DType::*;
    let norm: String = spelling.split_whitespace().collect::<Vec<_>>().join(" ");
    let norm = norm
        .replace(" <", "<")
        .replace("< ", "<")
        .replace(" >", ">");
    Some(match norm.as_str() {
        "bool" => Bool,
        "char" | "signed char" | "int8_t" => I8,
        "unsigned char" | "uint8_t" => U8,
        "short" | "short int" | "signed short" | "signed short int" | "int16_t" => I16,
        "unsigned short" | "unsigned short int" | "uint16_t" => U16,
        "int" | "signed" | "signed int" | "int32_t" => I32,
        "unsigned" | "unsigned int" | "uint32_t" => U32,
        "long"
        | "long int"
        | "signed long"
        | "long long"
        | "long long int"
        | "signed long long"
        | "signed long long int"
        | "int64_t"
        | "ptrdiff_t" => I64,
        "unsigned long"
        | "unsigned long int"
        | "unsigned long long"
        | "unsigned long long int"
        | "uint64_t"
        | "size_t" => U64,
        "float" => F32,
        "double" => F64,
        "half" | "__half" | "rucuda_half" => F16,
        "__nv_bfloat16" | "nv_bfloat16" | "bfloat16" | "rucuda_bfloat16" => BF16,
        "complex<float>"
        | "pycuda::complex<float>"
        | "thrust::complex<float>"
        | "cuda::std::complex<float>"
        | "rucuda_complex64"
        | "rucuda_complex<float>" => C64,
        "complex<double>"
        | "pycuda::complex<double>"
        | "thrust::complex<double>"
        | "cuda::std::complex<double>"
        | "rucuda_complex128"
        | "rucuda_complex<double>" => C128,
        // CUDA's vector types and registered structs (`float3`, `particle`).
        _ => return crate::dtype::registered_dtype(&norm),
    })
}

/// The most words a type spelling has (`signed long long int`).
const MAX_TYPE_WORDS: usize = 4;

/// Words that may begin a type spelling.
fn starts_type(word: &str) -> bool {
    const STARTS: &[&str] = &[
        "bool",
        "char",
        "signed",
        "unsigned",
        "short",
        "int",
        "long",
        "float",
        "double",
        "int8_t",
        "uint8_t",
        "int16_t",
        "uint16_t",
        "int32_t",
        "uint32_t",
        "int64_t",
        "uint64_t",
        "size_t",
        "ptrdiff_t",
        "half",
        "__half",
        "rucuda_half",
        "__nv_bfloat16",
        "nv_bfloat16",
        "bfloat16",
        "rucuda_bfloat16",
        "rucuda_complex64",
        "rucuda_complex128",
    ];
    STARTS.contains(&word) || word.contains('<') || crate::dtype::registered_dtype(word).is_some()
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    /// An identifier, possibly `::`-qualified and with a template argument list.
    Word(String),
    Star,
    Comma,
    Other(String),
}

#[derive(Debug, Clone)]
struct Token {
    tok: Tok,
    /// 1-based column of its first character.
    column: usize,
    text: String,
}

fn lex(source: &str) -> Result<Vec<Token>, ArgParseError> {
    let chars: Vec<char> = source.chars().collect();
    let mut out = Vec::new();
    let mut k = 0usize;
    let ident_char = |c: char| c.is_ascii_alphanumeric() || c == '_';
    while k < chars.len() {
        let c = chars[k];
        let start = k;
        if c.is_whitespace() {
            k += 1;
            continue;
        }
        let tok = if c.is_ascii_alphabetic() || c == '_' {
            // identifier, with `::` qualifiers and one `<...>` template argument list
            loop {
                while k < chars.len() && ident_char(chars[k]) {
                    k += 1;
                }
                if k + 2 < chars.len()
                    && chars[k] == ':'
                    && chars[k + 1] == ':'
                    && ident_char(chars[k + 2])
                {
                    k += 2;
                    continue;
                }
                break;
            }
            let mut probe = k;
            while probe < chars.len() && chars[probe].is_whitespace() {
                probe += 1;
            }
            if probe < chars.len() && chars[probe] == '<' {
                match chars[probe..].iter().position(|&c| c == '>') {
                    Some(close) => k = probe + close + 1,
                    None => {
                        return Err(ArgParseError {
                            source: source.to_string(),
                            column: probe + 1,
                            token: "<".into(),
                            expected: "a closing `>` of the template argument list".into(),
                        })
                    }
                }
            }
            Tok::Word(
                chars[start..k]
                    .iter()
                    .filter(|c| !c.is_whitespace())
                    .collect(),
            )
        } else if c == '*' {
            k += 1;
            Tok::Star
        } else if c == ',' {
            k += 1;
            Tok::Comma
        } else {
            k += 1;
            Tok::Other(c.to_string())
        };
        out.push(Token {
            tok,
            column: start + 1,
            text: chars[start..k].iter().collect(),
        });
    }
    Ok(out)
}

struct Parser<'a> {
    source: &'a str,
    tokens: Vec<Token>,
    pos: usize,
}

impl Parser<'_> {
    fn peek(&self) -> Option<&Token> {
        self.tokens.get(self.pos)
    }

    fn error(&self, expected: &str) -> ArgParseError {
        let (column, token) = match self.peek() {
            Some(t) => (t.column, t.text.clone()),
            None => (self.source.chars().count() + 1, String::new()),
        };
        ArgParseError {
            source: self.source.to_string(),
            column,
            token,
            expected: expected.to_string(),
        }
    }

    fn eat_word(&mut self, words: &[&str]) -> bool {
        match self.peek() {
            Some(Token {
                tok: Tok::Word(w), ..
            }) if words.contains(&w.as_str()) => {
                self.pos += 1;
                true
            }
            _ => false,
        }
    }

    fn word_at(&self, pos: usize) -> Option<&str> {
        match self.tokens.get(pos) {
            Some(Token {
                tok: Tok::Word(w), ..
            }) => Some(w),
            _ => None,
        }
    }

    fn argument(&mut self) -> Result<ArgSpec, ArgParseError> {
        let mut is_const = false;
        while self.eat_word(&["const", "volatile"]) {
            is_const = true;
        }
        // Type: the longest run of words that spells a known type.
        match self.word_at(self.pos) {
            Some(w) if starts_type(w) => {}
            Some(_) => {
                return Err(self.error(
                    "a C type (float, double, int, unsigned int, long long, bool, __half, \
                     __nv_bfloat16, complex<float>, ...)",
                ))
            }
            None => return Err(self.error("an argument (a type and a name)")),
        }
        let mut best: Option<(usize, DType)> = None;
        let mut words: Vec<&str> = Vec::new();
        let mut p = self.pos;
        // No spelling has more words than this (`unsigned long long int`): looking
        // further only costs time (quadratic in a long run of words).
        while let Some(w) = self.word_at(p).filter(|_| words.len() < MAX_TYPE_WORDS) {
            words.push(w);
            if let Some(d) = c_type_to_dtype(&words.join(" ")) {
                best = Some((p + 1, d));
            }
            p += 1;
        }
        let Some((end, dtype)) = best else {
            return Err(self.error("a C type (float, double, int, ...)"));
        };
        self.pos = end;
        if self.eat_word(&["const"]) {
            is_const = true;
        }
        let is_vector = matches!(self.peek(), Some(Token { tok: Tok::Star, .. }));
        if is_vector {
            self.pos += 1;
            if matches!(self.peek(), Some(Token { tok: Tok::Star, .. })) {
                return Err(self.error("an argument name (pointers to pointers are not supported)"));
            }
            while self.eat_word(&["const", "__restrict__", "restrict", "__restrict"]) {}
        }
        let name = match self.peek() {
            Some(Token {
                tok: Tok::Word(w), ..
            }) if super::args::is_identifier(w) && !starts_type(w) && w != "const" => w.clone(),
            _ => {
                return Err(self.error(if is_vector {
                    "an argument name"
                } else {
                    "`*` or an argument name"
                }))
            }
        };
        self.pos += 1;
        Ok(match (is_vector, is_const) {
            (false, _) => ArgSpec::scalar(name, dtype),
            (true, false) => ArgSpec::vector(name, dtype),
            (true, true) => ArgSpec::const_vector(name, dtype),
        })
    }
}

/// Parses a PyCUDA-style C argument list. Names are checked later, when a kernel is
/// built (so a reserved name is reported with the kernel).
///
/// ```
/// use rucuda_array::codegen::{parse_arguments, ArgSpec};
/// use rucuda_array::DType;
/// let args = parse_arguments("float a, float *x, const double * __restrict__ y").unwrap();
/// assert_eq!(args, vec![
///     ArgSpec::scalar("a", DType::F32),
///     ArgSpec::vector("x", DType::F32),
///     ArgSpec::const_vector("y", DType::F64),
/// ]);
/// let e = parse_arguments("float a, float *").unwrap_err();
/// assert_eq!((e.column, e.expected.as_str()), (17, "an argument name"));
/// ```
pub fn parse_arguments(source: &str) -> Result<Vec<ArgSpec>, ArgParseError> {
    let mut p = Parser {
        source,
        tokens: lex(source)?,
        pos: 0,
    };
    let mut args = Vec::new();
    if p.tokens.is_empty() {
        return Ok(args);
    }
    loop {
        args.push(p.argument()?);
        match p.peek() {
            None => return Ok(args),
            Some(Token {
                tok: Tok::Comma, ..
            }) => p.pos += 1,
            Some(_) => return Err(p.error("`,` or the end of the arguments")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(s: &str) -> ArgParseError {
        parse_arguments(s).unwrap_err()
    }

    #[test]
    fn spellings_and_qualifiers() {
        let a = parse_arguments(
            "unsigned int k, long long *v, const unsigned char* m, float const *c, \
             double * const __restrict__ d, pycuda::complex<double> *z, __nv_bfloat16 b, \
             complex < float > *w, bool *flags, size_t len",
        )
        .unwrap();
        let want = vec![
            ArgSpec::scalar("k", DType::U32),
            ArgSpec::vector("v", DType::I64),
            ArgSpec::const_vector("m", DType::U8),
            ArgSpec::const_vector("c", DType::F32),
            ArgSpec::vector("d", DType::F64),
            ArgSpec::vector("z", DType::C128),
            ArgSpec::scalar("b", DType::BF16),
            ArgSpec::vector("w", DType::C64),
            ArgSpec::vector("flags", DType::Bool),
            ArgSpec::scalar("len", DType::U64),
        ];
        assert_eq!(a, want);
        assert_eq!(parse_arguments("").unwrap(), vec![]);
        assert_eq!(parse_arguments("   ").unwrap(), vec![]);
    }

    /// Found while writing the `arg_strings` fuzz target: the type of an argument was
    /// looked for over the whole run of words that followed, joining them again for
    /// every word, so 16,000 words (`"int int int ..."`, 64 KB) took 13 s to refuse and
    /// 64,000 took 170 s. Now at most four words are looked at (the longest spelling):
    /// this 800 KB input is refused at once, at the same token as before.
    #[test]
    fn a_long_run_of_words_is_refused_in_linear_time() {
        let text = "int ".repeat(200_000);
        let t0 = std::time::Instant::now();
        let e = err(&text);
        assert_eq!((e.column, e.token.as_str()), (5, "int"));
        assert!(
            t0.elapsed() < std::time::Duration::from_secs(5),
            "{:?}",
            t0.elapsed()
        );
        let ok = format!("float a{}", ", float a".repeat(50_000));
        assert_eq!(parse_arguments(&ok).unwrap().len(), 50_001);
    }

    #[test]
    fn every_dtype_c_name_parses_back() {
        for d in DType::ALL {
            let s = format!("{} *x, {} y", d.c_type(), d.c_type());
            let a = parse_arguments(&s).unwrap();
            assert_eq!(
                a,
                vec![ArgSpec::vector("x", d), ArgSpec::scalar("y", d)],
                "{s}"
            );
        }
    }

    #[test]
    fn errors_point_at_the_bad_token() {
        let e = err("float a, flot *x");
        assert_eq!((e.column, e.token.as_str()), (10, "flot"));
        assert!(e.expected.contains("C type"));

        let e = err("float a b");
        assert_eq!((e.column, e.token.as_str()), (9, "b"));
        assert_eq!(e.expected, "`,` or the end of the arguments");

        let e = err("float **x");
        assert_eq!((e.column, e.token.as_str()), (8, "*"));

        let e = err("float a,, int b");
        assert_eq!((e.column, e.token.as_str()), (9, ","));

        let e = err("float a,");
        assert_eq!((e.column, e.token.as_str()), (9, ""));
        assert!(e.to_string().contains("the end of the arguments"));

        let e = err("int x[]");
        assert_eq!((e.column, e.token.as_str()), (6, "["));

        let e = err("double *2x");
        assert_eq!((e.column, e.token.as_str()), (9, "2"));

        let e = err("complex<float *z");
        assert_eq!(e.column, 8);

        let e = err("unsigned float x");
        assert_eq!((e.column, e.token.as_str()), (10, "float"));

        // A run of type words: refused at the first word past the longest type.
        let e = err("int int int int int x");
        assert_eq!((e.column, e.token.as_str()), (5, "int"));
        let e = err("unsigned long long int long x");
        assert_eq!((e.column, e.token.as_str()), (24, "long"));

        let shown = err("float a; int b").to_string();
        assert!(shown.contains("column 8"), "{shown}");
        assert!(shown.ends_with("       ^"), "{shown}");
    }
}
