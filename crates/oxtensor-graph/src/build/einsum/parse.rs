//! The subscripts of [`einsum`](super::einsum) parsed to one label per operand dimension, with
//! NumPy's rules.
//!
//! Both of NumPy's call forms are accepted: a subscripts string (`"...ij,...jk->...ik"`), and
//! the interleaved form's sublists (integers in `[0, 52)` for `a`–`z`, `A`–`Z`, and an
//! ellipsis), which [`sublist_subscripts`] turns into such a string.
//!
//! An ellipsis stands for the dimensions its operand has beyond the letters it names. Those
//! dimensions are right-aligned across operands (NumPy's broadcasting), and each aligned
//! position gets a label of its own, drawn from a Unicode private-use range so that it can never
//! collide with a letter: after parsing, the path search and the lowering see only plain labels.
//! The output keeps the broadcast labels where its `...` is; an implicit output (no `->`) puts
//! them first, followed by the letters used exactly once, sorted, as NumPy does.

use crate::GraphError;

/// The letters NumPy accepts as subscripts, in the order of the interleaved form's integers.
const LETTERS: &str = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";

/// First code point of the labels given to ellipsis dimensions (Unicode private-use area).
const BROADCAST_BASE: u32 = 0xE000;

/// One entry of an interleaved-form sublist: an index (`0..52` name `a`–`z`, `A`–`Z`) or
/// NumPy's `Ellipsis`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Sub {
    /// The index with this number (valid in `[0, 52)`).
    Index(i64),
    /// `...`: the dimensions the letters do not name.
    Ellipsis,
}

/// The subscripts parsed: one label per dimension of each operand, and of the output.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Parsed {
    /// Each operand's labels, one per dimension.
    pub terms: Vec<Vec<char>>,
    /// The output's labels, one per dimension.
    pub out: Vec<char>,
}

/// An einsum error at build time (a `ValueError` in Python, as NumPy raises).
pub(crate) fn err(message: impl Into<String>) -> GraphError {
    GraphError::Invalid {
        op: "einsum".into(),
        message: message.into(),
    }
}

/// A label as an error message names it: the index letter, or the position among the
/// dimensions the ellipses broadcast to (counted from the left).
pub fn describe(c: char) -> String {
    let code = c as u32;
    if code >= BROADCAST_BASE {
        format!("ellipsis dimension {}", code - BROADCAST_BASE)
    } else {
        format!("index {}", quoted(&c.to_string()))
    }
}

/// `s` quoted as Python's `repr` quotes a string (the messages match the Python front end's).
fn quoted(s: &str) -> String {
    if s.contains('\'') && !s.contains('"') {
        format!("\"{s}\"")
    } else {
        format!("'{}'", s.replace('\\', "\\\\").replace('\'', "\\'"))
    }
}

/// The subscripts string of the interleaved form (`einsum(op0, sublist0, op1, sublist1, …,
/// [sublistout])`): each sublist's indices as letters, joined by commas, and `->` with the
/// output's when `output` is given. Raises for an index outside `[0, 52)`, naming the sublist.
pub fn sublist_subscripts(
    inputs: &[Vec<Sub>],
    output: Option<&[Sub]>,
) -> Result<String, GraphError> {
    let terms = inputs
        .iter()
        .enumerate()
        .map(|(k, s)| sublist_term(s, &format!("the sublist of operand {k}")))
        .collect::<Result<Vec<_>, _>>()?;
    let mut spec = terms.join(",");
    if let Some(out) = output {
        spec.push_str("->");
        spec.push_str(&sublist_term(out, "the output sublist")?);
    }
    Ok(spec)
}

/// One sublist as subscript letters (`...` for the ellipsis).
fn sublist_term(sublist: &[Sub], what: &str) -> Result<String, GraphError> {
    let mut term = String::new();
    for s in sublist {
        match *s {
            Sub::Ellipsis => term.push_str("..."),
            Sub::Index(k) => {
                let letter = usize::try_from(k).ok().and_then(|i| LETTERS.chars().nth(i));
                let Some(c) = letter else {
                    return Err(err(format!(
                        "{what} has {k}, not within the valid range [0, 52)"
                    )));
                };
                term.push(c);
            }
        }
    }
    Ok(term)
}

/// `term` split at its ellipsis: `(before, after)`, `after` is `None` when it has none.
/// Raises unless `term` is letters with at most one `...`.
fn check_term(term: &str, what: &str) -> Result<(Vec<char>, Option<Vec<char>>), GraphError> {
    let (before, after) = match term.split_once("...") {
        Some((b, a)) => (b, Some(a)),
        None => (term, None),
    };
    for part in [Some(before), after].into_iter().flatten() {
        for c in part.chars() {
            if c == '.' {
                let more = if after.is_some() {
                    " (at most one ellipsis is allowed)"
                } else {
                    ""
                };
                return Err(err(format!(
                    "{what} {} have a '.' that is not part of an ellipsis '...'{more}",
                    quoted(term)
                )));
            }
            if !LETTERS.contains(c) {
                return Err(err(format!(
                    "{what} {} have {}; subscripts must be the letters a-z, A-Z and at most one \
                     ellipsis '...'",
                    quoted(term),
                    quoted(&c.to_string())
                )));
            }
        }
    }
    Ok((before.chars().collect(), after.map(|a| a.chars().collect())))
}

