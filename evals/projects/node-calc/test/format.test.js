import { test } from 'node:test';
import assert from 'node:assert/strict';
import { formatPrice } from '../src/format.js';

test('formatPrice shows dollars and cents', () => {
  assert.equal(formatPrice(1234), '$12.34');
  assert.equal(formatPrice(5), '$0.05');
});
