-- Conversations: one row per conversation id; `version` is bumped by every save, and a save
-- names the version it read (compare-and-set), so two replicas never silently drop a turn.
CREATE TABLE toolnexus_conversations (
    id TEXT PRIMARY KEY,
    version INTEGER NOT NULL,
    messages TEXT NOT NULL,
    updated_at TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP
);

-- Suspended runs waiting for an answer: the pending request and halted transcript (JSON);
-- `answer` is set exactly once, by the first answer, in the same statement that checks it.
CREATE TABLE toolnexus_suspensions (
    id TEXT PRIMARY KEY,
    conversation TEXT,
    request TEXT NOT NULL,
    transcript TEXT NOT NULL,
    state TEXT NOT NULL,
    answer TEXT,
    created_at TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP,
    answered_at TEXT
);
