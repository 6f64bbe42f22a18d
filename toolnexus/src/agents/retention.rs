//! How long closed handles stay in the table: a closed handle keeps its final state,
//! result and transitions for `inspect`/`wait`, but a long-lived runtime (a served agent
//! spawns one handle per task) must not keep every one forever. The oldest closed handles
//! beyond a count, or older than an age on the runtime clock, are evicted; live handles
//! and the root never are.

use std::collections::VecDeque;
use std::time::Duration;

use super::handle::HandleState;
use super::runtime::{ROOT, Table};

/// Closed handles kept when the builder sets no other count.
pub(crate) const DEFAULT_RETAIN_CLOSED: usize = 256;

/// The closed handles in closing order, and the bounds they are kept within.
#[derive(Debug)]
pub(crate) struct Retention {
    max: usize,
    max_age: Option<Duration>,
    /// `(id, closed at on the runtime clock)`, oldest first.
    closed: VecDeque<(String, Duration)>,
}

impl Retention {
    pub fn new(max: usize, max_age: Option<Duration>) -> Self {
        Self {
            max,
            max_age,
            closed: VecDeque::new(),
        }
    }

    /// Record that `id` closed at `now`, then evict from `table` every closed handle over
    /// the count or past the age. An evicted handle leaves its parent's child list too, so
    /// neither the table nor a parent grows with the runtime's lifetime.
    pub fn closed(&mut self, table: &mut Table, id: &str, now: Duration) {
        if id != ROOT && !self.closed.iter().any(|(c, _)| c == id) {
            self.closed.push_back((id.to_owned(), now));
        }
        while let Some((oldest, at)) = self.closed.front() {
            let expired = self.max_age.is_some_and(|age| now.saturating_sub(*at) >= age);
            if self.closed.len() <= self.max && !expired {
                break;
            }
            let oldest = oldest.clone();
            self.closed.pop_front();
            evict(table, &oldest);
        }
    }
}

/// Remove `id` from `table` if it is still closed (a close is final, but stay defensive:
/// a live handle is never dropped).
fn evict(table: &mut Table, id: &str) {
    if table.get(id).is_none_or(|n| n.state != HandleState::Closed) {
        return;
    }
    let node = table.remove(id).expect("checked above");
    if let Some(p) = node.parent.and_then(|p| table.get_mut(p.id())) {
        p.children.retain(|c| c.id() != id);
    }
}
