/** Assertions shared by the agents tests. */
import assert from 'node:assert/strict';

export interface Answer {
  status: number;
  body: any;
}

export interface ValidationItem {
  type: string;
  loc: Array<string | number>;
  msg: string;
  input: unknown;
}

/** Asserts the FastAPI 422 shape (contract.md "Validation errors") and returns the items. */
export function validationItems(res: Answer): ValidationItem[] {
  assert.equal(res.status, 422, `expected 422, got ${res.status} ${JSON.stringify(res.body)}`);
  assert.ok(Array.isArray(res.body?.detail), `detail must be a list: ${JSON.stringify(res.body)}`);
  assert.ok(res.body.detail.length >= 1);
  for (const item of res.body.detail) {
    for (const key of ['type', 'loc', 'msg', 'input']) assert.ok(key in item, `item lacks ${key}: ${JSON.stringify(item).slice(0, 300)}`);
    assert.equal(typeof item.type, 'string');
    assert.equal(typeof item.msg, 'string');
    assert.ok(Array.isArray(item.loc) && item.loc.length >= 1);
    assert.ok(['body', 'query', 'path'].includes(item.loc[0]), `loc starts with ${item.loc[0]}`);
  }
  return res.body.detail;
}

/** The 422 item at exactly `loc`. */
export function itemAt(res: Answer, loc: Array<string | number>): ValidationItem {
  const items = validationItems(res);
  const item = items.find((i) => JSON.stringify(i.loc) === JSON.stringify(loc));
  assert.ok(item, `no item at ${JSON.stringify(loc)} in ${JSON.stringify(items).slice(0, 500)}`);
  return item!;
}

/** `{"detail": {"code", "message"}}` with this status and code. */
export function assertCoded(res: Answer, status: number, code: string): void {
  assert.equal(res.status, status, `expected ${status} ${code}, got ${res.status} ${JSON.stringify(res.body)}`);
  assert.equal(typeof res.body, 'object');
  assert.deepEqual(Object.keys(res.body), ['detail']);
  assert.equal(res.body.detail?.code, code, JSON.stringify(res.body));
  assert.equal(typeof res.body.detail.message, 'string');
  assert.ok(res.body.detail.message.length > 0);
}
