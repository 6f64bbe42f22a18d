//! [`Client::stream`]: the loop on a task, its events handed out through a channel.

use futures::Stream;
use tokio::sync::mpsc;

use super::event::Emitter;
use super::{Client, ClientError, Prompt, RunOptions, StreamEvent};

impl Client {
    /// The loop as a stream of events, ending with [`StreamEvent::Done`] (or an error).
    /// Every [`RunOptions`] applies (a [`conversation`](RunOptions::conversation) is saved
    /// before `Done`). Dropping the stream aborts the run, and with it the in-flight request.
    pub fn stream(
        &self,
        prompt: impl Into<Prompt>,
        opts: RunOptions,
    ) -> impl Stream<Item = Result<StreamEvent, ClientError>> + Send + 'static {
        let inner = self.inner.clone();
        let prompt = prompt.into();
        let (tx, rx) = mpsc::channel(64);
        tokio::spawn(async move {
            let work_tx = tx.clone();
            let work = async {
                if inner.in_process {
                    return Err(ClientError::StreamingUnsupported);
                }
                let emitter = Emitter::new(Some(work_tx.clone()), &opts);
                let result = inner.start(Some(prompt), None, opts, &emitter).await?;
                emitter.send(StreamEvent::Usage { usage: result.usage }).await;
                emitter
                    .send(StreamEvent::Done {
                        result: Box::new(result),
                    })
                    .await;
                Ok(())
            };
            tokio::select! {
                r = work => {
                    if let Err(e) = r {
                        let _ = work_tx.send(Err(e)).await;
                    }
                }
                () = tx.closed() => {}
            }
        });
        futures::stream::unfold(rx, |mut rx| async move { rx.recv().await.map(|item| (item, rx)) })
    }
}
