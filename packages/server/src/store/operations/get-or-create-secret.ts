import type { Kysely } from 'kysely';
import type { Database } from '../database-schema.js';

async function readSecret(db: Kysely<Database>, name: string): Promise<string | undefined> {
  const row = await db.selectFrom('secrets').select('value').where('name', '=', name).executeTakeFirst();
  return row?.value;
}

export async function getOrCreateSecret(
  db: Kysely<Database>,
  name: string,
  generate: () => string,
  now: number,
): Promise<string> {
  const existing = await readSecret(db, name);
  if (existing !== undefined) return existing;
  // Another process may insert between the read and here; the first insert wins and both read it back.
  await db
    .insertInto('secrets')
    .values({ name, value: generate(), created_at: now })
    .onConflict((oc) => oc.column('name').doNothing())
    .execute();
  const value = await readSecret(db, name);
  if (value === undefined) throw new Error(`The secret ${name} could not be stored.`);
  return value;
}
