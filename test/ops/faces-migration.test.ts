/**
 * The faces-per-account migration on a database that already holds uploaded faces: each face gets
 * its own unguessable file token, and afterwards ids are unique per owner only. Both engines.
 */
import { after } from 'node:test';
import assert from 'node:assert/strict';
import type { Kysely } from 'kysely';
import type { OpenedDatabase } from '../../src/core/db/database.js';
import { migrateToLatest } from '../../src/core/db/migrate.js';
import { cleanup } from '../cli/support/process.js';
import { describeMigration, migrateBefore } from '../support/migration.js';

after(cleanup);

const MIGRATION = '0027_faces_per_account';

const face = (avatarId: string, accountId: number | null) => ({
  avatar_id: avatarId,
  account_id: accountId,
  name: avatarId,
  gender: 'f',
  description: '',
  default_voice_id: 'af_alloy',
  morphs: ['viseme_aa'],
  size_bytes: 4,
  sha256: 'ab'.repeat(32),
  glb: Buffer.from('glTF'),
});

async function check(open: (migrate: boolean) => Promise<OpenedDatabase>) {
  const before = await open(false);
  try {
    await migrateBefore(before.db, MIGRATION);
    const db = before.db as Kysely<any>;
    const account = await db.insertInto('accounts').values({ name: 'a', plan: 'free', balance_cents: 0 }).returning('id').executeTakeFirstOrThrow();
    const other = await db.insertInto('accounts').values({ name: 'b', plan: 'free', balance_cents: 0 }).returning('id').executeTakeFirstOrThrow();
    await db
      .insertInto('custom_faces')
      .values([face('old-one', account.id), face('old-two', account.id), face('house', null)])
      .execute();

    await migrateToLatest(db);
    const rows = await db.selectFrom('custom_faces').select(['avatar_id', 'file_token']).orderBy('avatar_id').execute();
    assert.equal(rows.length, 3);
    for (const row of rows) assert.match(row.file_token, /^cf[0-9a-f]{32}$/, row.avatar_id);
    assert.equal(new Set(rows.map((r) => r.file_token)).size, 3, 'one token per face');

    // Ids are now per owner: another account may take one; the same owner, or a second operator face, may not.
    await db
      .insertInto('custom_faces')
      .values({ ...face('old-one', other.id), file_token: `cf${'1'.repeat(32)}` })
      .execute();
    await assert.rejects(
      db
        .insertInto('custom_faces')
        .values({ ...face('old-one', account.id), file_token: `cf${'2'.repeat(32)}` })
        .execute(),
    );
    await assert.rejects(
      db
        .insertInto('custom_faces')
        .values({ ...face('house', null), file_token: `cf${'3'.repeat(32)}` })
        .execute(),
    );
    await assert.rejects(
      db
        .insertInto('custom_faces')
        .values({ ...face('fresh', other.id), file_token: `cf${'1'.repeat(32)}` })
        .execute(),
      'file tokens are unique',
    );
  } finally {
    await before.close();
  }
}

describeMigration(MIGRATION, 'existing faces get tokens; ids unique per owner', check);
