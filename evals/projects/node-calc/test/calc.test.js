import { test } from 'node:test';
import assert from 'node:assert/strict';
import { average, clamp, sum } from '../src/calc.js';

test('sum adds the values', () => {
  assert.equal(sum([1, 2, 3]), 6);
});

test('sum of an empty list is 0', () => {
  assert.equal(sum([]), 0);
});

test('average of a list', () => {
  assert.equal(average([2, 4]), 3);
});

test('clamp keeps a value within its bounds', () => {
  assert.equal(clamp(5, 0, 10), 5);
  assert.equal(clamp(-1, 0, 10), 0);
  assert.equal(clamp(11, 0, 10), 10);
});
