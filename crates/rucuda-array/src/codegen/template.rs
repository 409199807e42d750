//! The one renderer of kernel templates: `$NAME$` slots (upper-case letters, digits and
//! `_`) filled in a single pass. Text put into a slot is never scanned again, so a user
//! expression that happens to contain `$ENTRY$` stays as written; a slot the template
//! has and the caller does not fill, or a value the template has no slot for, is an
//! error naming it (a template and its caller cannot drift apart silently).

use super::CodegenError;

/// Fills every `$NAME$` of `template` with its value from `slots`, in one pass.
///
/// ```ignore
/// let s = render("f($A$) + $B$", &[("A", "x"), ("B", "$A$")]).unwrap();
/// assert_eq!(s, "f(x) + $A$");
/// ```
pub(crate) fn render(template: &str, slots: &[(&str, &str)]) -> Result<String, CodegenError> {
    let mut out = String::with_capacity(template.len() + 256);
    let mut used = vec![false; slots.len()];
    let mut rest = template;
    while let Some(start) = rest.find('$') {
        out.push_str(&rest[..start]);
        let after = &rest[start + 1..];
        let name_len = after
            .bytes()
            .take_while(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || *b == b'_')
            .count();
        if name_len == 0 || !after[name_len..].starts_with('$') {
            // Not a slot: a lone `$` stays.
            out.push('$');
            rest = after;
            continue;
        }
        let name = &after[..name_len];
        let Some(k) = slots.iter().position(|(n, _)| *n == name) else {
            return Err(CodegenError::Template(format!(
                "the template has a slot `${name}$` that nothing fills"
            )));
        };
        used[k] = true;
        out.push_str(slots[k].1);
        rest = &after[name_len + 1..];
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
    fn unknown_and_unused_slots_are_errors() {
        let e = render("$A$ $B$", &[("A", "1")]).unwrap_err().to_string();
        assert!(e.contains("$B$"), "{e}");
        let e = render("$A$", &[("A", "1"), ("C", "2")])
            .unwrap_err()
            .to_string();
        assert!(e.contains("$C$"), "{e}");
    }
}
