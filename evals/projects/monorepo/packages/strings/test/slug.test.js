import { test } from 'node:test';
import assert from 'node:assert/strict';
import { slugify, titleCase } from '../src/slug.js';

test('slugify joins words with dashes', () => {
  assert.equal(slugify('Hello World'), 'hello-world');
});

test('slugify drops leading and trailing separators', () => {
  assert.equal(slugify('  Hello, World!  '), 'hello-world');
});

test('titleCase capitalises each word', () => {
  assert.equal(titleCase('hello world'), 'Hello World');
});
