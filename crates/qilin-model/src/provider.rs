use crate::{ModelError, ModelEvent, ModelRequest};
use futures_util::stream::BoxStream;

/// A streamed model answer: events in order, ending with [`ModelEvent::Finished`] or an error.
pub type ModelStream = BoxStream<'static, Result<ModelEvent, ModelError>>;

/// A model the agent can ask for the next answer.
///
/// Object-safe, so the agent holds an `Arc<dyn ModelProvider>`. Nothing happens until the
/// returned stream is polled; dropping the stream abandons the request.
pub trait ModelProvider: Send + Sync {
    /// Sends `request` and streams the answer. A stream that yields an error yields nothing
    /// after it; one that ends without [`ModelEvent::Finished`] never happens — a provider
    /// whose wire stream stops early yields [`ModelError::TruncatedStream`].
    fn stream(&self, request: ModelRequest) -> ModelStream;
}
