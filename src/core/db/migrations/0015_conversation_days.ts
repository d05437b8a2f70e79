import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  // The knowledge gaps a conversation's answers raised (distinct ids), kept on its row when the
  // turn is recorded, so "gaps found" reads the matches' rows instead of joining their turns.
  // (ALTER TABLE locks the table until this migration commits: no write slips between the
  // backfills below and the trigger that keeps them true.)
  await sql`ALTER TABLE conversations ADD COLUMN gap_ids INTEGER[] NOT NULL DEFAULT '{}'`.execute(db);
  await sql`
    UPDATE conversations c SET gap_ids = g.ids
    FROM (SELECT conversation_id, array_agg(DISTINCT (details->>'gap_id')::int) AS ids
          FROM conversation_turns
          WHERE details ? 'gap_id' AND jsonb_typeof(details->'gap_id') = 'number' AND details->>'gap_id' ~ '^[0-9]{1,9}$'
          GROUP BY conversation_id) g
    WHERE c.id = g.conversation_id`.execute(db);
  await sql`DROP INDEX IF EXISTS conversation_turns_gap_idx`.execute(db);
  // Statistics on the UTC day of the start (PostgreSQL 14 and later), so that the planner knows a
  // scan's matches fall on a few hundred days and groups them by hashing, not by sorting them all.
  await sql`
    DO $$ BEGIN
      IF current_setting('server_version_num')::int >= 140000 THEN
        EXECUTE 'CREATE STATISTICS conversations_start_day_stats ON ((started_at AT TIME ZONE ''UTC'')::date) FROM conversations';
      END IF;
    END $$`.execute(db);

  // The per-day rollup of ENDED conversations (per account, agent and UTC day of the start): what
  // stats, reports/me and reports/agents sum when the filter is only whole days and an agent.
  // Running conversations are not in it (their duration grows with the clock); the reports add
  // them from the open-conversations index. `seconds` is NUMERIC so that adding and taking away a
  // conversation leaves no floating-point residue.
  await sql`
    CREATE TABLE conversation_days (
      account_id         INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
      agent_id           INTEGER NOT NULL,
      day                DATE NOT NULL,
      conversations      INTEGER NOT NULL,
      seconds            NUMERIC NOT NULL,
      visitor_turns      BIGINT NOT NULL,
      agent_turns        BIGINT NOT NULL,
      handoffs_delivered BIGINT NOT NULL,
      PRIMARY KEY (account_id, agent_id, day)
    )`.execute(db);
  // Distinct gaps are not a sum: each (day, gap) keeps how many ended conversations raised it.
  await sql`
    CREATE TABLE conversation_day_gaps (
      account_id    INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
      agent_id      INTEGER NOT NULL,
      day           DATE NOT NULL,
      gap_id        INTEGER NOT NULL,
      conversations INTEGER NOT NULL,
      PRIMARY KEY (account_id, agent_id, day, gap_id)
    )`.execute(db);

  // One conversation's share of the rollup, added (direction 1) or taken away (-1). Taking away
  // only updates (a row being deleted with its account must not insert a rollup row back).
  await sql`
    CREATE FUNCTION conversation_days_apply(c conversations, direction INTEGER) RETURNS void LANGUAGE plpgsql AS $$
    DECLARE
      d DATE := (c.started_at AT TIME ZONE 'UTC')::date;
      s NUMERIC := COALESCE(c.duration_seconds, GREATEST(0, EXTRACT(EPOCH FROM (c.ended_at - c.started_at))))::numeric;
    BEGIN
      IF direction > 0 THEN
        INSERT INTO conversation_days AS r (account_id, agent_id, day, conversations, seconds, visitor_turns, agent_turns, handoffs_delivered)
        VALUES (c.account_id, c.agent_id, d, 1, s, c.visitor_turns, c.agent_turns, cardinality(c.handoffs_delivered))
        ON CONFLICT (account_id, agent_id, day) DO UPDATE SET
          conversations = r.conversations + 1,
          seconds = r.seconds + EXCLUDED.seconds,
          visitor_turns = r.visitor_turns + EXCLUDED.visitor_turns,
          agent_turns = r.agent_turns + EXCLUDED.agent_turns,
          handoffs_delivered = r.handoffs_delivered + EXCLUDED.handoffs_delivered;
        INSERT INTO conversation_day_gaps AS r (account_id, agent_id, day, gap_id, conversations)
        SELECT c.account_id, c.agent_id, d, g, 1 FROM unnest(c.gap_ids) AS g ORDER BY g
        ON CONFLICT (account_id, agent_id, day, gap_id) DO UPDATE SET conversations = r.conversations + 1;
      ELSE
        UPDATE conversation_days SET
          conversations = conversations - 1,
          seconds = seconds - s,
          visitor_turns = visitor_turns - c.visitor_turns,
          agent_turns = agent_turns - c.agent_turns,
          handoffs_delivered = handoffs_delivered - cardinality(c.handoffs_delivered)
        WHERE account_id = c.account_id AND agent_id = c.agent_id AND day = d;
        DELETE FROM conversation_days WHERE account_id = c.account_id AND agent_id = c.agent_id AND day = d AND conversations <= 0;
        UPDATE conversation_day_gaps SET conversations = conversations - 1
        WHERE account_id = c.account_id AND agent_id = c.agent_id AND day = d AND gap_id = ANY (c.gap_ids);
        DELETE FROM conversation_day_gaps
        WHERE account_id = c.account_id AND agent_id = c.agent_id AND day = d AND gap_id = ANY (c.gap_ids) AND conversations <= 0;
      END IF;
    END $$`.execute(db);
  // Whoever writes a conversation (its end, a late turn, a handoff delivered after the end, a
  // deletion), the rollup changes in the same transaction: the old row's share out, the new one's in.
  await sql`
    CREATE FUNCTION conversation_days_keep() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF TG_OP = 'UPDATE' AND OLD.ended_at IS NOT NULL AND NEW.ended_at IS NOT NULL
         AND (OLD.account_id, OLD.agent_id, OLD.started_at, OLD.ended_at, OLD.duration_seconds, OLD.visitor_turns, OLD.agent_turns, cardinality(OLD.handoffs_delivered), OLD.gap_ids)
             IS NOT DISTINCT FROM
             (NEW.account_id, NEW.agent_id, NEW.started_at, NEW.ended_at, NEW.duration_seconds, NEW.visitor_turns, NEW.agent_turns, cardinality(NEW.handoffs_delivered), NEW.gap_ids) THEN
        RETURN NULL; -- nothing the rollup counts changed (a category, say)
      END IF;
      IF TG_OP <> 'INSERT' AND OLD.ended_at IS NOT NULL THEN
        PERFORM conversation_days_apply(OLD, -1);
      END IF;
      IF TG_OP <> 'DELETE' AND NEW.ended_at IS NOT NULL THEN
        PERFORM conversation_days_apply(NEW, 1);
      END IF;
      RETURN NULL;
    END $$`.execute(db);
  // Running conversations (every turn updates their row) do not even enter the function.
  await sql`CREATE TRIGGER conversation_days_insert AFTER INSERT ON conversations FOR EACH ROW WHEN (NEW.ended_at IS NOT NULL) EXECUTE FUNCTION conversation_days_keep()`.execute(
    db,
  );
  await sql`CREATE TRIGGER conversation_days_update AFTER UPDATE ON conversations FOR EACH ROW WHEN (OLD.ended_at IS NOT NULL OR NEW.ended_at IS NOT NULL) EXECUTE FUNCTION conversation_days_keep()`.execute(
    db,
  );
  await sql`CREATE TRIGGER conversation_days_delete AFTER DELETE ON conversations FOR EACH ROW WHEN (OLD.ended_at IS NOT NULL) EXECUTE FUNCTION conversation_days_keep()`.execute(
    db,
  );

  await backfillConversationDays(db);
}

