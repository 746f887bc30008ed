//! The order in which [`einsum`](super::einsum) contracts its operands pairwise, chosen when
//! the graph is built from the operands' static shapes.
//!
//! A path is a list of steps `(i, j)`: contract the `i`-th and `j`-th terms of the current
//! list, remove both and append the result last (NumPy's `einsum_path` convention). The
//! strategies are NumPy's `einsum_path(optimize="greedy")` and `optimize="optimal"` (with
//! NumPy's memory limit: no intermediate larger than the largest operand or the output), and
//! PyTensor's fallback for unknown shapes, right to left. Where NumPy contracts more than two
//! terms in one step (nothing to optimize, or no pairwise step within the memory limit), the
//! step is split into pairwise steps from the right, as PyTensor does.

use super::parse::err;
use crate::GraphError;
use std::collections::HashMap;

/// How einsum orders its pairwise contractions (PyTensor's only accepted `optimize` is
/// `None`, which is [`Optimize::Auto`]; the others are NumPy's named strategies).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub enum Optimize {
    /// PyTensor's behaviour: [`Optimize::Optimal`] when every operand's shape is static
    /// ([`Optimize::Greedy`] beyond [`OPTIMAL_MAX_OPERANDS`] operands, where the exhaustive
    /// search would take too long), [`Optimize::RightToLeft`] otherwise.
    #[default]
    Auto,
    /// NumPy's `greedy`: at each step the pair whose contraction frees the most memory, the
    /// fewest operations breaking ties. Unknown extents count as [`UNKNOWN_EXTENT`].
    Greedy,
    /// NumPy's `optimal`: the cheapest of all pairwise orders (exponential in the number of
    /// operands). Unknown extents count as [`UNKNOWN_EXTENT`].
    Optimal,
    /// No reordering: the last two operands first, then each result with the operand before
    /// it (PyTensor's path when a shape is unknown).
    RightToLeft,
}

/// Extent assumed for an index whose extent is unknown when the graph is built, when the
/// greedy or optimal search compares costs.
pub const UNKNOWN_EXTENT: usize = 64;

/// Above this many operands [`Optimize::Auto`] searches greedily rather than exhaustively.
pub const OPTIMAL_MAX_OPERANDS: usize = 8;

/// Sets of labels as bits (one per distinct label of the expression).
type Set = u128;

/// The expression as the search sees it: label sets, the output set, one extent per bit.
struct Problem {
    sets: Vec<Set>,
    out: Set,
    sizes: Vec<u128>,
    limit: u128,
}

impl Problem {
    /// The number of elements of a tensor indexed by `set`.
    fn size(&self, set: Set) -> u128 {
        (0..128)
            .filter(|b| set >> b & 1 == 1)
            .fold(1u128, |acc, b| acc.saturating_mul(self.sizes[b]))
    }

    /// NumPy's operation count of contracting `num_terms` terms over the labels `contract`
    /// (`inner`: some label is summed away).
    fn flops(&self, contract: Set, inner: bool, num_terms: usize) -> u128 {
        let factor = num_terms.saturating_sub(1).max(1) + usize::from(inner);
        self.size(contract).saturating_mul(factor as u128)
    }
}

/// Contracting the terms at `positions` of `sets`: the result's labels (those the output or
/// another term still needs), the remaining sets (the result appended last), the labels summed
/// away and all labels involved.
fn contraction(positions: &[usize], sets: &[Set], out: Set) -> (Set, Vec<Set>, Set, Set) {
    let mut contract = 0;
    let mut remain = out;
    let mut remaining = Vec::with_capacity(sets.len() + 1 - positions.len());
    for (k, &s) in sets.iter().enumerate() {
        if positions.contains(&k) {
            contract |= s;
        } else {
            remaining.push(s);
            remain |= s;
        }
    }
    let result = remain & contract;
    remaining.push(result);
    (result, remaining, contract & !result, contract)
}

