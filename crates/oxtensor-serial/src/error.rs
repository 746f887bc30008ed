//! What can go wrong while reading a serialized graph.

use oxtensor_graph::GraphError;

/// An error decoding a serialized graph. Every variant says where (`at`: a path such as
/// `nodes[12].op.axes`) and what was expected, so a corrupt or hostile file is reported, never
/// trusted and never a panic.
#[derive(Debug, thiserror::Error)]
pub enum SerialError {
    /// The text is not JSON at all (truncated, binary, …).
    #[error("not an oxtensor graph file: invalid JSON ({0})")]
    Json(String),
    /// The document is not an oxtensor graph (missing or wrong `format` field).
    #[error("not an oxtensor graph file: {0}")]
    NotAGraph(String),
    /// Written by a newer oxtensor whose format this one does not know.
    #[error(
        "the graph was written in format version {found}, newer than this oxtensor reads (up to {supported}); upgrade oxtensor to load it"
    )]
    NewerVersion {
        /// The file's version.
        found: u64,
        /// The newest version this build reads.
        supported: u64,
    },
    /// A field is missing or has the wrong JSON type or an unknown value.
    #[error("invalid graph file at {at}: {message}")]
    Invalid {
        /// Where in the document.
        at: String,
        /// What was expected.
        message: String,
    },
    /// The nodes are well-formed but do not make a valid graph (wrong arity, dtypes, shapes).
    #[error("invalid graph file at {at}: {source}")]
    Graph {
        /// Where in the document.
        at: String,
        /// The graph builder's complaint.
        source: GraphError,
    },
}

impl SerialError {
    /// An [`SerialError::Invalid`] at `at`.
    pub fn invalid(at: &str, message: impl Into<String>) -> SerialError {
        SerialError::Invalid {
            at: at.to_string(),
            message: message.into(),
        }
    }
}
