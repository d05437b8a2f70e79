/**
 * Visitor values: declaration, the signing secret (reveal, rotate) and the preview check.
 * Signatures are computed here independently, from the canonical form documented in
 * src/agents/visitor-values.ts:
 *   `<timestamp>.<name1>=<encodeURIComponent(value1)>&…`, names sorted by code point,
 *   hex HMAC-SHA256 keyed with the whole secret, optionally sent as `sha256=<hex>`.
 */
import crypto from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { forEachEngine, startTestApp, type TestApp } from '../support/app.js';
import { itemAt, validationItems } from './helpers.js';

function canonical(timestamp: number, values: Record<string, string>): string {
  const names = Object.keys(values).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  return `${timestamp}.${names.map((n) => `${n}=${encodeURIComponent(values[n])}`).join('&')}`;
}

function sign(secret: string, timestamp: number, values: Record<string, string>): string {
  return crypto.createHmac('sha256', secret).update(canonical(timestamp, values), 'utf8').digest('hex');
}

const now = () => Math.floor(Date.now() / 1000);

forEachEngine('visitor values', (engine) => {
  let t: TestApp;
  let agentId: number;
  const vv = (suffix = '') => `/v1/agent/${agentId}/visitor-values${suffix}`;
  const preview = (body: unknown) => t.request('POST', vv('/preview'), { body });
  const secret = async () => (await t.request('GET', vv('/secret'))).body.secret as string;

  before(async () => {
    t = await startTestApp(engine);
    agentId = (await t.request('POST', '/v1/agent/create', { body: { name: 'Visitors' } })).body.id;
  });
  after(() => t.close());

  describe('declaration', () => {
    it('a new agent declares no fields and does not require a signature', async () => {
      const res = await t.request('GET', vv());
      assert.equal(res.status, 200);
      assert.equal(res.body.agent_id, agentId);
      assert.deepEqual(res.body.fields, []);
      assert.equal(res.body.require_signature, false);
      assert.equal(typeof res.body.max_age_seconds, 'number');
      assert.equal(res.body.signing.algorithm, 'HMAC-SHA256');
      assert.equal(typeof res.body.signing.canonical_form, 'string');
      assert.ok(!JSON.stringify(res.body).includes(await secret()), 'the declaration never shows the whole secret');
    });

    it('PATCH declares fields with defaults and changes only what is sent', async () => {
      const res = await t.request('PATCH', vv(), {
        body: {
          fields: [
            { name: 'plan', required: true, max_length: 10 },
            { name: 'customer_id', description: 'CRM id' },
          ],
        },
      });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.deepEqual(res.body.fields, [
        { name: 'plan', description: '', required: true, max_length: 10 },
        { name: 'customer_id', description: 'CRM id', required: false, max_length: 256 },
      ]);
      const again = await t.request('PATCH', vv(), { body: { max_age_seconds: 120 } });
      assert.equal(again.body.max_age_seconds, 120);
      assert.equal(again.body.fields.length, 2, 'fields kept');
      assert.deepEqual((await t.request('GET', vv())).body, again.body);
    });

    for (const name of ['Plan', '1plan', '_plan', 'plan-name', 'plan name', '', 'a'.repeat(41), 'plän']) {
      it(`refuses the field name ${JSON.stringify(name)}`, async () => {
        const item = itemAt(await t.request('PATCH', vv(), { body: { fields: [{ name: 'ok' }, { name }] } }), ['body', 'fields', 1, 'name']);
        assert.equal(item.input, name);
      });
    }

    it('accepts a 40-character name and the edge lengths', async () => {
      const res = await t.request('PATCH', vv(), {
        body: {
          fields: [
            { name: 'a'.repeat(40), max_length: 1 },
            { name: 'b2_c', max_length: 2000 },
          ],
        },
      });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.equal(itemAt(await t.request('PATCH', vv(), { body: { fields: [{ name: 'x', max_length: 0 }] } }), ['body', 'fields', 0, 'max_length']).input, 0);
    });

    it('refuses duplicate names', async () => {
      const items = validationItems(await t.request('PATCH', vv(), { body: { fields: [{ name: 'plan' }, { name: 'email' }, { name: 'plan' }] } }));
      assert.deepEqual(items[0].loc.slice(0, 2), ['body', 'fields']);
    });

    it('50 fields are accepted, 51 refused', async () => {
      const fields = (n: number) => Array.from({ length: n }, (_, i) => ({ name: `field_${i}` }));
      assert.equal((await t.request('PATCH', vv(), { body: { fields: fields(50) } })).body.fields.length, 50);
      const item = itemAt(await t.request('PATCH', vv(), { body: { fields: fields(51) } }), ['body', 'fields']);
      assert.equal(item.type, 'too_long');
      assert.equal((await t.request('GET', vv())).body.fields.length, 50, 'the refused change left the declaration alone');
    });
  });

  describe('secret', () => {
    it('reveal answers the whole secret; rotate replaces it and the reveal follows', async () => {
      const first = await t.request('GET', vv('/secret'));
      assert.equal(first.status, 200);
      assert.equal(first.body.agent_id, agentId);
      assert.equal(typeof first.body.secret, 'string');
      assert.ok(first.body.secret.length >= 32);
      assert.ok(Number.isFinite(Date.parse(first.body.rotated_at)));
      assert.equal((await t.request('GET', vv('/secret'))).body.secret, first.body.secret, 'reveal is stable');

      const rotated = await t.request('POST', vv('/secret'));
      assert.equal(rotated.status, 200);
      assert.notEqual(rotated.body.secret, first.body.secret);
      assert.ok(Date.parse(rotated.body.rotated_at) >= Date.parse(first.body.rotated_at));
      assert.equal(await secret(), rotated.body.secret);
    });

    it('each agent has its own secret', async () => {
      const other = (await t.request('POST', '/v1/agent/create', { body: { name: 'Other' } })).body.id;
      const otherSecret = (await t.request('GET', `/v1/agent/${other}/visitor-values/secret`)).body.secret;
      assert.notEqual(otherSecret, await secret());
    });
  });

  describe('preview', () => {
    before(async () => {
      const res = await t.request('PATCH', vv(), {
        body: {
          fields: [{ name: 'plan', required: true, max_length: 10 }, { name: 'email' }, { name: 'note' }],
          require_signature: false,
          max_age_seconds: 300,
        },
      });
      assert.equal(res.status, 200);
    });

    it('a valid signature computed independently is accepted', async () => {
      const values = { plan: 'gold', email: 'a.b+c@example.com', note: 'hi there & more/ü=1' };
      const ts = now();
      const s = await secret();
      const res = await preview({ values, timestamp: ts, signature: sign(s, ts, values) });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.equal(res.body.canonical_text, canonical(ts, values));
      assert.equal(res.body.valid, true, JSON.stringify(res.body.problems));
      assert.equal(res.body.signature_checked, true);
      assert.equal(res.body.signature_valid, true);
      assert.deepEqual(res.body.accepted, values);
      assert.deepEqual(res.body.problems, []);
      assert.deepEqual(res.body.variables, { 'visitor.plan': 'gold', 'visitor.email': 'a.b+c@example.com', 'visitor.note': 'hi there & more/ü=1' });
      // The sha256= prefix and upper-case hex are accepted too.
      const prefixed = await preview({ values, timestamp: ts, signature: 'sha256=' + sign(s, ts, values).toUpperCase() });
      assert.equal(prefixed.body.signature_valid, true);
    });

    it('the canonical text sorts names by code point and percent-encodes values', async () => {
      const values = { plan: 'a b', Zeta: 'x', email: 'é' };
      const res = await preview({ values, timestamp: 1700000000 });
      assert.equal(res.body.canonical_text, '1700000000.Zeta=x&email=%C3%A9&plan=a%20b');
    });

    it('a wrong signature is refused and nothing is accepted', async () => {
      const values = { plan: 'gold' };
      const ts = now();
      for (const signature of [
        sign('vsec_wrong', ts, values),
        sign(await secret(), ts, { plan: 'silver' }),
        sign(await secret(), ts + 1, values),
        'deadbeef',
        '',
      ]) {
        const res = await preview({ values, timestamp: ts, signature });
        assert.equal(res.status, 200);
        assert.equal(res.body.valid, false, signature);
        assert.equal(res.body.signature_checked, true);
        assert.equal(res.body.signature_valid, false);
        assert.deepEqual(res.body.accepted, {});
        assert.equal(res.body.variables['visitor.plan'], '', 'a refused value reaches no template');
        assert.ok(
          res.body.problems.some((p: any) => p.code === 'bad_signature'),
          JSON.stringify(res.body.problems),
        );
      }
    });

    it('a signature without its timestamp is refused', async () => {
      const res = await preview({ values: { plan: 'gold' }, signature: sign(await secret(), now(), { plan: 'gold' }) });
      assert.equal(res.body.valid, false);
      assert.equal(res.body.signature_valid, false);
    });

    it('an expired (or far-future) timestamp is refused even with a correct signature', async () => {
      const values = { plan: 'gold' };
      const s = await secret();
      for (const ts of [now() - 301, now() - 3600, now() + 3600]) {
        const res = await preview({ values, timestamp: ts, signature: sign(s, ts, values) });
        assert.equal(res.body.valid, false, String(ts));
        assert.equal(res.body.signature_valid, false);
        assert.ok(
          res.body.problems.some((p: any) => p.code === 'expired'),
          JSON.stringify(res.body.problems),
        );
      }
      // Within max_age_seconds it passes.
      const ts = now() - 200;
      assert.equal((await preview({ values, timestamp: ts, signature: sign(s, ts, values) })).body.valid, true);
    });

    it('max_age_seconds is honoured', async () => {
      await t.request('PATCH', vv(), { body: { max_age_seconds: 60 } });
      const s = await secret();
      const ts = now() - 120;
      const res = await preview({ values: { plan: 'gold' }, timestamp: ts, signature: sign(s, ts, { plan: 'gold' }) });
      assert.ok(res.body.problems.some((p: any) => p.code === 'expired'));
      await t.request('PATCH', vv(), { body: { max_age_seconds: 300 } });
    });

    it('a missing required value is a problem', async () => {
      const res = await preview({ values: { email: 'x@example.com' } });
      assert.equal(res.status, 200);
      assert.equal(res.body.valid, false);
      assert.deepEqual(
        res.body.problems.map((p: any) => [p.name, p.code]),
        [['plan', 'missing']],
      );
    });

    it('a value longer than its max_length is a problem; exactly max_length is fine', async () => {
      const long = await preview({ values: { plan: 'x'.repeat(11) } });
      assert.equal(long.body.valid, false);
      assert.deepEqual(
        long.body.problems.map((p: any) => [p.name, p.code]),
        [['plan', 'too_long']],
      );
      const edge = await preview({ values: { plan: 'x'.repeat(10) } });
      assert.equal(edge.body.valid, true, JSON.stringify(edge.body.problems));
      assert.equal(edge.body.accepted.plan, 'x'.repeat(10));
    });

    it('undeclared names are ignored, not refused, and reach no template', async () => {
      const res = await preview({ values: { plan: 'gold', utm_source: 'ad', admin: 'true' } });
      assert.equal(res.body.valid, true);
      assert.deepEqual(res.body.accepted, { plan: 'gold' });
      assert.deepEqual([...res.body.ignored].sort(), ['admin', 'utm_source']);
      assert.deepEqual(Object.keys(res.body.variables).sort(), ['visitor.email', 'visitor.note', 'visitor.plan']);
      assert.equal(res.body.variables['visitor.email'], '', 'an undeclared-but-absent value is empty');
    });

    it('the signature covers every value sent, undeclared ones included', async () => {
      const values = { plan: 'gold', utm_source: 'ad' };
      const ts = now();
      const s = await secret();
      assert.equal((await preview({ values, timestamp: ts, signature: sign(s, ts, values) })).body.signature_valid, true);
      assert.equal((await preview({ values, timestamp: ts, signature: sign(s, ts, { plan: 'gold' }) })).body.signature_valid, false);
    });

    it('require_signature: unsigned values are refused, signed ones accepted', async () => {
      assert.equal((await t.request('PATCH', vv(), { body: { require_signature: true } })).body.require_signature, true);
      const unsigned = await preview({ values: { plan: 'gold' } });
      assert.equal(unsigned.body.valid, false);
      assert.equal(unsigned.body.signature_checked, false);
      assert.ok(
        unsigned.body.problems.some((p: any) => p.code === 'signature_required'),
        JSON.stringify(unsigned.body.problems),
      );
      assert.deepEqual(unsigned.body.accepted, {});
      const ts = now();
      const signed = await preview({ values: { plan: 'gold' }, timestamp: ts, signature: sign(await secret(), ts, { plan: 'gold' }) });
      assert.equal(signed.body.valid, true, JSON.stringify(signed.body.problems));
      await t.request('PATCH', vv(), { body: { require_signature: false } });
    });

    it('after rotation the old signature fails and the new one passes', async () => {
      const values = { plan: 'gold' };
      const ts = now();
      const old = await secret();
      const oldSignature = sign(old, ts, values);
      assert.equal((await preview({ values, timestamp: ts, signature: oldSignature })).body.signature_valid, true);
      const rotated = (await t.request('POST', vv('/secret'))).body.secret;
      assert.notEqual(rotated, old);
      const stale = await preview({ values, timestamp: ts, signature: oldSignature });
      assert.equal(stale.body.signature_valid, false);
      assert.equal(stale.body.valid, false);
      assert.equal((await preview({ values, timestamp: ts, signature: sign(rotated, ts, values) })).body.signature_valid, true);
    });

    it('bad preview bodies answer 422', async () => {
      itemAt(await preview({ values: { plan: 5 } }), ['body', 'values', 'plan']);
      itemAt(await preview({ values: {}, timestamp: 'now' }), ['body', 'timestamp']);
      itemAt(await preview({ values: [] }), ['body', 'values']);
    });
  });
});
