use crate::fgraph::toposort;
use crate::{GraphError, Var, infer_types};

/// Re-infers the types of every node reachable from `outputs` and checks they are the types the
/// nodes carry. Nodes are checked when built, so this finds bugs in code that builds nodes
/// some other way (a rewrite that swaps an input for one of another type).
pub fn verify(outputs: &[Var]) -> Result<(), GraphError> {
    for node in toposort(outputs) {
        let Some(op) = node.op() else { continue };
        let types = infer_types(op, node.inputs())?;
        if types.as_slice() != node.types() {
            return Err(GraphError::Invalid {
                op: op.to_string(),
                message: format!(
                    "carries types {:?} but its inputs give {:?}",
                    node.types(),
                    types
                ),
            });
        }
    }
    Ok(())
}
