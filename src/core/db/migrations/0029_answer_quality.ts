import { sql, type Kysely } from 'kysely';

/**
 * Answer rate and voice-to-voice percentiles in the reports' stats (issue 24, Reports).
 *
 * Each conversation keeps, written with the turn as gap_ids is: how many answers its agent gave
 * (`answers`: agent turns that carry the engine's `answered` flag), how many of them the agent knew
 * (`answered`), and the voice-to-voice latency of each measured answer (`answer_ms`: the
 * waterfall's `first_audio`, in ms, in turn order). The per-day rollup of ended conversations
 * (0015) sums the counts, and keeps the latencies as a histogram of fixed buckets, one array per
 * (account, agent, day) (`answer_hist`: 20 ms buckets below 1.5 s, 100 ms below 5 s, 1 s below
 * 30 s, then one; src/conversation/latency-buckets.ts computes the same, and a test checks they
 * agree). Percentiles over any days then read one small array per agent and day: an exact
 * histogram per millisecond value made a year of stats read a quarter of a million rows (1.1 s on
 * the embedded database for 100,000 conversations).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE conversations ADD COLUMN answers INTEGER NOT NULL DEFAULT 0`.execute(db);
  await sql`ALTER TABLE conversations ADD COLUMN answered INTEGER NOT NULL DEFAULT 0`.execute(db);
  await sql`ALTER TABLE conversations ADD COLUMN answer_ms INTEGER[] NOT NULL DEFAULT '{}'`.execute(db);
  // The conversations there already, from their turns. The rollup trigger of 0015 ignores this
  // update (it compares only the columns it knew); the rollup's new parts are backfilled below.
  await backfillConversationAnswers(db);

  await sql`ALTER TABLE conversation_days ADD COLUMN answers BIGINT NOT NULL DEFAULT 0`.execute(db);
  await sql`ALTER TABLE conversation_days ADD COLUMN answered BIGINT NOT NULL DEFAULT 0`.execute(db);
  await sql`ALTER TABLE conversation_days ADD COLUMN answer_hist INTEGER[] NOT NULL DEFAULT '{}'`.execute(db);
  // The bucket of a latency in ms, and a histogram with some latencies added (sign 1) or taken out (-1).
  await sql`
    CREATE OR REPLACE FUNCTION answer_ms_bucket(ms INTEGER) RETURNS INTEGER LANGUAGE sql IMMUTABLE AS $$
      SELECT CASE WHEN ms < 1500 THEN GREATEST(0, ms) / 20
                  WHEN ms < 5000 THEN 75 + (ms - 1500) / 100
                  WHEN ms < 30000 THEN 110 + (ms - 5000) / 1000
                  ELSE 135 END
    $$`.execute(db);
  await sql`
    CREATE OR REPLACE FUNCTION answer_hist_add(h INTEGER[], ms INTEGER[], sign INTEGER) RETURNS INTEGER[] LANGUAGE plpgsql IMMUTABLE AS $$
    DECLARE
      result INTEGER[] := COALESCE(h, '{}');
      v INTEGER;
      b INTEGER;
    BEGIN
      FOREACH v IN ARRAY COALESCE(ms, '{}') LOOP
        b := answer_ms_bucket(v) + 1;
        WHILE COALESCE(array_length(result, 1), 0) < b LOOP
          result := result || 0;
        END LOOP;
        result[b] := result[b] + sign;
      END LOOP;
      RETURN result;
    END $$`.execute(db);

  // 0015's functions, with the answers counted and the latencies in the histogram.
  await sql`
    CREATE OR REPLACE FUNCTION conversation_days_apply(c conversations, direction INTEGER) RETURNS void LANGUAGE plpgsql AS $$
    DECLARE
      d DATE := (c.started_at AT TIME ZONE 'UTC')::date;
      s NUMERIC := COALESCE(c.duration_seconds, GREATEST(0, EXTRACT(EPOCH FROM (c.ended_at - c.started_at))))::numeric;
    BEGIN
      IF direction > 0 THEN
        INSERT INTO conversation_days AS r (account_id, agent_id, day, conversations, seconds, visitor_turns, agent_turns, handoffs_delivered, answers, answered, answer_hist)
        VALUES (c.account_id, c.agent_id, d, 1, s, c.visitor_turns, c.agent_turns, cardinality(c.handoffs_delivered), c.answers, c.answered, answer_hist_add('{}', c.answer_ms, 1))
        ON CONFLICT (account_id, agent_id, day) DO UPDATE SET
          conversations = r.conversations + 1,
          seconds = r.seconds + EXCLUDED.seconds,
          visitor_turns = r.visitor_turns + EXCLUDED.visitor_turns,
          agent_turns = r.agent_turns + EXCLUDED.agent_turns,
          handoffs_delivered = r.handoffs_delivered + EXCLUDED.handoffs_delivered,
          answers = r.answers + EXCLUDED.answers,
          answered = r.answered + EXCLUDED.answered,
          answer_hist = answer_hist_add(r.answer_hist, c.answer_ms, 1);
        INSERT INTO conversation_day_gaps AS r (account_id, agent_id, day, gap_id, conversations)
        SELECT c.account_id, c.agent_id, d, g, 1 FROM unnest(c.gap_ids) AS g ORDER BY g
        ON CONFLICT (account_id, agent_id, day, gap_id) DO UPDATE SET conversations = r.conversations + 1;
      ELSE
        UPDATE conversation_days SET
          conversations = conversations - 1,
          seconds = seconds - s,
          visitor_turns = visitor_turns - c.visitor_turns,
          agent_turns = agent_turns - c.agent_turns,
          handoffs_delivered = handoffs_delivered - cardinality(c.handoffs_delivered),
          answers = answers - c.answers,
          answered = answered - c.answered,
          answer_hist = answer_hist_add(answer_hist, c.answer_ms, -1)
        WHERE account_id = c.account_id AND agent_id = c.agent_id AND day = d;
        DELETE FROM conversation_days WHERE account_id = c.account_id AND agent_id = c.agent_id AND day = d AND conversations <= 0;
        UPDATE conversation_day_gaps SET conversations = conversations - 1
        WHERE account_id = c.account_id AND agent_id = c.agent_id AND day = d AND gap_id = ANY (c.gap_ids);
        DELETE FROM conversation_day_gaps
        WHERE account_id = c.account_id AND agent_id = c.agent_id AND day = d AND gap_id = ANY (c.gap_ids) AND conversations <= 0;
      END IF;
    END $$`.execute(db);
  await sql`
    CREATE OR REPLACE FUNCTION conversation_days_keep() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF TG_OP = 'UPDATE' AND OLD.ended_at IS NOT NULL AND NEW.ended_at IS NOT NULL
         AND (OLD.account_id, OLD.agent_id, OLD.started_at, OLD.ended_at, OLD.duration_seconds, OLD.visitor_turns, OLD.agent_turns, cardinality(OLD.handoffs_delivered), OLD.gap_ids,
              OLD.answers, OLD.answered, OLD.answer_ms)
             IS NOT DISTINCT FROM
             (NEW.account_id, NEW.agent_id, NEW.started_at, NEW.ended_at, NEW.duration_seconds, NEW.visitor_turns, NEW.agent_turns, cardinality(NEW.handoffs_delivered), NEW.gap_ids,
              NEW.answers, NEW.answered, NEW.answer_ms) THEN
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

  await backfillAnswerQuality(db);
}

/**
 * Per conversation, from its turns: answers (agent turns with a boolean `answered`), those the
 * agent knew, and each answer's `first_audio` (a number; rounded to the millisecond) in turn order:
 * what ConversationRecords.addTurn counts as each turn is written (the tests check both agree).
 */
