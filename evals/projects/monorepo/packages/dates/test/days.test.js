import { test } from 'node:test';
import assert from 'node:assert/strict';
import { addDays, daysBetween } from '../src/days.js';

test('addDays crosses a month', () => {
  assert.equal(addDays('2024-01-31', 1), '2024-02-01');
});

test('daysBetween counts whole days', () => {
  assert.equal(daysBetween('2024-03-01', '2024-03-08'), 7);
  assert.equal(daysBetween('2024-03-01', '2024-03-01'), 0);
});
