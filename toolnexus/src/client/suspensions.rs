//! Durable suspensions (SPEC §10 durable resume, shared): a run that halts with
//! `status: pending` is recorded — its [`Request`], its halted transcript — in a
//! [`SuspensionStore`], and [`Client::resume_stored`](super::Client::resume_stored) answers it
//! by id from any process sharing the store. Answering is a compare-and-set: the first answer
//! resumes the run, exactly once; any later one (another replica, a retried webhook) is
//! [`SuspensionError::AlreadyAnswered`].

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use futures::future::BoxFuture;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::suspend::{Answer, Request};

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// A halted run waiting for its answer.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Suspension {
    /// What the run waits for; `request.id` is the suspension's key.
    pub request: Request,
    /// The `ask` conversation it halted in, if any: the resume continues that stored
    /// conversation instead of [`transcript`](Self::transcript).
    pub conversation: Option<String>,
    /// The halted transcript.
    pub transcript: Vec<Value>,
}

/// Why a suspension could not be recorded or answered.
#[derive(thiserror::Error)]
#[non_exhaustive]
pub enum SuspensionError {
    /// No suspension has this id.
    #[error("suspension \"{id}\" not found")]
    NotFound {
        /// The request id.
        id: String,
    },
    /// Someone answered it first; the run was resumed by them.
    #[error("suspension \"{id}\" was already answered")]
    AlreadyAnswered {
        /// The request id.
        id: String,
    },
    /// The answer's id does not echo the request's.
    #[error("answer \"{answer}\" does not match suspension \"{id}\"")]
    Mismatch {
        /// The suspension id.
        id: String,
        /// The answer's id.
        answer: String,
    },
    /// [`Client::resume_stored`](super::Client::resume_stored) on a client built without
    /// [`suspensions`](super::ClientBuilder::suspensions).
    #[error("this client has no suspension store (ClientBuilder::suspensions)")]
    NoStore,
    /// The store failed.
    #[error("suspension store: {message}")]
    Failed {
        /// What went wrong.
        message: String,
        /// The cause.
        #[source]
        source: Option<BoxError>,
    },
}

crate::debug_as_display!(SuspensionError);

impl SuspensionError {
    /// A store failure described by `message`, caused by `source`.
    pub fn failed(message: impl Into<String>, source: impl Into<BoxError>) -> Self {
        Self::Failed {
            message: message.into(),
            source: Some(source.into()),
        }
    }
}

/// A recorded suspension and its answer, once answered.
pub type Recorded = (Suspension, Option<Answer>);

/// Where halted runs wait for their answers.
pub trait SuspensionStore: Send + Sync {
    /// Records `suspension` (pending) under `suspension.request.id`.
    fn put<'a>(&'a self, suspension: &'a Suspension) -> BoxFuture<'a, Result<(), SuspensionError>>;

    /// The suspension under `id` and its answer once answered, or `None`.
    fn get<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<Recorded>, SuspensionError>>;

    /// Atomically marks `id` answered with `answer` and returns the suspension to resume;
    /// [`SuspensionError::AlreadyAnswered`] if an answer got there first.
    fn answer<'a>(
        &'a self,
        id: &'a str,
        answer: &'a Answer,
    ) -> BoxFuture<'a, Result<Suspension, SuspensionError>>;
}

/// A suspension and its answer, as kept by the memory and file stores.
#[derive(Clone, Debug, Serialize, Deserialize)]
struct Entry {
    #[serde(flatten)]
    suspension: Suspension,
    answer: Option<Answer>,
}

fn claim(entry: Option<&mut Entry>, id: &str, answer: &Answer) -> Result<Suspension, SuspensionError> {
    if answer.id != id {
        return Err(SuspensionError::Mismatch {
            id: id.to_owned(),
            answer: answer.id.clone(),
        });
    }
    let entry = entry.ok_or_else(|| SuspensionError::NotFound { id: id.to_owned() })?;
    if entry.answer.is_some() {
        return Err(SuspensionError::AlreadyAnswered { id: id.to_owned() });
    }
    entry.answer = Some(answer.clone());
    Ok(entry.suspension.clone())
}

/// Suspensions of this process only.
#[derive(Debug, Default)]
pub struct InMemorySuspensions {
    map: Mutex<HashMap<String, Entry>>,
}

impl InMemorySuspensions {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    fn locked(&self) -> Result<std::sync::MutexGuard<'_, HashMap<String, Entry>>, SuspensionError> {
        self.map.lock().map_err(|_| SuspensionError::Failed {
            message: "in-memory suspension store lock poisoned".into(),
            source: None,
        })
    }
}

impl SuspensionStore for InMemorySuspensions {
    fn put<'a>(&'a self, suspension: &'a Suspension) -> BoxFuture<'a, Result<(), SuspensionError>> {
        let done = self.locked().map(|mut m| {
            m.insert(
                suspension.request.id.clone(),
                Entry {
                    suspension: suspension.clone(),
                    answer: None,
                },
            );
        });
        Box::pin(async move { done })
    }

