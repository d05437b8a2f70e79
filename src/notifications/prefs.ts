/** Per-agent notification prefs: which categories go out to destinations, and quiet hours. */
import type { Db } from '../core/db/database.js';
import { SUGGESTED_CATEGORIES } from './builder.js';
import type { QuietHours } from './quiet-hours.js';
import type { NotificationHooks, Prefs } from './types.js';

export class NotificationPrefs {
  constructor(
    private readonly db: Db,
    private readonly hooks: NotificationHooks,
  ) {}

  async get(accountId: number, agentId: number): Promise<Prefs> {
    await this.hooks.agent(accountId, agentId);
    return this.load(agentId);
  }

  async load(agentId: number): Promise<Prefs> {
    const [row, rules] = await Promise.all([
      this.db.selectFrom('notification_prefs').selectAll().where('agent_id', '=', agentId).executeTakeFirst(),
      this.db.selectFrom('notification_rules').select('category').distinct().where('agent_id', '=', agentId).execute(),
    ]);
    // Every category the agent's rules use is listed (on unless turned off), with the suggested ones.
    const categories: Record<string, boolean> = {};
    for (const name of [...SUGGESTED_CATEGORIES, ...rules.map((r) => r.category)]) categories[name] = true;
    Object.assign(categories, row?.categories ?? {});
    return { agent_id: agentId, categories, quiet_hours: row?.quiet_hours ?? null };
  }

  async put(accountId: number, agentId: number, update: { categories?: Record<string, boolean>; quiet_hours?: QuietHours | null }): Promise<Prefs> {
    await this.hooks.agent(accountId, agentId);
    const current = await this.db.selectFrom('notification_prefs').selectAll().where('agent_id', '=', agentId).executeTakeFirst();
    const categories = update.categories ?? current?.categories ?? {};
    const quiet = update.quiet_hours !== undefined ? update.quiet_hours : (current?.quiet_hours ?? null);
    await this.db
      .insertInto('notification_prefs')
      .values({ agent_id: agentId, account_id: accountId, categories: JSON.stringify(categories), quiet_hours: quiet ? JSON.stringify(quiet) : null })
      .onConflict((oc) =>
        oc
          .column('agent_id')
          .doUpdateSet({ categories: JSON.stringify(categories), quiet_hours: quiet ? JSON.stringify(quiet) : null, updated_at: new Date() }),
      )
      .execute();
    return this.load(agentId);
  }
}
