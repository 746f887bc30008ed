use oxtensor_graph::GraphError;

/// Errors of a rewrite run.
///
/// Rules cannot fail (a rule that does not apply returns `None`), so these are either a graph
/// that cannot be rebuilt around a replacement, or a graph the verifier rejects after a pass:
/// both point at a bug in a rule, and name the pass it ran in.
#[derive(Debug, Clone, thiserror::Error)]
pub enum RewriteError {
    /// Rebuilding a node over rewritten inputs failed type inference.
    #[error("rewrite pass '{pass}': could not rebuild the graph: {source}")]
    Rebuild {
        /// The pass that was running.
        pass: &'static str,
        /// The inference error.
        source: GraphError,
    },
    /// The graph after a pass failed [`oxtensor_graph::verify`] (checked in debug builds).
    #[error("rewrite pass '{pass}' produced an invalid graph: {source}")]
    Verify {
        /// The pass that produced the graph.
        pass: &'static str,
        /// What the verifier found.
        source: GraphError,
    },
    /// The rewritten outputs do not form a function graph over the original inputs.
    #[error("the rewritten graph is not a valid function graph: {0}")]
    Graph(GraphError),
}

impl From<RewriteError> for GraphError {
    /// Reports a rewrite failure as an invalid-graph error (what a front end shows the user).
    fn from(e: RewriteError) -> GraphError {
        match e {
            RewriteError::Graph(g) => g,
            other => GraphError::Invalid {
                op: "rewrite".into(),
                message: other.to_string(),
            },
        }
    }
}