/// The pairwise contraction path of `terms` (each operand's labels) to `out` under `strategy`,
/// with `sizes` the extent of every label ([`Optimize::Auto`] here means the search for known
/// extents: optimal, or greedy beyond [`OPTIMAL_MAX_OPERANDS`] operands).
pub fn contraction_path(
    strategy: Optimize,
    terms: &[Vec<char>],
    out: &[char],
    sizes: &HashMap<char, usize>,
) -> Result<Vec<(usize, usize)>, GraphError> {
    let n = terms.len();
    if strategy == Optimize::RightToLeft {
        return Ok((1..n).rev().map(|j| (j, j - 1)).collect());
    }
    let mut labels: Vec<char> = Vec::new();
    for &c in terms.iter().flatten().chain(out) {
        if !labels.contains(&c) {
            labels.push(c);
        }
    }
    if labels.len() > 128 {
        return Err(err(format!(
            "{} distinct indices are more than the 128 the contraction order search handles",
            labels.len()
        )));
    }
    let extent = |c: &char| {
        sizes
            .get(c)
            .map(|&s| s as u128)
            .ok_or_else(|| err(format!("no extent given for the {}", super::describe(*c))))
    };
    let bit = |c: &char| 1u128 << labels.iter().position(|l| l == c).unwrap_or(0);
    let set_of = |t: &[char]| t.iter().fold(0, |acc, c| acc | bit(c));
    let term_size = |t: &[char]| -> Result<u128, GraphError> {
        t.iter()
            .try_fold(1u128, |acc, c| Ok(acc.saturating_mul(extent(c)?)))
    };
    let mut limit = term_size(out)?;
    for t in terms {
        limit = limit.max(term_size(t)?);
    }
    let problem = Problem {
        sets: terms.iter().map(|t| set_of(t)).collect(),
        out: set_of(out),
        sizes: labels.iter().map(extent).collect::<Result<_, _>>()?,
        limit,
    };
    let all = problem.sets.iter().fold(0, |acc, s| acc | s);
    let steps = if n <= 2 || all == problem.out {
        // Nothing to order (NumPy contracts everything in one step).
        vec![(0..n).collect()]
    } else {
        match strategy {
            Optimize::Greedy => greedy(&problem),
            Optimize::Auto if n > OPTIMAL_MAX_OPERANDS => greedy(&problem),
            _ => optimal(&problem),
        }
    };
    Ok(pairwise(&steps, n))
}

/// `steps` (each the positions contracted together) as pairwise steps: a pair stays as it is;
/// a step of more than two terms contracts its last two first, then each result with the
/// term before them.
fn pairwise(steps: &[Vec<usize>], n: usize) -> Vec<(usize, usize)> {
    let mut len = n;
    let mut out = Vec::with_capacity(n.saturating_sub(1));
    for step in steps {
        if let [i, j] = step[..] {
            out.push((i, j));
            len -= 1;
            continue;
        }
        let mut p = step.clone();
        p.sort_unstable();
        if p.len() < 2 {
            continue;
        }
        let k = p.len();
        out.push((p[k - 1], p[k - 2]));
        len -= 1;
        for &q in p[..k - 2].iter().rev() {
            out.push((len - 1, q));
            len -= 1;
        }
    }
    out
}

/// One candidate step of the greedy search: its sort key (memory freed, negated; then the
/// operation count) and the pair.
#[derive(Clone, Copy)]
struct Candidate {
    key: (i128, u128),
    pair: (usize, usize),
}

/// NumPy's greedy path (`numpy._core.einsum_path` with `optimize="greedy"`): candidates are
/// pairs sharing a label (any pair when none does) whose result fits the memory limit and whose
/// cost keeps the path below the naive single-step cost; the first smallest key wins, and
/// candidates not touching the chosen pair are kept for the next step.
fn greedy(p: &Problem) -> Vec<Vec<usize>> {
    let mut sets = p.sets.clone();
    let n = sets.len();
    let everything: Vec<usize> = (0..n).collect();
    let (_, _, removed, contract) = contraction(&everything, &sets, p.out);
    let naive = p.flops(contract, removed != 0, n);
    let mut known: Vec<Candidate> = Vec::new();
    let mut pairs: Vec<(usize, usize)> = all_pairs(n);
    let mut path = Vec::new();
    let mut path_cost: u128 = 0;
    let candidate = |x: usize, y: usize, sets: &[Set], path_cost: u128| {
        let (result, _, removed, contract) = contraction(&[x, y], sets, p.out);
        let new_size = p.size(result);
        if new_size > p.limit {
            return None;
        }
        let freed = p.size(sets[x]) as i128 + p.size(sets[y]) as i128 - new_size as i128;
        let cost = p.flops(contract, removed != 0, 2);
        (path_cost.saturating_add(cost) <= naive).then_some(Candidate {
            key: (-freed, cost),
            pair: (x, y),
        })
    };
    for _ in 0..n - 1 {
        for &(x, y) in &pairs {
            if sets[x] & sets[y] != 0 {
                known.extend(candidate(x, y, &sets, path_cost));
            }
        }
        if known.is_empty() {
            for (x, y) in all_pairs(sets.len()) {
                known.extend(candidate(x, y, &sets, path_cost));
            }
            if known.is_empty() {
                path.push((0..sets.len()).collect());
                break;
            }
        }
        let best = known
            .iter()
            .copied()
            .reduce(|b, c| if c.key < b.key { c } else { b })
            .expect("known is not empty");
        let (bx, by) = best.pair;
        let shift = |i: usize| i - usize::from(i > bx) - usize::from(i > by);
        known = known
            .into_iter()
            .filter(|c| ![bx, by].contains(&c.pair.0) && ![bx, by].contains(&c.pair.1))
            .map(|c| Candidate {
                key: c.key,
                pair: (shift(c.pair.0), shift(c.pair.1)),
            })
            .collect();
        sets = contraction(&[bx, by], &sets, p.out).1;
        let last = sets.len() - 1;
        pairs = (0..last).map(|i| (i, last)).collect();
        path.push(vec![bx, by]);
        path_cost = path_cost.saturating_add(best.key.1);
    }
    path
}