/// The labels of each operand's dimensions and of the output, for operands of ranks `ranks`.
pub fn parse(subscripts: &str, ranks: &[usize]) -> Result<Parsed, GraphError> {
    let spec: String = subscripts.chars().filter(|c| !c.is_whitespace()).collect();
    if spec.matches("->").count() > 1 {
        return Err(err(format!(
            "subscripts {} have more than one '->'",
            quoted(&spec)
        )));
    }
    let (ins, out) = match spec.split_once("->") {
        Some((i, o)) => (i, Some(o)),
        None => (spec.as_str(), None),
    };
    let parts: Vec<&str> = ins.split(',').collect();
    if parts.len() != ranks.len() {
        return Err(err(format!(
            "subscripts {} name {} operand(s) but {} operand(s) were given",
            quoted(&spec),
            parts.len(),
            ranks.len()
        )));
    }
    let split = parts
        .iter()
        .enumerate()
        .map(|(k, t)| check_term(t, &format!("operand {k}'s subscripts")))
        .collect::<Result<Vec<_>, _>>()?;
    let mut covered = Vec::with_capacity(ranks.len());
    for (k, ((before, after), &rank)) in split.iter().zip(ranks).enumerate() {
        let named = before.len() + after.as_ref().map_or(0, Vec::len);
        if after.is_none() && named != rank {
            return Err(err(format!(
                "operand {k} has rank {rank} but its subscripts {} name {named} dimension(s) \
                 (write '...' to stand for the others)",
                quoted(parts[k])
            )));
        }
        if named > rank {
            return Err(err(format!(
                "operand {k} has rank {rank} but its subscripts {} name {named} dimension(s) \
                 besides the ellipsis",
                quoted(parts[k])
            )));
        }
        covered.push(rank - named);
    }
    let n_broadcast = covered.iter().copied().max().unwrap_or(0);
    let labels: Vec<char> = (0..n_broadcast).map(broadcast_label).collect();
    let terms: Vec<Vec<char>> = split
        .iter()
        .zip(&covered)
        .map(|((before, after), &e)| {
            let mut t = before.clone();
            if let Some(after) = after {
                t.extend_from_slice(&labels[n_broadcast - e..]);
                t.extend_from_slice(after);
            }
            t
        })
        .collect();
    let Some(out) = out else {
        let used: Vec<char> = split
            .iter()
            .flat_map(|(b, a)| b.iter().chain(a.iter().flatten()).copied())
            .collect();
        let mut once: Vec<char> = used
            .iter()
            .copied()
            .filter(|c| used.iter().filter(|u| *u == c).count() == 1)
            .collect();
        once.sort_unstable();
        let mut out = labels;
        out.extend(once);
        return Ok(Parsed { terms, out });
    };
    let (before, after) = check_term(out, "the output subscripts")?;
    if after.is_none() && n_broadcast > 0 {
        return Err(err(format!(
            "the output subscripts {} have no ellipsis, but the operands' ellipses cover \
             {n_broadcast} dimension(s): write '...' in the output to keep them",
            quoted(out)
        )));
    }
    let letters: Vec<char> = before
        .iter()
        .chain(after.iter().flatten())
        .copied()
        .collect();
    for &c in &letters {
        if letters.iter().filter(|&&d| d == c).count() > 1 {
            return Err(err(format!(
                "the output subscripts {} repeat the {}",
                quoted(out),
                describe(c)
            )));
        }
        if !terms.iter().any(|t| t.contains(&c)) {
            return Err(err(format!(
                "the output {} is in no operand's subscripts",
                describe(c)
            )));
        }
    }
    let mut labels_out = before;
    if let Some(after) = after {
        labels_out.extend(labels);
        labels_out.extend(after);
    }
    Ok(Parsed {
        terms,
        out: labels_out,
    })
}

/// The label of the `d`-th dimension (from the left) that the ellipses broadcast to.
fn broadcast_label(d: usize) -> char {
    u32::try_from(d)
        .ok()
        .and_then(|d| char::from_u32(BROADCAST_BASE + d))
        .unwrap_or(char::REPLACEMENT_CHARACTER)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(s: &str) -> Vec<char> {
        s.chars().collect()
    }

    #[test]
    fn ellipses_are_right_aligned_and_implicit_outputs_sorted() {
        let p = parse("i...j,j...", &[4, 2]).expect("parse");
        let (e0, e1) = (broadcast_label(0), broadcast_label(1));
        assert_eq!(p.terms[0], vec!['i', e0, e1, 'j']);
        assert_eq!(p.terms[1], vec!['j', e1]);
        assert_eq!(p.out, vec![e0, e1, 'i']);
        let p = parse("ba,Ac", &[2, 2]).expect("parse");
        assert_eq!(p.out, labels("Aabc"));
        assert_eq!(
            parse(" ij , jk -> ki ", &[2, 2]).expect("parse").out,
            labels("ki")
        );
    }

    #[test]
    fn sublists_become_letters() {
        let s = sublist_subscripts(
            &[vec![Sub::Index(0), Sub::Ellipsis], vec![Sub::Index(26)]],
            Some(&[Sub::Ellipsis]),
        );
        assert_eq!(s.expect("sublists"), "a...,A->...");
        let e = sublist_subscripts(&[vec![Sub::Index(52)]], None).expect_err("range");
        assert!(
            e.to_string().contains("the sublist of operand 0 has 52"),
            "{e}"
        );
    }
}
