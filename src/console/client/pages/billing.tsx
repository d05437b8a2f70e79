/** Billing: balance, plan, free minutes left, this month by agent and by voice, line items with CSV, top up (or how an operator credits). */
import { useState } from 'preact/hooks';
import { api } from '../api.js';
import { Page, ErrorAlert, Field, Loading, useLoad, fieldError, lacking, fmtDate } from '../ui.js';

export function Billing() {
  const data = useLoad(async () => {
    const [wallet, plan, usage, byAgent, items] = await Promise.all([
      api.get('/v1/billing/wallet'),
      api.get('/v1/billing/plan'),
      api.get('/v1/usage/summary'),
      api.get('/v1/billing/by-agent'),
      api.get('/v1/billing/line-items').catch(() => null),
    ]);
    return { wallet, plan, usage, byAgent, items };
  });
  const [amount, setAmount] = useState('25.00');
  const [error, setError] = useState<unknown>(null);
  if (data.error)
    return (
      <Page title="Billing">
        <ErrorAlert error={data.error} />
      </Page>
    );
  if (!data.data)
    return (
      <Page title="Billing">
        <Loading />
      </Page>
    );
  const { wallet, plan, usage, byAgent, items } = data.data;
  const lines: any[] = items?.items ?? items?.line_items ?? [];
  const topUp = async (e: Event) => {
    e.preventDefault();
    try {
      const started = await api.post('/v1/billing/wallet/topup', { amount });
      if (started.url) location.assign(started.url);
    } catch (err) {
      setError(err);
    }
  };
  return (
    <Page title="Billing">
      <ul class="cards" aria-label="Wallet">
        <li>
          <strong>${wallet.balance}</strong> balance
        </li>
        <li>
          <strong>{plan.plan}</strong> plan · ${wallet.price_per_minute} a minute
        </li>
        <li>
          <strong>{usage.session_minutes}</strong> minutes this month
          {usage.free_seconds_remaining !== null ? ` · ${Math.floor(usage.free_seconds_remaining / 60)} free minutes left` : ''}
        </li>
      </ul>
      <table>
        <caption>This month by agent ({byAgent.month})</caption>
        <thead>
          <tr>
            <th scope="col">Agent</th>
            <th scope="col">Sessions</th>
            <th scope="col">Minutes</th>
            <th scope="col">Sessions cost</th>
            <th scope="col">Premium voice</th>
          </tr>
        </thead>
        <tbody>
          {byAgent.agents.map((a: any, i: number) => (
            <tr key={i}>
              <td>{a.agent_name ?? 'deleted agent'}</td>
              <td>{a.sessions}</td>
              <td>{(a.session_seconds / 60).toFixed(1)}</td>
              <td>${a.session_amount}</td>
              <td>${a.premium_voice_amount}</td>
            </tr>
          ))}
          {byAgent.agents.length === 0 && (
            <tr>
              <td colSpan={5}>Nothing yet this month.</td>
            </tr>
          )}
        </tbody>
      </table>
      <table>
        <caption>Line items</caption>
        <thead>
          <tr>
            <th scope="col">When</th>
            <th scope="col">What</th>
            <th scope="col">Amount</th>
          </tr>
        </thead>
        <tbody>
          {lines.slice(0, 50).map((l: any, i: number) => (
            <tr key={i}>
              <td>{fmtDate(l.created_at ?? l.at ?? l.date)}</td>
              <td>{l.description ?? l.kind ?? l.type}</td>
              <td>${l.amount}</td>
            </tr>
          ))}
          {lines.length === 0 && (
            <tr>
              <td colSpan={3}>No line items yet.</td>
            </tr>
          )}
        </tbody>
      </table>
      <p>
        <a href="/v1/billing/export/line-items" download>
          Export line items (CSV)
        </a>
      </p>
      <section aria-labelledby="topup">
        <h2 id="topup">Top up</h2>
        {wallet.payments_enabled ? (
          <form onSubmit={topUp}>
            <ErrorAlert error={error} />
            <Field label="Amount (USD)" error={fieldError(error, 'amount')}>
              {(id, d) => <input id={id} value={amount} inputMode="decimal" aria-describedby={d} onInput={(e) => setAmount(e.currentTarget.value)} />}
            </Field>
            <button type="submit" disabled={!!lacking('setup')} title={lacking('setup')}>
              Top up with Stripe
            </button>
          </form>
        ) : (
          <p>
            Online payments are not set up on this server (no STRIPE_SECRET_KEY). An operator credits the wallet with{' '}
            <code>npx presence accounts set --id {plan.account_id ?? 'ID'} --balance 100.00</code>.
          </p>
        )}
      </section>
    </Page>
  );
}