/**
 * The rollup of the conversations there already, from scratch (the tests check that it equals
 * what the trigger kept).
 */
export async function backfillConversationDays(db: Kysely<any>): Promise<void> {
  await sql`DELETE FROM conversation_day_gaps`.execute(db);
  await sql`DELETE FROM conversation_days`.execute(db);
  await sql`
    INSERT INTO conversation_days (account_id, agent_id, day, conversations, seconds, visitor_turns, agent_turns, handoffs_delivered)
    SELECT account_id, agent_id, (started_at AT TIME ZONE 'UTC')::date, COUNT(*),
           SUM(COALESCE(duration_seconds, GREATEST(0, EXTRACT(EPOCH FROM (ended_at - started_at))))::numeric),
           SUM(visitor_turns), SUM(agent_turns), SUM(cardinality(handoffs_delivered))
    FROM conversations WHERE ended_at IS NOT NULL
    GROUP BY 1, 2, 3`.execute(db);
  await sql`
    INSERT INTO conversation_day_gaps (account_id, agent_id, day, gap_id, conversations)
    SELECT account_id, agent_id, (started_at AT TIME ZONE 'UTC')::date, g, COUNT(*)
    FROM conversations CROSS JOIN unnest(gap_ids) AS g WHERE ended_at IS NOT NULL
    GROUP BY 1, 2, 3, 4`.execute(db);
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