/// Every pair `(i, j)`, `i < j < n`, in lexicographic order (`itertools.combinations`).
fn all_pairs(n: usize) -> Vec<(usize, usize)> {
    (0..n)
        .flat_map(|i| (i + 1..n).map(move |j| (i, j)))
        .collect()
}

/// The best path found so far by [`optimal`]: its length, cost and steps.
struct Best {
    depth: usize,
    cost: u128,
    steps: Vec<(usize, usize)>,
}

/// NumPy's optimal path (`optimize="optimal"`): the cheapest sequence of pairwise steps whose
/// intermediates fit the memory limit, the first in lexicographic order among equals. When no
/// sequence reaches a single term, NumPy takes the cheapest of the longest ones and contracts
/// what remains in one step; so does this. Searched depth first with pruning (a partial path
/// already as costly as a complete one cannot win), which returns NumPy's breadth-first answer.
fn optimal(p: &Problem) -> Vec<Vec<usize>> {
    let mut best: Option<Best> = None;
    let mut prefix = Vec::new();
    search(p, &p.sets, 0, &mut prefix, &mut best);
    let Some(best) = best else {
        return vec![(0..p.sets.len()).collect()];
    };
    let mut steps: Vec<Vec<usize>> = best.steps.iter().map(|&(i, j)| vec![i, j]).collect();
    let left = p.sets.len() - best.depth;
    if left > 1 {
        steps.push((0..left).collect());
    }
    steps
}

/// Extends `prefix` (of cost `cost`, leaving `sets`) by every pairwise step in order.
fn search(
    p: &Problem,
    sets: &[Set],
    cost: u128,
    prefix: &mut Vec<(usize, usize)>,
    best: &mut Option<Best>,
) {
    let complete = p.sets.len() - 1;
    let mut extended = false;
    if sets.len() > 1 {
        for (i, j) in all_pairs(sets.len()) {
            let (result, remaining, removed, contract) = contraction(&[i, j], sets, p.out);
            if p.size(result) > p.limit {
                continue;
            }
            extended = true;
            let total = cost.saturating_add(p.flops(contract, removed != 0, 2));
            if best
                .as_ref()
                .is_some_and(|b| b.depth == complete && total >= b.cost)
            {
                continue;
            }
            prefix.push((i, j));
            search(p, &remaining, total, prefix, best);
            prefix.pop();
        }
    }
    if extended {
        return;
    }
    let depth = prefix.len();
    let better = match best {
        None => true,
        Some(b) => depth > b.depth || (depth == b.depth && cost < b.cost),
    };
    if better {
        *best = Some(Best {
            depth,
            cost,
            steps: prefix.clone(),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn path(strategy: Optimize, spec: &str, shapes: &[&[usize]]) -> Vec<(usize, usize)> {
        let (ins, out) = spec.split_once("->").expect("explicit output");
        let terms: Vec<Vec<char>> = ins.split(',').map(|t| t.chars().collect()).collect();
        let mut sizes = HashMap::new();
        for (t, s) in terms.iter().zip(shapes) {
            for (&c, &n) in t.iter().zip(s.iter()) {
                sizes.insert(c, n);
            }
        }
        let out: Vec<char> = out.chars().collect();
        contraction_path(strategy, &terms, &out, &sizes).expect("path")
    }

    // Expected paths: `np.einsum_path(spec, *arrays, optimize=...)` (NumPy 2.4).
    #[test]
    fn paths_are_numpys() {
        use Optimize::*;
        let chain: &[&[usize]] = &[&[10, 2], &[2, 30], &[30, 3], &[3, 20]];
        assert_eq!(
            path(Greedy, "ab,bc,cd,de->ae", chain),
            [(1, 2), (1, 2), (0, 1)]
        );
        assert_eq!(
            path(Optimal, "ab,bc,cd,de->ae", chain),
            [(1, 2), (1, 2), (0, 1)]
        );
        let three: &[&[usize]] = &[&[3, 4, 5], &[4, 6], &[5, 6]];
        assert_eq!(path(Optimal, "ijk,jl,kl->i", three), [(1, 2), (0, 1)]);
        assert_eq!(path(RightToLeft, "ijk,jl,kl->i", three), [(2, 1), (1, 0)]);
        // Nothing is summed: one step in NumPy, split from the right.
        let outer: &[&[usize]] = &[&[2], &[3], &[4]];
        assert_eq!(path(Optimal, "i,j,k->ijk", outer), [(2, 1), (1, 0)]);
    }
}
