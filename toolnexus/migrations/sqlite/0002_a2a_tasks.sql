-- A2A tasks: the whole task as JSON (status, artifacts, history), its state mirrored in a
-- column for the conditional updates, and the lease of the replica running it (owner, and
-- expiry in milliseconds since the Unix epoch). Every lease step is one conditional UPDATE.
CREATE TABLE toolnexus_a2a_tasks (
    id TEXT PRIMARY KEY,
    state TEXT NOT NULL,
    task TEXT NOT NULL,
    lease_owner TEXT,
    lease_expires_at INTEGER,
    updated_at TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP
);

-- The sweep looks only at leased tasks.
CREATE INDEX toolnexus_a2a_tasks_leased ON toolnexus_a2a_tasks (lease_expires_at)
    WHERE lease_owner IS NOT NULL;