export async function backfillConversationAnswers(db: Kysely<any>): Promise<void> {
  await sql`
    UPDATE conversations c SET answers = a.answers, answered = a.answered, answer_ms = a.answer_ms
    FROM (${answersOfTurns()}) a
    WHERE c.id = a.conversation_id`.execute(db);
}

function answersOfTurns() {
  return sql`
    SELECT conversation_id,
           COUNT(*) FILTER (WHERE jsonb_typeof(details->'answered') = 'boolean')::int AS answers,
           COUNT(*) FILTER (WHERE details->'answered' = 'true'::jsonb)::int AS answered,
           COALESCE(array_agg(LEAST(2147483647, GREATEST(-2147483647, round((details->'latency_ms'->>'first_audio')::numeric)))::int ORDER BY id)
                      FILTER (WHERE jsonb_typeof(details->'latency_ms'->'first_audio') = 'number'), '{}') AS answer_ms
    FROM conversation_turns
    WHERE role = 'agent' AND (jsonb_typeof(details->'answered') = 'boolean' OR jsonb_typeof(details->'latency_ms'->'first_audio') = 'number')
    GROUP BY conversation_id`;
}

/**
 * The rollup's answer counts and latency histogram, from the conversations' rows (the tests check
 * that it equals what the trigger kept).
 */
export async function backfillAnswerQuality(db: Kysely<any>): Promise<void> {
  await sql`
    UPDATE conversation_days r SET answers = a.answers, answered = a.answered, answer_hist = answer_hist_add('{}', m.ms, 1)
    FROM (SELECT account_id, agent_id, (started_at AT TIME ZONE 'UTC')::date AS day, SUM(answers) AS answers, SUM(answered) AS answered
          FROM conversations WHERE ended_at IS NOT NULL GROUP BY 1, 2, 3) a
    LEFT JOIN (SELECT account_id, agent_id, (started_at AT TIME ZONE 'UTC')::date AS day, array_agg(v) AS ms
               FROM conversations CROSS JOIN unnest(answer_ms) AS v WHERE ended_at IS NOT NULL GROUP BY 1, 2, 3) m
      USING (account_id, agent_id, day)
    WHERE r.account_id = a.account_id AND r.agent_id = a.agent_id AND r.day = a.day`.execute(db);
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
