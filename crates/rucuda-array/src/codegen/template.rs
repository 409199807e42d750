//! The one renderer of kernel templates. Every piece of device code the generators emit
//! lives in a `.cu` file (a module or kernel skeleton) or a `.cuh` file (a piece inserted
//! into one) in a `cuda/` folder beside the generator that uses it, and goes through
//! [`render`]:
//!
//! - A slot is `$NAME$` (upper-case letters, digits and `_`); a `$` that does not open
//!   one stays as written.
//! - Slots are filled in a single pass: text put into a slot is never scanned again, so
//!   a user expression that happens to contain `$ENTRY$` stays as written.
//! - A slot the template has and the caller does not fill, or a value the template has
//!   no slot for, is an error naming it: a template and its caller cannot drift apart.
//! - A slot alone on its line takes a block: when its value is empty or ends with a
//!   newline (whole lines), the value replaces the whole line, so an empty block leaves
//!   no blank line and a block of lines leaves no extra line break. Any other value is
//!   inserted in place, like every slot within a line.
//!
//! Pieces repeated per argument or per axis are rendered once per item by the caller
//! and joined into the block slot of the template that holds them; a piece that goes
//! within a line is rendered by `render_inline`, without its file's last newline.

use super::CodegenError;

/// Fills every `$NAME$` of `template` with its value from `slots`, in one pass (the
/// rules are in the [module documentation](self)). Other crates' generators (rucuda-rand's
/// kernel modules) use it too.
///
/// ```
/// use rucuda_array::codegen::template::render;
/// let s = render("f($A$) + $B$", &[("A", "x"), ("B", "$A$")]).unwrap();
/// assert_eq!(s, "f(x) + $A$");
/// let s = render("{\n$BODY$\n}\n", &[("BODY", "  a;\n  b;\n")]).unwrap();
/// assert_eq!(s, "{\n  a;\n  b;\n}\n");
/// assert!(render("$A$", &[]).is_err());
/// ```
pub fn render(template: &str, slots: &[(&str, &str)]) -> Result<String, CodegenError> {
    let mut out = String::with_capacity(template.len() + 256);
    let mut used = vec![false; slots.len()];
    let mut rest = template;
    // Whether the template text consumed so far ends a line (or is empty).
    let mut line_start = true;
    while let Some(start) = rest.find('$') {
        out.push_str(&rest[..start]);
        if start > 0 {
            line_start = rest[..start].ends_with('\n');
        }
        let after = &rest[start + 1..];
        let name_len = after
            .bytes()
            .take_while(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || *b == b'_')
            .count();
        if name_len == 0 || !after[name_len..].starts_with('$') {
            // Not a slot: a lone `$` stays.
            out.push('$');
            rest = after;
            line_start = false;
            continue;
        }
        let name = &after[..name_len];
        let Some(k) = slots.iter().position(|(n, _)| *n == name) else {
            return Err(CodegenError::Template(format!(
                "the template has a slot `${name}$` that nothing fills"
            )));
        };
        used[k] = true;
        let value = slots[k].1;
        rest = &after[name_len + 1..];
        let block =
            line_start && rest.starts_with('\n') && (value.is_empty() || value.ends_with('\n'));
        if block {
            // Its lines replace the slot's line.
            rest = &rest[1..];
        }
        line_start = block;
        out.push_str(value);
    }
    out.push_str(rest);
    if let Some(k) = used.iter().position(|u| !u) {
        return Err(CodegenError::Template(format!(
            "a value for `${}$` was given, but the template has no such slot",
            slots[k].0
        )));
    }
    Ok(out)
}

/// [`render`] for a piece that goes within a line (an operation, a statement): the
/// newline that ends its file is not part of it.
pub(crate) fn render_inline(
    template: &str,
    slots: &[(&str, &str)],
) -> Result<String, CodegenError> {
    render(template.strip_suffix('\n').unwrap_or(template), slots)
}

/// User text (a preamble) as a block: nothing for empty text, else the text and a
/// newline.
pub(crate) fn block(text: &str) -> String {
    if text.is_empty() {
        String::new()
    } else {
        format!("{text}\n")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fills_slots_once_and_never_rescans() {
        let s = render("f($A$) + $B$;", &[("A", "x"), ("B", "$A$")]).unwrap();
        assert_eq!(s, "f(x) + $A$;");
        // The same slot may appear several times.
        assert_eq!(render("$A$$A$", &[("A", "ab")]).unwrap(), "abab");
        // A `$` that is no slot stays.
        assert_eq!(render("a $ b $x$ $", &[]).unwrap(), "a $ b $x$ $");
    }

    #[test]
    fn a_slot_alone_on_its_line_takes_whole_lines() {
        let t = "{\n$BODY$\n}\n";
        assert_eq!(
            render(t, &[("BODY", "  a;\n  b;\n")]).unwrap(),
            "{\n  a;\n  b;\n}\n"
        );
        // An empty block leaves no blank line.
        assert_eq!(render(t, &[("BODY", "")]).unwrap(), "{\n}\n");
        // A value that is not whole lines is inserted in place.
        assert_eq!(render(t, &[("BODY", "  a;")]).unwrap(), "{\n  a;\n}\n");
        // At the very start, and within a line (never a block).
        assert_eq!(render("$A$\nx\n", &[("A", "// a\n")]).unwrap(), "// a\nx\n");
        assert_eq!(
            render("  $A$\n", &[("A", "b\n")]).unwrap(),
            "  b\n\n",
            "indented slots are inline"
        );
        // Two slots on one line are inline, whatever the first one held.
        assert_eq!(
            render("$A$$B$\n", &[("A", "a\n"), ("B", "b\n")]).unwrap(),
            "a\nb\n\n"
        );
        // Consecutive block lines.
        assert_eq!(
            render("$A$\n$B$\n", &[("A", "a\n"), ("B", "")]).unwrap(),
            "a\n"
        );
    }

    #[test]
    fn unknown_and_unused_slots_are_errors() {
        let e = render("$A$ $B$", &[("A", "1")]).unwrap_err().to_string();
        assert!(e.contains("$B$"), "{e}");
        let e = render("$A$", &[("A", "1"), ("C", "2")])
            .unwrap_err()
            .to_string();
        assert!(e.contains("$C$"), "{e}");
    }
}