    fn get<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<Recorded>, SuspensionError>> {
        let found = self
            .locked()
            .map(|m| m.get(id).map(|e| (e.suspension.clone(), e.answer.clone())));
        Box::pin(async move { found })
    }

    fn answer<'a>(
        &'a self,
        id: &'a str,
        answer: &'a Answer,
    ) -> BoxFuture<'a, Result<Suspension, SuspensionError>> {
        let claimed = self.locked().and_then(|mut m| claim(m.get_mut(id), id, answer));
        Box::pin(async move { claimed })
    }
}

/// One JSON file per suspension in a directory, written atomically; one process at a time
/// (answers through one `FileSuspensions` and its clones are serialized).
#[derive(Debug, Clone)]
pub struct FileSuspensions {
    dir: PathBuf,
    writing: Arc<tokio::sync::Mutex<()>>,
}

impl FileSuspensions {
    /// A store in `dir` (created on first write).
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Self {
            dir: dir.into(),
            writing: Arc::default(),
        }
    }

    fn path(&self, id: &str) -> PathBuf {
        super::store::FileStore::new(&self.dir).path_for(id)
    }

    async fn read(&self, id: &str) -> Result<Option<Entry>, SuspensionError> {
        let path = self.path(id);
        match tokio::fs::read(&path).await {
            Ok(bytes) => serde_json::from_slice(&bytes)
                .map(Some)
                .map_err(|e| SuspensionError::failed(format!("{}: {e}", path.display()), e)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(SuspensionError::failed(format!("{}: {e}", path.display()), e)),
        }
    }

    async fn write(&self, id: &str, entry: &Entry) -> Result<(), SuspensionError> {
        let path = self.path(id);
        let fail = |e: std::io::Error| SuspensionError::failed(format!("{}: {e}", path.display()), e);
        tokio::fs::create_dir_all(&self.dir).await.map_err(fail)?;
        let body =
            serde_json::to_vec(entry).map_err(|e| SuspensionError::failed(path.display().to_string(), e))?;
        super::store::write_atomic(&path, &body).await.map_err(fail)
    }
}

impl SuspensionStore for FileSuspensions {
    fn put<'a>(&'a self, suspension: &'a Suspension) -> BoxFuture<'a, Result<(), SuspensionError>> {
        Box::pin(async move {
            let _writing = self.writing.lock().await;
            let entry = Entry {
                suspension: suspension.clone(),
                answer: None,
            };
            self.write(&suspension.request.id, &entry).await
        })
    }

    fn get<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<Recorded>, SuspensionError>> {
        Box::pin(async move { Ok(self.read(id).await?.map(|e| (e.suspension, e.answer))) })
    }

    fn answer<'a>(
        &'a self,
        id: &'a str,
        answer: &'a Answer,
    ) -> BoxFuture<'a, Result<Suspension, SuspensionError>> {
        Box::pin(async move {
            let _writing = self.writing.lock().await;
            let mut entry = self.read(id).await?;
            let claimed = claim(entry.as_mut(), id, answer)?;
            self.write(id, entry.as_ref().expect("claimed")).await?;
            Ok(claimed)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    async fn answered_once(store: &dyn SuspensionStore) {
        let halted = Suspension {
            request: Request::new("input", "Which city?"),
            conversation: None,
            transcript: vec![json!({"role": "user", "content": "weather?"})],
        };
        let id = halted.request.id.clone();
        store.put(&halted).await.unwrap();
        assert_eq!(store.get(&id).await.unwrap(), Some((halted.clone(), None)));
        let wrong = Answer::output("other", "x");
        assert_eq!(
            store.answer(&id, &wrong).await.unwrap_err().to_string(),
            format!("answer \"other\" does not match suspension \"{id}\"")
        );
        let answer = Answer::output(&id, "Chennai");
        assert_eq!(store.answer(&id, &answer).await.unwrap(), halted);
        assert!(matches!(
            store.answer(&id, &answer).await.unwrap_err(),
            SuspensionError::AlreadyAnswered { id: ref got } if *got == id
        ));
        assert_eq!(store.get(&id).await.unwrap(), Some((halted, Some(answer))));
        assert_eq!(
            store
                .answer("nope", &Answer::output("nope", "x"))
                .await
                .unwrap_err()
                .to_string(),
            "suspension \"nope\" not found"
        );
    }

    #[tokio::test]
    async fn memory_and_file_stores_answer_once() {
        answered_once(&InMemorySuspensions::new()).await;
        let dir = tempfile::tempdir().unwrap();
        answered_once(&FileSuspensions::new(dir.path())).await;
        // A new instance on the same directory sees the answered state.
        let again = FileSuspensions::new(dir.path());
        let file = std::fs::read_dir(dir.path()).unwrap().next().unwrap().unwrap();
        let id =
            serde_json::from_slice::<Value>(&std::fs::read(file.path()).unwrap()).unwrap()["request"]["id"]
                .as_str()
                .unwrap()
                .to_owned();
        assert!(again.get(&id).await.unwrap().unwrap().1.is_some());
    }
}
