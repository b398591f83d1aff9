// SQLSTATE -> error class mapping (no server needed).
import test from 'node:test';
import assert from 'node:assert/strict';
import {
  ClaimQueueError, QueueNotFoundError, JobNotFoundError, StaleClaimError, JobStateConflictError,
  IsolationNotSupportedError, LockNamespaceNotFoundError, LockKeyModeMismatchError, LockKeyNotFoundError,
  ScheduleNotFoundError, QueueElsewhereError, SqlState, toClaimQueueError, isStaleClaim,
} from '../dist/index.js';

const driverError = (code) => Object.assign(new Error(`server said ${code}`),
  { code, detail: 'a detail', hint: 'a hint' });

test('each claimqueue SQLSTATE maps to its class, keeping message, detail, hint and cause', () => {
  const expected = {
    QC001: QueueNotFoundError, QC002: JobNotFoundError, QC003: StaleClaimError, QC004: JobStateConflictError,
    QC005: IsolationNotSupportedError, QC006: ScheduleNotFoundError, QC007: QueueElsewhereError,
    QCL01: LockNamespaceNotFoundError, QCL02: LockKeyModeMismatchError,
    QCL03: LockKeyNotFoundError,
  };
  assert.deepEqual(Object.values(SqlState).sort(), Object.keys(expected).sort());
  for (const [code, ErrorClass] of Object.entries(expected)) {
    const original = driverError(code);
    const mapped = toClaimQueueError(original);
    assert.ok(mapped instanceof ErrorClass, code);
    assert.ok(mapped instanceof ClaimQueueError);
    assert.equal(mapped.code, code);
    assert.equal(mapped.message, `server said ${code}`);
    assert.equal(mapped.detail, 'a detail');
    assert.equal(mapped.hint, 'a hint');
    assert.equal(mapped.cause, original);
    assert.equal(mapped.name, ErrorClass.name);
  }
});

test('an unknown QC code becomes a plain ClaimQueueError; other errors pass through unchanged', () => {
  const unknown = toClaimQueueError(driverError('QC999'));
  assert.equal(unknown.constructor, ClaimQueueError);
  assert.equal(unknown.code, 'QC999');
  const other = driverError('23505');
  assert.equal(toClaimQueueError(other), other);
  assert.equal(toClaimQueueError('text'), 'text');
  assert.equal(toClaimQueueError(null), null);
  const already = new StaleClaimError('x', { code: 'QC003' });
  assert.equal(toClaimQueueError(already), already);
});

test('isStaleClaim recognises QC003 mapped or not', () => {
  assert.equal(isStaleClaim(driverError('QC003')), true);
  assert.equal(isStaleClaim(toClaimQueueError(driverError('QC003'))), true);
  assert.equal(isStaleClaim(driverError('QC002')), false);
  assert.equal(isStaleClaim(undefined), false);
});
